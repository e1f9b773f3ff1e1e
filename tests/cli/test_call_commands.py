"""rypsok search, fetch and status: one call from the command line (issue 18, item 3).

Each test runs `python -m rypsok` as a child process against local stand-ins: the
engine providers behind a CONNECT tunnel ([egress] proxy), a page on a local HTTPS
site (allowed by an egress rule), both trusted through SSL_CERT_FILE, as an operator
would point rypsok at a private CA. Nothing reaches the internet: the refusals are
decided before any request.
"""

from __future__ import annotations

import json
import os
import pty
import socket
import subprocess
import sys
from pathlib import Path

from tests.support import engine_standin, site
from tests.support.engine_standin import WIKI, Seen, tunnel
from tests.support.moths import ARTICLE, ca_file, moth_results
from tests.support.paths import REPO
from tests.support.run import Run, clean_env, cli

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def _search(tmp_path: Path, *args: str) -> tuple[Run, list[Seen]]:
    with tunnel(moth_results) as standin:
        config = tmp_path / "rypsok.toml"
        config.write_text(
            f'config_version = 1\n[egress]\nproxy = "{standin.url}"\n'
            '[engines.wikipedia]\ntype = "wikipedia"\ncategories = ["general"]\n'
            '[engines.brave]\ntype = "brave"\ncategories = ["general"]\n'
            'api_key_env = "BRAVE_API_KEY"\n',
            encoding="utf-8",
        )
        env = clean_env(
            SSL_CERT_FILE=ca_file(tmp_path, engine_standin.CA),
            BRAVE_API_KEY="BSA" + "k" * 29,
        )
        run = cli("search", *args, "--config", str(config), env=env)
    return run, standin.seen


def test_issue_18_search_prints_each_result_with_its_url_and_snippet(tmp_path: Path) -> None:
    run, seen = _search(tmp_path, "moths at night")
    assert run.code == 0, run.err
    assert "https://moths.example/night" in run.out and "https://lamps.example/" in run.out
    assert "1. " in run.out and "outcome: ok" in run.out
    assert "https://en.wikipedia.org/wiki/Moth" in run.out
    assert {s.host for s in seen} == {WIKI, engine_standin.BRAVE}


def test_issue_18_search_json_is_the_tools_answer(tmp_path: Path) -> None:
    run, _ = _search(tmp_path, "moths at night", "--json", "--max-results", "2")
    assert run.code == 0, run.err
    answer = json.loads(run.out)
    assert answer["outcome"] == "ok" and len(answer["results"]) == 2
    assert set(answer["results"][0]) >= {"title", "url", "snippet"}


def test_issue_18_a_query_with_a_secret_is_refused_before_any_request(tmp_path: Path) -> None:
    run, seen = _search(tmp_path, f"why does {TOKEN} fail")
    assert run.code == 3 and run.out == ""
    assert "denied (secret_in_query)" in run.err and "character 9" in run.err
    assert TOKEN not in run.err and seen == []
    run, _ = _search(tmp_path, f"why does {TOKEN} fail", "--json")
    assert run.code == 3 and json.loads(run.out)["error"]["detail"]["reason"] == "secret_in_query"


def test_issue_18_a_bad_parameter_is_the_tools_invalid_request(tmp_path: Path) -> None:
    run, seen = _search(tmp_path, "moths", "--max-results", "900")
    assert run.code == 3 and "invalid_request" in run.err and "max_results" in run.err
    assert seen == []


def _fetch(tmp_path: Path, *args: str, allow: bool = True) -> Run:
    with site.site({"/moths": site.Page(body=ARTICLE)}) as s:
        config = tmp_path / "rypsok.toml"
        rule = '[egress]\nallow = ["127.0.0.1"]\n' if allow else ""
        config.write_text("config_version = 1\n" + rule, encoding="utf-8")
        env = clean_env(SSL_CERT_FILE=ca_file(tmp_path, site.CA))
        return cli("fetch", s.url("/moths"), *args, "--config", str(config), env=env)


