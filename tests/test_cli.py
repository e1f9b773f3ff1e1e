"""The command line (REQ-OPS-001, REQ-OPS-003)."""

from __future__ import annotations

import json

import pytest

from rypsok import __version__
from tests.conftest import clean_env, cli


def test_req_ops_001_version_prints_to_stdout_and_exits_0() -> None:
    run = cli("--version")
    assert run.code == 0 and run.out == f"rypsok {__version__}\n" and run.err == ""


def test_req_ops_001_usage_errors_exit_2_on_stderr() -> None:
    for args in (
        (),
        ("frobnicate",),
        ("serve", "--transport", "carrier-pigeon"),
        ("check", "--bogus"),
    ):
        run = cli(*args)
        assert run.code == 2, args
        assert run.out == ""
        assert "usage:" in run.err


def test_req_ops_001_check_exits_0_valid_and_1_invalid(write_config) -> None:
    assert cli("check", "--config", str(write_config("config_version = 1\n"))).code == 0
    bad = cli("check", "--config", str(write_config("config_version = 2\n")))
    assert bad.code == 1 and bad.out == ""
    assert cli("check", "--config", "/nonexistent/rypsok.toml").code == 1


def test_req_ops_001_check_reads_rypsok_config_from_the_environment(write_config) -> None:
    path = write_config("config_version = 1\n[search]\nmax_results = 3\n")
    run = cli("check", env=clean_env(RYPSOK_CONFIG=str(path)))
    assert run.code == 0
    assert run.lines[0] == f"rypsok: configuration from RYPSOK_CONFIG={path} is valid"


def test_req_cfg_005_serve_refuses_an_invalid_configuration_with_exit_1(write_config) -> None:
    run = cli(
        "serve", "--config", str(write_config('config_version = 1\n[search]\nx = "secret"\n'))
    )
    assert run.code == 1 and run.out == ""
    events = [json.loads(line) for line in run.err.splitlines()]
    assert events[0]["event"] == "config_invalid" and events[0]["level"] == "error"
    assert events[0]["message"] == "search: an unknown key or table (line 3, column 5)"
    assert "secret" not in run.err


def test_req_ops_003_serve_logs_inactive_engines_at_start() -> None:
    run = cli("serve")
    events = [json.loads(line) for line in run.err.splitlines()]
    inactive = [e for e in events if e["event"] == "engine_inactive"]
    assert inactive == [dict(inactive[0], engine="brave", reason="no_credential")]
    assert run.out == ""


def test_serve_warns_at_start_when_queries_are_logged(write_config) -> None:
    run = cli(
        "serve",
        "--config",
        str(write_config('config_version = 1\n[logging]\nlog_queries = true\nlevel = "debug"\n')),
    )
    events = [json.loads(line) for line in run.err.splitlines()]
    assert any(e["event"] == "log_queries_enabled" and e["level"] == "warn" for e in events)


def test_req_err_001_serve_shortens_the_interpreter_switch_interval(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Parsing threads must not hold the event loop off for the default 5 ms a turn:
    # deadlines are kept by the loop (measured by tools/soak.py under load).
    import sys

    import rypsok.protocol.stdio as stdio
    from rypsok import servecmd

    seen: list[float] = []
    monkeypatch.setattr(stdio, "run", lambda _core: seen.append(sys.getswitchinterval()) or 0)
    before = sys.getswitchinterval()
    try:
        assert servecmd.run_serve(None, "stdio", {}) == 0
    finally:
        sys.setswitchinterval(before)
    assert seen == [servecmd.SWITCH_INTERVAL_S] and seen[0] < before
