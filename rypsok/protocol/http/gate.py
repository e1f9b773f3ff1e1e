"""The gate's decisions on one request, as pure functions of its head and body.

No I/O here: bytes and settings in, a Refusal or a verdict out, so each rule is
testable without a socket. The order is the one the clarifications fix for
several statuses that apply at once: (connection cap and 431 are the
connection's) 404 path, 401 token, 413 declared body, 403 Host / Origin,
406 Accept, 415 Content-Type, then after the body 415 JSON-RPC shape, 400
protocol headers and sessions, 503 session bound (the session pool's).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from rypsok.core.net import authority, mediatype
from rypsok.protocol.http import refusals
from rypsok.protocol.http.auth import Authenticator, Identity, Refused
from rypsok.protocol.http.refusals import Refusal

MCP_PATH = b"/mcp"
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
UNSUPPORTED_PROTOCOL_VERSION = -32022
HEADER_MISMATCH = -32020
INVALID_REQUEST = -32600

Headers = Sequence[tuple[bytes, bytes]]


@dataclass(frozen=True, slots=True)
class Policy:
    """What the gate checks, from [service.http] and the port really bound."""

    auth: Authenticator
    allowed_hosts: tuple[str, ...]  # lower case; empty: loopback names and the bind host
    bind_host: str
    allowed_origins: tuple[str, ...]
    max_request_bytes: int
    legacy_revisions: bool

    def host_allowed(self, host: str) -> bool:
        host = host.lower()
        if self.allowed_hosts:
            return host in self.allowed_hosts
        # Host = uri-host [ ":" port ] (RFC 9110 7.2): the one split, the port's digits
        # checked; the name is compared as written.
        parts = authority.split(host)
        if parts is None or parts.userinfo is not None:
            return False
        if parts.port is not None and authority.port_number(parts.port) is None:
            return False
        bind = self.bind_host.lower()
        bind = f"[{bind}]" if ":" in bind else bind
        return parts.host in LOOPBACK_NAMES or parts.host == bind

    def origin_allowed(self, origin: str) -> bool:
        origin = origin.lower()
        for allowed in self.allowed_origins:
            allowed = allowed.lower()
            if origin == allowed:
                return True
            if allowed.endswith(":*"):
                base = allowed[:-2]
                if origin == base:
                    return True
                port = origin[len(base) + 1 :]
                if origin.startswith(base + ":") and authority.port_number(port) is not None:
                    return True
        return False


@dataclass(frozen=True, slots=True)
class Admitted:
    """A head that passed: who calls, and how the SDK will route it."""

    caller: str
    modern: bool  # MCP-Protocol-Version names a revision past the handshake ones
    has_session: bool
    method: bytes
    scopes: frozenset[str] | None = None  # a token's; None: a configured caller's, all tools
    app: str = ""  # the key of the SDK server that serves it; "" the caller's own

    @property
    def app_key(self) -> str:
        return self.app or self.caller


def request_path(target: bytes) -> bytes:
    """The path of an origin-form or absolute-form target; b"" for anything else."""
    if target.startswith(b"/"):
        return target.split(b"?", 1)[0]
    lowered = target.lower()
    for scheme in (b"http://", b"https://"):
        if lowered.startswith(scheme):
            rest = target[len(scheme) :]
            slash = rest.find(b"/")
            return b"" if slash < 0 else rest[slash:].split(b"?", 1)[0]
    return b""


def authorization(headers: Headers) -> list[bytes]:
    return [value for key, value in headers if key == b"authorization"]


def check_head(
    method: bytes,
    target: bytes,
    headers: Headers,
    policy: Policy,
    identity: Identity | Refused | None = None,
) -> Refusal | Admitted:
    """*identity*: what the token resolved to, when [service.http.oauth] needed I/O for it
    (the caller resolves it before); None: the configured callers decide here."""
    if request_path(target) != MCP_PATH:
        return refusals.NOT_FOUND
    # One pass over the head: each rule below looks a name up instead of scanning.
    index: dict[bytes, list[bytes]] = {}
    for key, value in headers:
        index.setdefault(key, []).append(value)
    none: list[bytes] = []
    scopes: frozenset[str] | None = None
    app = ""
    if identity is None:
        caller = policy.auth.caller(index.get(b"authorization", none))
        if caller is None:
            return refusals.UNAUTHORIZED
    elif isinstance(identity, Refused):
        return token_refusal(identity, policy)
    else:
        caller, scopes, app = identity.caller, identity.scopes, identity.app
    declared = index.get(b"content-length", none)
    if declared and int(declared[0]) > policy.max_request_bytes:  # h11 checked the digits
        return refusals.BODY_TOO_LARGE_DECLARED
    hosts = index.get(b"host", none)
    if len(hosts) != 1 or not policy.host_allowed(_latin1(hosts[0])):
        return refusals.FORBIDDEN_HOST
    origins = index.get(b"origin", none)
    if origins and (len(origins) > 1 or not policy.origin_allowed(_latin1(origins[0]))):
        return refusals.FORBIDDEN_ORIGIN
    if method == b"POST":
        if not accepts_both(index.get(b"accept", none)):
            return refusals.NOT_ACCEPTABLE
        if not is_json_media_type(index.get(b"content-type", none)):
            return refusals.UNSUPPORTED_MEDIA_TYPE
    versions = index.get(b"mcp-protocol-version", none)
    version = _latin1(versions[0]) if versions else None
    modern = version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS
    return Admitted(
        caller=caller,
        modern=modern,
        has_session=bool(index.get(b"mcp-session-id", none)),
        method=method,
        scopes=scopes,
        app=app,
    )


def token_refusal(refused: Refused, policy: Policy) -> Refusal:
    oauth = policy.auth.oauth
    assert oauth is not None  # a Refused comes from the resource server only
    if refused.unavailable:
        return refusals.PROVIDER_UNAVAILABLE
    scopes = " ".join(sorted({s for _, s in oauth.settings.scopes if s}))
    return refusals.token_unauthorized(oauth.metadata_url(), scopes, refused.reason)


def metadata_answer(
    method: bytes, target: bytes, headers: Headers, policy: Policy
) -> Refusal | None:
    """The protected resource metadata (RFC 9728), for a GET of one of its paths when
    [service.http.oauth] is on; None for every other request. Served without a token
    (a host reads it to learn how to get one), behind the Host check like /mcp."""
    oauth = policy.auth.oauth
    if oauth is None or request_path(target) not in oauth.metadata_paths():
        return None
    hosts = [value for key, value in headers if key == b"host"]
    if len(hosts) != 1 or not policy.host_allowed(_latin1(hosts[0])):
        return refusals.FORBIDDEN_HOST
    if method != b"GET":
        return refusals.METHOD_NOT_ALLOWED
    return refusals.metadata_document(oauth.metadata())


def scope_refusal(admitted: Admitted, message: dict[str, Any], policy: Policy) -> Refusal | None:
    """403 when a token's call names a tool whose scope the token lacks."""
    oauth = policy.auth.oauth
    if admitted.scopes is None or oauth is None or message.get("method") != "tools/call":
        return None
    params = message.get("params")
    name = params.get("name") if isinstance(params, dict) else None
    needed = oauth.scope_for(name) if isinstance(name, str) else ""
    if needed and needed not in admitted.scopes:
        return refusals.insufficient_scope(oauth.metadata_url(), needed)
    return None


