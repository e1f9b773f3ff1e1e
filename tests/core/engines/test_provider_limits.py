"""Provider limits from the admission records (REQ-CMP-002, REQ-TEST-016, LIM-C2, LIM-C9)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio

from rypsok.core.net.client import Response
from rypsok.core.store.local.provider import ProviderLimiter
from tests.support.clock import FakeClock
from tests.support.fake_engines import FakeClient, brave, wikipedia
from tests.support.searching import BRAVE, WIKI, make


def test_req_cmp_002_burst_then_the_records_rate() -> None:
    clock = FakeClock(0.0)
    limiter = ProviderLimiter(100, 10, 1, clock)  # Wikipedia: 100 per minute, burst 10
    waits = [limiter.reserve(deadline=1e9) for _ in range(12)]
    assert waits[:10] == [0.0] * 10
    assert waits[10] is not None and abs(waits[10] - 0.6) < 1e-9  # 600 ms a call
    assert waits[11] is not None and abs(waits[11] - 1.2) < 1e-9


def test_req_cmp_002_a_call_that_cannot_be_admitted_before_the_deadline_is_not_made() -> None:
    clock = FakeClock(0.0)
    limiter = ProviderLimiter(60, 1, 2, clock)  # Brave: one a second
    assert limiter.reserve(deadline=2.5) == 0.0
    assert limiter.reserve(deadline=0.5) is None  # would have to wait 1 s
    assert limiter.reserve(deadline=2.5) == 1.0  # the refused call took no token


def test_req_cmp_002_retry_after_holds_the_engine() -> None:
    clock = FakeClock(0.0)
    limiter = ProviderLimiter(6000, 100, 2, clock)
    limiter.hold(30)
    assert limiter.reserve(deadline=10) is None
    clock.now = 31
    assert limiter.reserve(deadline=40) == 0.0


def test_req_test_016_requests_in_flight_never_exceed_the_engines_cap(tmp_path: Path) -> None:
    core, _ = make(tmp_path, "[limits]\nper_engine_in_flight = 8\n")
    in_flight: dict[str, int] = {WIKI: 0, BRAVE: 0}
    peak: dict[str, int] = {WIKI: 0, BRAVE: 0}
    answers = {WIKI: wikipedia(["Rust"]), BRAVE: brave(["https://a.example/"])}

    class Counting(FakeClient):
        async def get(self, url: str, **kwargs: Any) -> Response:
            host = url.split("/")[2]
            in_flight[host] += 1
            peak[host] = max(peak[host], in_flight[host])
            try:
                await anyio.sleep(0.05)
                return answers[host]
            finally:
                in_flight[host] -= 1

    counting = Counting()
    core.searches.client = counting  # type: ignore[assignment]
    for engine_id, limiter in list(core.store.limiters.items()):
        # Only the concurrency caps are under test here: lift the rates.
        cap = int(limiter.slots.total_tokens)
        core.store.limiters[engine_id] = ProviderLimiter(60000, 1000, cap)  # type: ignore[index]

    async def many() -> None:
        async with anyio.create_task_group() as group:
            for _ in range(8):
                group.start_soon(core.search, {"query": "rust"})

    anyio.run(many)
    assert peak[WIKI] == 1  # the Wikipedia record admits one request at a time
    assert peak[BRAVE] == 2  # Brave's record admits two, below per_engine_in_flight
