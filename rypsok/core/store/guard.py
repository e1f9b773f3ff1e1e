"""Whether the shared store is answering, and every call to it bounded in time.

Two states. Available: every operation goes to Redis. Unavailable: entered when an
operation fails with an error, or when TIMEOUTS_TO_FAIL operations in a row are late.
For LIM-D4 ms after the latest failure no operation tries Redis (each answers from this
process at once); after that one operation at a time tries again (the trial) while the
others still answer locally, and the trial's success makes the store available again.

Late means Redis owes the answer, not that the answer was slow to be noticed. While an
operation talks to Redis, its task is looked at LOOKS times per store timeout, each look
made just after the loop's next poll of its sockets, so that whatever Redis sent by then
has been read. The task is then either waiting for its own turn to run (what it awaited,
a reply or a connection, has come) or waiting on something unfinished. Only a task seen
waiting on the same unfinished thing for a whole timeout is late. A busy loop (other
calls, a garbage collection, a CPU-bound step) delays the looks, never what they see: it
is not held against the store. (The client's own timeouts would be, as its clock is the
loop's: the redis backend sets none.) One late operation is answered locally; a run of
them, or an error, takes the store away, and then nothing waits for it any longer.

At most `connections` operations talk to Redis at once (the client's connections); the
others queue here. Queueing is this process's own time and is never judged.

Each operation is bounded by the call around it: at most what is left of the call's
own time (its cancel scope's deadline) less LIM-D7, the time kept to answer locally
(`NoTime` when that runs out; nothing is held against the store), so a call never ends
late because of the store. An operation with no deadline of its own (a slot given back
under a shield) waits at most one rest (LIM-D4).

Each change is logged once (`store_unavailable` with the operation and the exception's
type name, never its message, which may name the server; `store_recovered`) and counted.
A cancelled caller is never held up or swallowed here: only the store's own failures
and its lateness become `Away`. The verdict reads the waiting task of an asyncio loop:
this guard runs on asyncio, as the Redis client does.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio

from rypsok.core import limits
from rypsok.core.telemetry import counters, log

T = TypeVar("T")


# Late operations in a row before the store is taken as away.
TIMEOUTS_TO_FAIL = 3
# Looks at an operation per store timeout: it is late when its task waited on the same
# unfinished thing at LOOKS + 1 looks in a row, so for the timeout at least and a quarter
# more at most.
LOOKS = 4
_UNKNOWN = object()


class Away(Exception):
    """The store did not answer this operation: answer from this process instead."""


class NoTime(Away):
    """The call has no time left to wait for the store: answer from this process, and
    take nothing that the call would then hold past its end."""


class _Watch:
    """One operation at Redis: its task and scope, the pending look, what the task was
    seen waiting on and since how many looks, and the verdict."""

    __slots__ = ("handle", "late", "looks", "operation", "scope", "task", "waiting")

    def __init__(self, operation: str, scope: anyio.CancelScope) -> None:
        self.operation = operation
        self.scope = scope
        self.task = asyncio.current_task()
        self.handle: asyncio.TimerHandle | None = None
        self.waiting: object = None
        self.looks = 0
        self.late = False


class Guard:
    def __init__(
        self,
        timeout_s: float,
        rest_s: float = limits.default("LIM-D4") / 1000,
        clock: Callable[[], float] = time.monotonic,
        timeouts: tuple[type[Exception], ...] = (TimeoutError,),
        connections: int = limits.default("LIM-D3"),
    ) -> None:
        self.timeout_s = timeout_s
        # What a client raises when a wait of its own ran out counts as lateness too.
        self._timeouts = timeouts
        self.rest_s = rest_s
        self._clock = clock
        self.available = True
        self._retry_at = 0.0
        self._trial = False  # an operation is trying the unavailable store
        self._late = 0  # operations in a row that were late
        self._reserve_s = limits.default("LIM-D7") / 1000
        self._turns = anyio.Semaphore(connections, fast_acquire=True)
        self._asking: set[anyio.CancelScope] = set()  # operations queued or at Redis

    def _begin(self) -> bool | None:
        """None: do not try now; True: this operation is the trial; False: a normal try."""
        if self.available:
            return False
        if self._trial or self._clock() < self._retry_at:
            return None
        self._trial = True
        return True

    async def run(self, operation: str, call: Callable[[], Awaitable[T]]) -> T:
        """`call`'s answer; `Away` when the store is resting, failed, was late, or the
        call around ran out of time (then `NoTime`)."""
        now = anyio.current_time()
        budget_s = anyio.current_effective_deadline() - now - self._reserve_s
        if budget_s <= 0:
            counters.add("store", "local", operation)
            raise NoTime
        trial = self._begin()
        if trial is None:
            counters.add("store", "local", operation)
            raise Away
        deadline = now + (budget_s if math.isfinite(budget_s) else self.rest_s)
        watch = _Watch(operation, anyio.CancelScope(deadline=deadline))
        try:
            with watch.scope:
                value = await self._ask(call, watch)
                self._late = 0
                if trial:
                    self._recovered()
                return value
        except Exception as exc:  # any failure of the store, or a client's own timeout
            if isinstance(exc, self._timeouts):
                self._timed_out(operation, exc, trial)
            else:
                self._failed(operation, exc)
            raise Away from None
        finally:
            if trial:
                self._trial = False
        # Cancelled by this guard: late, or the call's time ran out, or queued when the
        # store went away.
        if watch.late:
            self._timed_out(operation, TimeoutError(), trial)
            raise Away
        counters.add("store", "local", operation)
        if anyio.current_time() >= deadline:
            raise NoTime
        raise Away

    async def _ask(self, call: Callable[[], Awaitable[T]], watch: _Watch) -> T:
        """`call` once this operation has its turn at Redis, watched while it runs."""
        self._asking.add(watch.scope)
        try:
            try:
                self._turns.acquire_nowait()
            except anyio.WouldBlock:
                await self._turns.acquire()
            try:
                self._look_later(watch)
                return await call()
            finally:
                if watch.handle is not None:
                    watch.handle.cancel()
                self._turns.release()
        finally:
            self._asking.discard(watch.scope)

    def _look_later(self, watch: _Watch) -> None:
        loop = asyncio.get_running_loop()
        watch.handle = loop.call_at(loop.time() + self.timeout_s / LOOKS, self._look, watch)

    def _look(self, watch: _Watch) -> None:
        # A timer due now runs after the next poll's I/O callbacks: by then every byte
        # that had arrived is read, and the task it woke is runnable.
        loop = asyncio.get_running_loop()
        watch.handle = loop.call_at(loop.time(), self._judge, watch)

    def _judge(self, watch: _Watch) -> None:
        waiting = _waiting_on(watch.task)
        if waiting is None:
            # What it waited for has come (a reply, a connection): it only waits for its
            # turn on this process's busy loop.
            counters.add("store", "behind", watch.operation)
            watch.waiting, watch.looks = None, 0
        elif waiting is not watch.waiting:  # it moved on since the last look
            watch.waiting, watch.looks = waiting, 0
        else:
            watch.looks += 1
            if watch.looks >= LOOKS:  # the same wait for a whole timeout: Redis owes it
                watch.late = True
                watch.scope.cancel()
                return
        self._look_later(watch)

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
        for scope in tuple(self._asking):  # they would wait for a store that is away
            scope.cancel()
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


def _waiting_on(task: asyncio.Task[Any] | None) -> object | None:
    """The unfinished future `task` waits on; None when it only waits for its turn (what
    it awaits is done, or it yielded to the loop)."""
    if task is None:
        return _UNKNOWN
    # Private to asyncio (the C and the Python task alike; anyio's cancel scopes read it
    # too). Without it, every look sees the same wait: strict, as a plain timeout.
    waiter: object = getattr(task, "_fut_waiter", _UNKNOWN)
    if waiter is None or (isinstance(waiter, asyncio.Future) and waiter.done()):
        return None
    return waiter


__all__ = ["Away", "Guard", "NoTime"]
