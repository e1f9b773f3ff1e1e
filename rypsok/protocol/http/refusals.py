"""The listener's refusals: status, counter reason and whether a line is logged.

One table, read from the book's status table (external design, section 2) and
the Logs page: the gate logs `http_refused` for too_many_connections,
body_too_large (declared), unauthorized, request_timeout, session_limit and
sdk_forbidden; 400 and 406 are counted, not logged; 404 is counted; 415 and 431
are neither. Log lines carry the reason and the address family only, never the
address or a header value.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from http import HTTPStatus

from rypsok.core.telemetry import counters, log


@dataclass(frozen=True, slots=True)
class Refusal:
    status: int
    reason: str | None  # the counter key under http/refusals; None: not counted
    logged: bool
    body: bytes
    content_type: bytes = b"text/plain; charset=utf-8"
    headers: tuple[tuple[bytes, bytes], ...] = ()

    def record(self, family: str) -> None:
        note(self.reason, family, logged=self.logged, status=self.status)


def note(reason: str | None, family: str, *, logged: bool, status: int | None = None) -> None:
    """Count a refusal and, when the book says so, log it (never with the address)."""
    if reason is None:
        return
    counters.add("http", "refusals", reason)
    if logged:
        fields: dict[str, object] = {"reason": reason, "family": family}
        if status is not None:
            fields["status"] = status
        log.info("http_refused", **fields)


def jsonrpc_error(request_id: object, code: int, message: str, data: object | None = None) -> bytes:
    error: dict[str, object] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "error": error}, separators=(",", ":")
    ).encode("utf-8")


def _text(
    status: int,
    reason: str | None,
    logged: bool,
    text: str,
    headers: tuple[tuple[bytes, bytes], ...] = (),
) -> Refusal:
    return Refusal(status, reason, logged, text.encode("ascii") + b"\n", headers=headers)


NOT_FOUND = _text(HTTPStatus.NOT_FOUND, "not_found", False, "Not Found: the MCP endpoint is /mcp")
UNAUTHORIZED = _text(
    HTTPStatus.UNAUTHORIZED,
    "unauthorized",
    True,
    "Unauthorized",
    ((b"www-authenticate", b"Bearer"),),
)
BODY_TOO_LARGE_DECLARED = _text(
    HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "body_too_large", True, "Request body too large"
)
# A streamed body is counted under the same reason; the book logs the declared one.
BODY_TOO_LARGE_STREAMED = _text(
    HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "body_too_large", False, "Request body too large"
)
FORBIDDEN_HOST = _text(HTTPStatus.FORBIDDEN, "sdk_forbidden", True, "Invalid Host header")
FORBIDDEN_ORIGIN = _text(HTTPStatus.FORBIDDEN, "sdk_forbidden", True, "Invalid Origin header")
NOT_ACCEPTABLE = _text(
    HTTPStatus.NOT_ACCEPTABLE,
    "sdk_not_acceptable",
    False,
    "Not Acceptable: Accept must list application/json and text/event-stream",
)
UNSUPPORTED_MEDIA_TYPE = _text(
    HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
    None,
    False,
    "Unsupported Media Type: the body must be a JSON-RPC message sent as application/json",
)
HEAD_TOO_LARGE = _text(
    HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, None, False, "Request Header Fields Too Large"
)
REQUEST_TIMEOUT = _text(HTTPStatus.REQUEST_TIMEOUT, "request_timeout", True, "Request Timeout")
SESSION_LIMIT = Refusal(
    HTTPStatus.SERVICE_UNAVAILABLE,
    "session_limit",
    True,
    jsonrpc_error(None, -32603, "Too many open sessions"),
    b"application/json",
    ((b"retry-after", b"30"),),
)
# Not HTTP/1.1 at all (garbage, a TLS ClientHello, a bad chunk size): answered 400
# when the peer may read it, counted so that an operator sees it.
MALFORMED = _text(HTTPStatus.BAD_REQUEST, "malformed_request", False, "Bad Request")


def bad_request(request_id: object, code: int, message: str) -> Refusal:
    """A 400 with a JSON-RPC error body, counted like the SDK's own 400s."""
    return Refusal(
        HTTPStatus.BAD_REQUEST,
        "sdk_bad_request",
        False,
        jsonrpc_error(request_id, code, message),
        b"application/json",
    )
