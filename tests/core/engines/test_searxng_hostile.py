"""Issue 19, "Bad input": a SearXNG address that answers what no instance should, through
`serve`, the real engine client and the whole pipeline.

A real SearXNG cannot be made to send these (a 10 MiB answer, `javascript:` links, a byte
a second, a proxy's login redirect), so a stand-in on 127.0.0.1 answers in SearXNG's JSON
shape; the classes a real instance gives are in test_searxng_instance.py.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.support.mcp_lines import answers, call, lines
from tests.support.run import cli
from tests.support.standin import mediawiki

Answer = Callable[[BaseHTTPRequestHandler], None]


def _send(handler: BaseHTTPRequestHandler, status: int, body: bytes, kind: str) -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", kind)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def _json(results: list[dict[str, Any]], **extra: Any) -> Answer:
    body = json.dumps({"query": "q", "results": results, **extra}).encode()
    return lambda h: _send(h, 200, body, "application/json")


@contextmanager
def instance(answer: Answer) -> Iterator[str]:
    """A SearXNG-shaped answer at /search on 127.0.0.1; yields the base_url."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if not self.path.startswith("/search?"):
                self.send_error(404)
                return
            answer(self)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _huge(handler: BaseHTTPRequestHandler) -> None:
    row = {"url": "https://a.example/PROVIDER-TEXT", "title": "PROVIDER-TEXT", "content": "x"}
    one = json.dumps(row).encode() + b","
    body = b'{"results": [' + one * (10 * 1024 * 1024 // len(one)) + b"{}]}"
    _send(handler, 200, body, "application/json")


def _trickle(handler: BaseHTTPRequestHandler) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", "4000")
    handler.end_headers()
    for _ in range(40):  # a byte every 100 ms: longer than any engine timeout here
        try:
            handler.wfile.write(b" ")
            handler.wfile.flush()
        except OSError:
            return
        time.sleep(0.1)


def _login(handler: BaseHTTPRequestHandler) -> None:
    handler.send_response(302)
    handler.send_header("Location", "https://sso.elsewhere.example/login?next=PROVIDER-TEXT")
    handler.send_header("Content-Length", "0")
    handler.end_headers()


def _login_page(handler: BaseHTTPRequestHandler) -> None:
    page = b"<html><body><h1>PROVIDER-TEXT sign in</h1><form action=/login></form></body></html>"
    _send(handler, 200, page, "text/html; charset=utf-8")


def _serve_search(base_url: str, write_config: Any, extra: str = "", **args: Any) -> Any:
    path = write_config(
        "config_version = 1\n[search]\nengine_timeout_ms = 1500\n"
        + extra
        + '[engines.sx]\ntype = "searxng"\ncategories = ["general"]\n'
        f'base_url = "{base_url}"\n'
    )
    run = cli(
        "serve",
        "--config",
        str(path),
        stdin=lines(call(1, "web_search", {"query": "rust", "max_results": 10, **args})),
    )
    return run


def _answer(run: Any) -> dict[str, Any]:
    found: dict[str, Any] = answers(run.out)[1]["result"]
    return found


FAILS = {
    "huge": (_huge, "parse_failure"),
    "trickle": (_trickle, "timeout"),
    "login_redirect": (_login, "request_failure"),
    "login_page": (_login_page, "request_failure"),
}


@pytest.mark.parametrize("how", sorted(FAILS))
def test_issue_19_a_hostile_instance_fails_in_its_class_and_leaks_nothing(
    write_config: Any, how: str
) -> None:
    answer, error_class = FAILS[how]
    started = time.monotonic()
    with instance(answer) as base_url:
        run = _serve_search(base_url, write_config)
    result = _answer(run)
    assert result["isError"], result
    error = result["structuredContent"]["error"]
    assert (error["kind"], error["detail"]) == ("unavailable", {"reason": "all_failed"}), error
    events = [json.loads(line) for line in run.err.splitlines()]
    failed = [e for e in events if e["event"] == "engine_failed"]
    assert [(e["engine"], e["class"]) for e in failed] == [("sx", error_class)]
    assert "PROVIDER-TEXT" not in run.out + run.err
    assert "elsewhere.example" not in run.out + run.err
    assert time.monotonic() - started < 15


def test_issue_19_hostile_results_are_cleaned_or_dropped(write_config: Any) -> None:
    rows = [
        {"url": "javascript:alert(1)", "title": "click", "content": "x", "engines": ["a"]},
        {"url": "data:text/html,<script>1</script>", "title": "data", "content": "x"},
        {
            "url": "https://ok.example/page",
            "title": "<b>Bold</b>\u200b\u202e title &amp; more<script>x</script>",
            "content": "<img src=x onerror=alert(1)>snippet\u2066",
            "publishedDate": "vor 3 Tagen",
            "engines": ["alpha", "<svg onload=1>"],
        },
        {"url": "https://two.example/", "title": "Two", "content": "", "publishedDate": 7},
    ]
    with instance(_json(rows)) as base_url:
        run = _serve_search(base_url, write_config, "engine_attribution = true\n")
    answer = _answer(run)["structuredContent"]
    assert answer["outcome"] == "ok"
    assert [r["url"] for r in answer["results"]] == [
        "https://ok.example/page",
        "https://two.example/",
    ]
    first = answer["results"][0]
    assert first["title"] == "Bold title & more"
    assert "<" not in first["snippet"] and "\u2066" not in first["snippet"]
    assert "date" not in first and "date" not in answer["results"][1]
    # The instance's upstream is named when attribution is on; a name that is markup is not.
    assert first["engines"] == ["sx", "sx/alpha"]
    assert {"code": "results_dropped", "reason": "url_invalid", "count": 2} in answer["notices"]


def test_issue_19_unresponsive_upstreams_become_an_engine_incomplete_notice(
    write_config: Any,
) -> None:
    rows = [{"url": "https://ok.example/", "title": "Ok", "content": "fine"}]
    down = [["beta", "timeout"], ["PROVIDER-TEXT", "HTTP error"]]
    with instance(_json(rows, unresponsive_engines=down)) as base_url:
        run = _serve_search(base_url, write_config)
    answer = _answer(run)["structuredContent"]
    assert answer["outcome"] == "ok"
    assert answer["notices"] == [{"code": "engine_incomplete", "engine": "sx", "count": 2}]
    assert "PROVIDER-TEXT" not in run.out + run.err


def test_issue_19_searxng_fuses_with_wikipedia(write_config: Any) -> None:
    """The same page from the instance and from a wiki is one result, named by both."""
    with mediawiki() as wiki:
        shared = wiki["base_url"].removesuffix("/w") + "/wiki/Rust_(programming_language)"
        rows = [
            {
                "url": "https://www.rust-lang.org/",
                "title": "Rust",
                "content": "home",
                "engines": ["alpha"],
            },
            {
                "url": shared,
                "title": "Rust (programming language)",
                "content": "a language",
                "engines": ["beta", "alpha"],
            },
        ]
        with instance(_json(rows)) as base_url:
            path = write_config(
                'config_version = 1\n[egress]\nallow = ["127.0.0.1"]\n[search]\n'
                "engine_attribution = true\n"
                '[engines.sx]\ntype = "searxng"\ncategories = ["general"]\n'
                f'base_url = "{base_url}"\n'
                '[engines.wiki]\ntype = "wikipedia"\ncategories = ["general"]\n'
                f'base_url = "{wiki["base_url"]}"\n'
            )
            run = cli(
                "serve",
                "--config",
                str(path),
                stdin=lines(call(1, "web_search", {"query": "rust", "max_results": 10})),
            )
    answer = _answer(run)["structuredContent"]
    assert answer["outcome"] == "ok", answer
    engines = {r["url"]: r["engines"] for r in answer["results"]}
    # Found by both engines: first by fusion, named by each, the instance's upstreams after.
    assert answer["results"][0]["url"] == shared
    assert engines[shared] == ["sx", "wiki", "sx/alpha", "sx/beta"]
    assert engines["https://www.rust-lang.org/"] == ["sx", "sx/alpha"]
    assert len(answer["results"]) == 3  # the wiki's second page, once
