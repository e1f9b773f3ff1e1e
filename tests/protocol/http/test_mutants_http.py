"""The HTTP gate, its refusals and bearer tokens: decisions pinned one by one, without a
socket (REQ-SEC-018, REQ-TEST-014, REQ-MCP-003, REQ-MCP-006; tools/mutants.py).

The socket tests (tests/protocol/http/test_http_listener.py) see each rule through a whole request;
mutation testing found rules whose edges they did not reach. These call the gate's
pure functions directly.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator

import pytest
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from rypsok.core import telemetry
from rypsok.core.config.secrets import Secret
from rypsok.core.config.settings import Caller
from rypsok.protocol.http import refusals
from rypsok.protocol.http.auth import Authenticator
from rypsok.protocol.http.gate import (
    Admitted,
    Answer,
    Policy,
    accepts_both,
    check_head,
    is_json_media_type,
    parse_message,
    request_path,
    route,
    route_other,
)

TOKEN_A = "a" * 40
TOKEN_B = "b" * 40
LEGACY = HANDSHAKE_PROTOCOL_VERSIONS[-1]
MODERN = MODERN_PROTOCOL_VERSIONS[-1]


def _callers() -> Authenticator:
    return Authenticator(
        [
            Caller("mimlys", Secret(TOKEN_A), None, False),
            Caller("ops", Secret(TOKEN_B), None, False),
        ]
    )


def _policy(
    *,
    auth: Authenticator | None = None,
    hosts: tuple[str, ...] = (),
    bind: str = "127.0.0.1",
    origins: tuple[str, ...] = (),
    limit: int = 1000,
    legacy: bool = True,
) -> Policy:
    return Policy(auth or Authenticator([]), hosts, bind, origins, limit, legacy)


# -- Host and Origin (REQ-SEC-018) ---------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        ("127.0.0.1", True),
        ("127.0.0.1:8080", True),
        ("LOCALHOST:1", True),
        ("[::1]:80", True),
        ("127.0.0.1:http", False),  # a port must be digits
        ("127.0.0.1:", False),  # nor empty
        ("evil.example", False),
        ("127.0.0.2", False),
        ("localhost.evil.example", False),
    ],
)
def test_req_sec_018_host_names_loopback_without_a_configured_list(
    host: str, allowed: bool
) -> None:
    assert _policy().host_allowed(host) is allowed


@pytest.mark.parametrize(
    ("bind", "host", "allowed"),
    [
        ("0.0.0.0", "0.0.0.0:8080", True),
        ("::", "[::]:8080", True),  # an IPv6 bind address is written with brackets
        ("::", "::", False),
        ("Example.INTERNAL", "example.internal", True),
    ],
)
def test_req_sec_018_the_bind_host_is_a_loopback_name_too(
    bind: str, host: str, allowed: bool
) -> None:
    assert _policy(bind=bind).host_allowed(host) is allowed


def test_req_test_014_a_configured_host_list_is_exact_and_caseless() -> None:
    policy = _policy(hosts=("mcp.example:8443",))
    assert policy.host_allowed("MCP.example:8443")
    assert not policy.host_allowed("mcp.example")
    assert not policy.host_allowed("127.0.0.1")


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        ("https://app.example", True),
        ("HTTPS://APP.EXAMPLE", True),
        ("https://app.example:8443", False),
        ("http://local.example", True),
        ("http://local.example:3000", True),  # ":*": any port
        ("http://local.example:", False),
        ("http://local.example:30a", False),
        ("http://local.example.evil", False),
        ("http://local.examplex:1", False),
        ("http://local.example:x1", False),  # the whole port must be digits
        ("http://local.example:99999", False),  # a port is at most 65535
        ("http://local.example:\u00b9", False),  # ASCII digits only
    ],
)
def test_req_sec_018_origins_exact_or_with_any_port(origin: str, allowed: bool) -> None:
    policy = _policy(origins=("https://app.example", "HTTP://local.example:*"))
    assert policy.origin_allowed(origin) is allowed


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        ("[::1]", True),
        ("[::1]:80", True),
        ("localhost:0", True),
        ("localhost:65535", True),
        ("[::1]:", False),  # an empty port
        ("[::1]x", False),  # only ":" and a port may follow the brackets
        ("[::1", False),
        ("a:b:c", False),
        ("[::1]:1]", False),
        ("localhost:65536", False),  # out of range
        ("localhost:\u00b2", False),  # a superscript is a digit to str.isdigit, not to a port
        ("localhost:000080", False),  # more than five digits
        ("user@localhost", False),
        ("localhost:80@localhost", False),
    ],
)
def test_req_sec_018_a_host_header_is_read_as_uri_host_and_port(host: str, allowed: bool) -> None:
    assert _policy().host_allowed(host) is allowed


# -- the request target --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "path"),
    [
        (b"/mcp", b"/mcp"),
        (b"/mcp?x=1", b"/mcp"),
        (b"/mcp?x=1?y", b"/mcp"),
        (b"http://h/mcp", b"/mcp"),
        (b"HTTPS://h:1/mcp?q", b"/mcp"),
        (b"https://h", b""),
        (b"ftp://h/mcp", b""),
        (b"*", b""),
        (b"mcp", b""),
        (b"http://h/a/mcp", b"/a/mcp"),  # the path starts at the first slash after the host
        (b"http:///mcp", b"/mcp"),
        (b"http://h/mcp?a?b", b"/mcp"),
    ],
)
def test_req_mcp_003_the_path_of_origin_and_absolute_form_targets(
    target: bytes, path: bytes
) -> None:
    assert request_path(target) == path


# -- the head, in the order of the status table ------------------------------------------------


def _head(**extra: bytes) -> list[tuple[bytes, bytes]]:
    headers = {
        b"host": b"127.0.0.1",
        b"accept": b"application/json, text/event-stream",
        b"content-type": b"application/json",
    }
    headers.update({k.replace("_", "-").encode(): v for k, v in extra.items()})
    return list(headers.items())


def test_req_sec_018_a_good_head_is_admitted_as_the_local_caller() -> None:
    admitted = check_head(
        b"POST",
        b"/mcp",
        _head(mcp_protocol_version=MODERN.encode(), mcp_session_id=b"s1"),
        _policy(),
    )
    assert admitted == Admitted(caller="local", modern=True, has_session=True, method=b"POST")
    legacy = check_head(b"POST", b"/mcp", _head(mcp_protocol_version=LEGACY.encode()), _policy())
    assert legacy == Admitted(caller="local", modern=False, has_session=False, method=b"POST")


def test_req_sec_018_the_declared_body_is_refused_only_above_the_bound() -> None:
    policy = _policy(limit=1000)
    assert isinstance(check_head(b"POST", b"/mcp", _head(content_length=b"1000"), policy), Admitted)
    assert (
        check_head(b"POST", b"/mcp", _head(content_length=b"1001"), policy)
        is refusals.BODY_TOO_LARGE_DECLARED
    )


def test_req_sec_018_exactly_one_host_header() -> None:
    two_hosts = [*_head(), (b"host", b"127.0.0.1")]
    assert check_head(b"POST", b"/mcp", two_hosts, _policy()) is refusals.FORBIDDEN_HOST
    no_host = [(k, v) for k, v in _head() if k != b"host"]
    assert check_head(b"POST", b"/mcp", no_host, _policy()) is refusals.FORBIDDEN_HOST


def test_req_sec_018_at_most_one_origin_header_and_it_must_be_listed() -> None:
    policy = _policy(origins=("https://app.example",))
    one = [*_head(), (b"origin", b"https://app.example")]
    assert isinstance(check_head(b"POST", b"/mcp", one, policy), Admitted)
    two = [*one, (b"origin", b"https://app.example")]
    assert check_head(b"POST", b"/mcp", two, policy) is refusals.FORBIDDEN_ORIGIN


def test_req_mcp_003_accept_and_content_type_are_checked_on_post_only() -> None:
    bare = [(b"host", b"127.0.0.1")]
    assert isinstance(check_head(b"GET", b"/mcp", bare, _policy()), Admitted)
    assert isinstance(check_head(b"DELETE", b"/mcp", bare, _policy()), Admitted)
    assert check_head(b"POST", b"/mcp", bare, _policy()) is refusals.NOT_ACCEPTABLE


@pytest.mark.parametrize(
    ("accept", "ok"),
    [
        (b"application/json, text/event-stream", True),
        (b"*/*", True),
        (b"application/*, text/*", True),
        (b"application/json;q=0, */*", False),  # the most specific range decides
        (b"application/json, text/event-stream;q=0", False),
        (b"application/json, text/event-stream;q=abc", False),  # a malformed q is 0
        (b"application/json, text/event-stream;q=1.5", False),  # q above 1 is 0
        (b"application/json, text/event-stream;q=0.001", True),
        (b"application/json;q=0=1, text/event-stream", False),  # the value runs to the end
        (b"application/json;q=0, application/json;q=0.5, text/event-stream", True),  # the best q
        (b"APPLICATION/JSON; Q=1, Text/Event-Stream", True),
        (b"application/json, , text/event-stream", True),
        (b'application/json, text/event-stream;q="1"', False),  # a qvalue is never quoted
        (b"application/json, text/event-stream;q=1;q=0", False),  # the last q counts
        (b'application/json;x=", text/event-stream", */*;q=0', False),  # "," inside quotes
        (b"application/json", False),
        (b"text/event-stream", False),
        (b"", False),
    ],
)
def test_req_mcp_003_accept_must_list_both_media_types(accept: bytes, ok: bool) -> None:
    assert accepts_both([accept]) is ok


def test_req_mcp_003_accept_may_come_in_several_headers() -> None:
    assert accepts_both([b"application/json", b"text/event-stream"])


@pytest.mark.parametrize(
    ("values", "ok"),
    [
        ([b"application/json"], True),
        ([b"Application/JSON; charset=utf-8"], True),
        ([b" application/json ;x=1"], True),
        ([b"application/json; charset=utf-8; x=1"], True),
        ([b"application/json-seq"], False),
        ([b"text/json"], False),
        ([], False),
        ([b"application/json", b"application/json"], False),
    ],
)
def test_req_mcp_003_content_type_is_one_json_header(values: list[bytes], ok: bool) -> None:
    assert is_json_media_type(values) is ok


# -- the body ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "method": "ping"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
        {"jsonrpc": "2.0", "id": "x", "method": "m", "params": []},
        {"jsonrpc": "2.0", "id": 1, "result": {}},
        {"jsonrpc": "2.0", "id": "x", "error": {"code": 1, "message": "m"}},
        {"jsonrpc": "2.0", "id": None, "error": {"code": 1, "message": "m"}},
    ],
)
def test_req_mcp_003_a_jsonrpc_message_is_read(message: dict[str, object]) -> None:
    assert parse_message(json.dumps(message).encode()) == message


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"[]",
        b"nul",
        b"\xff",
        b"[" * 100_000,
        b'{"jsonrpc": "1.0", "method": "m"}',
        b'{"method": "m"}',
        b'{"jsonrpc": "2.0", "method": 1}',
        b'{"jsonrpc": "2.0", "id": true, "method": "m"}',
        b'{"jsonrpc": "2.0", "id": 1.5, "method": "m"}',
        b'{"jsonrpc": "2.0", "id": null, "method": "m"}',
        b'{"jsonrpc": "2.0", "method": "m", "params": 1}',
        b'{"jsonrpc": "2.0", "method": "m", "params": "x"}',
        b'{"jsonrpc": "2.0", "id": 1}',
        b'{"jsonrpc": "2.0", "result": {}}',
        b'{"jsonrpc": "2.0", "id": false, "result": {}}',
        b'{"jsonrpc": "2.0", "id": 1, "result": {}, "error": {}}',
        b'{"jsonrpc": "2.0", "error": {"code": 1}}',
        b'{"jsonrpc": "2.0", "id": 1, "error": "bad"}',
        b'{"jsonrpc": "2.0", "id": [1], "error": {"code": 1}}',
    ],
)
def test_req_mcp_003_anything_else_is_not_a_message(body: bytes) -> None:
    assert parse_message(body) is None


# -- routing before the SDK --------------------------------------------------------------------


def _admitted(*, modern: bool = False, session: bool = False) -> Admitted:
    return Admitted(caller="local", modern=modern, has_session=session, method=b"POST")


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 7,
    "method": "initialize",
    "params": {"protocolVersion": LEGACY},
}


def test_req_mcp_006_modern_and_legacy_session_requests_go_to_the_sdk() -> None:
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    assert route(_admitted(modern=True), call, _policy(legacy=False)) is None
    assert route(_admitted(session=True), call, _policy(legacy=True)) is None
    assert route(_admitted(), INITIALIZE, _policy(legacy=True)) is None


def test_req_mcp_006_legacy_disabled_answers_initialize_with_32022() -> None:
    answer = route(_admitted(session=True), INITIALIZE, _policy(legacy=False))
    assert isinstance(answer, Answer)
    assert (answer.status, answer.reason) == (400, "legacy_disabled")
    assert json.loads(answer.body) == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {
            "code": -32022,
            "message": "Unsupported protocol version",
            "data": {"supported": list(MODERN_PROTOCOL_VERSIONS), "requested": LEGACY},
        },
    }
    no_params = {**INITIALIZE, "params": []}
    answer = route(_admitted(), no_params, _policy(legacy=False))
    assert isinstance(answer, Answer)
    assert json.loads(answer.body)["error"]["data"]["requested"] is None


def _error_of(refusal: object) -> tuple[int, object, int, str]:
    assert isinstance(refusal, refusals.Refusal)
    body = json.loads(refusal.body)
    return refusal.status, body["id"], body["error"]["code"], body["error"]["message"]


def test_req_mcp_006_legacy_disabled_refuses_other_requests_without_the_header() -> None:
    call = {"jsonrpc": "2.0", "id": "c1", "method": "tools/list"}
    assert _error_of(route(_admitted(), call, _policy(legacy=False))) == (
        400,
        "c1",
        -32020,
        "MCP-Protocol-Version header required: the handshake-based revisions are not served",
    )
    notification = {"jsonrpc": "2.0", "method": "initialize"}  # no id: not a request
    assert _error_of(route(_admitted(), notification, _policy(legacy=False)))[1:3] == (None, -32020)
    bad_id = {"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}
    assert _error_of(route(_admitted(), bad_id, _policy(legacy=False)))[1] is None


def test_req_mcp_006_a_legacy_request_outside_a_session_is_400() -> None:
    call = {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}
    assert _error_of(route(_admitted(), call, _policy(legacy=True))) == (
        400,
        3,
        -32600,
        "Bad Request: Missing session ID",
    )
    assert _error_of(route(_admitted(), {**call, "id": True}, _policy()))[1] is None


def test_req_mcp_006_get_and_delete_need_a_legacy_session() -> None:
    assert route_other(_admitted(modern=True), _policy(legacy=False)) is None
    assert route_other(_admitted(session=True), _policy(legacy=True)) is None
    assert _error_of(route_other(_admitted(session=True), _policy(legacy=False))) == (
        400,
        None,
        -32020,
        "MCP-Protocol-Version header required: the handshake-based revisions are not served",
    )
    assert _error_of(route_other(_admitted(), _policy(legacy=True))) == (
        400,
        None,
        -32600,
        "Bad Request: Missing session ID",
    )


# -- bearer tokens (REQ-SEC-018, REQ-TEST-014) ---------------------------------------------------


@pytest.mark.parametrize(
    ("authorization", "caller"),
    [
        ([b"Bearer " + TOKEN_A.encode()], "mimlys"),
        ([b"bEARER " + TOKEN_B.encode()], "ops"),
        ([b"Bearer  \t" + TOKEN_A.encode() + b" \t"], "mimlys"),
        ([], None),
        ([b"Bearer " + TOKEN_A.encode()] * 2, None),
        ([b"Basic " + TOKEN_A.encode()], None),
        ([b"Bearer"], None),
        ([b"Bearer "], None),
        ([b"Bearer " + TOKEN_A.encode() + b" x"], None),
        ([b"Bearer " + TOKEN_A.encode() + b"\tx"], None),
        ([b"Bearer " + TOKEN_A[:-1].encode()], None),
        ([b"BearerX " + TOKEN_A.encode()], None),
        ([b"Bearer X" + TOKEN_A.encode()], None),
        ([b"Bearer " + TOKEN_A.encode() + b"X"], None),
    ],
)
def test_req_sec_018_a_bearer_token_names_its_caller(
    authorization: list[bytes], caller: str | None
) -> None:
    assert _callers().caller(authorization) == caller


def test_req_test_014_without_callers_everyone_is_local_and_nothing_is_required() -> None:
    open_gate = Authenticator([])
    assert not open_gate.required
    assert open_gate.caller_ids == ("local",)
    assert open_gate.caller([]) == "local"
    assert open_gate.caller([b"Bearer x", b"Bearer y"]) == "local"
    assert _callers().required
    assert _callers().caller_ids == ("mimlys", "ops")


def test_req_test_014_two_callers_with_one_token_give_the_first() -> None:
    twins = Authenticator(
        [
            Caller("first", Secret(TOKEN_A), None, False),
            Caller("second", Secret(TOKEN_A), None, False),
        ]
    )
    assert twins.caller([b"Bearer " + TOKEN_A.encode()]) == "first"


# -- refusals ------------------------------------------------------------------------------


def test_req_sec_018_jsonrpc_errors_are_compact_json() -> None:
    assert (
        refusals.jsonrpc_error(5, -1, "m")
        == b'{"jsonrpc":"2.0","id":5,"error":{"code":-1,"message":"m"}}'
    )
    assert json.loads(refusals.jsonrpc_error(None, -2, "n", {"k": 1}))["error"]["data"] == {"k": 1}
    bad = refusals.bad_request("r", -32600, "x")
    assert (bad.status, bad.reason, bad.logged, bad.content_type) == (
        400,
        "sdk_bad_request",
        False,
        b"application/json",
    )


def test_req_sec_018_a_refusal_carries_its_own_words_reason_and_headers() -> None:
    refusal = refusals._text(404, "not_found", True, "Gone", ((b"x-a", b"1"),))
    assert refusal == refusals.Refusal(404, "not_found", True, b"Gone\n", headers=((b"x-a", b"1"),))
    assert refusal.content_type == b"text/plain; charset=utf-8"


@pytest.fixture
def log_lines() -> Iterator[io.StringIO]:
    saved = telemetry.log._stream
    telemetry.log._stream = io.StringIO()
    telemetry.counters.snapshot(reset=True)
    try:
        yield telemetry.log._stream
    finally:
        telemetry.log._stream = saved
        telemetry.counters.snapshot(reset=True)


def _events(stream: io.StringIO) -> list[dict[str, object]]:
    return [
        {k: v for k, v in json.loads(line).items() if k not in ("timestamp", "level")}
        for line in stream.getvalue().splitlines()
    ]


def test_req_sec_018_a_logged_refusal_names_reason_family_and_status(
    log_lines: io.StringIO,
) -> None:
    refusals.UNAUTHORIZED.record("ipv6")
    refusals.note("request_timeout", "ipv4", logged=True)
    assert _events(log_lines) == [
        {"event": "http_refused", "reason": "unauthorized", "family": "ipv6", "status": 401},
        {"event": "http_refused", "reason": "request_timeout", "family": "ipv4"},
    ]
    assert telemetry.counters.snapshot()["http"]["refusals"] == {
        "unauthorized": 1,
        "request_timeout": 1,
    }


def test_req_sec_018_unlogged_refusals_are_counted_and_uncounted_ones_are_not(
    log_lines: io.StringIO,
) -> None:
    refusals.NOT_FOUND.record("ipv4")
    refusals.HEAD_TOO_LARGE.record("ipv4")  # neither counted nor logged
    assert _events(log_lines) == []
    assert telemetry.counters.snapshot()["http"]["refusals"] == {"not_found": 1}