def _latin1(value: bytes) -> str:
    return value.decode("latin-1")


def _media_ranges(values: Sequence[bytes]) -> dict[str, float]:
    """Media range -> q, for every range listed; a malformed q counts as 0."""
    ranges: dict[str, float] = {}
    for value in values:
        for media in mediatype.parse_list(_latin1(value)):
            q = 1.0
            for param in media.parameters:
                if param.name == "q":
                    q = _weight(param)
            ranges[media.essence] = max(q, ranges.get(media.essence, 0.0))
    return ranges


def _weight(param: mediatype.Parameter) -> float:
    """A q value (RFC 9110 12.4.2) as float() reads it; quoted, malformed or out of
    0..1 it is 0. The last q of a range counts."""
    if param.quoted:
        return 0.0  # a qvalue is never a quoted-string
    try:
        q = float(param.value)
    except ValueError:
        return 0.0
    return q if 0.0 <= q <= 1.0 else 0.0


def _acceptable(ranges: dict[str, float], media_type: str) -> bool:
    # The most specific range listed decides (RFC 9110 12.5.1): an explicit q=0
    # for the type is a refusal even beside */*.
    major = media_type.split("/", 1)[0]
    for candidate in (media_type, f"{major}/*", "*/*"):
        if candidate in ranges:
            return ranges[candidate] > 0.0
    return False


