"""tools/live-check, the live checks of the release checks (REQ-TEST-003, REQ-TEST-019).

Never the internet: the tool runs as a child process in which the network is
made unreachable (name resolution fails, or every name leads to a closed port
on loopback), or against local stand-ins: the providers' own host names behind
an `[egress] proxy` stand-in (tests/support/ddg_standin.py), a MediaWiki at an engine's
`base_url` (tests/support/standin.py) and HTTPS sites under a test CA (tests/support/site.py),
each trusted through SSL_CERT_FILE as an operator would.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from tests.support import ddg_standin
from tests.support.ddg_standin import Reply
from tests.support.paths import REPO
from tests.support.site import CA as SITE_CA
from tests.support.site import Page, site
from tests.support.standin import mediawiki

TOOL = REPO / "tools" / "live-check"
ARTICLE = (
    b"<!doctype html><html><head><title>Ownership</title></head><body><main><article>"
    b"<h1>Ownership</h1><p>Every value has one owner. When the owner goes out of scope, the "
    b"value is dropped. A value can be moved to a new owner or borrowed by a reference.</p>"
    b"<p>Shared references let many readers look at once; a mutable one lets one writer "
    b"change it while nobody else looks. The compiler checks this before the program runs."
    b"</p></article></main></body></html>"
)
# The child resolves no name at all: the machine has no network.
NO_DNS = """
import socket
def _no_dns(*args, **kwargs):
    raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
socket.getaddrinfo = _no_dns
"""
# Every name resolves to a loopback port nothing listens on: no connection can be made.
NO_ROUTE = """
import socket
def _closed(host, port, *args, **kwargs):
    return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", {port}))]
socket.getaddrinfo = _closed
"""
LINE = re.compile(r"^(engine|page) (\S+): (\S+)(?: (\d+) ms)?(?: \((.+)\))?$")


def _run(
    *args: str, prelude: str = "", env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """tools/live-check in a child process, after `prelude` (which may take its network)."""
    code = (
        f"{prelude}\nimport runpy, sys\nsys.argv[0] = {str(TOOL)!r}\n"
        f"runpy.run_path({str(TOOL)!r}, run_name='__main__')\n"
    )
    environment = {k: v for k, v in os.environ.items() if k != "BRAVE_API_KEY"}
    environment.update(env or {})
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=REPO,
        env=environment,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )


def _lines(stdout: str) -> dict[str, tuple[str, str | None, str | None]]:
    """{what: (status, latency_ms, detail)} for each check line; every other line is the
    summary."""
    found: dict[str, tuple[str, str | None, str | None]] = {}
    lines = stdout.splitlines()
    for line in lines[:-1]:
        match = LINE.match(line)
        assert match is not None, f"not a check line: {line!r}"
        kind, name, status, latency, detail = match.groups()
        found[f"{kind} {name}"] = (status, latency, detail)
    assert lines[-1].startswith("live-check: "), stdout
    return found


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def _trust(tmp_path: Path) -> Iterator[Path]:
    """One CA file with both test CAs: the providers' stand-in and the local sites."""
    path = tmp_path / "cas.pem"
    path.write_bytes(ddg_standin.CA.cert_pem.bytes() + SITE_CA.cert_pem.bytes())
    yield path


# -- without a network: one line, exit 3 ---------------------------------------------------------


def test_req_test_003_req_test_019_without_name_resolution_says_no_network_and_exits_3() -> None:
    for args, env in [((), {}), (("--duckduckgo",), {"BRAVE_API_KEY": "a-key-never-sent"})]:
        done = _run(*args, prelude=NO_DNS, env=env)
        assert done.returncode == 3, done.stdout + done.stderr
        assert done.stderr == ""
        assert done.stdout.count("\n") == 1
        assert done.stdout.startswith("live-check: no network: no host name of the checks ")
    # Every provider of the run and every page was tried before giving up: the default
    # run has Wikipedia and three pages (Wikipedia's host is one of them).
    assert "(5 tried)" in done.stdout


def test_req_test_003_req_test_019_when_nothing_connects_says_no_network_and_exits_3() -> None:
    done = _run(prelude=NO_ROUTE.format(port=_closed_port()))
    assert done.returncode == 3, done.stdout + done.stderr
    assert done.stdout.splitlines() == [
        "live-check: no network: no host of the checks could be connected to (3 tried); "
        "nothing was checked"
    ]


# -- each engine and each page: one line, ok or the failure class, with its latency -------------


