"""One download for one page: calls of one caller for one URL that overlap share it.

A call that finds no page kept for it (continuation.py) starts the download, or joins
the one already under way for the same caller and URL; every call it serves gets the
page, or the same failure. What each call does before (argument checks, the secret
check, strict mode, the egress policy) and after (its own part of the page) is its own.
A different caller never joins: the key holds the caller, as the memory's does.

The download runs in a task of its own, not in any call's, so that a call that ends
(its deadline, or the host cancelled it) does not end it for the others. It ends by its
own deadline (fetch.deadline_ms, then the parse's), or when the last call waiting for it
has gone: then nobody would read the page, and it is cancelled at once. The table holds
downloads in flight only. Like the memory, it is used from the event loop only.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

import anyio

from rypsok.core.model import ToolError

T = TypeVar("T")
Key = tuple[str, str]  # (caller, URL as given, normalized)


class _Flight(Generic[T]):
    __slots__ = ("task", "waiters")

    def __init__(self, task: asyncio.Task[T | ToolError]) -> None:
        self.task = task
        self.waiters = 0


class Downloads(Generic[T]):
    def __init__(self) -> None:
        self._flights: dict[Key, _Flight[T]] = {}

    def __len__(self) -> int:
        return len(self._flights)

    def waiting(self) -> int:
        """How many calls wait for a download, every key together."""
        return sum(flight.waiters for flight in self._flights.values())

    async def share(self, key: Key, download: Callable[[], Awaitable[T]]) -> T:
        """`download()`'s answer, from the download under way for *key* or a new one."""
        flight = self._flights.get(key)
        if flight is None:
            # The task starts in this call's context: its log lines carry this call's id.
            task = asyncio.get_running_loop().create_task(_attempt(download))
            flight = self._flights[key] = _Flight(task)
            task.add_done_callback(lambda ended: self._ended(key, flight, ended))
        flight.waiters += 1
        try:
            # The shield keeps the download running when this call is cancelled.
            outcome = await asyncio.shield(flight.task)
        finally:
            flight.waiters -= 1
            if not flight.waiters and not flight.task.done():
                flight.task.cancel()  # nobody is left to read the page
                self._forget(key, flight)
                # Its fetch slot and its host's turn are handed back, and its parse thread
                # told to stop, before this call ends: as when the call ran the download.
                with anyio.CancelScope(shield=True):
                    await asyncio.wait([flight.task])
        if isinstance(outcome, ToolError):
            # Each call raises its own error: none carries another's traceback.
            raise ToolError(outcome.kind, outcome.message, dict(outcome.detail))
        return outcome

    def _forget(self, key: Key, flight: _Flight[T]) -> None:
        if self._flights.get(key) is flight:
            del self._flights[key]

    def _ended(self, key: Key, flight: _Flight[T], task: asyncio.Task[T | ToolError]) -> None:
        self._forget(key, flight)
        if not task.cancelled():
            task.exception()  # raised in the calls that waited: asyncio need not log it


async def _attempt(download: Callable[[], Awaitable[T]]) -> T | ToolError:
    """The download's answer, or its refusal as a value: kept without its frames."""
    try:
        return await download()
    except ToolError as error:
        return ToolError(error.kind, error.message, error.detail)