def test_issue_18_fetch_prints_the_pages_markdown(tmp_path: Path) -> None:
    run = _fetch(tmp_path)
    assert run.code == 0, run.err
    assert run.out.startswith("title: Moths at night\nurl: https://127.0.0.1:")
    assert "# Moths at night" in run.out and "pollinators of flowers" in run.out
    assert "FOOTER" not in run.out and "outcome: ok" in run.out


def test_issue_18_fetch_reads_on_in_parts(tmp_path: Path) -> None:
    first = json.loads(_fetch(tmp_path, "--json", "--max-chars", "500").out)
    assert first["truncated"] is True and len(first["content"]) <= 500
    assert "LAST" not in first["content"]
    human = _fetch(tmp_path, "--max-chars", "500").out
    assert f"read on with --start {first['next_start_char']}" in human
    start = str(first["next_start_char"])
    run = _fetch(tmp_path, "--start", start)
    assert run.code == 0 and "LAST Some moths" in run.out
    assert "# Moths at night" not in run.out


def test_issue_36_fetch_prints_the_outline_of_a_long_page_with_each_start(
    tmp_path: Path,
) -> None:
    first = json.loads(_fetch(tmp_path, "--json", "--max-chars", "500").out)
    human = _fetch(tmp_path, "--max-chars", "500").out
    assert "outline (read a section with --start):\n" in human
    for heading in first["outline"]:
        indent = "  " * (heading["level"] - 1)
        assert f"{indent}{heading['text']}  [{heading['start_char']}]\n" in human
    whole = _fetch(tmp_path).out
    assert "outline" not in whole  # the whole page in one answer: no outline


def test_issue_18_fetch_of_a_private_address_is_denied(tmp_path: Path) -> None:
    # Without the egress rule 127.0.0.1 is the host's own network: refused, never asked.
    run = _fetch(tmp_path, allow=False)
    assert run.code == 3 and run.out == ""
    assert "denied (egress)" in run.err


def test_issue_18_status_lists_the_engines(tmp_path: Path) -> None:
    config = tmp_path / "rypsok.toml"
    config.write_text(
        'config_version = 1\n[engines.wikipedia]\ntype = "wikipedia"\ncategories = ["general"]\n'
        '[engines.brave]\ntype = "brave"\ncategories = ["general"]\napi_key_env = "BRAVE_API_KEY"\n',
        encoding="utf-8",
    )
    run = cli("status", "--config", str(config))
    assert run.code == 0, run.err
    assert "wikipedia: closed" in run.out and "brave: disabled (no_credential)" in run.out
    answer = json.loads(cli("status", "--json", "--config", str(config)).out)
    assert [e["id"] for e in answer["engines"]] == ["brave", "wikipedia"]