def test_req_test_003_each_driver_asks_its_real_host_its_fixed_query(tmp_path: Path) -> None:
    """Wikipedia and DuckDuckGo at their own host names (behind the proxy stand-in), Brave
    without a key: the drivers, the engine client and the proxy of the production path."""
    with (
        ddg_standin.provider() as provider,
        _trust(tmp_path) as cas,
        site({"/article": Page(body=ARTICLE)}) as pages,
    ):
        config = tmp_path / "live.toml"
        config.write_text(
            f'config_version = 1\n[egress]\nproxy = "{provider.proxy_url}"\n'
            'allow = ["127.0.0.1"]\n[scraping]\nenabled = true\n'
            '[engines.wikipedia]\ntype = "wikipedia"\ncategories = ["general"]\n'
            '[engines.duckduckgo]\ntype = "duckduckgo"\ncategories = ["general"]\n'
            '[engines.brave]\ntype = "brave"\ncategories = ["general"]\n'
            'api_key_env = "LIVE_CHECK_TEST_UNSET_KEY"\n'
            '[engines.off]\ntype = "wikipedia"\ncategories = ["general"]\nenabled = false\n',
            encoding="utf-8",
        )
        args = ("--config", str(config), "--page", pages.url("/article"))
        env = {"SSL_CERT_FILE": str(cas)}

        done = _run(*args, env=env)
        assert done.returncode == 0, done.stdout + done.stderr
        lines = _lines(done.stdout)
        assert lines["engine wikipedia"][0] == "ok" and lines["engine wikipedia"][2] == "2 results"
        assert lines["engine duckduckgo"] == (
            "skipped",
            None,
            "a scraping driver: asked only with --duckduckgo",
        )
        assert lines["engine brave"] == (
            "skipped",
            None,
            "no credential: set LIVE_CHECK_TEST_UNSET_KEY",
        )
        assert lines["engine off"] == ("skipped", None, "disabled in the configuration")
        assert lines[f"page {pages.url('/article')}"][0] == "ok"
        assert done.stdout.splitlines()[-1] == "live-check: 2 ok, 0 failed, 3 skipped"
        assert [(s.host, s.params["srsearch"]) for s in provider.seen] == [
            ("en.wikipedia.org", ["Rust (programming language)"])
        ]

        # Asked for, DuckDuckGo is checked; its refusal is reported by its class.
        provider.seen.clear()
        provider.ddg = Reply(403, b"no", "text/plain")
        done = _run(*args, "--duckduckgo", env=env)
        assert done.returncode == 1, done.stdout + done.stderr
        lines = _lines(done.stdout)
        status, latency, _ = lines["engine duckduckgo"]
        assert status == "blocked" and latency is not None
        assert lines["engine wikipedia"][0] == "ok"
        assert done.stdout.splitlines()[-1] == "live-check: 2 ok, 1 failed, 2 skipped"
        ddg = provider.to("html.duckduckgo.com")
        assert [s.params["q"] for s in ddg] == [["Rust programming language"]]

        provider.ddg = ddg_standin.results_page()
        done = _run(*args, "--duckduckgo", env=env)
        assert done.returncode == 0, done.stdout + done.stderr
        assert _lines(done.stdout)["engine duckduckgo"][0] == "ok"


def test_req_test_003_a_failing_engine_or_page_is_named_by_its_class(tmp_path: Path) -> None:
    robots = Page(body=b"User-agent: *\nDisallow: /private\n", content_type="text/plain")
    with (
        mediawiki() as sound,
        mediawiki(hostile="html") as drifted,
        _trust(tmp_path) as cas,
        site(
            {"/robots.txt": robots, "/article": Page(body=ARTICLE), "/private": Page(body=ARTICLE)}
        ) as pages,
    ):
        config = tmp_path / "live.toml"
        config.write_text(
            'config_version = 1\n[egress]\nallow = ["127.0.0.1"]\n'
            f'[engines.sound]\ntype = "wikipedia"\ncategories = ["general"]\nbase_url = "{sound["base_url"]}"\n'
            f'[engines.drifted]\ntype = "wikipedia"\ncategories = ["general"]\nbase_url = "{drifted["base_url"]}"\n',
            encoding="utf-8",
        )
        urls = [pages.url(p) for p in ("/article", "/missing", "/private")]
        page_args = [a for url in urls for a in ("--page", url)]
        done = _run("--config", str(config), *page_args, env={"SSL_CERT_FILE": str(cas)})
    assert done.returncode == 1, done.stdout + done.stderr
    lines = _lines(done.stdout)
    assert {what: status for what, (status, _, _) in lines.items()} == {
        "engine drifted": "parse_failure",
        "engine sound": "ok",
        f"page {urls[0]}": "ok",
        f"page {urls[1]}": "unavailable:http_status",
        f"page {urls[2]}": "denied:robots_txt",
    }
    assert all(latency is not None for _, latency, _ in lines.values())
    assert done.stdout.splitlines()[-1] == "live-check: 2 ok, 3 failed, 0 skipped"
    # One request per engine: the fixed query, once.
    assert sound["queries"] == ["Rust (programming language)"]
    assert drifted["queries"] == ["Rust (programming language)"]


def test_req_test_003_a_bad_invocation_or_configuration_exits_2(tmp_path: Path) -> None:
    assert _run("--no-such-option", prelude=NO_DNS).returncode == 2
    bad = tmp_path / "bad.toml"
    bad.write_text('config_version = 1\n[engines.w]\ntype = "wikipedia"\nwieght = 3\n')
    done = _run("--config", str(bad), prelude=NO_DNS)
    assert done.returncode == 2 and "engines.w" in done.stderr
    done = _run("--config", str(tmp_path / "absent.toml"), prelude=NO_DNS)
    assert done.returncode == 2 and done.stdout == ""


# -- a release check, never CI --------------------------------------------------------------------


def test_req_test_019_live_checks_are_a_release_check_and_never_in_ci() -> None:
    assert os.access(TOOL, os.X_OK), "tools/live-check is not executable"
    script = REPO / "tools" / "release-checks"
    # The usage (printed before any environment is built) lists the live check.
    done = subprocess.run(
        [str(script), "nonsense"], cwd=REPO, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 2 and "tools/release-checks live" in done.stderr
    text = script.read_text(encoding="utf-8")
    assert "tools/live-check" in text
    assert re.search(r"for check in fuzz mutants soak live; do", text)
    for ci in (REPO / ".ci" / "run", REPO / "tools" / "test"):
        text = ci.read_text(encoding="utf-8")
        assert "live-check" not in text and "release-checks" not in text
