"""Every touch of the MCP SDK's private names, in one module.

rypsok reaches past the SDK's public API in three places, each read in mcp 2.3.0:
- the fast lane (http/modern.py): the checks, the event writer and the dispatch
  context of the SDK's own stateless-revision entry, and the lifespan state its
  session manager keeps;
- the session hooks (http/sessions.py): a manager's live sessions, the admission
  of a new one under the bound shared by every caller, and a cancelled call's
  stream ended without the SDK's -32800;
- stdio (stdio.py): the streams that carry the reader's context to the handler,
  as the SDK's own stdio transport builds them.

Private names change without notice (the file behind the lane changed eleven times
in two months), so they are taken from the version they were read in and no other:
at import the installed version is compared with PINNED. On any other one (or if a
name is gone) nothing private is imported and AVAILABLE is False; the listener then
serves through the SDK's public session manager and stdio through anyio's memory
streams, and `warn_if_unavailable` says so once at start. No other module imports an
underscore name of mcp (tests/test_layering.py).
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

import anyio
from mcp.server import Server
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.dispatcher import DispatchContext
from mcp.shared.jsonrpc_dispatcher import progress_token_from_params
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from mcp.shared.transport_context import TransportContext
from mcp_types import JSONRPCError, JSONRPCRequest, JSONRPCResponse, RequestId
from starlette.requests import Request

from rypsok.core.telemetry import log

if TYPE_CHECKING:
    from mcp.shared._stream_protocols import ReadStream, WriteStream
    from mcp.shared.inbound import InboundModernRoute

    from rypsok.protocol.http.asgi import Message, Send

PINNED = "2.3.0"


def _installed() -> str | None:
    try:
        return importlib.metadata.version("mcp")
    except importlib.metadata.PackageNotFoundError:
        return None


INSTALLED = _installed()
AVAILABLE = False
UNAVAILABLE: str | None = (
    None
    if INSTALLED == PINNED
    else f"mcp {INSTALLED or '(version unknown)'} is installed; the hooks were read in {PINNED}"
)
if UNAVAILABLE is None:
    try:
        from mcp.server import _streamable_http_modern as _modern
        from mcp.server._streamable_http_modern import (
            _SSE_HEADERS,
            _mcp_param_rejection,
            _SingleExchangeDispatchContext,
            _sse_event,
            _to_jsonrpc_response,
            _write,
        )
        from mcp.shared._context_streams import create_context_streams
    except ImportError as exc:  # a patched 2.3.0 without them: the public path serves
        UNAVAILABLE = f"mcp {INSTALLED} lacks a private name the hooks use ({exc.name})"
    else:
        AVAILABLE = True


def warn_if_unavailable(transport: str) -> None:
    """Say once, at start, that the hooks are off and why (never a reason to stop)."""
    if not AVAILABLE:
        log.warn(
            "sdk_hooks_unavailable",
            transport=transport,
            installed=INSTALLED,
            pinned=PINNED,
            message=f"{UNAVAILABLE}: serving through the SDK's public path",
        )


# ------------------------------------------------------------------ the fast lane


class EventSink(Protocol):
    """Where the dispatch context writes a notification's event (what the SDK's sink
    is asked to do: send() alone)."""

    async def send(self, event: bytes) -> None: ...


SSE_HEADERS: list[tuple[bytes, bytes]] = list(_SSE_HEADERS) if AVAILABLE else []


def sse_ping_interval() -> float:
    """The SDK's silence before an event stream and between its pings, read at each
    call so that the lane follows the SDK's own value."""
    return float(_modern._SSE_PING_INTERVAL)


def lifespan_state(manager: StreamableHTTPSessionManager) -> Any:
    return manager._lifespan_state  # set by the manager's run()


async def mcp_param_refused(
    manager: StreamableHTTPSessionManager,
    request: Request,
    message: JSONRPCRequest,
    route: InboundModernRoute,
) -> bool:
    """The SDK's check of a call's Mcp-Param-* headers against the tool's schema."""
    rejection = await _mcp_param_rejection(
        manager.app, request, message, route, lifespan_state(manager)
    )
    return rejection is not None


