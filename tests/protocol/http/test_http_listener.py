"""The HTTP listener's contract, one test per row of the book's status table and of
Troubleshooting "Over HTTP", over real sockets on 127.0.0.1 (REQ-SEC-018, REQ-SEC-019,
REQ-SEC-022, REQ-SEC-024, REQ-TEST-014)."""

from __future__ import annotations

import contextlib
import json
import socket
import time
from pathlib import Path

import pytest

from tests.support.http_harness import (
    LEGACY,
    MODERN,
    TOKEN_A,
    TOKEN_B,
    config_text,
    envelope,
    exchange,
    legacy_headers,
    legacy_initialize,
    modern_headers,
    parse,
    post,
    read_all,
    request_bytes,
    served,
    sse_json,
    tool_call,
)


@pytest.fixture
def local(tmp_path: Path):  # type: ignore[no-untyped-def]
    with served(tmp_path, config_text()) as server:
        yield server


@pytest.fixture
def authed(tmp_path: Path):  # type: ignore[no-untyped-def]
    with served(tmp_path, config_text(callers=True)) as server:
        yield server


# ------------------------------------------------------------------ 200


@pytest.mark.usefixtures("both_lanes")
def test_req_mcp_003_a_good_call_is_answered_like_stdio(local) -> None:
    reply = post(local.port, tool_call("engine_status"), modern_headers())
    assert reply.status == 200
    result = sse_json(reply)["result"]
    assert result["isError"] is False
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    assert local.events("call")[-1]["caller"] == "local"


@pytest.mark.usefixtures("both_lanes")
def test_status_200_unknown_tool_is_a_jsonrpc_error_not_an_http_error(local) -> None:
    reply = post(local.port, tool_call("nope"), modern_headers(name="nope"))
    assert reply.status == 200
    assert reply.json()["error"] == {"code": -32602, "message": "unknown tool"}