def accepts_both(values: Sequence[bytes]) -> bool:
    return _accepts_both(tuple(values))


@functools.lru_cache(maxsize=32)  # a client sends the same Accept on every request
def _accepts_both(values: tuple[bytes, ...]) -> bool:
    ranges = _media_ranges(values)
    return _acceptable(ranges, "application/json") and _acceptable(ranges, "text/event-stream")


def is_json_media_type(values: Sequence[bytes]) -> bool:
    if len(values) != 1:
        return False
    return mediatype.essence(_latin1(values[0])) == "application/json"


def parse_message(body: bytes) -> dict[str, Any] | None:
    """The body as one JSON-RPC 2.0 message, or None (answered 415)."""
    try:
        message = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return None
    if "method" in message:
        if not isinstance(message["method"], str):
            return None
        if "id" in message and not _valid_id(message["id"]):
            return None
        params = message.get("params", {})
        return message if isinstance(params, dict | list) else None
    if "result" in message and "error" not in message:
        return message if _valid_id(message.get("id")) else None
    if "error" in message and "result" not in message:
        error = message["error"]
        request_id = message.get("id")
        ok_id = request_id is None or _valid_id(request_id)
        return message if isinstance(error, dict) and ok_id and "id" in message else None
    return None


def _valid_id(value: object) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


@dataclass(frozen=True, slots=True)
class Answer:
    """A JSON-RPC answer the gate gives itself, with its HTTP status."""

    status: int
    body: bytes
    reason: str | None


def route(admitted: Admitted, message: dict[str, Any], policy: Policy) -> Refusal | Answer | None:
    """What the gate answers itself before the SDK; None: hand it to the SDK."""
    if admitted.modern or (admitted.has_session and policy.legacy_revisions):
        return None
    request_id = message.get("id")
    is_initialize = message.get("method") == "initialize" and "id" in message
    if not policy.legacy_revisions:
        if is_initialize:
            params = message.get("params")
            requested = params.get("protocolVersion") if isinstance(params, dict) else None
            body = refusals.jsonrpc_error(
                request_id,
                UNSUPPORTED_PROTOCOL_VERSION,
                "Unsupported protocol version",
                {"supported": list(MODERN_PROTOCOL_VERSIONS), "requested": requested},
            )
            # The SDK's own status for -32022 on the stateless path.
            return Answer(HTTPStatus.BAD_REQUEST, body, "legacy_disabled")
        return refusals.bad_request(
            request_id if _valid_id(request_id) else None,
            HEADER_MISMATCH,
            "MCP-Protocol-Version header required: the handshake-based revisions are not served",
        )
    if not is_initialize:
        # A handshake revision outside a session: the SDK would open a session only to
        # discard it; the answer is the SDK's own for a POST without a session.
        return refusals.bad_request(
            request_id if _valid_id(request_id) else None,
            INVALID_REQUEST,
            "Bad Request: Missing session ID",
        )
    return None


def route_other(admitted: Admitted, policy: Policy) -> Refusal | None:
    """GET and DELETE: only within a session of a handshake revision (or the SDK's 405)."""
    if admitted.modern:
        return None
    if not policy.legacy_revisions:
        return refusals.bad_request(
            None,
            HEADER_MISMATCH,
            "MCP-Protocol-Version header required: the handshake-based revisions are not served",
        )
    if not admitted.has_session:
        return refusals.bad_request(None, INVALID_REQUEST, "Bad Request: Missing session ID")
    return None
