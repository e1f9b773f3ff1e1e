"""The SearXNG harness (tests/support/searxng.py) runs a real SearXNG on its stand-in.

These prove the instance is SearXNG and not a fake: its JSON shape, its engine
selection by category, its timeouts and error reporting, its 403 for a format left
out. They also pin what tools/searxng/FACTS.md says of SearXNG's answers, so that a
new SearXNG release that changes one fails here first. Requests use http.client
only, each with a timeout.
"""

from __future__ import annotations

import http.client
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.support import searxng as harness
from tests.support.searxng import ENGINE_TIMEOUT, HANG, Answer, Hit, Searxng

# The fixtures, re-exported here so that pytest finds them by their names: searxng,
# searxng_instance, searxng_nojson, searxng_instance_nojson.
from tests.support.searxng import searxng_fixture as searxng_fixture
from tests.support.searxng import searxng_instance_fixture as searxng_instance_fixture
from tests.support.searxng import searxng_instance_nojson_fixture as searxng_instance_nojson_fixture
from tests.support.searxng import searxng_nojson_fixture as searxng_nojson_fixture


def asked(instance: Searxng) -> list[str]:
    return sorted(r.engine for r in instance.upstream.requests)


def test_results_come_from_the_upstream_and_name_their_engines(searxng: Searxng) -> None:
    up = searxng.upstream
    up.results(
        "alpha",
        Hit("https://a.example/1", "Alpha one", "first"),
        Hit("https://both.example/", "Both", "from alpha"),
        suggestions=("hello there",),
    )
    up.results("beta", Hit("https://both.example/", "Both", "from beta"))

    data = searxng.search("hello world", categories="general")

    assert data["query"] == "hello world"
    by_url = {r["url"]: r for r in data["results"]}
    assert set(by_url) == {"https://a.example/1", "https://both.example/"}
    assert by_url["https://a.example/1"]["engines"] == ["alpha"]
    assert by_url["https://a.example/1"]["title"] == "Alpha one"
    assert by_url["https://a.example/1"]["content"] == "first"
    # The same URL from two engines is one result naming both.
    assert sorted(by_url["https://both.example/"]["engines"]) == ["alpha", "beta"]
    assert data["suggestions"] == ["hello there"]
    assert data["unresponsive_engines"] == []
    # general is alpha and beta; each was asked once, for page 1, in no language.
    assert asked(searxng) == ["alpha", "beta"]
    for request in up.requests:
        assert (request.query, request.page, request.language) == ("hello world", 1, "all")
        assert (request.time_range, request.safesearch) == (None, None)


def test_an_upstream_that_hangs_is_unresponsive_after_the_engine_timeout(searxng: Searxng) -> None:
    searxng.upstream.hang("alpha")
    searxng.upstream.results("beta", Hit("https://b.example/", "B"))

    started = time.monotonic()
    data = searxng.search("slow", categories="general")
    took = time.monotonic() - started

    assert data["unresponsive_engines"] == [["alpha", "timeout"]]
    assert [r["url"] for r in data["results"]] == ["https://b.example/"]
    assert ENGINE_TIMEOUT - 0.2 < took < HANG


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (Answer(status=503), "HTTP error"),
        (Answer(status=404), "HTTP error"),
        (Answer(status=403), "access denied"),
        (Answer(status=429), "too many requests"),
        (Answer(body=b"<html>not json"), "parsing error"),
    ],
)
def test_an_upstream_that_fails_is_unresponsive(
    searxng: Searxng, answer: Answer, reason: str
) -> None:
    searxng.upstream.set("beta", answer)
    searxng.upstream.results("alpha", Hit("https://a.example/", "A"))

    data = searxng.search("broken", categories="general")

    assert data["unresponsive_engines"] == [["beta", reason]]
    assert [r["url"] for r in data["results"]] == ["https://a.example/"]
    # No suspension in the harness: the next search asks the failed engine again.
    searxng.search("again", categories="general")
    assert [r.query for r in searxng.upstream.requests_to("beta")] == ["broken", "again"]


def test_pageno_reaches_the_upstream(searxng: Searxng) -> None:
    searxng.search("paged", categories="general", pageno=2)
    assert {(r.engine, r.page) for r in searxng.upstream.requests} == {("alpha", 2), ("beta", 2)}

    # Past an engine's max_page (beta: 2), or on an engine without paging (gamma),
    # SearXNG leaves the engine out, and says nothing of it.
    searxng.upstream.reset()
    data = searxng.search("paged", categories="general", pageno=3)
    assert [(r.engine, r.page) for r in searxng.upstream.requests] == [("alpha", 3)]
    assert data["unresponsive_engines"] == []
    searxng.upstream.reset()
    data = searxng.search("paged", categories="news", pageno=2)
    assert searxng.upstream.requests == []
    assert (data["results"], data["unresponsive_engines"]) == ([], [])


