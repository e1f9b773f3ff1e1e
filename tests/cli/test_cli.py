"""The command line (REQ-OPS-001, REQ-OPS-003)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rypsok import __version__
from tests.support.mcp_lines import HANDSHAKE, answers, lines, request
from tests.support.paths import EXAMPLES
from tests.support.run import clean_env, cli


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
    assert events[0]["message"] == "search.x: an unknown key (line 3, column 1)"
    assert "secret" not in run.err


def test_req_ops_003_serve_logs_inactive_engines_at_start() -> None:
    run = cli("serve")
    events = [json.loads(line) for line in run.err.splitlines()]
    inactive = [e for e in events if e["event"] == "engine_inactive"]
    assert inactive == [
        dict(inactive[0], engine="brave", reason="no_credential"),
        dict(inactive[1], engine="searxng", reason="no_base_url"),
    ]
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
    # deadlines are kept by the loop (measured by bench/soak under load).
    import sys

    import rypsok.protocol.stdio as stdio
    from rypsok.commands import serve

    seen: list[float] = []
    monkeypatch.setattr(stdio, "run", lambda _core: seen.append(sys.getswitchinterval()) or 0)
    before = sys.getswitchinterval()
    try:
        assert serve.run_serve(None, "stdio", {}) == 0
    finally:
        sys.setswitchinterval(before)
    assert seen == [serve.SWITCH_INTERVAL_S] and seen[0] < before


# -- serve over stdio reads no caller token ("What rypsok check says"; Deployment) ------------


def _shared_with_network_mode(write_config, tmp_path) -> str:  # type: ignore[no-untyped-def]
    # Tutorial 4's file, as a deployment shares it between its two modes; the token file
    # it names does not exist here, and the token variable is not set.
    text = (EXAMPLES / "tutorial-4.toml").read_text(encoding="utf-8")
    text = text.replace("/run/secrets/rypsok-ops", str(tmp_path / "absent-token"))
    assert 'token_env = "RYPSOK_TOKEN_MIMLYS"' in text
    return str(write_config(text))


def test_req_ops_001_serve_stdio_starts_without_the_http_callers_tokens(
    write_config, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    path = _shared_with_network_mode(write_config, tmp_path)
    env = clean_env()
    assert "RYPSOK_TOKEN_MIMLYS" not in env
    run = cli(
        "serve",
        "--transport",
        "stdio",
        "--config",
        path,
        env=env,
        stdin=lines(*HANDSHAKE, request(1, "tools/list", modern=False)),
    )
    assert run.code == 0, run.err
    got = answers(run.out)
    assert got[0]["result"]["serverInfo"]["name"] == "rypsok"
    assert [t["name"] for t in got[1]["result"]["tools"]] == [
        "web_search",
        "web_fetch",
        "engine_status",
    ]
    events = [json.loads(line) for line in run.err.splitlines()]
    assert not [e for e in events if e["level"] == "error"], events


def test_req_ops_001_check_and_serve_http_still_refuse_the_unset_caller_token(
    write_config, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    path = _shared_with_network_mode(write_config, tmp_path)
    checked = cli("check", "--config", path)
    assert checked.code == 1
    assert (
        "rypsok: error: service.http.auth.callers[0].token_env: environment variable "
        "RYPSOK_TOKEN_MIMLYS is unset or empty (line 13, column 13)"
    ) in checked.lines
    assert any(
        x.startswith("rypsok: error: service.http.auth.callers[1].token_file: the file named by ")
        for x in checked.lines
    )
    served = cli("serve", "--transport", "http", "--config", path)
    assert served.code == 1 and served.out == ""
    events = [json.loads(line) for line in served.err.splitlines()]
    assert [e["message"] for e in events if e["event"] == "config_invalid"] == [
        x.removeprefix("rypsok: error: ") for x in checked.lines[1:]
    ]


def test_issue_18_a_pyz_for_another_machine_says_so_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from rypsok import builtfor
    from rypsok.commands.cli import main

    marker = tmp_path / "built-for.txt"
    monkeypatch.setattr(builtfor, "BUILT_FOR", marker)
    python, system, cpu = builtfor.this_machine()
    marker.write_text(f"{python} {system} {cpu}\n", encoding="ascii")
    assert main(["--version"]) == 0  # built for this machine: runs
    capsys.readouterr()
    marker.write_text(f"3.99 {system} {cpu}\n", encoding="ascii")
    assert main(["--version"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith(f"rypsok: this file is for CPython 3.99 on {system}-{cpu}, and this is")
    marker.write_text(f"{python} windows x86_64\n", encoding="ascii")
    assert main(["status", "--bogus"]) == 1  # refused before the arguments are read