@pytest.mark.usefixtures("both_lanes")
def test_status_200_unknown_tool_in_a_legacy_session(local) -> None:
    opened = post(local.port, legacy_initialize(), legacy_headers())
    assert opened.status == 200
    session = opened.headers["mcp-session-id"]
    reply = post(
        local.port,
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "nope", "arguments": {}},
        },
        legacy_headers(**{"Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY}),
    )
    assert reply.status == 200
    assert sse_json(reply)["error"]["code"] == -32602


# ------------------------------------------------------------------ 400


def test_status_400_a_missing_protocol_header(local) -> None:
    headers = modern_headers()
    del headers["Mcp-Method"]
    reply = post(local.port, tool_call("engine_status"), headers)
    assert reply.status == 400
    assert reply.json()["error"]["code"] == -32020
    assert local.refusals().get("sdk_bad_request") == 1
    assert not local.events("http_refused")  # counted, not logged


def test_status_400_a_legacy_post_without_session(local) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    reply = post(local.port, body, legacy_headers())
    assert reply.status == 400
    assert "Missing session ID" in reply.json()["error"]["message"]


def test_status_400_a_current_body_without_the_version_header(local) -> None:
    headers = modern_headers()
    del headers["MCP-Protocol-Version"]
    assert post(local.port, tool_call("engine_status"), headers).status == 400


# ------------------------------------------------------------------ 401


@pytest.mark.parametrize(
    "authorization",
    [
        None,
        "Bearer wrong-token-wrong-token-wrong-token",
        f"Bearer {TOKEN_A.upper()}",
        f"Basic {TOKEN_A}",
        f"Bearer{TOKEN_A}",
        "Bearer ",
        f"Bearer {TOKEN_A[:-1]}",
    ],
)
def test_req_sec_018_status_401_token_missing_or_wrong(authed, authorization) -> None:
    extra = {} if authorization is None else {"Authorization": authorization}
    reply = post(authed.port, tool_call("engine_status"), modern_headers(**extra))
    assert reply.status == 401
    assert reply.headers["www-authenticate"] == "Bearer"
    refused = authed.events("http_refused")
    assert refused == [{**refused[0], "reason": "unauthorized", "family": "ipv4"}]
    text = json.dumps(refused)
    assert "127.0.0.1" not in text  # never the address
    assert TOKEN_A[:8] not in authed.logs.getvalue()  # never a header value


@pytest.mark.parametrize(
    "authorization",
    [
        f"Bearer {TOKEN_A}",
        f"bearer {TOKEN_A}",
        f"BEARER {TOKEN_A}",
        f"Bearer {TOKEN_A}   ",
        f"Bearer   {TOKEN_A}",
    ],
)
def test_req_sec_018_the_scheme_is_caseless_and_spaces_around_the_token_are_not_part_of_it(
    authed, authorization
) -> None:
    reply = post(
        authed.port, tool_call("engine_status"), modern_headers(Authorization=authorization)
    )
    assert reply.status == 200
    assert authed.events("call")[-1]["caller"] == "mimlys"


def test_req_test_014_callers_on_loopback_need_a_token_for_every_request(authed) -> None:
    assert post(authed.port, tool_call("engine_status"), modern_headers()).status == 401
    assert (
        post(authed.port, tool_call("engine_status"), modern_headers(token=TOKEN_B)).status == 200
    )
    assert authed.events("call")[-1]["caller"] == "ops"


def test_status_401_comes_before_404_only_for_the_right_path(authed) -> None:
    # Precedence: the path (404) before the token (401).
    assert (
        post(authed.port, tool_call("engine_status"), modern_headers(), path="/other").status == 404
    )


# ------------------------------------------------------------------ 403


@pytest.mark.parametrize(
    "host",
    [
        "evil.example",
        "evil.example:80",
        "127.0.0.2",
        "localhost.evil.example",
        "[::2]:1",
        "localhost:x",
    ],
)
def test_req_sec_018_status_403_a_foreign_host(local, host) -> None:
    reply = post(local.port, tool_call("engine_status"), modern_headers(Host=host))
    assert reply.status == 403
    assert [e["reason"] for e in local.events("http_refused")] == ["sdk_forbidden"]
    assert host not in "".join(json.dumps(e) for e in local.events("http_refused"))


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "127.0.0.1:{port}",
        "localhost",
        "LOCALHOST:{port}",
        "[::1]",
        "[::1]:{port}",
        "localhost:8080",
    ],
)
def test_req_test_014_loopback_hosts_with_and_without_port_are_accepted(local, host) -> None:
    reply = post(
        local.port, tool_call("engine_status"), modern_headers(Host=host.format(port=local.port))
    )
    assert reply.status == 200


def test_req_test_014_configured_hosts_are_the_only_ones(tmp_path: Path) -> None:
    text = config_text('allowed_hosts = ["rypsok.example", "rypsok.example:443"]')
    with served(tmp_path, text) as server:
        for host, status in (
            ("rypsok.example", 200),
            ("rypsok.example:443", 200),
            ("Rypsok.Example", 200),
            ("rypsok.example:444", 403),
            ("127.0.0.1", 403),
            ("localhost", 403),
        ):
            reply = post(server.port, tool_call("engine_status"), modern_headers(Host=host))
            assert reply.status == status, host


@pytest.mark.parametrize(
    "origin", ["http://evil.example", "null", "http://127.0.0.1", "https://rypsok.example"]
)
def test_req_sec_018_status_403_an_origin_that_is_not_listed(local, origin) -> None:
    reply = post(local.port, tool_call("engine_status"), modern_headers(Origin=origin))
    assert reply.status == 403
    assert local.refusals() == {"sdk_forbidden": 1}


def test_req_test_014_listed_origins_pass(tmp_path: Path) -> None:
    text = config_text('allowed_origins = ["https://app.example", "http://localhost:*"]')
    with served(tmp_path, text) as server:
        for origin, status in (
            ("https://app.example", 200),
            ("http://localhost:5173", 200),
            ("http://localhost", 200),
            ("https://app.example:8443", 403),
            ("http://localhost:x", 403),
            ("http://evil.example", 403),
        ):
            reply = post(server.port, tool_call("engine_status"), modern_headers(Origin=origin))
            assert reply.status == status, origin


