"""The circuit breaker and the tool rate limits (REQ-RES-004, REQ-RES-005, REQ-TEST-017,
REQ-MCP-010)."""

from __future__ import annotations

from rypsok.core.store.local.calls import ToolRateLimiter
from rypsok.core.store.local.circuit import Circuit
from tests.support.clock import FakeClock


def test_req_test_017_opens_after_consecutive_counted_failures() -> None:
    clock = FakeClock(1000.0)
    circuit = Circuit(3, 60, 900, clock)
    for _ in range(2):
        circuit.record_failure("timeout")
    assert circuit.state == "closed" and circuit.admit() == "go"
    circuit.record_success()  # a success in between resets the count
    for _ in range(2):
        circuit.record_failure("parse_failure")
    assert circuit.state == "closed"
    circuit.record_failure("blocked")
    assert circuit.state == "open" and circuit.admit() == "skip"
    assert list(circuit.transitions) == ["opened"]


def test_req_res_004_auth_and_request_failures_never_open_the_circuit() -> None:
    circuit = Circuit(1, 60, 900, FakeClock(1000.0))
    for _ in range(10):
        circuit.record_failure("auth_failure")
        circuit.record_failure("request_failure")
    assert circuit.state == "closed"


def test_req_res_005_one_real_probe_after_the_cooldown_then_close() -> None:
    clock = FakeClock(1000.0)
    circuit = Circuit(1, 60, 900, clock)
    circuit.record_failure("timeout")
    clock.now += 59.9
    assert circuit.admit() == "skip"
    clock.now += 0.2
    assert circuit.state == "open"  # stays open until the first call takes the probe
    assert circuit.admit() == "probe"
    assert circuit.state == "half_open"
    assert circuit.admit() == "skip"  # only one probe in flight
    circuit.record_success()
    assert circuit.state == "closed" and circuit.admit() == "go"
    assert list(circuit.transitions) == ["opened", "closed"]


def test_req_test_017_cooldown_doubles_up_to_the_maximum() -> None:
    clock = FakeClock(1000.0)
    circuit = Circuit(1, 60, 200, clock)
    circuit.record_failure("timeout")
    waits = []
    for _ in range(4):
        waits.append(round(circuit.retry_in_s() or 0))
        clock.now += 1000
        assert circuit.admit() == "probe"
        circuit.record_failure("timeout")
    assert waits == [60, 120, 200, 200]


def test_req_test_017_retry_after_is_honoured_up_to_the_maximum() -> None:
    clock = FakeClock(1000.0)
    circuit = Circuit(1, 60, 900, clock)
    circuit.record_failure("rate_limited", retry_after_s=300)
    assert round(circuit.retry_in_s() or 0) == 300
    clock.now += 1000
    circuit.admit()
    circuit.record_failure("rate_limited", retry_after_s=100_000)
    assert round(circuit.retry_in_s() or 0) == 900


def test_req_mcp_010_tool_rate_limit_per_caller_sliding_minute() -> None:
    clock = FakeClock(1000.0)
    limiter = ToolRateLimiter({"web_search": 2}, clock)
    assert limiter.try_acquire("ops", "web_search") is None
    clock.now += 10
    assert limiter.try_acquire("ops", "web_search") is None
    wait = limiter.try_acquire("ops", "web_search")
    assert wait is not None and 49_000 < wait <= 50_001
    assert limiter.try_acquire("mimlys", "web_search") is None  # another caller is not slowed
    clock.now += 50.1
    assert limiter.try_acquire("ops", "web_search") is None


def test_refused_calls_are_refunded() -> None:
    limiter = ToolRateLimiter({"web_search": 1}, FakeClock(1000.0))
    assert limiter.try_acquire("local", "web_search") is None
    limiter.refund("local", "web_search")
    assert limiter.try_acquire("local", "web_search") is None


def test_req_obs_004_every_opening_and_closing_is_told_once() -> None:
    # The hook is what writes circuit_opened / circuit_closed to the log.
    clock = FakeClock()
    told: list[tuple[str, float | None]] = []
    circuit = Circuit(2, 30, 300, clock=clock, on_transition=lambda c, s: told.append((c, s)))
    circuit.record_failure("timeout")
    assert told == []
    circuit.record_failure("timeout", retry_after_s=45)
    assert told == [("opened", 45.0)]
    clock.now += 46
    assert circuit.admit() == "probe"
    circuit.record_success()
    assert told == [("opened", 45.0), ("closed", None)]
    circuit.record_success()
    assert len(told) == 2
