"""Permits: tokens of an anyio capacity limiter, held for an `async with` block (`Permit`)
or for a worker thread's whole life (`run_under_permit`).

The parsing permits (LIM-C5): a parse runs in a worker thread and holds its permit until
that thread has really finished (REQ-SEC-012, REQ-PAGE-008, REQ-AGG-006).

A caller that is cancelled (or gives up for any other reason) stops waiting at once, so a
call still ends on time; but its thread cannot be killed, only asked to stop. It is asked
through a `threading.Event` handed to the work, which the tree builder checks as it goes,
and the permit stays with the thread until the work returns. So at no moment do more than
LIM-C5 threads parse, and the memory estimate (LIM-C5 × parse cost) holds even after
cancellations.

Who hands the permit back depends on when the caller stops waiting:

* the work has not started: the caller, and the work is then skipped;
* the work is running: the thread, once the work returns or raises;
* the work has ended: the caller.

A `CapacityLimiter` belongs to its event loop, so the thread never touches it directly: it
schedules the release on the loop and moves on (the backend's `run_sync_soon`, what anyio's
own portals use). It does not wait for the loop, as `anyio.from_thread.run_sync` would: a
loop that has stopped without closing would leave the thread blocked for good, and with it
the interpreter's exit. A thread that ends after the loop has stopped drops the release and
raises nothing, in a thread where no one would see it: the permits are of no more use once
their loop is over (the service runs one loop for its life; a test that runs several loops
on one service lets an abandoned parse end before its loop does).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import TypeVar

import anyio
import anyio.lowlevel
import anyio.to_thread

from rypsok.core.disposal import forget_urls

T = TypeVar("T")

# Where the work stands; the transitions happen under one lock, from either side.
_WAITING = "waiting"  # handed to anyio, not yet started in a thread
_SKIPPED = "skipped"  # the caller gave up first: the thread will not run it
_RUNNING = "running"
_ABANDONED = "abandoned"  # the caller gave up while it ran: the thread releases
_ENDED = "ended"  # it returned or raised while the caller still waited


async def run_under_permit(
    permits: anyio.CapacityLimiter, work: Callable[[threading.Event], T]
) -> T:
    """`work(cancel)` in a worker thread, under one of `permits`; its result or exception.

    `cancel` is set as soon as the caller stops waiting (cancellation, a deadline), and only
    then: whatever the work raises once it is set (e.g. ParseCancelled) reaches no caller.
    """
    cancel = threading.Event()
    borrower = object()  # this call's own claim on a permit, released by whoever ends last
    token = anyio.lowlevel.current_token()
    lock = threading.Lock()
    state = _WAITING

    def in_thread() -> T:
        nonlocal state
        with lock:
            if state == _SKIPPED:
                raise _NotRun  # nobody is waiting for it and the permit is already back
            state = _RUNNING
        try:
            return work(cancel)
        finally:
            with lock:
                abandoned = state == _ABANDONED
                state = _ENDED
            if abandoned:
                forget_urls()  # its call has ended and cleared already: this thread is late
                _hand_back(token, permits, borrower)

    await permits.acquire_on_behalf_of(borrower)
    try:
        result = await anyio.to_thread.run_sync(in_thread, abandon_on_cancel=True)
    except BaseException:
        cancel.set()
        with lock:
            if state == _RUNNING:
                state = _ABANDONED
            elif state == _WAITING:
                state = _SKIPPED
            thread_releases = state == _ABANDONED
        if not thread_releases:
            permits.release_on_behalf_of(borrower)
        raise
    permits.release_on_behalf_of(borrower)
    return result


def _hand_back(
    token: anyio.lowlevel.EventLoopToken, permits: anyio.CapacityLimiter, borrower: object
) -> None:
    """From a worker thread: release `borrower`'s permit on the permits' loop, without
    waiting for the loop; nothing when the loop has closed."""
    # RuntimeError, RunFinishedError among them: the loop, and with it the permits, is over.
    with contextlib.suppress(RuntimeError):
        token.backend_class.run_sync_soon(
            permits.release_on_behalf_of, (borrower,), token.native_token
        )


class _NotRun(Exception):
    """The thread reached work whose caller had already gone; anyio drops what it raises."""


class Permit:
    """`async with` one of a capacity limiter's tokens (an outbound request's place, an
    engine's slot), taken at once when one is free.

    anyio's own `async with` yields to the event loop even then (a checkpoint before and a
    shielded one after taking the token); here a free token costs no scheduling round, and
    only a full limiter makes the task wait, as anyio's acquire does.
    """

    __slots__ = ("limiter",)

    def __init__(self, limiter: anyio.CapacityLimiter) -> None:
        self.limiter = limiter

    async def __aenter__(self) -> None:
        try:
            self.limiter.acquire_nowait()
        except anyio.WouldBlock:
            await self.limiter.acquire()

    async def __aexit__(self, *exc_info: object) -> None:
        self.limiter.release()