# ------------------------------------------------------------------ 404


@pytest.mark.parametrize("path", ["/", "/other", "/mcp/", "/MCP", "/mcpx", "*"])
def test_status_404_another_path(local, path) -> None:
    reply = post(local.port, tool_call("engine_status"), modern_headers(), path=path)
    assert reply.status == 404
    assert local.refusals() == {"not_found": 1}
    assert not local.events("http_refused")


def test_a_query_string_on_mcp_is_still_mcp(local) -> None:
    reply = post(local.port, tool_call("engine_status"), modern_headers(), path="/mcp?x=1")
    assert reply.status == 200


# ------------------------------------------------------------------ 406


@pytest.mark.parametrize(
    "accept",
    [
        "application/json",
        "text/event-stream",
        "",
        "application/json, text/event-stream;q=0",
        "application/json;q=0, text/event-stream",
        "application/json;q=0.0, */*",
        "text/html",
    ],
)
def test_status_406_accept_lacks_one_of_the_two(local, accept) -> None:
    reply = post(local.port, tool_call("engine_status"), modern_headers(Accept=accept))
    assert reply.status == 406
    assert local.refusals() == {"sdk_not_acceptable": 1}
    assert not local.events("http_refused")


@pytest.mark.parametrize(
    "accept",
    [
        "APPLICATION/JSON, Text/Event-Stream",
        "application/json;q=0.5, text/event-stream;q=0.1",
        "*/*",
        "application/*, text/*",
    ],
)
def test_accept_is_matched_without_case_and_with_q(local, accept) -> None:
    reply = post(local.port, tool_call("engine_status"), modern_headers(Accept=accept))
    assert reply.status == 200


# ------------------------------------------------------------------ 413


def test_status_413_a_declared_body_above_the_bound(local) -> None:
    data = request_bytes(b"", {**modern_headers(), "Content-Length": "65537"})
    with socket.create_connection(("127.0.0.1", local.port)) as sock:
        sock.sendall(data + b"x" * 30000)  # the client is still sending
        reply = parse(read_all(sock, 5))
    assert reply.status == 413
    assert [e["reason"] for e in local.events("http_refused")] == ["body_too_large"]


def test_status_413_a_streamed_body_above_the_bound(local) -> None:
    headers = {**modern_headers(), "Transfer-Encoding": "chunked"}
    head = request_bytes(None, headers)
    chunk = b"%x\r\n%s\r\n" % (20000, b"x" * 20000)
    with socket.create_connection(("127.0.0.1", local.port)) as sock:
        sock.sendall(head)
        for _ in range(4):
            sock.sendall(chunk)
        reply = parse(read_all(sock, 5))
    assert reply.status == 413
    assert local.refusals() == {"body_too_large": 1}


def test_a_body_at_the_bound_is_read(local) -> None:
    body = json.dumps(tool_call("engine_status")).encode()
    body = body[:-1] + b" " * (65536 - len(body)) + b"}"
    assert len(body) == 65536
    assert post(local.port, body, modern_headers()).status == 200


# ------------------------------------------------------------------ 415


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "application/jsonx", None]
)
def test_status_415_content_type_not_json(local, content_type) -> None:
    headers = modern_headers()
    if content_type is None:
        del headers["Content-Type"]
    else:
        headers["Content-Type"] = content_type
    assert post(local.port, tool_call("engine_status"), headers).status == 415
    assert local.refusals() == {}  # not counted


@pytest.mark.parametrize(
    "body",
    [
        b'{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{}}',
        b"not json",
        b"[]",
        b'[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]',
        b'{"id":1,"method":"tools/list"}',
        b'{"jsonrpc":"2.0","id":1.5,"method":"x"}',
        b'{"jsonrpc":"2.0","id":true,"method":"x"}',
        b'{"jsonrpc":"2.0","id":1}',
        b'{"jsonrpc":"2.0","id":1,"method":7}',
        b"",
        b"\xff\xfe",
        b'{"jsonrpc":"2.0","id":1,"method":"x","params":3}',
    ],
)
def test_status_415_a_body_that_is_not_a_jsonrpc_message(local, body) -> None:
    assert post(local.port, body, modern_headers()).status == 415


