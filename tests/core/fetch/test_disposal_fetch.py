"""REQ-LIFE-002 beyond a finished web_search: once a web_fetch has ended, or a call was
cancelled half-way, nothing of its body, URL, text, title or query is reachable from the
service or from the state rypsok's modules keep.

The book's retention classes allow an origin's robots.txt rules for the process (keyed by
scheme, host and port) and search results in the cache when it is on; this build adds a
page kept for its next parts (test_continuation.py), off in the test of a finished fetch
(a cancelled one keeps nothing). The cache is off here, and every marker below sits in a
part no class allows to be kept: the URL's path, the page's bytes, its title and text, the
query.
"""

from __future__ import annotations

import contextlib
import gc
import ssl
import threading
import time
import urllib.parse
from collections.abc import Awaitable, Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import pytest

from rypsok.core.fetch import pipeline
from rypsok.core.html.tree import parse_html
from tests.support.fake_engines import FakeClient
from tests.support.fetching import ALLOW_LOCAL
from tests.support.fetching import make as make_fetcher
from tests.support.reachable import assert_gone, marker
from tests.support.searching import make as make_searcher
from tests.support.site import CA, Page, site


async def eventually(condition: Callable[[], bool], within: float = 3.0) -> bool:
    end = time.monotonic() + within
    while not condition():
        if time.monotonic() > end:
            return False
        await anyio.sleep(0.01)
    return True


async def cancel_when(call: Callable[[], Any], ready: Callable[[], Awaitable[bool]]) -> bool:
    """Start *call*, cancel it once *ready* returns; whether the call got that far."""
    async with anyio.create_task_group() as group:
        group.start_soon(call)
        reached = await ready()
        group.cancel_scope.cancel()
    return reached


def page(title: str, text: str, chrome: str) -> bytes:
    html = (
        f"<!doctype html><html><head><title>{title}</title></head><body>"
        f"<nav><a href='/'>Home</a> <!-- {chrome} --> <span>{chrome}</span></nav><main>"
        f"<article><h1>{title}</h1><p>{text} is the subject of this page, and the page says "
        "enough about it to be read as an article rather than as a list of links.</p>"
        f"<p>A second paragraph keeps {text} company, long enough for the main content to "
        "win over the navigation above it by a clear margin.</p></article></main></body></html>"
    )
    return html.encode()


def test_req_life_002_nothing_of_a_fetched_page_stays_reachable(tmp_path: Path) -> None:
    old_path, new_path = "/" + marker("movedfrom"), "/" + marker("readat")
    title, text, chrome = marker("TitleMark"), marker("TextMark"), marker("BodyOnlyMark")
    with site(
        {
            old_path: Page(301, headers={"Location": new_path}),
            new_path: Page(body=page(title, text, chrome)),
        }
    ) as s:
        # Nothing kept for a next part: what that memory keeps, and for how long, is
        # tested in test_continuation.py.
        core = make_fetcher(tmp_path, ALLOW_LOCAL + "[fetch]\ncontinuation_ttl_s = 0\n")

        async def go() -> dict[str, Any]:
            return (await core.fetch({"url": s.url(old_path)})).to_json()

        answer = anyio.run(go)
        assert [p for p, _ in s.requests] == ["/robots.txt", old_path, new_path]
    # the call did read the page: each marker was there to be kept
    assert answer["url"].endswith(new_path) and answer["title"] == title
    assert text in answer["content"] and chrome not in answer["content"]
    del answer
    assert core.fetches.parsing.borrowed_tokens == 0
    assert core.store.robots.get(s.base) is not None  # the origin's rules: kept on purpose
    assert_gone(core, [old_path, new_path, title, text, chrome])


def test_req_life_002_a_cancelled_web_search_leaves_no_query(tmp_path: Path) -> None:
    class NeverAnswers(FakeClient):
        async def get(self, url: str, **_: Any) -> Any:
            self.cancelled.append("asked")  # how many engines were reached; no URL kept
            await anyio.sleep_forever()

    silent = NeverAnswers()
    core, _ = make_searcher(tmp_path, client=silent)
    mark = marker("QueryMark")
    query = f"where is {mark}"

    async def go() -> bool:
        return await cancel_when(
            lambda: core.search({"query": query}),
            lambda: eventually(lambda: len(silent.cancelled) == 2),
        )

    assert anyio.run(go), "the engines were never asked"
    assert_gone(core, [mark])


