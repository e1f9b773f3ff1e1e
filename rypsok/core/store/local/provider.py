"""Provider limits of one engine: its rate (with burst) and its concurrency.

The rate is a token bucket filled at the admission record's rate per minute,
holding at most its burst. A call that would have to wait past its deadline
is not made (the engine is skipped with `rate_limited`), so the provider's
limit is never exceeded (REQ-CMP-002). A Retry-After from the provider holds
the engine until then. The redis backend's twins are `RESERVE`, `HOLD` and
`SLOT_ACQUIRE` in store/scripts.py.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import anyio


class ProviderLimiter:
    def __init__(
        self,
        rate_per_minute: float,
        burst: int,
        concurrency: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._interval = 60.0 / rate_per_minute
        self._capacity = float(max(1, burst))
        self._tokens = self._capacity
        self._clock = clock
        self._stamp = clock()
        self._not_before = 0.0
        self._lock = threading.Lock()
        self.slots = anyio.CapacityLimiter(concurrency)

    def _refill(self, now: float) -> None:
        self._tokens = min(self._capacity, self._tokens + (now - self._stamp) / self._interval)
        self._stamp = now

    def reserve(self, deadline: float) -> float | None:
        """Seconds to wait for this call's turn, or None when it would pass *deadline*.

        The reservation is taken at once, so concurrent calls queue in order;
        the caller sleeps the returned time before sending.
        """
        with self._lock:
            now = self._clock()
            self._refill(now)
            token_wait = 0.0 if self._tokens >= 1 else (1 - self._tokens) * self._interval
            at = max(now + token_wait, self._not_before)
            if at > deadline:
                return None
            self._tokens -= 1
            return at - now

    def hold(self, seconds: float) -> None:
        """The provider asked for a pause (Retry-After): no request before it ends."""
        with self._lock:
            self._not_before = max(self._not_before, self._clock() + seconds)
