"""MCP over stdio (REQ-MCP-002, REQ-MCP-006, REQ-MCP-009, REQ-OPS-002, REQ-TEST-009)."""

from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys
import threading
import time

import anyio

from rypsok.core.config import load
from rypsok.core.facade import Rypsok
from rypsok.protocol.stdio import serve_stdio
from tests.support.mcp_lines import HANDSHAKE, answers, call, lines, request
from tests.support.paths import REPO
from tests.support.run import clean_env, cli


def test_req_mcp_002_piped_file_gets_every_answer_and_stdout_only_protocol() -> None:
    run = cli(
        "serve",
        stdin=lines(
            request(1, "server/discover"), call(2, "engine_status"), request(3, "tools/list")
        ),
    )
    assert run.code == 0
    got = answers(run.out)
    assert set(got) == {1, 2, 3}
    assert all(m["jsonrpc"] == "2.0" for m in got.values())
    for line in run.err.splitlines():
        json.loads(line)  # every stderr line is a log object


def test_req_mcp_006_handshake_revision_is_served_on_the_same_stdin() -> None:
    run = cli(
        "serve",
        stdin=lines(
            *HANDSHAKE,
            request(1, "tools/list", modern=False),
            call(2, "engine_status", modern=False),
        ),
    )
    got = answers(run.out)
    assert got[0]["result"]["serverInfo"]["name"] == "rypsok"
    assert [t["name"] for t in got[1]["result"]["tools"]] == [
        "web_search",
        "web_fetch",
        "engine_status",
    ]
    assert got[2]["result"]["isError"] is False


def test_req_mcp_009_annotations_and_deterministic_order() -> None:
    first = answers(cli("serve", stdin=lines(request(1, "tools/list"))).out)
    second = answers(cli("serve", stdin=lines(request(1, "tools/list"))).out)
    assert first[1]["result"]["tools"] == second[1]["result"]["tools"]
    search, page, status = first[1]["result"]["tools"]
    assert page["annotations"] == search["annotations"]
    assert status["annotations"] == {
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    }
    assert search["annotations"] == dict(status["annotations"], openWorldHint=True)


def test_unknown_tool_is_a_json_rpc_invalid_params_error() -> None:
    got = answers(cli("serve", stdin=lines(call(1, "delete_everything"))).out)
    assert got[1]["error"]["code"] == -32602
    assert got[1]["error"]["message"] == "unknown tool"


def test_req_status_003_engine_status_absent_when_disabled(write_config) -> None:
    path = write_config("config_version = 1\n[status]\nenabled = false\n")
    got = answers(
        cli(
            "serve",
            "--config",
            str(path),
            stdin=lines(request(1, "tools/list"), call(2, "engine_status")),
        ).out
    )
    assert [t["name"] for t in got[1]["result"]["tools"]] == ["web_search", "web_fetch"]
    assert got[2]["error"]["code"] == -32602


def test_req_status_001_engine_status_reports_states_in_identifier_order() -> None:
    got = answers(cli("serve", stdin=lines(call(1, "engine_status"))).out)
    result = got[1]["result"]
    assert result["structuredContent"] == {
        "engines": [
            {"id": "brave", "state": "disabled", "latency_ms": None, "reason": "no_credential"},
            {"id": "searxng", "state": "disabled", "latency_ms": None, "reason": "no_base_url"},
            {"id": "wikipedia", "state": "closed", "latency_ms": None},
        ],
        "notices": [],
        "outcome": "ok",
    }
    text = result["content"][0]["text"]
    assert json.loads(text) == result["structuredContent"]
    assert text == json.dumps(result["structuredContent"], separators=(",", ":"), sort_keys=True)


def test_req_mcp_011_text_alone_when_structured_content_is_off(write_config) -> None:
    path = write_config("config_version = 1\n[service]\nstructured_content = false\n")
    got = answers(
        cli(
            "serve",
            "--config",
            str(path),
            stdin=lines(request(1, "tools/list"), call(2, "engine_status")),
        ).out
    )
    assert all("outputSchema" not in t for t in got[1]["result"]["tools"])
    assert "structuredContent" not in got[2]["result"]
    assert json.loads(got[2]["result"]["content"][0]["text"])["outcome"] == "ok"


def test_invalid_arguments_are_invalid_request_naming_the_parameter() -> None:
    got = answers(cli("serve", stdin=lines(call(1, "engine_status", {"verbose": True}))).out)
    result = got[1]["result"]
    assert result["isError"] is True
    error = result["structuredContent"]["error"]
    assert error["kind"] == "invalid_request" and error["detail"]["parameter"] == "verbose"