def test_json_with_a_charset_parameter_is_json(local) -> None:
    headers = modern_headers(**{"Content-Type": "Application/JSON; charset=utf-8"})
    assert post(local.port, tool_call("engine_status"), headers).status == 200


# ------------------------------------------------------------------ 431


def test_req_sec_018_an_oversized_header_block_is_431(local) -> None:
    reply = post(local.port, tool_call("engine_status"), modern_headers(**{"X-Big": "x" * 17000}))
    assert reply.status == 431
    assert local.refusals() == {}  # neither logged nor counted
    assert not local.events("http_refused")


def test_a_header_flood_is_431(local) -> None:
    flood = {f"X-H{i}": "y" * 40 for i in range(500)}
    assert post(local.port, tool_call("engine_status"), modern_headers(**flood)).status == 431


def test_a_head_just_under_the_bound_is_served(local) -> None:
    body = json.dumps(tool_call("engine_status")).encode()
    probe = request_bytes(body, modern_headers(**{"X-Pad": ""}))
    head = probe.index(b"\r\n\r\n")
    filler = 16384 - head
    data = request_bytes(body, modern_headers(**{"X-Pad": "p" * filler}))
    assert data.index(b"\r\n\r\n") == 16384
    assert parse(exchange(local.port, data)).status == 200
    over = request_bytes(body, modern_headers(**{"X-Pad": "p" * (filler + 1)}))
    assert parse(exchange(local.port, over)).status == 431


def test_an_oversized_head_sent_slowly_is_431(local) -> None:
    with socket.create_connection(("127.0.0.1", local.port)) as sock:
        sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        for _ in range(20):
            try:
                sock.sendall(b"X-A: " + b"a" * 1000 + b"\r\n")
            except OSError:
                break
        reply = parse(read_all(sock, 5))
    assert reply.status == 431


# ------------------------------------------------------------------ 503


@pytest.mark.usefixtures("both_lanes")
def test_req_sec_024_status_503_a_handshake_beyond_the_session_bound(tmp_path: Path) -> None:
    with served(tmp_path, config_text("max_sessions = 2")) as server:
        sessions = []
        for request_id in (1, 2):
            reply = post(server.port, legacy_initialize(request_id), legacy_headers())
            assert reply.status == 200
            sessions.append(reply.headers["mcp-session-id"])
        refused = post(server.port, legacy_initialize(3), legacy_headers())
        assert refused.status == 503
        assert refused.headers["retry-after"] == "30"
        assert "mcp-session-id" not in refused.headers
        assert [e["reason"] for e in server.events("http_refused")] == ["session_limit"]
        # The stateless revision is unaffected.
        assert post(server.port, tool_call("engine_status"), modern_headers()).status == 200
        # A session that ends frees its slot.
        gone = post(
            server.port,
            None,
            legacy_headers(**{"Mcp-Session-Id": sessions[0], "MCP-Protocol-Version": LEGACY}),
            method="DELETE",
        )
        assert gone.status == 200
        assert post(server.port, legacy_initialize(4), legacy_headers()).status == 200


@pytest.mark.usefixtures("both_lanes")
def test_req_sec_024_the_bound_holds_across_callers(tmp_path: Path) -> None:
    with served(tmp_path, config_text("max_sessions = 1", callers=True)) as server:
        assert post(server.port, legacy_initialize(), legacy_headers(TOKEN_A)).status == 200
        assert post(server.port, legacy_initialize(), legacy_headers(TOKEN_B)).status == 503


def test_req_sec_024_sessions_expire_after_300_s_without_traffic() -> None:
    from rypsok.protocol.http.sessions import SESSION_EXPIRY_S

    assert SESSION_EXPIRY_S == 300