def test_time_range_safesearch_and_language_reach_the_upstream(searxng: Searxng) -> None:
    searxng.search("dated", categories="general", time_range="month", safesearch=2, language="de")
    for request in searxng.upstream.requests:
        assert (request.time_range, request.safesearch, request.language) == ("month", 2, "de")

    # gamma maps the time range but not safe search; SearXNG asks it all the same.
    searxng.upstream.reset()
    searxng.search("dated", categories="news", time_range="day", safesearch=1)
    [request] = searxng.upstream.requests
    assert (request.engine, request.time_range, request.safesearch) == ("gamma", "day", None)


def test_categories_select_engines_and_an_unknown_one_falls_back_to_general(
    searxng: Searxng,
) -> None:
    for categories, engines in [
        ("it", ["beta"]),
        ("science", ["gamma"]),
        ("news,it", ["beta", "gamma"]),
        ("nonesuch", ["alpha", "beta"]),
        ("nonesuch,science", ["gamma"]),
    ]:
        searxng.upstream.reset()
        data = searxng.search("which", categories=categories)
        assert asked(searxng) == engines, categories
        assert data["unresponsive_engines"] == []
    # With no categories at all, general too; an unknown engine name is dropped alike.
    searxng.upstream.reset()
    searxng.search("which", engines="nonesuch")
    assert asked(searxng) == ["alpha", "beta"]


def test_published_date_is_iso_8601_and_null_without_one(searxng: Searxng) -> None:
    up = searxng.upstream
    up.results("delta", Hit("-", "Aware", "x", published=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)))
    up.results("alpha", Hit("https://a.example/", "Undated"))

    data = searxng.search("when was it", categories="dated,general", time_range="week")

    dates = {r["title"]: r["publishedDate"] for r in data["results"]}
    assert dates == {"Aware": "2026-01-02T03:04:05+00:00", "Undated": None}
    assert [r["url"] for r in data["results"] if r["title"] == "Aware"] == [up.delta_url(1)]
    [request] = up.requests_to("delta")
    assert (request.query, request.time_range) == ("when was it", "week")


def test_an_instance_without_json_answers_403(searxng_nojson: Searxng) -> None:
    reply = searxng_nojson.get("/search", {"q": "json please", "format": "json"})

    assert reply.status == 403
    assert reply.headers["content-type"].startswith("text/html")
    assert b"403 Forbidden" in reply.body
    assert searxng_nojson.upstream.requests == []  # refused before any engine
    # The same instance searches in HTML.
    assert searxng_nojson.get("/search", {"q": "html please"}).status == 200
    assert asked(searxng_nojson) == ["alpha", "beta"]


def test_bad_parameters_are_400_with_a_json_error(searxng: Searxng) -> None:
    for params, message in [
        ({"safesearch": "3"}, "Invalid value 3 for parameter safesearch"),
        ({"safesearch": "-1"}, "Invalid value -1 for parameter safesearch"),
        ({"time_range": "decade"}, "Invalid value decade for parameter time_range"),
        ({"pageno": "0"}, "Invalid value 0 for parameter pageno"),
        ({"timeout_limit": "soon"}, "Invalid value soon for parameter timeout_limit"),
        ({"language": "xx_1"}, "Invalid value xx_1 for parameter language"),
        ({"q": ""}, "No query"),
    ]:
        reply = searxng.get("/search", {"q": "x", "format": "json", **params})
        assert (reply.status, reply.json()) == (400, {"error": message}), params
    assert searxng.upstream.requests == []


def test_a_search_that_crashes_is_500_with_a_json_error(searxng: Searxng) -> None:
    # SearXNG splits engine_data-<engine>-<key> on "-": a bare engine_data crashes it.
    reply = searxng.get("/search", {"q": "x", "format": "json", "engine_data": "1"})
    assert (reply.status, reply.json()) == (500, {"error": "search error"})


def test_timeout_limit_shortens_the_wait_but_cannot_lengthen_it(searxng: Searxng) -> None:
    # The upstream answers after 1 s, within the engine's timeout: only the limit
    # can make it a timeout.
    searxng.upstream.hang("alpha", 1.0)
    started = time.monotonic()
    data = searxng.search("quick", engines="alpha", timeout_limit="0.4")
    assert time.monotonic() - started < ENGINE_TIMEOUT
    assert data["unresponsive_engines"] == [["alpha", "timeout"]]

    # Without outgoing.max_request_timeout, the engine's own timeout caps it.
    searxng.upstream.hang("alpha")
    started = time.monotonic()
    data = searxng.search("patient", engines="alpha", timeout_limit="10")
    assert time.monotonic() - started < HANG
    assert data["unresponsive_engines"] == [["alpha", "timeout"]]


