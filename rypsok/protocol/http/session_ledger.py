"""Live sessions counted from outside the SDK: the public path of sessions.py.

Without the SDK's private hooks (protocol/sdk_private.py) nothing tells how many
sessions a session manager holds, so every request of a handshake revision passes
through the ledger on its way to its caller's manager, and the ledger keeps the
count by the SDK's own rules (mcp 2.3.0, streamable_http_manager.py):
- a request without a session id opens one: it counts from the moment it is
  admitted, and stays when it was answered below 400 (the answer names it);
- a session ends with a DELETE answered below 400, or a 404 for it (the SDK no
  longer knows it: it ended, expired or crashed), or when none of its requests has
  been in flight for the expiry (the SDK's idle timer, which starts when the last
  request ends; the ledger's starts a moment later, so it never frees a slot
  before the SDK does);
- at the bound, a request that would open one gets the SDK's own 503 (a handshake
  that raced past the gate's check).

The SDK answers a cancelled call of a session with a -32800 error on its stream,
which the hooks replace with an end and nothing more (REQ-MCP-007); here that event
is dropped on its way out, so the stream ends the same.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus

import anyio
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER, REQUEST_CANCELLED
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp_types import INTERNAL_ERROR, ErrorData, JSONRPCError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.responses import Response

from rypsok.protocol.http.asgi import ASGIApp, Message, Receive, Send

_SESSION = MCP_SESSION_ID_HEADER.encode("ascii")
_VERSION = MCP_PROTOCOL_VERSION_HEADER.encode("ascii")
_CANCELLED = b"%d" % REQUEST_CANCELLED
_ENDED = int(HTTPStatus.NOT_FOUND)
_ANSWERED = int(HTTPStatus.BAD_REQUEST)  # below this, a request succeeded
# What the SDK answers at its session limit, byte for byte.
_TOO_MANY = Response(
    JSONRPCError(
        jsonrpc="2.0",
        id=None,
        error=ErrorData(code=INTERNAL_ERROR, message="Too many open sessions"),
    ).model_dump_json(by_alias=True, exclude_unset=True),
    status_code=HTTPStatus.SERVICE_UNAVAILABLE,
    media_type="application/json",
)


@dataclass(slots=True)
class _Session:
    idle_since: float
    in_flight: int = 0


class SessionLedger:
    """The sessions of every caller's manager, as seen from their requests."""

    def __init__(self, expiry_s: Callable[[], float]) -> None:
        self._expiry_s = expiry_s
        self._opening = 0
        self._sessions: dict[tuple[str, str], _Session] = {}

    def live(self) -> int:
        now, expiry = anyio.current_time(), self._expiry_s()
        expired = [
            key
            for key, s in self._sessions.items()
            if not s.in_flight and now - s.idle_since >= expiry
        ]
        for key in expired:
            del self._sessions[key]
        return self._opening + len(self._sessions)

    def tracking(self, caller: str, app: ASGIApp, full: Callable[[], bool]) -> ASGIApp:
        """`app` (the caller's manager) with its sessions kept in the ledger."""

        async def tracked(scope: Message, receive: Receive, send: Send) -> None:
            session, version = _routing(scope)
            if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
                await app(scope, receive, send)  # the stateless revision: no session
            elif session is None:
                await self._open(caller, app, full, scope, receive, send)
            else:
                await self._within((caller, session), app, scope, receive, send)

        return tracked

    async def _open(
        self,
        caller: str,
        app: ASGIApp,
        full: Callable[[], bool],
        scope: Message,
        receive: Receive,
        send: Send,
    ) -> None:
        if full():
            await _TOO_MANY(scope, receive, send)
            return
        self._opening += 1
        answer = _Answer(send)
        try:
            await app(scope, receive, answer.send)
            # As the SDK: kept only when the opening request ran to its end, answered.
            status = answer.status
            if answer.session is not None and status is not None and status < _ANSWERED:
                self._sessions[(caller, answer.session)] = _Session(anyio.current_time())
        finally:
            self._opening -= 1

    async def _within(
        self, key: tuple[str, str], app: ASGIApp, scope: Message, receive: Receive, send: Send
    ) -> None:
        entry = self._sessions.get(key)
        if entry is not None:
            entry.in_flight += 1
        answer = _Answer(send, quiet=True)
        try:
            await app(scope, receive, answer.send)
        finally:
            if entry is not None:
                entry.in_flight -= 1
                if not entry.in_flight:
                    entry.idle_since = anyio.current_time()
            status = answer.status
            deleted = scope["method"] == "DELETE" and status is not None and status < _ANSWERED
            if (status == _ENDED or deleted) and self._sessions.get(key) is entry:
                self._sessions.pop(key, None)


def _routing(scope: Message) -> tuple[str | None, str | None]:
    """The session id and the revision a request names (the first of each, as the SDK
    reads them)."""
    session = version = None
    for name, value in scope["headers"]:
        if name == _SESSION and session is None:
            session = value.decode("latin-1")
        elif name == _VERSION and version is None:
            version = value.decode("latin-1")
    return session, version


class _Answer:
    """The send() of a request: notes the status and the session the answer names,
    and (quiet) drops the -32800 event of a cancelled call."""

    def __init__(self, send: Send, *, quiet: bool = False) -> None:
        self._send = send
        self._quiet = quiet
        self.status: int | None = None
        self.session: str | None = None

    async def send(self, message: Message) -> None:
        kind = message.get("type")
        if kind == "http.response.start":
            self.status = int(message["status"])
            for name, value in message.get("headers", ()):
                if bytes(name).lower() == _SESSION:
                    self.session = bytes(value).decode("latin-1")
        elif kind == "http.response.body" and self._quiet:
            body = bytes(message.get("body", b""))
            if _CANCELLED in body and is_cancelled_event(body):
                message = {**message, "body": b""}
        await self._send(message)


def is_cancelled_event(chunk: bytes) -> bool:
    """An event of the SDK's stream that answers a request with REQUEST_CANCELLED."""
    data = b"".join(line[5:].strip() for line in chunk.splitlines() if line.startswith(b"data:"))
    try:
        message = json.loads(data)
    except ValueError:
        return False
    error = message.get("error") if isinstance(message, dict) else None
    return isinstance(error, dict) and error.get("code") == REQUEST_CANCELLED
