"""rypsok probe: the container's health check (issue 18, item 5).

A real listener in a child process, on a port chosen here so that the probe,
reading the same file, knows it. The probe answers 0 only when that listener
answers server/discover to a caller it admits.
"""

from __future__ import annotations

import socket
from pathlib import Path

from tests.support.http_harness import TOKEN_A, caller_env, child, config_text
from tests.support.run import cli


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _listener_config(tmp_path: Path, callers: bool) -> tuple[int, str, Path]:
    """A free port, a configuration binding it, and that configuration's file."""
    port = _free_port()
    text = config_text(callers=callers).replace(
        'bind = "127.0.0.1:0"', f'bind = "127.0.0.1:{port}"'
    )
    path = tmp_path / "probe.toml"
    path.write_text(text, encoding="utf-8")
    return port, text, path


def test_issue_18_probe_is_0_while_the_listener_answers_and_1_after(tmp_path: Path) -> None:
    port, text, path = _listener_config(tmp_path, callers=True)
    with child(tmp_path, text) as served:
        assert served.port == port
        run = cli("probe", "--config", str(path), env=caller_env())
        assert run.code == 0 and run.out == "", run.err
        # Another caller's token from the same file: still a caller the gate admits.
        wrong = caller_env()
        wrong["RYPSOK_TOKEN_MIMLYS"] = "z" * 51
        refused = cli("probe", "--config", str(path), env=wrong)
        assert refused.code == 1 and "HTTP 401" in refused.err
        assert "z" * 51 not in refused.err and TOKEN_A not in run.err
        served.stop()
    gone = cli("probe", "--config", str(path), env=caller_env())
    assert gone.code == 1 and "no answer from 127.0.0.1:" in gone.err


def test_issue_18_probe_on_loopback_without_callers(tmp_path: Path) -> None:
    _, text, path = _listener_config(tmp_path, callers=False)
    with child(tmp_path, text) as served:
        assert cli("probe", "--config", str(path)).code == 0
        served.stop()


def test_issue_18_probe_with_a_bad_configuration_is_1(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text("config_version = 2\n", encoding="utf-8")
    run = cli("probe", "--config", str(path))
    assert run.code == 1 and run.out == "" and "does not load" in run.err


def test_issue_18_probe_asks_in_a_revision_the_server_serves() -> None:
    # The probe names the revision itself rather than import the SDK's types
    # (325 ms of imports on every health check): it must stay one the SDK serves.
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    from rypsok.commands import probe

    assert probe.MODERN in MODERN_PROTOCOL_VERSIONS


def test_issue_38_probe_reads_healthz_and_readyz_of_the_metrics_listener(tmp_path: Path) -> None:
    metrics = _free_port()
    port, text, path = _listener_config(tmp_path, callers=False)
    text += f'[service.metrics]\nbind = "127.0.0.1:{metrics}"\n'
    path.write_text(text, encoding="utf-8")
    with child(tmp_path, text) as served:
        assert served.port == port
        for flag in ("--health", "--ready"):
            run = cli("probe", flag, "--config", str(path))
            assert run.code == 0 and run.out == "", run.err
        served.stop()
    gone = cli("probe", "--ready", "--config", str(path))
    assert gone.code == 1 and f"no answer from 127.0.0.1:{metrics}/readyz" in gone.err
    unset = tmp_path / "plain.toml"
    unset.write_text(config_text(), encoding="utf-8")
    run = cli("probe", "--health", "--config", str(unset))
    assert run.code == 1 and "[service.metrics] bind" in run.err


def test_issue_37_probe_of_an_oauth_listener_without_callers_reads_its_challenge(
    tmp_path: Path,
) -> None:
    _, text, path = _listener_config(tmp_path, callers=False)
    text += (
        '[service.http.oauth]\nresource = "https://s.example/mcp"\nissuer = "https://id.example"\n'
    )
    path.write_text(text, encoding="utf-8")
    with child(tmp_path, text) as served:
        run = cli("probe", "--config", str(path))
        assert run.code == 0, run.err
        served.stop()