def test_the_query_syntax_is_searxngs(searxng: Searxng) -> None:
    # A bang picks an engine by shortcut or name, and is taken out of the query.
    data = searxng.search("!bet hello")
    assert (data["query"], asked(searxng)) == ("hello", ["beta"])
    # An answerer's keyword first answers without any engine.
    searxng.upstream.reset()
    data = searxng.search("sum 1 2 3")
    assert searxng.upstream.requests == []
    assert [a["engine"] for a in data["answers"]] == ["answerer: sum"]
    # An external bang redirects, JSON asked or not.
    reply = searxng.get("/search", {"q": "!!g hello", "format": "json"})
    assert (reply.status, reply.headers["location"]) == (
        302,
        "https://www.google.com/search?q=hello",
    )


def test_error_reasons_follow_the_ui_locale(searxng: Searxng) -> None:
    searxng.upstream.fail("alpha")
    german = {"Accept-Language": "de-DE,de;q=0.9"}
    reply = searxng.get("/search", {"q": "x", "format": "json", "engines": "alpha"}, german)
    assert reply.json()["unresponsive_engines"] == [["alpha", "HTTP-Fehler"]]
    reply = searxng.get(
        "/search", {"q": "x", "format": "json", "engines": "alpha", "locale": "en"}, german
    )
    assert reply.json()["unresponsive_engines"] == [["alpha", "HTTP error"]]


def test_the_launcher_keeps_searxng_on_the_loopback() -> None:
    # The image proxy fetches any URL signed with the instance's key: here the
    # launcher must refuse the name lookup, and the harness must see the refusal.
    with harness.running_searxng() as instance:
        reply = instance.get(instance.image_proxy_url("https://example.org/logo.png"))
        assert reply.status == 400
        assert instance.refused() == ["REFUSED socket.getaddrinfo b'example.org'"]


def test_the_stand_in_records_what_no_engine_asks() -> None:
    with harness.Upstream().serving() as up:
        connection = http.client.HTTPConnection("127.0.0.1", up.port, timeout=10)
        try:
            connection.request("GET", "/elsewhere?q=x")
            assert connection.getresponse().status == 404
        finally:
            connection.close()
        assert up.strays == ["GET /elsewhere?q=x"]
        assert up.requests == []


def test_a_missing_venv_is_an_error_that_names_the_fix(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(harness, "VENV", tmp_path / "absent")
    with (
        pytest.raises(harness.SearxngUnavailable, match="bash tools/setup"),
        harness.running_searxng(),
    ):
        pass


def _processes_naming(text: str) -> list[int]:
    """Ids of the running processes whose command line holds `text` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue  # gone meanwhile
            if text.encode() in cmdline:
                found.append(int(entry.name))
    return found


def test_running_valkey_runs_redislites_server_on_a_unix_socket_and_stops_it() -> None:
    with harness.running_valkey() as url:
        assert url.startswith("unix:///") and url.endswith("/valkey.sock")
        socket_path = Path(url.removeprefix("unix://"))
        [pid] = _processes_naming(str(socket_path))
        assert Path(f"/proc/{pid}/exe").resolve() == harness.valkey_server().resolve()
        assert harness.valkey_command(url, "PING") == b"+PONG"
        # The shape of SearXNG's sliding-window script: TIME, then writes, in one script.
        script = (
            "local t = redis.call('TIME') "
            "redis.call('ZADD', KEYS[1], t[1], t[1] .. t[2]) "
            "redis.call('EXPIRE', KEYS[1], 5) "
            "return redis.call('ZCOUNT', KEYS[1], 0, t[1] + 1)"
        )
        assert harness.valkey_command(url, "EVAL", script, "1", "window") == b":1"
        assert harness.valkey_command(url, "EVAL", script, "1", "window") == b":2"
    assert not socket_path.exists()
    assert not Path(f"/proc/{pid}").exists()  # stopped and reaped


def test_the_limiter_runs_on_redislites_server() -> None:
    """With the limiter on, the harness starts its Valkey and SearXNG uses it: a request
    without a browser's headers is refused at once, and the per-network count of json
    searches (kept by SearXNG's Lua scripts in the server) refuses the fifth."""
    with harness.running_searxng(limiter=True) as instance:
        bare = instance.get("/search", {"q": "x", "format": "json"})
        assert (bare.status, bare.body) == (429, b"Too Many Requests")
        assert "retry-after" not in bare.headers
        assert instance.upstream.requests == []
        # Headers that pass the header checks; the user agent says what it is.
        passing = {
            "User-Agent": "rypsok-harness limiter probe",
            "Accept": "text/html",
            "Accept-Encoding": "gzip",
            "Accept-Language": "en",
        }
        statuses = [
            instance.get("/search", {"q": f"x{n}", "format": "json"}, passing).status
            for n in range(5)
        ]
        assert statuses == [200, 200, 200, 200, 429]
        assert "requires Valkey" not in instance.log_text()
        assert instance.refused() == [] and instance.upstream.strays == []