@contextlib.contextmanager
def unfinished_page(path: str, start: bytes) -> Iterator[tuple[str, threading.Event]]:
    """An HTTPS page that sends its head and *start*, promises much more, and then waits:
    the URL, and an event set once *start* is on the wire."""
    sent, done = threading.Event(), threading.Event()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            if self.path != path:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(start) + 100_000))
            self.end_headers()
            self.wfile.write(start)
            self.wfile.flush()
            sent.set()
            done.wait(10)  # never finishes while the test looks
            self.close_connection = True

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    CA.issue_cert("127.0.0.1").configure_cert(context)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}{path}", sent
    finally:
        done.set()
        server.shutdown()
        server.server_close()


def test_req_life_002_a_web_fetch_cancelled_while_reading_leaves_nothing(
    tmp_path: Path,
) -> None:
    """Cancelled with part of the body read: the URL and those bytes are released."""
    path = "/" + marker("slowpath")
    title, text, chrome = marker("TitleMark"), marker("TextMark"), marker("BodyOnlyMark")
    start = page(title, text, chrome).replace(b"</body></html>", b"")
    with unfinished_page(path, start) as (url, sent):
        core = make_fetcher(tmp_path, ALLOW_LOCAL + "[fetch]\nrobots_txt = false\n")

        async def go() -> bool:
            async def started() -> bool:
                if not await eventually(sent.is_set):
                    return False
                await anyio.sleep(0.2)  # time for the client to read what was sent
                return True

            return await cancel_when(lambda: core.fetch({"url": url}), started)

        reached = anyio.run(go)
    assert reached, "the page never started"
    assert core.fetches.in_flight.borrowed_tokens == 0
    assert_gone(core, [path, title, text, chrome])


def test_req_life_002_a_web_fetch_cancelled_while_parsing_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker thread outlives its cancelled caller (a thread cannot be stopped, only
    asked): once it has ended and handed its permit back, nothing of the page is left."""
    parsing = threading.Event()

    def slow_parse(text: Any, *, cancel: threading.Event, **options: Any) -> Any:
        tree = parse_html(text, cancel=cancel, **options)
        parsing.set()
        cancel.wait(5)  # a long parse, which stops once it is told to
        return tree

    monkeypatch.setattr(pipeline, "parse_html", slow_parse)
    path = "/" + marker("parsedpath")
    title, text, chrome = marker("TitleMark"), marker("TextMark"), marker("BodyOnlyMark")
    with site({path: Page(body=page(title, text, chrome))}) as s:
        core = make_fetcher(tmp_path)
        permits = core.fetches.parsing

        async def go() -> tuple[bool, bool]:
            reached = await cancel_when(
                lambda: core.fetch({"url": s.url(path)}), lambda: eventually(parsing.is_set)
            )
            # the thread keeps its permit, and the page, until its work returns
            returned = await eventually(lambda: permits.borrowed_tokens == 0)
            return reached, returned

        reached, returned = anyio.run(go)
    assert reached, "the parse never started"
    assert returned, "the parsing thread kept its permit"
    assert_gone(core, [path, title, text, chrome])


def _cached_text(function: object) -> str:
    """The keys and values an lru_cache wrapper holds (its dict is among its referents)."""
    found: list[str] = []
    stack = list(gc.get_referents(function))
    while stack:
        obj = stack.pop()
        if isinstance(obj, str):
            found.append(obj)
        elif isinstance(obj, dict):
            stack.extend([*obj.keys(), *obj.values()])
        elif isinstance(obj, (list, tuple)):
            stack.extend(obj)
    return "\n".join(found)


def test_req_life_002_no_url_is_left_in_the_standard_url_cache(tmp_path: Path) -> None:
    """urllib.parse.urlsplit memoizes its last 128 URLs for the life of the process; every
    URL rypsok splits (the page's, a redirect's target, each link of the page, an engine
    request with its query) lands there unless rypsok clears it when the call ends."""
    path, query, link = "/" + marker("cachedpath"), marker("cachedquery"), marker("cachedlink")
    body = page(marker("TitleMark"), marker("TextMark"), marker("BodyOnlyMark")).replace(
        b"</article>", f"<p>See <a href='/{link}'>the next part</a>.</p></article>".encode()
    )
    with site({path: Page(body=body)}) as s:
        core = make_fetcher(tmp_path)

        async def go() -> dict[str, Any]:
            return (await core.fetch({"url": s.url(f"{path}?q={query}")})).to_json()

        answer = anyio.run(go)
    assert link in answer["content"]  # the link was resolved, so it was split
    del answer
    cached = _cached_text(urllib.parse.urlsplit)
    kept = [m for m in (path, query, link) if m in cached]
    assert kept == [], f"still in urllib.parse's cache after the call: {kept}"