def test_issue_18_call_commands_exit_1_on_configuration_and_2_on_usage(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("config_version = 2\n", encoding="utf-8")
    for args in (("search", "x"), ("fetch", "https://example.com/"), ("status",)):
        run = cli(*args, "--config", str(bad))
        assert run.code == 1 and run.out == "", args
    for args in (("search",), ("fetch",), ("search", "x", "--max-results", "many")):
        run = cli(*args)
        assert run.code == 2 and run.out == "" and "usage:" in run.err, args


# -------------------------------------------- issue 31, items 3 and 4: why an engine failed


def _closed_port() -> int:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        return int(closed.getsockname()[1])


def _failing_engines(tmp_path: Path, untrusted_port: int) -> Path:
    """Three engines that each fail for another reason, decided on this machine."""
    closed = _closed_port()
    config = tmp_path / "failing.toml"
    config.write_text(
        'config_version = 1\n[egress]\nallow = ["127.0.0.2"]\ndeny = ["::1", "127.0.0.1"]\n'
        '[engines.wikipedia]\ntype = "wikipedia"\ncategories = ["science"]\n'
        # Nothing listens: refused.
        '[engines.closed]\ntype = "wikipedia"\ncategories = ["general"]\n'
        f'base_url = "https://127.0.0.2:{closed}/w"\n'
        # A name whose every address a deny rule refuses.
        '[engines.private]\ntype = "wikipedia"\ncategories = ["general"]\n'
        f'base_url = "https://localhost:{closed}/w"\n'
        # A TLS server whose certificate no trusted CA signed.
        '[engines.stranger]\ntype = "wikipedia"\ncategories = ["general"]\n'
        f'base_url = "https://127.0.0.2:{untrusted_port}/w"\n',
        encoding="utf-8",
    )
    return config


EXPECTED_KINDS = {"closed": "connect", "private": "egress", "stranger": "tls"}


def test_issue_31_engine_failed_names_the_client_failure_kind(tmp_path: Path) -> None:
    with site.site({"/w/api.php": site.Page(body=b"{}")}, host="127.0.0.2") as untrusted:
        run = cli("search", "moths", "--config", str(_failing_engines(tmp_path, untrusted.port)))
    assert run.code == 3, run.err
    events = [json.loads(line) for line in run.err.splitlines() if line.startswith("{")]
    failed = {e["engine"]: e for e in events if e["event"] == "engine_failed"}
    assert {e: failed[e]["kind"] for e in failed} == EXPECTED_KINDS
    assert {e["class"] for e in failed.values()} == {"request_failure"}
    assert failed["private"]["host"] == "localhost"
    assert untrusted.requests == []  # no request went over the unverified connection


def _at_terminal(*args: str) -> Run:
    """python -m rypsok with standard error on a pseudo-terminal, as a person runs it."""
    controller, terminal = pty.openpty()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "rypsok", *args],
            input=b"",
            stdout=subprocess.PIPE,
            stderr=terminal,
            env=clean_env(),
            cwd=REPO,
            timeout=60,
            check=False,
        )
        os.close(terminal)
        terminal = -1
        err = b""
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # the terminal's other side is closed: all is read
                break
            if not chunk:
                break
            err += chunk
    finally:
        os.close(controller)
        if terminal >= 0:
            os.close(terminal)
    return Run(proc.returncode, proc.stdout.decode(), err.decode().replace("\r\n", "\n"))


def test_issue_31_a_failed_search_at_a_terminal_names_each_engine_and_why(
    tmp_path: Path,
) -> None:
    with site.site({}, host="127.0.0.2") as untrusted:
        config = str(_failing_engines(tmp_path, untrusted.port))
        person = _at_terminal("search", "moths", "--config", config)
        verbose = _at_terminal("search", "moths", "--config", config, "-v")
        machine = _at_terminal("search", "moths", "--config", config, "--log-format", "json")
    assert person.code == verbose.code == machine.code == 3
    lines = person.err.splitlines()
    assert lines[0] == (
        "rypsok: web_search: unavailable (all_failed): every engine asked failed; retry later"
    )
    assert sorted(lines[1:]) == [
        "rypsok: closed: the connection to 127.0.0.2 was refused or failed",
        "rypsok: private: the egress policy refused every address of localhost",
        "rypsok: stranger: the TLS handshake with 127.0.0.2 failed",
    ]
    # -v: every event as the JSON lines of serve, info included.
    events = [json.loads(x) for x in verbose.err.splitlines() if x.startswith("{")]
    assert {"engine_failed", "call"} <= {e["event"] for e in events}
    # --log-format json: machine-readable, still only warnings and errors (none here).
    assert not any(x.startswith("{") for x in machine.err.splitlines())
    assert "engine_failed" not in machine.err


def test_issue_31_at_a_terminal_warnings_are_one_readable_line(tmp_path: Path) -> None:
    config = tmp_path / "scraping.toml"
    config.write_text(
        'config_version = 1\n[scraping]\nenabled = true\n[engines.ddg]\ntype = "duckduckgo"\n'
        'categories = ["general"]\n',
        encoding="utf-8",
    )
    run = _at_terminal("status", "--config", str(config))
    assert run.code == 0
    assert "rypsok: warning: scraping_enabled: engine=ddg\n" in run.err
    assert "{" not in run.err  # no JSON, no info events such as engine_inactive


def test_issue_31_not_a_terminal_keeps_the_json_lines_for_scripts(tmp_path: Path) -> None:
    run = cli("status")
    assert run.code == 0
    events = [json.loads(line) for line in run.err.splitlines()]
    assert {e["event"] for e in events} >= {"engine_inactive", "call"}