@pytest.mark.usefixtures("both_lanes")
def test_a_session_of_one_caller_is_unknown_to_another(tmp_path: Path) -> None:
    with served(tmp_path, config_text(callers=True)) as server:
        session = post(server.port, legacy_initialize(), legacy_headers(TOKEN_A)).headers[
            "mcp-session-id"
        ]
        reply = post(
            server.port,
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
            legacy_headers(TOKEN_B, **{"Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY}),
        )
        assert reply.status == 404


# ------------------------------------------------- legacy_revisions = false


def test_legacy_revisions_false_initialize_gets_32022(tmp_path: Path) -> None:
    with served(tmp_path, config_text("legacy_revisions = false")) as server:
        reply = post(server.port, legacy_initialize(), legacy_headers())
        error = reply.json()["error"]
        assert error["code"] == -32022
        assert error["data"]["supported"] == [MODERN]
        assert "mcp-session-id" not in reply.headers
        discover = post(
            server.port,
            envelope("server/discover"),
            modern_headers(method="server/discover", name=None),
        )
        assert sse_json(discover)["result"]["supportedVersions"] == [MODERN]
        assert post(server.port, tool_call("engine_status"), modern_headers()).status == 200
        listed = post(
            server.port,
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
            legacy_headers(**{"Mcp-Session-Id": "x"}),
        )
        assert listed.status == 400


# ------------------------------------------------------------------ 408


def test_req_sec_022_a_body_that_stalls_is_408_after_request_timeout(local) -> None:
    data = request_bytes(json.dumps(tool_call("engine_status")).encode(), modern_headers())
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", local.port)) as sock:
        sock.sendall(data[:-10])  # the last bytes never come
        reply = parse(read_all(sock, 10))
    elapsed = time.monotonic() - started
    assert reply.status == 408
    assert 2.8 <= elapsed < 4.5
    assert [e["reason"] for e in local.events("http_refused")] == ["request_timeout"]


def test_req_sec_022_a_slowloris_head_is_408_from_the_first_byte(local) -> None:
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", local.port)) as sock:
        sock.sendall(b"POST /mcp HTTP/1.1\r\n")
        sock.settimeout(0.5)
        got = b""
        for _ in range(12):
            try:
                sock.sendall(b"X-Slow: 1\r\n")
                got = sock.recv(4096)
                if got:
                    break
            except TimeoutError:
                continue
            except OSError:
                break
    assert parse(got).status == 408
    assert time.monotonic() - started < 4.5


# ------------------------------------------- connections: cap and idle bound


def test_req_sec_018_a_connection_beyond_the_cap_is_closed_unanswered(tmp_path: Path) -> None:
    with served(tmp_path, config_text("max_connections = 2")) as server:
        held = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(2)]
        time.sleep(0.3)
        try:
            extra = socket.create_connection(("127.0.0.1", server.port))
            extra.settimeout(3)
            with contextlib.suppress(ConnectionResetError):
                assert extra.recv(100) == b""  # closed, nothing written
            extra.close()
            assert [e["reason"] for e in server.events("http_refused")] == ["too_many_connections"]
            assert server.events("http_refused")[0]["family"] == "ipv4"
        finally:
            for sock in held:
                sock.close()
        time.sleep(0.3)
        assert post(server.port, tool_call("engine_status"), modern_headers()).status == 200


def test_silent_and_kept_alive_connections_close_after_the_idle_time(local) -> None:
    silent = socket.create_connection(("127.0.0.1", local.port))
    partial = socket.create_connection(("127.0.0.1", local.port))
    partial.sendall(b"PRI * HTTP/2")  # only the start of the HTTP/2 preface
    kept = socket.create_connection(("127.0.0.1", local.port))
    kept.sendall(request_bytes(tool_call("engine_status"), modern_headers()))
    assert parse(read_all(kept, 5)).status == 200
    started = time.monotonic()
    for sock in (silent, partial, kept):
        sock.settimeout(8)
        with contextlib.suppress(ConnectionResetError):
            assert sock.recv(100) == b""
        sock.close()
    assert time.monotonic() - started < 7
    assert local.refusals().get("idle_connection") == 3
    assert not local.events("http_refused")  # counted, never logged
