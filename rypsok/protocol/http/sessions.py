"""Sessions of the handshake-based revisions, one SDK session manager per caller.

One manager per caller because the SDK's low-level Server is built for one
caller (rate limits are per caller), and a session id issued to one caller is
then unknown to every other. The bound LIM-H6 holds across all of them: the
pool counts live sessions at the moment the SDK admits one, so two handshakes
racing past the gate's own check cannot both take the last slot.

A cancelled call of a session gets no further message (REQ-MCP-007): the SDK would
end its stream with a -32800 error, rypsok ends it with nothing.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Any

import anyio
import anyio.abc
from mcp.server import Server
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp_types import RequestId

from rypsok.core import limits

SESSION_EXPIRY_S = limits.default("LIM-H6T")


class SessionPool:
    def __init__(self, max_sessions: int) -> None:
        self.max_sessions = max_sessions
        self.managers: dict[str, _BoundedManager] = {}

    def live(self) -> int:
        # The SDK keeps no public count; the pinned version's registry (mcp==2.3.0).
        return sum(len(m._server_instances) for m in self.managers.values())

    def full(self) -> bool:
        return self.live() >= self.max_sessions

    def add(self, caller: str, server: Server[Any], max_request_bytes: int) -> None:
        self.managers[caller] = _BoundedManager(server, self, max_request_bytes)

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


async def _run_until(
    manager: StreamableHTTPSessionManager,
    stop: anyio.Event,
    *,
    task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    async with manager.run():
        task_status.started()
        await stop.wait()


class _BoundedManager(StreamableHTTPSessionManager):
    def __init__(self, server: Server[Any], pool: SessionPool, max_request_bytes: int) -> None:
        super().__init__(
            server,
            json_response=False,  # SSE mode: a closed response stream cancels the call
            stateless=False,
            security_settings=None,  # the gate checks Host and Origin (403, not 421)
            session_idle_timeout=SESSION_EXPIRY_S,
            max_request_body_size=max_request_bytes,
            max_sessions=pool.max_sessions,
        )
        self._pool = pool

    def _admit_session(self, requestor: Any) -> StreamableHTTPServerTransport | None:
        # Synchronous in the SDK (no await between the check and the registration),
        # so the pool-wide count cannot be raced on one event loop.
        if self._pool.full():
            return None
        transport = super()._admit_session(requestor)
        if transport is not None:
            _end_unanswered_quietly(transport)
        return transport


def _end_unanswered_quietly(transport: StreamableHTTPServerTransport) -> None:
    """Make the transport end a cancelled request's stream without a message.

    The pinned SDK (mcp==2.3.0) calls the transport's private
    `_terminate_unanswered_request(id)`, looked up on the instance, once a request
    settled without an answer (it was cancelled); its own version writes a -32800
    error on the request's stream, which the SDK's stream writer otherwise waits for.
    tests/protocol/test_cancellation_bound.py fails if the SDK stops calling it or answers a
    cancelled call some other way.
    """

    async def end_stream(request_id: RequestId) -> None:
        # The SDK keys a request's streams by str(id). The stream ends with no event;
        # whatever is still queued for the cancelled call goes with it.
        transport.close_sse_stream(str(request_id))

    transport._terminate_unanswered_request = end_stream  # type: ignore[method-assign]
