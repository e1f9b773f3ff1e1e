"""Sessions of the handshake-based revisions, one SDK session manager per caller.

One manager per caller because the SDK's low-level Server is built for one
caller (rate limits are per caller), and a session id issued to one caller is
then unknown to every other. The bound LIM-H6 holds across all of them: the
pool counts live sessions at the moment the SDK admits one, so two handshakes
racing past the gate's own check cannot both take the last slot.

A cancelled call of a session gets no further message (REQ-MCP-007): the SDK would
end its stream with a -32800 error, rypsok ends it with nothing.

Two ways to do both, with the same answers. Hooked (the SDK's private hooks are
available and [service.http] fast_lane is on): the SDK's own registry is counted and
its admission and cancelled-call ending are replaced (protocol/sdk_private.py).
Public: the SDK's managers as they are, each request passing through the ledger of
session_ledger.py, which counts sessions from what goes in and out and drops the -32800.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Any

import anyio
import anyio.abc
from mcp.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from rypsok.core import limits
from rypsok.protocol import sdk_private
from rypsok.protocol.http.asgi import ASGIApp
from rypsok.protocol.http.session_ledger import SessionLedger

SESSION_EXPIRY_S = limits.default("LIM-H6T")


def _expiry_s() -> float:
    return SESSION_EXPIRY_S  # read at each use: a test shortens it


class SessionPool:
    def __init__(self, max_sessions: int, *, hooked: bool) -> None:
        self.max_sessions = max_sessions
        self.hooked = hooked
        self.managers: dict[str, StreamableHTTPSessionManager] = {}
        self._registries: list[sdk_private.HookedSessionManager] = []
        self._ledger = SessionLedger(_expiry_s)

    def live(self) -> int:
        if self.hooked:
            return sum(m.live() for m in self._registries)
        return self._ledger.live()

    def full(self) -> bool:
        return self.live() >= self.max_sessions

    def add(self, caller: str, server: Server[Any], max_request_bytes: int) -> None:
        settings = _settings(max_request_bytes, self.max_sessions)
        if self.hooked:
            manager = sdk_private.HookedSessionManager(server, admit=self._room, **settings)
            self._registries.append(manager)
            self.managers[caller] = manager
        else:
            self.managers[caller] = StreamableHTTPSessionManager(server, **settings)

    def _room(self) -> bool:
        return not self.full()

    def app(self, caller: str) -> ASGIApp:
        """The ASGI callable that serves `caller`'s requests (its manager running)."""
        handle: ASGIApp = self.managers[caller].handle_request
        return handle if self.hooked else self._ledger.tracking(caller, handle, self.full)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Mapping[str, StreamableHTTPSessionManager]]:
        """Every manager running, each in a task of its own. Entered one inside the
        other, their task groups would be ancestors of every request's task, and
        anyio walks that chain at each cancel scope: with 64 callers, a third of a
        call's time (issue 17)."""
        stop = anyio.Event()
        async with anyio.create_task_group() as group:
            try:
                for manager in self.managers.values():
                    await group.start(_run_until, manager, stop)
                yield self.managers
            finally:
                stop.set()


def _settings(max_request_bytes: int, max_sessions: int) -> dict[str, Any]:
    return dict(
        json_response=False,  # SSE mode: a closed response stream cancels the call
        stateless=False,
        security_settings=None,  # the gate checks Host and Origin (403, not 421)
        session_idle_timeout=SESSION_EXPIRY_S,
        max_request_body_size=max_request_bytes,
        # The pool-wide count refuses first (the gate, or the admission); this
        # manager's own bound can never be the one that does.
        max_sessions=max_sessions,
    )


async def _run_until(
    manager: StreamableHTTPSessionManager,
    stop: anyio.Event,
    *,
    task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    async with manager.run():
        task_status.started()
        await stop.wait()
