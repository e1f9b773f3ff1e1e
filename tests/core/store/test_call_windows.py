"""Issue 37, item 3: callers from tokens are not known in advance, so the per-caller call
windows of one process are bounded (LIM-A12) without letting a caller escape its limit."""

from __future__ import annotations

from rypsok.core.store.local.calls import ToolRateLimiter
from tests.support.clock import FakeClock


def test_issue_37_ten_thousand_callers_keep_a_bounded_number_of_windows() -> None:
    clock = FakeClock(100.0)
    limiter = ToolRateLimiter({"web_fetch": 2}, clock)
    limiter.max_windows = 100
    for n in range(10_000):
        assert limiter.try_acquire(f"oauth:user-{n}", "web_fetch") is None
    assert len(limiter) <= 100


def test_issue_37_a_caller_inside_its_window_is_kept_while_spent_windows_go() -> None:
    clock = FakeClock(100.0)
    limiter = ToolRateLimiter({"web_fetch": 2}, clock)
    limiter.max_windows = 3
    assert limiter.try_acquire("oauth:busy", "web_fetch") is None
    assert limiter.try_acquire("oauth:busy", "web_fetch") is None
    clock.now += 30
    for name in ("a", "b"):
        assert limiter.try_acquire(f"oauth:{name}", "web_fetch") is None
    clock.now += 31  # busy's calls are 61 s old, a's and b's 31 s
    assert limiter.try_acquire("oauth:c", "web_fetch") is None
    # busy's spent window went first; a and b (still inside theirs) stayed and are limited.
    assert limiter.try_acquire("oauth:a", "web_fetch") is None
    assert limiter.try_acquire("oauth:a", "web_fetch") is not None
