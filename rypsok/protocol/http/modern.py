"""A call of the stateless revision (2026-07-28) served without the SDK's transport.

For such a POST the pinned SDK (mcp==2.3.0) builds a Starlette request, runs the
handler in a task group of two tasks beside a memory stream, and decides between
JSON and an event stream by waiting on that stream: about three quarters of its
cost per call (issue 17, bench/README.md). This lane runs the SDK's own checks in
the SDK's order, then the SDK's own `serve_one` in the request's task, and writes
what the SDK writes: JSON when the handler ends without a notification within the
SDK's ping interval, else an event stream (the notification, keep-alive pings, the
reply). A request the SDK would refuse, and every other kind, is left to the SDK.
The connection cancels the call when the client leaves, where the SDK has a task
watching for it. tests/protocol/http/test_modern_lane.py compares the two paths
byte for byte, so a change of the SDK's behaviour shows there.

What the lane does not check, because the gate (gate.py) already has, before any
request reaches it: the Host and Origin (403), the method (only a POST gets here;
the SDK answers others 405), and Accept naming both JSON and event streams (406;
the SDK's own check, which the connection's normalised_headers restates for it).
A request the gate refuses never reaches the lane
(tests/protocol/http/test_lane_modes.py).

The SDK's private parts it uses are reached through protocol/sdk_private.py; the
listener builds a lane only when they are available and [service.http] fast_lane
is on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

import anyio
from mcp.server.connection import Connection
from mcp.server.runner import serve_one
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.inbound import (
    InboundModernRoute,
    classify_inbound_request,
    find_duplicated_routing_header,
)
from mcp_types import JSONRPCError, JSONRPCRequest, JSONRPCResponse
from pydantic import ValidationError
from starlette.requests import Request

from rypsok.protocol import sdk_private
from rypsok.protocol.http.asgi import Message, Send

_PING = b": ping\r\n\r\n"
_OK = int(HTTPStatus.OK)


@dataclass(frozen=True, slots=True)
class Prepared:
    """A request that passed every check the SDK makes before it dispatches."""

    request: Request
    message: JSONRPCRequest
    route: InboundModernRoute


class ModernLane:
    """The lane of one caller's SDK server (its session manager, already running)."""

    def __init__(self, manager: StreamableHTTPSessionManager) -> None:
        self._manager = manager

    async def prepare(self, scope: Message, decoded: dict[str, Any]) -> Prepared | None:
        """`decoded` is the POST's body as JSON; None leaves the request to the SDK."""
        if "id" not in decoded:
            return None  # a notification: acknowledged by the SDK
        try:
            message = JSONRPCRequest.model_validate(decoded)
        except ValidationError:
            return None
        if message.method == "subscriptions/listen":
            return None
        raw = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]]
        if find_duplicated_routing_header(raw) is not None:
            return None
        folded: dict[str, str] = {}
        for name, value in raw:
            folded.setdefault(name, value)  # the first copy, as Starlette's mapping reads it
        route = classify_inbound_request(decoded, headers=folded)
        if not isinstance(route, InboundModernRoute):
            return None
        request = Request(scope)
        if await sdk_private.mcp_param_refused(self._manager, request, message, route):
            return None
        return Prepared(request, message, route)

    async def serve(
        self, prepared: Prepared, send: Send, watch: Callable[[anyio.CancelScope], None]
    ) -> None:
        """Answer `prepared` through `send`; `watch` is given the scope that the
        connection cancels when the client leaves."""
        message, route = prepared.message, prepared.route
        reply = _Reply(send)
        dctx = sdk_private.exchange_context(prepared.request, message, reply)
        connection = Connection.from_envelope(
            route.protocol_version, route.client_info, route.client_capabilities
        )
        outcome: JSONRPCResponse | JSONRPCError | None = None
        with anyio.CancelScope() as call:
            watch(call)
            reply.arm()
            try:
                outcome = await sdk_private.outcome_of(
                    message.id,
                    serve_one(
                        self._manager.app,
                        dctx,
                        message.method,
                        message.params,
                        connection=connection,
                        lifespan_state=sdk_private.lifespan_state(self._manager),
                    ),
                )
            finally:
                await reply.disarm()
        if outcome is None:
            return  # the client left: nothing is written, as with the SDK
        if reply.streaming:
            last = sdk_private.sse_event(outcome)
            await send({"type": "http.response.body", "body": last, "more_body": False})
        else:
            await sdk_private.write_json(outcome, prepared.request.scope, send)


class _Reply:
    """The response while the handler runs: JSON until a notification arrives or the
    SDK's ping interval passes in silence, then an event stream with a ping after
    every further silent interval (the SDK's loop, with a timer in place of a task)."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self.streaming = False
        self._timer: asyncio.TimerHandle | None = None
        self._pinger: asyncio.Task[None] | None = None

    def arm(self) -> None:
        self._timer = asyncio.get_running_loop().call_later(
            sdk_private.sse_ping_interval(), self._silent
        )

    async def disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        pinger, self._pinger = self._pinger, None
        if pinger is not None and not pinger.done():
            pinger.cancel()
            with anyio.CancelScope(shield=True):
                await asyncio.wait([pinger])

    def _silent(self) -> None:
        self._timer = None
        self._pinger = asyncio.get_running_loop().create_task(self._ping())

    async def _ping(self) -> None:
        await self._emit(_PING)
        self.arm()

    async def send(self, event: bytes) -> None:
        """A notification of the handler's (what the SDK's sink is asked to do)."""
        if self._timer is not None:
            self._timer.cancel()
        await self._emit(event)
        self.arm()

    async def _emit(self, chunk: bytes) -> None:
        if not self.streaming:
            self.streaming = True
            await self._send(
                {"type": "http.response.start", "status": _OK, "headers": sdk_private.SSE_HEADERS}
            )
        await self._send({"type": "http.response.body", "body": chunk, "more_body": True})
