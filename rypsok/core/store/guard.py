"""Whether the shared store is answering, and every call to it bounded in time.

Two states. Available: every operation goes to Redis. Unavailable: entered when an
operation fails with an error, or when TIMEOUTS_TO_FAIL operations in a row outlast the
store timeout. For LIM-D4 ms after the latest failure no operation tries Redis (each
answers from this process at once); after that one operation at a time tries again
(the trial) while the others still answer locally, and the trial's success makes the
store available again.

Why timeouts need a run: a replica's own event loop, busy with other calls or paused by
a garbage collection (about 55 ms for a full one), makes a reply that came in time look
late. A late operation is still answered locally, at its timeout; only a run of them
says Redis is slow rather than this process.

Each wait is also bounded by the call around it: an operation gets at most what is left
of the call's own time (its cancel scope's deadline) less LIM-D7, the time kept to
answer locally, so a call never ends late because of the store.

Each change is logged once (`store_unavailable` with the operation and the exception's
type name, never its message, which may name the server; `store_recovered`) and counted.
A cancelled caller is never held up or swallowed here: only the store's own failures
and its timeout become `Away`.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio
import anyio.lowlevel

from rypsok.core import limits
from rypsok.core.telemetry import counters, log

T = TypeVar("T")


# Operations in a row that outlast the timeout before the store is taken as away.
TIMEOUTS_TO_FAIL = 3
# One turn of the event loop at least this long (or a tenth of the timeout) means the
# process itself is behind: its timeouts are not held against the store.
LOOP_LATE_S = 0.005


class Away(Exception):
    """The store did not answer this operation: answer from this process instead."""


class NoTime(Away):
    """The call has no time left to wait for the store; the store was not asked."""


class Guard:
    def __init__(
        self,
        timeout_s: float,
        rest_s: float = limits.default("LIM-D4") / 1000,
        clock: Callable[[], float] = time.monotonic,
        timeouts: tuple[type[Exception], ...] = (TimeoutError,),
    ) -> None:
        self.timeout_s = timeout_s
        # What a client raises when its own socket wait ran out counts as lateness too.
        self._timeouts = timeouts
        self.rest_s = rest_s
        self._clock = clock
        self.available = True
        self._retry_at = 0.0
        self._trial = False  # an operation is trying the unavailable store
        self._late = 0  # operations in a row that outlasted the timeout
        self._reserve_s = limits.default("LIM-D7") / 1000

    def _begin(self) -> bool | None:
        """None: do not try now; True: this operation is the trial; False: a normal try."""
        if self.available:
            return False
        if self._trial or self._clock() < self._retry_at:
            return None
        self._trial = True
        return True

    async def run(self, operation: str, call: Callable[[], Awaitable[T]]) -> T:
        """`call`'s answer, within the store timeout; `Away` when the store is resting
        or this call failed."""
        wait_s = min(
            self.timeout_s,
            anyio.current_effective_deadline() - anyio.current_time() - self._reserve_s,
        )
        if wait_s <= 0:
            counters.add("store", "local", operation)
            raise NoTime
        trial = self._begin()
        if trial is None:
            counters.add("store", "local", operation)
            raise Away
        try:
            with anyio.fail_after(wait_s):
                value = await call()
        except Exception as exc:  # any failure of the store, or a wait that ran out
            if not isinstance(exc, self._timeouts):
                self._failed(operation, exc)
            elif await self._loop_is_late():
                # This process is behind on its own work: the lateness is ours.
                counters.add("store", "late", operation)
                counters.add("store", "local", operation)
            else:
                self._timed_out(operation, exc, trial)
            raise Away from None
        finally:
            if trial:
                self._trial = False
        self._late = 0
        if trial:
            self._recovered()
        return value

    async def _loop_is_late(self) -> bool:
        """Whether one turn of this process's event loop takes long: then a reply that
        came in time waited behind other work, and says nothing about Redis."""
        started = anyio.current_time()
        await anyio.lowlevel.checkpoint()
        return anyio.current_time() - started >= max(LOOP_LATE_S, self.timeout_s / 10)

    def _timed_out(self, operation: str, exc: Exception, trial: bool) -> None:
        self._late += 1
        if trial or not self.available or self._late >= TIMEOUTS_TO_FAIL:
            self._failed(operation, exc)
            return
        counters.add("store", "late", operation)
        counters.add("store", "local", operation)

    def _failed(self, operation: str, exc: Exception) -> None:
        error = type(exc).__name__
        counters.add("store", "errors", error)
        counters.add("store", "local", operation)
        self._retry_at = self._clock() + self.rest_s
        if self.available:
            self.available = False
            counters.add("store", "state", "unavailable")
            log.warn(
                "store_unavailable",
                operation=operation,
                error=error,
                retry_in_ms=int(self.rest_s * 1000),
            )

    def _recovered(self) -> None:
        # Only a trial that began while unavailable ends that state: an operation that
        # was already in flight when another failed proves nothing about now.
        if not self.available:
            self.available = True
            counters.add("store", "state", "recovered")
            log.info("store_recovered")


__all__ = ["Away", "Guard", "NoTime"]