def test_req_mcp_010_engine_status_rate_limit_per_minute(write_config) -> None:
    path = write_config("config_version = 1\n[limits]\nengine_status_per_minute = 2\n")
    got = answers(
        cli(
            "serve",
            "--config",
            str(path),
            stdin=lines(*(call(i, "engine_status") for i in range(1, 4))),
        ).out
    )
    assert not got[1]["result"]["isError"] and not got[2]["result"]["isError"]
    error = got[3]["result"]["structuredContent"]["error"]
    assert error["kind"] == "unavailable" and error["detail"]["reason"] == "rate_limited"
    assert 0 < error["detail"]["retry_after_ms"] <= 60_000


def test_lim_o3_a_line_over_16_mib_is_dropped_and_reading_goes_on() -> None:
    huge = (
        b'{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"x":"'
        + b"a" * (16 * 1024 * 1024 + 10)
        + b'"}}\n'
    )
    run = cli("serve", stdin=huge + lines(call(1, "engine_status")), timeout=120)
    got = answers(run.out)
    assert set(got) == {1}
    assert "stdio_line_dropped" in run.err


def test_malformed_line_gets_a_parse_error_and_serving_goes_on() -> None:
    run = cli("serve", stdin=b"{not json\n" + lines(call(1, "engine_status")))
    got = answers(run.out)
    assert got[1]["result"]["isError"] is False  # a KeyError if the call went unanswered


def test_req_ops_002_sigterm_exits_within_shutdown_ms() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "rypsok", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=REPO,
        env=clean_env(),
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(lines(call(1, "engine_status")))
    proc.stdin.flush()
    first = proc.stdout.readline()  # serving, with stdin still open
    assert json.loads(first)["id"] == 1
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    code = proc.wait(timeout=10)
    assert time.monotonic() - started < 3.0
    assert code == 0
    proc.stdin.close()
    proc.stdout.close()
    assert proc.stderr is not None
    proc.stderr.close()


def test_req_ops_002_end_of_input_exits_within_shutdown_ms() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "rypsok", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=REPO,
        env=clean_env(),
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(lines(call(1, "engine_status")))
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 1  # serving
    started = time.monotonic()
    proc.stdin.close()
    assert proc.wait(timeout=10) == 0
    assert time.monotonic() - started < 3.0
    proc.stdout.close()


def test_req_mcp_007_notifications_cancelled_ends_the_call_with_no_response(write_config) -> None:
    from tests.support.examples import tutorial_1_config
    from tests.support.standin import mediawiki

    with mediawiki(delay_s=5) as wiki:
        path = write_config(tutorial_1_config(wiki["base_url"]))
        proc = subprocess.Popen(
            [sys.executable, "-m", "rypsok", "serve", "--config", str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=REPO,
            env=clean_env(),
        )
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(lines(call(1, "web_search", {"query": "slow"})))
        proc.stdin.flush()
        time.sleep(1.0)  # the engine request is in flight
        cancel = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": 1, "reason": "user"},
        }
        proc.stdin.write(lines(cancel, call(2, "engine_status")))
        proc.stdin.flush()
        second = json.loads(proc.stdout.readline())
        assert second["id"] == 2
        started = time.monotonic()
        proc.stdin.close()
        assert proc.wait(timeout=10) == 0
        assert time.monotonic() - started < 1.5  # nothing left in flight to wait for
        assert proc.stdout.read() == b""  # no answer ever came for id 1
        proc.stdout.close()


def _live_cancel_scopes() -> int:
    gc.collect()
    return sum(type(o).__name__ == "CancelScope" for o in gc.get_objects())


def test_lim_o3_reading_many_lines_keeps_no_state_per_line() -> None:
    # Every line read used to leave its cancel scope behind for the life of the
    # process (about 5 MiB per 6000 lines). Served in this process, so the scopes
    # still alive can be counted after a few hundred lines and after thousands.
    core = Rypsok.from_config(load(None, {}))
    read_in, write_in = os.pipe()
    read_out, write_out = os.pipe()
    server = threading.Thread(
        target=anyio.run,
        daemon=True,
        args=(serve_stdio, core, read_in, os.fdopen(write_out, "wb", buffering=0), False),
    )
    server.start()
    answers_out = os.fdopen(read_out, "rb")
    sent = 0

    def exchange(count: int) -> None:
        nonlocal sent
        for _ in range(count // 100):
            os.write(write_in, lines(*(request(sent + i, "ping") for i in range(100))))
            sent += 100
            for _ in range(100):
                assert answers_out.readline(), "the server stopped answering"

    try:
        exchange(300)
        before = _live_cancel_scopes()
        exchange(3000)
        grown = _live_cancel_scopes() - before
    finally:
        os.close(write_in)
        server.join(timeout=30)
        answers_out.close()
    assert not server.is_alive()
    assert grown < 50, f"{grown} more cancel scopes alive after 3000 lines"
