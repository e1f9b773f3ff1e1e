"""Real clients against the listener: the SDK's own Streamable HTTP client in both
revisions, curl with Tutorial 4's command, per-caller rate limits, cancellation by a
closed response stream, and a graceful stop on SIGTERM (REQ-MCP-003, REQ-MCP-006,
REQ-MCP-007, REQ-SEC-019, REQ-TEST-014)."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.support.http_harness import (
    TOKEN_A,
    TOKEN_B,
    caller_env,
    child,
    config_text,
    modern_headers,
    post,
    request_bytes,
    served,
    sse_json,
    tool_call,
    wiki_engine,
)
from tests.support.standin import mediawiki


async def _sdk_session(port: int, modern: bool, token: str | None) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with (
        create_mcp_http_client(headers=headers) as http,
        streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        if modern:
            await session.discover()
        else:
            await session.initialize()
        listed = await session.list_tools()
        status = await session.call_tool("engine_status", {})
        unknown: str | None = None
        if modern:
            try:
                await session.call_tool("nope", {})
            except Exception as exc:  # the SDK raises a JSON-RPC error as MCPError
                unknown = f"{getattr(exc, 'code', None)} {exc}"
        return {
            "version": session.protocol_version,
            "tools": [t.name for t in listed.tools],
            "status": status.structured_content,
            "is_error": status.is_error,
            "unknown": unknown,
        }


@pytest.mark.parametrize("modern", [True, False], ids=["2026-07-28", "handshake"])
@pytest.mark.usefixtures("both_lanes")
def test_req_mcp_006_the_sdk_client_in_both_revisions(tmp_path: Path, modern: bool) -> None:
    with served(tmp_path, config_text(callers=True)) as server:

        async def go() -> dict[str, Any]:
            with anyio.fail_after(30):
                return await _sdk_session(server.port, modern, TOKEN_A)

        got = anyio.run(go)
    if modern:
        assert got["unknown"] == "-32602 unknown tool"
    assert got["tools"] == ["web_search", "web_fetch", "engine_status"]
    assert got["is_error"] is False and got["status"]["outcome"] == "ok"
    assert got["version"] == ("2026-07-28" if modern else got["version"])
    assert all(e["caller"] == "mimlys" for e in server.events("call"))


def test_req_sec_019_per_caller_limits_one_caller_exhausting_its_own(tmp_path: Path) -> None:
    text = config_text(more="[limits]\nengine_status_per_minute = 2", callers=True)
    with served(tmp_path, text) as server:

        def call(token: str) -> dict[str, Any]:
            reply = post(server.port, tool_call("engine_status"), modern_headers(token=token))
            assert reply.status == 200
            return dict(sse_json(reply)["result"])

        first = [call(TOKEN_A) for _ in range(3)]
        assert [r["isError"] for r in first] == [False, False, True]
        assert first[2]["structuredContent"]["error"]["kind"] == "unavailable"
        assert "rate_limited" in json.dumps(first[2]["structuredContent"])
        other = [call(TOKEN_B) for _ in range(2)]
        assert [r["isError"] for r in other] == [False, False]
        callers = [(e["caller"], e["outcome"]) for e in server.events("call")]
        assert callers[:3] == [("mimlys", "ok"), ("mimlys", "ok"), ("mimlys", callers[2][1])]
        assert "rate_limited" in callers[2][1]
        assert callers[3:] == [("ops", "ok"), ("ops", "ok")]


@pytest.mark.usefixtures("both_lanes")
def test_req_mcp_007_a_closed_response_stream_aborts_the_call(tmp_path: Path) -> None:
    with mediawiki(delay_s=2.0) as wiki:
        text = config_text(more=wiki_engine(wiki["base_url"]))
        with served(tmp_path, text) as server:
            data = request_bytes(
                tool_call("web_search", {"query": "rust"}), modern_headers(name="web_search")
            )
            with socket.create_connection(("127.0.0.1", server.port)) as sock:
                sock.sendall(data)
                time.sleep(0.3)
            closed = time.monotonic()
            while not server.events("call") and time.monotonic() - closed < 3:
                time.sleep(0.02)
            calls = server.events("call")
            assert calls, "the call never ended"
            assert time.monotonic() - closed < 1.0
            assert calls[0]["latency_ms"] < 300 + 500


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_tutorial_4_curl_and_a_graceful_stop_on_sigterm(tmp_path: Path) -> None:
    env = caller_env()
    text = config_text(callers=True)
    with child(tmp_path, text, env) as proc:
        first = json.loads(proc.first_lines[-1])
        assert first["event"] == "listening" and first["callers"] == 2
        body = (
            '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"engine_status",'
            '"arguments":{},\n"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
            '\n"io.modelcontextprotocol/clientInfo":{"name":"probe","version":"0"},\n'
            '"io.modelcontextprotocol/clientCapabilities":{}}}}'
        )
        run = subprocess.run(
            [
                "curl",
                "-sS",
                f"http://127.0.0.1:{proc.port}/mcp",
                "-H",
                f"Authorization: Bearer {TOKEN_A}",
                "-H",
                "Content-Type: application/json",
                "-H",
                "Accept: application/json, text/event-stream",
                "-H",
                "MCP-Protocol-Version: 2026-07-28",
                "-H",
                "Mcp-Method: tools/call",
                "-H",
                "Mcp-Name: engine_status",
                "-d",
                body,
            ],
            capture_output=True,
            timeout=30,
            check=False,
        )
        assert run.returncode == 0, run.stderr
        answer = json.loads(run.stdout)
        assert answer["result"]["structuredContent"]["outcome"] == "ok"
        code, out, err = proc.stop()
    assert code == 0
    assert out == b""  # nothing on stdout
    events = [json.loads(line)["event"] for line in err.splitlines() if line.startswith("{")]
    assert "listening" in events and "shutdown" in events


def test_sigterm_lets_a_request_in_flight_finish(tmp_path: Path) -> None:
    with mediawiki(delay_s=1.0) as wiki:
        text = config_text(more=wiki_engine(wiki["base_url"]))
        with child(tmp_path, text) as proc:
            got: dict[str, Any] = {}

            def call() -> None:
                got["reply"] = post(
                    proc.port,
                    tool_call("web_search", {"query": "rust"}),
                    modern_headers(name="web_search"),
                )

            thread = threading.Thread(target=call)
            thread.start()
            time.sleep(0.4)
            started = time.monotonic()
            code, out, _ = proc.stop()
            thread.join(10)
            assert code == 0 and out == b""
            assert time.monotonic() - started < 1.0 + 1.5  # shutdown_ms = 1000, and exit
    assert got["reply"].status == 200
    assert sse_json(got["reply"])["result"]["structuredContent"]["outcome"] in ("ok", "partial")


def test_req_sec_018_the_bind_is_loopback_by_default(tmp_path: Path) -> None:
    from rypsok.core.config import load

    path = tmp_path / "default.toml"
    path.write_text("config_version = 1\n")
    http = load(str(path), {}).service.http
    assert (http.bind_host, http.bind_port) == ("127.0.0.1", 8737)
    path.write_text(
        'config_version = 1\n[service.http]\nbind = "0.0.0.0:8737"\nallowed_hosts = ["x.example"]\n'
    )
    from rypsok.core.config import ConfigError

    with pytest.raises(ConfigError) as refused:
        load(str(path), {})
    assert "callers" in " ".join(p.render() for p in refused.value.problems)
