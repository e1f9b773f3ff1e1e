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


# --------------------------------------------------------------------- OAuth (issue 37)

# After this long a client may ask again when the identity provider could not answer.
PROVIDER_RETRY_S = 5


def _challenge(*params: tuple[str, str]) -> tuple[tuple[bytes, bytes], ...]:
    # Every value is ours or the operator's (a URL checked at load, scope words):
    # never a header value or a token of the request.
    text = "Bearer " + ", ".join(f'{name}="{value}"' for name, value in params)
    return ((b"www-authenticate", text.encode("ascii")),)


def token_unauthorized(metadata_url: str, scopes: str, reason: str | None) -> Refusal:
    """401 for a request without a usable token: where to learn how to get one (RFC 9728
    5.1), and why the one sent was refused (RFC 6750 3.1)."""
    params = [("resource_metadata", metadata_url)]
    if scopes:
        params.append(("scope", scopes))
    if reason is not None:
        params = [("error", "invalid_token"), ("error_description", reason), *params]
    return _text(HTTPStatus.UNAUTHORIZED, "unauthorized", True, "Unauthorized", _challenge(*params))


def insufficient_scope(metadata_url: str, scope: str) -> Refusal:
    """403 for a token without the scope of the tool it calls (RFC 6750 3.1)."""
    headers = _challenge(
        ("error", "insufficient_scope"),
        ("scope", scope),
        ("resource_metadata", metadata_url),
        ("error_description", "the token does not carry the scope this tool needs"),
    )
    return _text(
        HTTPStatus.FORBIDDEN,
        "insufficient_scope",
        True,
        f"Forbidden: the token needs the scope {scope}",
        headers,
    )


# A session another caller from a token opened: answered as the SDK answers a session
# it does not know, so that its existence is not told.
UNKNOWN_SESSION = Refusal(
    HTTPStatus.NOT_FOUND,
    "sdk_not_found",
    False,
    jsonrpc_error(None, -32600, "Session not found"),
    b"application/json",
)
METHOD_NOT_ALLOWED = _text(
    HTTPStatus.METHOD_NOT_ALLOWED, None, False, "Method Not Allowed", ((b"allow", b"GET"),)
)
PROVIDER_UNAVAILABLE = Refusal(
    HTTPStatus.SERVICE_UNAVAILABLE,
    "identity_provider_unavailable",
    True,
    jsonrpc_error(None, -32603, "The identity provider could not be reached; retry later"),
    b"application/json",
    ((b"retry-after", b"%d" % PROVIDER_RETRY_S),),
)


def metadata_document(body: bytes) -> Refusal:
    """200 with the protected resource metadata: an answer of the gate's own, like a
    refusal written whole, and not counted."""
    return Refusal(HTTPStatus.OK, None, False, body, b"application/json")
