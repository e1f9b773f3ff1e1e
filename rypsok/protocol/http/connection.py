"""One accepted connection: HTTP/1.1 through h11, the gate, then the SDK.

Theory of operation. A connection alternates between waiting and a request.
Waiting (after accept, or after a response on a kept-alive connection) ends
with the first byte of the next request or, after idle_timeout_s, with a silent
close counted as idle_connection. The first byte starts the request's clock:
request_timeout_s covers the head, the body, the handler and the response
(408, or a close when the response has already begun); the head must also be
complete within idle_timeout_s, else the same silent close. The socket is an
asyncio transport whose protocol hands every chunk to h11 as it arrives: the
request loop waits for bytes, and while the SDK runs a call the same callbacks
notice the client leaving (http.disconnect), with no task and no read call per
request (anyio's stream added and removed the socket from epoll at each read).
The head is
bounded at LIM-H7 bytes (431) by looking at the bytes themselves, since h11
alone bounds only a head that is still incomplete. The body is read whole
(at most max_request_bytes, else 413) because the gate judges its JSON-RPC
shape before the SDK sees it. A tools/call of the stateless revision goes
through the lane of modern.py (the SDK's checks and handler, not its
transport), which the connection cancels itself when the client leaves;
everything else is an ASGI call of the SDK's session manager. A refusal
closes the connection; an answer the client cannot read because it is still
sending is avoided by half-closing and draining briefly before the close. A
call of a handshake session whose response stream ends unfinished (the client
left, the clock ran out) is cancelled, as a modern one is by the lane.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

import anyio
import h11

from rypsok.core import limits
from rypsok.core.telemetry import counters, log
from rypsok.protocol.http import gate, refusals
from rypsok.protocol.http.asgi import (
    ASGIApp,
    Exchange,
    Message,
    build_scope,
    hand_over_cancellation,
    normalised_headers,
)
from rypsok.protocol.http.auth import OAUTH_APP, TOKEN_CALLER, Identity, Refused
from rypsok.protocol.http.gate import Admitted, Answer, Policy
from rypsok.protocol.http.modern import ModernLane
from rypsok.protocol.http.owners import SessionOwners, session_of
from rypsok.protocol.http.refusals import Refusal
from rypsok.protocol.http.sessions import SessionPool

HEAD_MAX = limits.default("LIM-H7")
H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
_HEAD_END = re.compile(rb"\r?\n\r?\n")
DRAIN_S = 1.0
DRAIN_BYTES = 1 << 20
# A cancellation handed to a session later than this has missed REQ-MCP-007's bound.
CANCEL_HANDOFF_S = limits.default("LIM-O2") / 1000


@dataclass(frozen=True, slots=True)
class Context:
    """What every connection of one listener shares."""

    policy: Policy
    apps: Mapping[str, ASGIApp]  # caller -> the SDK session manager's ASGI callable
    lanes: Mapping[str, ModernLane]  # caller -> its stateless-revision calls, SDK bypassed
    pool: SessionPool
    owners: SessionOwners  # sessions opened by callers from tokens (owners.py)
    idle_s: float
    request_s: float
    server: tuple[str, int]
    shutting_down: anyio.Event


class _Timeout(Exception):
    """The request's clock (408) or the head's idle bound ran out."""

    def __init__(self, request_clock: bool) -> None:
        self.request_clock = request_clock


class TransportCallbacks(asyncio.Protocol):
    """The transport's callbacks, handed to the connection that owns them; what
    arrives before the connection is attached is kept and replayed to it."""

    def __init__(self) -> None:
        self.connection: HttpConnection | None = None
        self._early: list[bytes | None] = []  # chunks, then None for end of input
        self._lost = False

    def attach(self, connection: HttpConnection) -> None:
        self.connection = connection
        for chunk in self._early:
            if chunk is None:
                connection.ended()
            else:
                connection.arrived(chunk)
        self._early.clear()
        if self._lost:
            connection.lost()

    def data_received(self, data: bytes) -> None:
        if self.connection is not None:
            self.connection.arrived(data)
        else:
            self._early.append(data)

    def eof_received(self) -> bool:
        if self.connection is not None:
            self.connection.ended()
        else:
            self._early.append(None)
        return True  # the answer may still be written; the connection closes the socket

    def connection_lost(self, exc: Exception | None) -> None:
        if self.connection is not None:
            self.connection.lost()
        else:
            self._lost = True

    def pause_writing(self) -> None:
        if self.connection is not None:
            self.connection.writable(False)

    def resume_writing(self) -> None:
        if self.connection is not None:
            self.connection.writable(True)


class HttpConnection:
    def __init__(
        self,
        transport: asyncio.Transport,
        callbacks: TransportCallbacks,
        ctx: Context,
        family: str,
        client: tuple[str, int] | None,
    ) -> None:
        self._transport = transport
        self._ctx = ctx
        self._family = family
        self._client = client
        self._h11 = h11.Connection(h11.SERVER, max_incomplete_event_size=HEAD_MAX + 4)
        self._response_started = False
        self._held = b""  # a response head not yet written
        self._broken = False
        self._drain = False
        self._disconnected = anyio.Event()
        # The transport's side: chunks handed to h11 so far, end of input seen, bytes
        # read ahead since the request loop last caught up, reading paused.
        self._chunks = 0
        self._eof = False
        self._ahead = 0
        self._bound = HEAD_MAX + ctx.policy.max_request_bytes
        self._paused = False
        self._arrival = anyio.Event()
        self._drained: int | None = None  # bytes thrown away while draining
        self._can_write: anyio.Event | None = None  # set when the peer reads again
        self._call: anyio.CancelScope | None = None  # a lane's call, cancelled if the client leaves
        self._opening_for: str | None = None  # a token's caller whose session may open now
        callbacks.attach(self)
        # Cancelled by the listener at shutdown while this connection waits for a request.
        self.idle_scope: anyio.CancelScope | None = None

    # ----------------------------------------------------------------- the loop

    async def serve(self) -> None:
        try:
            await self._requests()
        except Exception as exc:  # a defect of ours ends this connection, not the listener
            log.error("http_connection_failed", error_type=type(exc).__name__, family=self._family)
        finally:
            with anyio.CancelScope(shield=True):
                try:
                    if self._drain and not self._broken:
                        with anyio.move_on_after(DRAIN_S):
                            await self._half_close_and_drain()
                except Exception as exc:  # nor may its last steps end the listener
                    log.error(
                        "http_connection_failed", error_type=type(exc).__name__, family=self._family
                    )
                self._transport.close()

    async def _requests(self) -> None:
        while not self._ctx.shutting_down.is_set():
            waiting_since = anyio.current_time()
            if not self._h11.trailing_data[0] and not await self._first_bytes():
                return
            now = anyio.current_time()
            keep = await self._request(
                now + self._ctx.request_s, now + self._ctx.idle_s, waiting_since + self._ctx.idle_s
            )
            if not keep or self._ctx.shutting_down.is_set():
                return
            self._h11.start_next_cycle()
            self._response_started = False
            self._disconnected = anyio.Event()
            if self._eof:
                self._disconnected.set()
            self._ahead = 0
            if self._paused and not self._eof:
                self._paused = False
                self._transport.resume_reading()

    async def _first_bytes(self) -> bool:
        """Wait up to idle_timeout_s for the first byte of a request."""
        with anyio.move_on_after(self._ctx.idle_s) as scope:
            self.idle_scope = scope
            await self._more(self._chunks)
        self.idle_scope = None
        if scope.cancelled_caught:
            if not self._ctx.shutting_down.is_set():
                counters.add("http", "refusals", "idle_connection")
            return False
        return bool(self._h11.trailing_data[0])

    async def _request(
        self, deadline: float, head_deadline: float, protocol_deadline: float
    ) -> bool:
        """One request and its response; True when the connection may be kept."""
        try:
            request = await self._head(deadline, head_deadline, protocol_deadline)
            if request is None:
                return False
            # h11's Headers is a Sequence read item by item: made a list once.
            headers = list(request.headers)
            policy = self._ctx.policy
            identity: Identity | Refused | None = None
            if policy.auth.oauth is not None:
                answer = gate.metadata_answer(request.method, request.target, headers, policy)
                if answer is not None:
                    return await self._refuse(answer)
                if gate.request_path(request.target) == gate.MCP_PATH:
                    identity = await policy.auth.identify(gate.authorization(headers))
            verdict = gate.check_head(request.method, request.target, headers, policy, identity)
            if isinstance(verdict, Refusal):
                return await self._refuse(verdict)
            body = await self._body(deadline)
            if body is None:
                return False
            if isinstance(body, Refusal):
                return await self._refuse(body)
            return await self._dispatch(request, headers, verdict, body, deadline)
        except _Timeout as timeout:
            if timeout.request_clock:
                return await self._refuse(refusals.REQUEST_TIMEOUT)
            counters.add("http", "refusals", "idle_connection")
            return False
        except h11.RemoteProtocolError as exc:
            if exc.error_status_hint == 431:
                return await self._refuse(refusals.HEAD_TOO_LARGE)
            return await self._refuse(refusals.MALFORMED)

    # ------------------------------------------------------------ head and body

    async def _head(
        self, deadline: float, head_deadline: float, protocol_deadline: float
    ) -> h11.Request | None:
        while True:
            buffered = self._h11.trailing_data[0]
            if buffered.startswith(H2_PREFACE):
                counters.add("http", "refusals", "http2_not_served")
                return None
            if H2_PREFACE.startswith(buffered):
                # Not yet shown whether it speaks HTTP/1 or HTTP/2: still the idle
                # bound from the wait's start, not the request's clock.
                await self._feed(protocol_deadline, request_clock=False)
                continue
            end = _HEAD_END.search(buffered)
            if (end.start() if end else len(buffered)) > HEAD_MAX:
                await self._refuse(refusals.HEAD_TOO_LARGE)
                return None
            event = self._h11.next_event()
            if event is h11.NEED_DATA:
                await self._feed(
                    min(deadline, head_deadline), request_clock=deadline <= head_deadline
                )
                continue
            if isinstance(event, h11.Request):
                return event
            return None  # ConnectionClosed: the client left before a request

    async def _body(self, deadline: float) -> bytes | Refusal | None:
        body = bytearray()
        limit = self._ctx.policy.max_request_bytes
        while True:
            event = self._h11.next_event()
            if event is h11.NEED_DATA:
                await self._feed(deadline, request_clock=True)
            elif isinstance(event, h11.Data):
                body += event.data
                if len(body) > limit:
                    return refusals.BODY_TOO_LARGE_STREAMED
            elif isinstance(event, h11.EndOfMessage):
                return bytes(body)
            else:
                return None  # the client left halfway through its body

    async def _feed(self, deadline: float, *, request_clock: bool) -> None:
        """Wait until the reader has handed h11 more bytes, or the end of input."""
        with anyio.move_on_after(max(0.0, deadline - anyio.current_time())) as scope:
            await self._more(self._chunks)
        if scope.cancelled_caught:
            raise _Timeout(request_clock)

    async def _more(self, seen: int) -> None:
        while self._chunks == seen and not self._eof:
            self._arrival = anyio.Event()
            await self._arrival.wait()

    # --------------------------------------------------- the transport's callbacks

    def arrived(self, data: bytes) -> None:
        self._chunks += 1
        if self._drained is not None:
            self._drained += len(data)
        else:
            self._ahead += len(data)
            self._h11.receive_data(data)
            if self._ahead > self._bound and not self._paused:
                # Enough read ahead (pipelining): the socket's own buffer holds the rest.
                self._paused = True
                self._transport.pause_reading()
        self._arrival.set()

    def ended(self) -> None:
        if self._eof:
            return
        self._eof = True
        if self._drained is None:
            self._h11.receive_data(b"")  # the end of input, for h11
        self._disconnected.set()
        if self._call is not None:
            self._call.cancel()
        self._arrival.set()

    def lost(self) -> None:
        self._broken = True
        self.ended()
        self.writable(True)

    def writable(self, yes: bool) -> None:
        if yes:
            if self._can_write is not None:
                self._can_write.set()
                self._can_write = None
        elif self._can_write is None:
            self._can_write = anyio.Event()

    # ------------------------------------------------------------- the exchange

    async def _dispatch(
        self,
        request: h11.Request,
        headers: list[tuple[bytes, bytes]],
        admitted: Admitted,
        body: bytes,
        deadline: float,
    ) -> bool:
        method = request.method
        message: dict[str, Any] | None = None
        if method == b"POST":
            message = gate.parse_message(body)
            if message is None:
                return await self._refuse(refusals.UNSUPPORTED_MEDIA_TYPE)
            denied = gate.scope_refusal(admitted, message, self._ctx.policy)
            if denied is not None:
                return await self._refuse(denied)
            routed = gate.route(admitted, message, self._ctx.policy)
        else:
            routed = gate.route_other(admitted, self._ctx.policy)
        if isinstance(routed, Refusal):
            return await self._refuse(routed)
        if isinstance(routed, Answer):
            refusals.note(routed.reason, self._family, logged=False)
            return await self._raw(routed.status, b"application/json", routed.body, ())
        opening = method == b"POST" and not admitted.modern and not admitted.has_session
        if opening and self._ctx.pool.full():
            return await self._refuse(refusals.SESSION_LIMIT)
        token_app = admitted.app == OAUTH_APP
        if token_app and admitted.has_session and not admitted.modern:
            session = session_of(headers)
            if session is None or not self._ctx.owners.owned_by(session, admitted.caller):
                return await self._refuse(refusals.UNKNOWN_SESSION)
        self._opening_for = admitted.caller if token_app and opening else None
        # The tools of the token app read the caller here; a session's tasks keep the
        # value they were started with (the opener's, the session's owner).
        TOKEN_CALLER.set(admitted.caller)

        stateless_call = (
            admitted.modern and message is not None and (message.get("method") == "tools/call")
        )
        exchange = Exchange(
            self, body, self._disconnected, self._family, stateless_call=stateless_call
        )
        scope = build_scope(
            method,
            request.target,
            normalised_headers(headers, method == b"POST"),
            self._client,
            self._ctx.server,
            request.http_version,
        )
        # An event stream of a legacy session is bounded by neither clock (NET-10).
        unbounded = method == b"GET" and not admitted.modern
        remaining = math.inf if unbounded else max(0.0, deadline - anyio.current_time())
        app = self._ctx.apps[admitted.app_key]
        lane = self._ctx.lanes.get(admitted.app_key) if stateless_call else None
        failed = False
        with anyio.move_on_after(remaining) as clock:
            try:
                prepared = await lane.prepare(scope, message) if lane and message else None
                if lane is not None and prepared is not None:
                    await lane.serve(prepared, exchange.send, self._watch)
                else:
                    await app(scope, exchange.receive, exchange.send)
            except Exception as exc:
                failed = True
                log.error("http_handler_failed", error_type=type(exc).__name__)
            finally:
                self._call = None
        if (
            message is not None
            and admitted.has_session
            and not admitted.modern
            and "method" in message
            and "id" in message
            and not exchange.complete
        ):
            await self._cancel_unfinished(app, scope, message["id"])
        if clock.cancelled_caught:
            if not self._response_started:
                return await self._refuse(refusals.REQUEST_TIMEOUT)
            refusals.REQUEST_TIMEOUT.record(self._family)
            return False
        if self._disconnected.is_set() or self._broken:
            return False
        if not exchange.complete:
            if not self._response_started and failed:
                await self._raw(
                    HTTPStatus.INTERNAL_SERVER_ERROR,
                    b"text/plain; charset=utf-8",
                    b"Internal Server Error\n",
                    (),
                )
            return False
        return self._h11.our_state is h11.DONE and self._h11.their_state is h11.DONE

    def _watch(self, call: anyio.CancelScope) -> None:
        """The lane's call: cancelled as soon as the client is gone (or already is)."""
        self._call = call
        if self._disconnected.is_set():
            call.cancel()

    async def _cancel_unfinished(self, app: ASGIApp, scope: Message, request_id: str | int) -> None:
        """A request of a session whose response will never be complete is cancelled."""
        with anyio.move_on_after(CANCEL_HANDOFF_S) as handoff:
            try:
                await hand_over_cancellation(app, scope, request_id)
            except Exception as exc:
                log.error("http_cancel_failed", error_type=type(exc).__name__)
        if handoff.cancelled_caught:
            log.warn("http_cancel_late", family=self._family)

    # --------------------------------------------- the ResponseWriter of asgi.py

    @property
    def started(self) -> bool:
        return self._response_started

    async def start(self, status: int, headers: list[tuple[bytes, bytes]]) -> None:
        self._response_started = True
        if self._opening_for is not None and status < HTTPStatus.BAD_REQUEST:
            session = session_of(headers)
            if session is not None:
                self._ctx.owners.opened(session, self._opening_for)
            self._opening_for = None
        if self._ctx.shutting_down.is_set():
            headers = [*headers, (b"connection", b"close")]
        # Held until the first chunk: head and body leave in one write.
        self._held = self._encode(
            h11.Response(status_code=status, headers=headers, reason=_phrase(status))
        )

    async def data(self, chunk: bytes) -> None:
        await self._send_event(h11.Data(data=chunk))

    async def end(self) -> None:
        await self._send_event(h11.EndOfMessage())

    def _encode(self, event: h11.Response | h11.Data | h11.EndOfMessage) -> bytes:
        if self._broken:
            return b""
        try:
            return self._h11.send(event) or b""
        except h11.LocalProtocolError:
            self._broken = True
            self._disconnected.set()
            return b""

    async def _send_event(self, event: h11.Response | h11.Data | h11.EndOfMessage) -> None:
        data = self._encode(event)
        if self._held:
            data, self._held = self._held + data, b""
        if data:
            await self._write(data)

    # ------------------------------------------------------------------ replies

    async def _refuse(self, refusal: Refusal) -> bool:
        refusal.record(self._family)
        return await self._raw(refusal.status, refusal.content_type, refusal.body, refusal.headers)

    async def _raw(
        self, status: int, content_type: bytes, body: bytes, extra: tuple[tuple[bytes, bytes], ...]
    ) -> bool:
        """A response of the gate's own, written directly, then the connection closes.

        Written without h11 so that it works in every state h11 may be in (a head
        still incomplete, a protocol error); the connection ends after it anyway.
        """
        lines = [
            b"HTTP/1.1 %d %s" % (status, _phrase(status)),
            b"content-type: " + content_type,
            b"content-length: %d" % len(body),
            b"connection: close",
        ]
        lines += [name + b": " + value for name, value in extra]
        self._response_started = True
        self._drain = self._h11.their_state not in (h11.DONE, h11.CLOSED, h11.MUST_CLOSE)
        await self._write(b"\r\n".join(lines) + b"\r\n\r\n" + body)
        return False

    # ------------------------------------------------------------------- bytes

    async def _write(self, data: bytes) -> None:
        if self._broken or self._transport.is_closing():
            self._broken = True
            self._disconnected.set()
            return
        self._transport.write(data)
        waiting = self._can_write
        if waiting is not None:  # the peer does not read: wait until it does, or leaves
            await waiting.wait()

    async def _half_close_and_drain(self) -> None:
        """Let a client that is still sending read the answer instead of a reset."""
        if self._transport.is_closing() or not self._transport.can_write_eof():
            return
        self._drained = 0
        try:
            self._transport.write_eof()
        except OSError:
            return  # the peer is already gone
        if self._paused:
            self._paused = False
            self._transport.resume_reading()
        while not self._eof and self._drained < DRAIN_BYTES:
            await self._more(self._chunks)


def _phrase(status: int) -> bytes:
    return _PHRASES.get(status, b"")


_PHRASES = {s.value: s.phrase.encode("ascii") for s in HTTPStatus}
