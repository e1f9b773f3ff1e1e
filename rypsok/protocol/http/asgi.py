"""One request handed to the SDK's session manager as an ASGI call.

What the SDK needs from its host (SDK notes, section 9): the body as
http.request messages; afterwards a receive() that blocks until the client
goes away and then says http.disconnect (that is how a closed response stream
cancels a call); and a streamed http.response.body. What the contract needs
on the way out: an unknown tool is 200, not the SDK's 400, on the stateless
path; a 503 carries Retry-After: 30; the SDK's own refusals are counted.

In a session of a handshake revision the SDK runs a call on after its response
stream closed; hand_over_cancellation tells the session instead, as the host
would have with notifications/cancelled.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from http import HTTPStatus
from typing import Any, Protocol

import anyio

from rypsok.protocol.http.refusals import note

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Message, Receive, Send], Awaitable[None]]

# Hop-by-hop fields are the connection's business, never the application's.
_DROPPED = frozenset({b"connection", b"transfer-encoding", b"keep-alive"})
# SDK statuses and the reason each is counted under (the book's status table).
_SDK_REASONS: dict[int, tuple[str, bool]] = {
    HTTPStatus.BAD_REQUEST: ("sdk_bad_request", False),
    HTTPStatus.FORBIDDEN: ("sdk_forbidden", True),
    HTTPStatus.NOT_ACCEPTABLE: ("sdk_not_acceptable", False),
    HTTPStatus.REQUEST_ENTITY_TOO_LARGE: ("body_too_large", False),
    HTTPStatus.SERVICE_UNAVAILABLE: ("session_limit", True),
}


class ResponseWriter(Protocol):
    """The connection's side of a response: where an Exchange writes it."""

    @property
    def started(self) -> bool: ...

    async def start(self, status: int, headers: list[tuple[bytes, bytes]]) -> None: ...

    async def data(self, chunk: bytes) -> None: ...

    async def end(self) -> None: ...


def build_scope(
    method: bytes,
    target: bytes,
    headers: list[tuple[bytes, bytes]],
    client: tuple[str, int] | None,
    server: tuple[str, int],
    http_version: bytes,
) -> Message:
    path, _, query = target.partition(b"?")
    if not path.startswith(b"/"):
        path = b"/mcp"  # an absolute-form target, already checked to name /mcp
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": http_version.decode("ascii"),
        "method": method.decode("ascii"),
        "scheme": "http",
        "path": path.decode("latin-1"),
        "raw_path": path,
        "query_string": query,
        "root_path": "",
        "headers": headers,  # a list of its own (normalised_headers makes one)
        "client": client,
        "server": server,
        "state": {},
    }


def normalised_headers(
    headers: Sequence[tuple[bytes, bytes]], is_post: bool
) -> list[tuple[bytes, bytes]]:
    """The head as the SDK sees it: Accept and Content-Type the gate has judged are
    restated in the one spelling the SDK's narrower checks accept."""
    if not is_post:
        return list(headers)
    kept = [(k, v) for k, v in headers if k not in (b"accept", b"content-type")]
    kept.append((b"accept", b"application/json, text/event-stream"))
    kept.append((b"content-type", b"application/json"))
    return kept


def is_unknown_tool(body: bytes) -> bool:
    try:
        message = json.loads(body)
    except ValueError:
        return False
    error = message.get("error") if isinstance(message, dict) else None
    return (
        isinstance(error, dict)
        and error.get("code") == -32602
        and error.get("message") == "unknown tool"
    )


async def hand_over_cancellation(app: ASGIApp, scope: Message, request_id: str | int) -> None:
    """POST notifications/cancelled for `request_id` to `app`, with the head of `scope`
    (the same session, caller and revision); what the SDK answers is for nobody."""
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": request_id, "reason": "response stream closed"},
        }
    ).encode()
    headers = [
        (k, v) for k, v in scope["headers"] if k not in (b"content-length", b"transfer-encoding")
    ]
    headers.append((b"content-length", b"%d" % len(body)))
    pending: list[bytes] = [body]

    async def receive() -> Message:
        # A client that is gone once its body is read: nothing waits for the 202.
        if pending:
            return {"type": "http.request", "body": pending.pop(), "more_body": False}
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        pass

    await app({**scope, "headers": headers}, receive, send)


class Exchange:
    """receive() and send() of one ASGI call, the response written to a ResponseWriter."""

    def __init__(
        self,
        writer: ResponseWriter,
        body: bytes,
        disconnected: anyio.Event,
        family: str,
        *,
        stateless_call: bool,
    ) -> None:
        self._writer = writer
        self._body: bytes | None = body
        self._disconnected = disconnected
        self._family = family
        self._stateless_call = stateless_call
        self._pending: tuple[int, list[tuple[bytes, bytes]]] | None = None
        self.status: int | None = None
        self.complete = False

    async def receive(self) -> Message:
        if self._body is not None:
            body, self._body = self._body, None
            return {"type": "http.request", "body": body, "more_body": False}
        await self._disconnected.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        if self._disconnected.is_set() or self.complete:
            return  # the client is gone: what the application still sends goes nowhere
        kind = message.get("type")
        if kind == "http.response.start":
            headers = [(bytes(k).lower(), bytes(v)) for k, v in message.get("headers", [])]
            self._pending = (int(message["status"]), [h for h in headers if h[0] not in _DROPPED])
            return
        if kind != "http.response.body" or self._pending is None:
            return
        chunk = bytes(message.get("body", b""))
        more = bool(message.get("more_body", False))
        if not self._writer.started:
            await self._start(chunk, more)
        if chunk:
            await self._writer.data(chunk)
        if not more:
            self.complete = True
            await self._writer.end()

    async def _start(self, first: bytes, more: bool) -> None:
        assert self._pending is not None
        status, headers = self._pending
        if (
            status == HTTPStatus.BAD_REQUEST
            and self._stateless_call
            and not more
            and is_unknown_tool(first)
        ):
            status = HTTPStatus.OK  # the contract: an unknown tool is not an HTTP error
        has_retry_after = any(k == b"retry-after" for k, _ in headers)
        if status == HTTPStatus.SERVICE_UNAVAILABLE and not has_retry_after:
            headers.append((b"retry-after", b"30"))
        if status in _SDK_REASONS:
            reason, logged = _SDK_REASONS[status]
            note(reason, self._family, logged=logged, status=status)
        self.status = status
        await self._writer.start(status, headers)
