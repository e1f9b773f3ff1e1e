"""Bad input to the listener: each is answered with a status of the table or closed
cleanly, and the listener goes on serving (REQ-SEC-014, REQ-SEC-018)."""

from __future__ import annotations

import re
import socket
import struct
import time
from pathlib import Path

import pytest

from tests.support.http_harness import (
    config_text,
    exchange,
    modern_headers,
    parse,
    post,
    read_all,
    request_bytes,
    served,
    tool_call,
)

TABLE = {0, 400, 401, 403, 404, 406, 408, 413, 415, 431, 503}
# The first bytes of a TLS 1.2/1.3 ClientHello (record header, handshake header, version).
CLIENT_HELLO = bytes.fromhex("16030100f4010000f00303") + bytes(range(32)) + b"\x00" * 180
H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


@pytest.fixture(scope="module")
def listener(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    with served(tmp_path_factory.mktemp("hostile"), config_text()) as server:
        yield server


def _still_serving(port: int) -> None:
    assert post(port, tool_call("engine_status"), modern_headers()).status == 200


GOOD = request_bytes(tool_call("engine_status"), modern_headers())

CASES = {
    "garbage": b"\x00\x01\x02garbage\r\n\r\n",
    "tls_client_hello": CLIENT_HELLO,
    "http2_preface": H2_PREFACE + b"\x00\x00\x12\x04\x00\x00\x00\x00\x00",
    "no_version": b"POST /mcp\r\n\r\n",
    "http_0_9": b"GET /mcp\r\n",
    "bad_content_length": GOOD.replace(b"Content-Length: ", b"Content-Length: -"),
    "two_content_lengths": GOOD.replace(
        b"Content-Length: ", b"Content-Length: 5\r\nContent-Length: "
    ),
    "content_length_words": GOOD.replace(b"Content-Length: ", b"Content-Length: ten"),
    "bad_chunk_size": request_bytes(None, {**modern_headers(), "Transfer-Encoding": "chunked"})
    + b"zz\r\nabc\r\n0\r\n\r\n",
    "huge_chunk_size": request_bytes(None, {**modern_headers(), "Transfer-Encoding": "chunked"})
    + b"ffffffffffffffffffff\r\nabc",
    "unknown_transfer_encoding": request_bytes(
        None, {**modern_headers(), "Transfer-Encoding": "gzip"}
    ),
    "no_host": GOOD.replace(b"Host: 127.0.0.1\r\n", b""),
    "two_hosts": GOOD.replace(b"Host: 127.0.0.1\r\n", b"Host: 127.0.0.1\r\nHost: evil\r\n"),
    "header_without_colon": GOOD.replace(b"Accept:", b"Accept"),
    "space_before_colon": GOOD.replace(b"Accept:", b"Accept :"),
    "nul_in_header": GOOD.replace(b"Accept: ", b"Accept: \x00"),
    "obs_fold": GOOD.replace(b"Accept: ", b"Accept:\r\n "),
    "lf_only": GOOD.replace(b"\r\n", b"\n"),
    "long_request_line": b"GET /" + b"a" * 20000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
    "ipv6_host": GOOD.replace(b"Host: 127.0.0.1", b"Host: [::1]:8737"),
    "bad_ipv6_host": GOOD.replace(b"Host: 127.0.0.1", b"Host: [::1"),
    "utf8_in_header": GOOD.replace(b"Accept: ", "Accept: é, ".encode()),
    "absolute_target": GOOD.replace(b"POST /mcp", b"POST http://127.0.0.1/mcp"),
    "connect_method": b"CONNECT 127.0.0.1:80 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    "deep_json": request_bytes(b"[" * 50000 + b"]" * 50000, modern_headers()),
    "options": request_bytes(None, modern_headers(), method="OPTIONS"),
    "get_modern": request_bytes(None, modern_headers(), method="GET"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_req_sec_014_bad_input_gets_a_table_status_or_a_clean_close(listener, name) -> None:
    raw = exchange(listener.port, CASES[name], timeout=6)
    reply = parse(raw)
    assert reply.status in TABLE | {200, 405}, (name, raw[:200])
    _still_serving(listener.port)


def test_pipelined_requests_are_answered_in_order(listener) -> None:
    first = request_bytes(tool_call("engine_status", request_id=1), modern_headers())
    second = request_bytes(tool_call("nope", request_id=2), modern_headers(name="nope"))
    third = request_bytes(
        tool_call("engine_status", request_id=3), modern_headers(Connection="close")
    )
    with socket.create_connection(("127.0.0.1", listener.port)) as sock:
        sock.sendall(first + second + third)
        sock.settimeout(5)
        data = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    ids = [int(m) for m in re.findall(rb'\{"jsonrpc":"2.0","id":(\d+)', data)]
    assert ids == [1, 2, 3]
    assert data.count(b"HTTP/1.1 200 OK") == 3


def test_a_body_that_stops_halfway_then_closes(listener) -> None:
    with socket.create_connection(("127.0.0.1", listener.port)) as sock:
        sock.sendall(GOOD[: len(GOOD) - 40])
    time.sleep(0.2)
    _still_serving(listener.port)


def test_a_slowloris_body_is_408(listener) -> None:
    headers = {**modern_headers(), "Transfer-Encoding": "chunked"}
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", listener.port)) as sock:
        sock.sendall(request_bytes(None, headers))
        sock.settimeout(0.3)
        got = b""
        while time.monotonic() - started < 6 and not got:
            try:
                sock.sendall(b"1\r\n \r\n")
                got = sock.recv(4096)
            except TimeoutError:
                continue
            except OSError:
                break
    assert parse(got).status == 408
    assert time.monotonic() - started < 4.5


def test_many_connections_that_send_garbage_at_once(listener) -> None:
    socks = [socket.create_connection(("127.0.0.1", listener.port)) for _ in range(30)]
    for index, sock in enumerate(socks):
        sock.sendall(CASES[sorted(CASES)[index % len(CASES)]])
    for sock in socks:
        read_all(sock, 6)
        sock.close()
    _still_serving(listener.port)


def test_a_client_that_resets_mid_response(tmp_path: Path) -> None:
    with served(tmp_path, config_text()) as server:
        for _ in range(20):
            sock = socket.create_connection(("127.0.0.1", server.port))
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sock.sendall(GOOD)
            sock.close()  # RST
        _still_serving(server.port)
        assert not server.events("http_connection_failed")