def exchange_context(
    request: Request, message: JSONRPCRequest, sink: EventSink
) -> DispatchContext[TransportContext]:
    """The SDK's dispatch context of one stateless-revision request, writing its
    notifications to `sink`."""
    context = _SingleExchangeDispatchContext(
        transport=TransportContext(
            kind="streamable-http", can_send_request=False, headers=request.headers
        ),
        request_id=message.id,
        message_metadata=ServerMessageMetadata(request_context=request),
        progress_token=progress_token_from_params(message.params),
    )
    context.sink = sink  # type: ignore[assignment]  # send() alone is what it calls
    return context


async def outcome_of(
    request_id: RequestId, result: Awaitable[dict[str, Any]]
) -> JSONRPCResponse | JSONRPCError:
    """The SDK's mapping of a handler's result or exception to its JSON-RPC reply."""
    return await _to_jsonrpc_response(request_id, result)


def sse_event(outcome: JSONRPCResponse | JSONRPCError) -> bytes:
    return _sse_event(outcome)


async def write_json(outcome: JSONRPCResponse | JSONRPCError, scope: Message, send: Send) -> None:
    """The SDK's JSON reply, with the status its error table maps the outcome to."""
    await _write(outcome, scope, _no_receive, send)


async def _no_receive() -> Message:  # pragma: no cover - a Response never reads
    return {"type": "http.disconnect"}


# ------------------------------------------------------------- the session hooks


class HookedSessionManager(StreamableHTTPSessionManager):
    """The SDK's session manager, admitting a session only while `admit()` says yes
    (checked and registered with no await between, so the bound shared across
    managers cannot be raced on one event loop), and ending a cancelled call's
    stream without a message."""

    def __init__(self, server: Server[Any], *, admit: Callable[[], bool], **settings: Any) -> None:
        super().__init__(server, **settings)
        self._rypsok_admit = admit

    def live(self) -> int:
        # The SDK keeps no public count: its registry of transports.
        return len(self._server_instances)

    def _admit_session(self, requestor: Any) -> StreamableHTTPServerTransport | None:
        if not self._rypsok_admit():
            return None
        transport = super()._admit_session(requestor)
        if transport is not None:
            _end_unanswered_quietly(transport)
        return transport


def _end_unanswered_quietly(transport: StreamableHTTPServerTransport) -> None:
    """Make the transport end a cancelled request's stream without a message.

    The SDK calls the transport's `_terminate_unanswered_request(id)`, looked up on
    the instance, once a request settled without an answer (it was cancelled); its
    own version writes a -32800 error on the request's stream, which the SDK's stream
    writer otherwise waits for. tests/protocol/test_cancellation_bound.py fails if
    the SDK stops calling it or answers a cancelled call some other way.
    """

    async def end_stream(request_id: RequestId) -> None:
        # The SDK keys a request's streams by str(id). The stream ends with no event;
        # whatever is still queued for the cancelled call goes with it.
        transport.close_sse_stream(str(request_id))

    transport._terminate_unanswered_request = end_stream  # type: ignore[method-assign]


# ------------------------------------------------------------------------ stdio


def message_streams() -> tuple[
    tuple[WriteStream[SessionMessage | Exception], ReadStream[SessionMessage | Exception]],
    tuple[WriteStream[SessionMessage], ReadStream[SessionMessage]],
]:
    """The server's read streams (sender, receiver) and write streams, as the SDK's
    stdio transport makes them: carrying the sender's context vars to the handler.
    Without the hooks, anyio's memory streams, which the SDK's server takes as well;
    rypsok's reader sets no context var for a handler to miss."""
    if AVAILABLE:
        return (
            create_context_streams[SessionMessage | Exception](0),
            create_context_streams[SessionMessage](0),
        )
    return (
        anyio.create_memory_object_stream[SessionMessage | Exception](0),
        anyio.create_memory_object_stream[SessionMessage](0),
    )
