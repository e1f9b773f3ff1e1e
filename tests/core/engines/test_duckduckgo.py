"""The duckduckgo scraping driver against its admission record (REQ-ENG-013, -014, -015,
REQ-TEST-018, THR-25): hand-written pages in the provider's shape, the statuses, the bounds,
the headers it sends and the ones it does not, and web_search end to end through a local
stand-in for the endpoint (tests/support/ddg_standin.py)."""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rypsok.core import limits
from rypsok.core.config import load
from rypsok.core.config.settings import EngineSettings
from rypsok.core.engines import duckduckgo, registry
from rypsok.core.engines.base import (
    ERROR_CLASSES,
    EngineFailure,
    EngineQuery,
    HeaderLookup,
    OutboundRequest,
    RawResult,
    header_lookup,
)
from rypsok.core.engines.duckduckgo import ADMISSION, DuckDuckGoDriver
from rypsok.core.facade import Rypsok
from rypsok.core.model import QuerySkipReason
from rypsok.core.net.client import user_agent
from rypsok.core.store.local.provider import ProviderLimiter
from tests.support.clock import FakeClock
from tests.support.ddg_core import core_for
from tests.support.ddg_standin import DDG, WIKI, Reply, page, provider
from tests.support.logs import captured_log
from tests.support.run import cli

HTML = header_lookup({"Content-Type": "text/html; charset=UTF-8"})
KIB = 1024

# results.html, in the page's order: the two ads (first and last block) are not results.
EXPECTED = [
    (
        "https://www.rust-lang.org/",
        "Rust Programming Language",
        "A language empowering everyone to build reliable and efficient software.",
    ),
    (
        "https://en.wikipedia.org/wiki/Rust_(programming_language)",
        "Rust (programming language) - Wikipedia",
        "Rust is a general-purpose programming language that stresses performance, type safety "
        "& concurrency.",
    ),
    (
        "https://doc.rust-lang.org/book/?search=ownership&lang=en",
        "The Rust Programming Language - The Rust Programming Language",
        "by Steve Klabnik, Carol Nichols, and Chris Krycho. This version of the text assumes "
        "you're using Rust 1.85.0 or later.",
    ),
    (
        "https://github.com/rust-lang/rust",
        "GitHub - rust-lang/rust: Empowering everyone to build reliable and efficient software.",
        "This is the main source code repository for Rust. It contains the compiler, standard "
        "library, and documentation.",
    ),
    (
        "https://www.example.org/café/rust-vs-go?ref=ddg",
        "Rust vs. Go – which one in 2026?",
        "Both compile to native code; one has a garbage collector and the other has a borrow "
        "checker.",
    ),
]


# -- helpers ----------------------------------------------------------------------------------


def engine_settings(ident: str = "ddg") -> EngineSettings:
    return EngineSettings(
        id=ident,
        admission=ADMISSION,
        enabled=True,
        categories=("general",),
        preference=20,
        api_key_env=None,
        api_key_file_set=False,
        endpoint=None,
        base_url=None,
        credential=None,
        credential_problem=None,
    )


def driver() -> DuckDuckGoDriver:
    built = registry.driver_for(engine_settings())
    assert isinstance(built, DuckDuckGoDriver)
    return built


def query(**changes: Any) -> EngineQuery:
    values: dict[str, Any] = {
        "query": "rust programming language",
        "category": "general",
        "language": "en",
        "region": "US",
        "safe_search": "moderate",
        "time_range": None,
        "count": 10,
    }
    values.update(changes)
    return EngineQuery(**values)


def parse(body: bytes | str, status: int = 200, header: HeaderLookup = HTML) -> list[RawResult]:
    data = body if isinstance(body, bytes) else page(body)
    return driver().parse(status, header, data)


def failure(body: bytes | str, status: int = 200, header: HeaderLookup = HTML) -> EngineFailure:
    with pytest.raises(EngineFailure) as info:
        parse(body, status, header)
    error = info.value
    # REQ-ENG-006: the class only, nothing of the page chained to it.
    assert str(error) == error.error_class and error.error_class in ERROR_CLASSES
    assert error.__context__ is None and error.__cause__ is None
    return error


def triples(results: list[RawResult]) -> list[tuple[str, str, str]]:
    return [(r.url, r.title, r.snippet) for r in results]


def minimal(body: str) -> bytes:
    return f"<!DOCTYPE html><html><head><title>t</title></head><body>{body}</body></html>".encode()


def search(core: Rypsok, **arguments: Any) -> dict[str, Any]:
    async def go() -> dict[str, Any]:
        return (await core.search(arguments)).to_json()

    return anyio.run(go)


def lift_rate(core: Rypsok, engine: str = "ddg") -> None:
    """Only for tests that ask the engine several times: the record's rate (one call every
    six seconds) is lifted, its concurrency cap kept."""
    cap = int(core.store.limiters[engine].slots.total_tokens)
    core.store.limiters[engine] = ProviderLimiter(60000, 1000, cap)  # type: ignore[index]


# -- REQ-ENG-013: opt in, never by default ------------------------------------------------------


def test_req_eng_013_a_scraping_driver_is_never_in_the_default_set(tmp_path: Path) -> None:
    assert ADMISSION.scraping
    path = tmp_path / "empty.toml"
    path.write_text("config_version = 1\n[scraping]\nenabled = true\n")
    config = load(str(path), {})
    assert config.engines and all(not e.admission.scraping for e in config.engines)
    assert "duckduckgo" not in {e.driver for e in config.engines}


@pytest.mark.parametrize("switch", ["", "[scraping]\nenabled = false\n"])
def test_req_eng_013_refused_without_the_switch_check_and_serve_exit_1(
    tmp_path: Path, switch: str
) -> None:
    path = tmp_path / "noswitch.toml"
    path.write_text(
        f'config_version = 1\n{switch}[engines.ddg]\ntype = "duckduckgo"\n'
        'categories = ["general"]\n'
    )
    sentence = (
        'engines.ddg: type "duckduckgo" scrapes a human-facing interface; it runs only '
        "with [scraping] enabled = true, at the operator's risk under the provider's "
        "terms."
    )
    checked = cli("check", "--config", str(path))
    assert checked.code == 1
    errors = [line for line in checked.lines if line.startswith("rypsok: error:")]
    assert len(errors) == 1 and errors[0].startswith(f"rypsok: error: {sentence} (line ")
    served = cli("serve", "--config", str(path))
    assert served.code == 1 and served.out == ""
    events = [json.loads(line) for line in served.lines]
    assert [e["event"] for e in events] == ["config_invalid"]
    assert events[0]["message"].startswith(f"{sentence} (line ")


# -- REQ-ENG-014: no browser imitation ----------------------------------------------------------


def test_req_eng_014_no_browser_headers(tmp_path: Path) -> None:
    """What reaches the endpoint: the engine client's own headers, the standard User-Agent
    with the operator's contact, Accept: text/html, and nothing else at all."""
    assert driver().request(query()).headers == (("Accept", "text/html"),)
    with provider() as standin:
        core = core_for(tmp_path, standin, '[service]\nuser_agent_contact = "ops@example.org"\n')
        assert search(core, query="rust")["outcome"] == "ok"
    [seen] = standin.to(DDG)
    names = seen.header_names()
    assert sorted(names) == ["accept", "accept-encoding", "connection", "host", "user-agent"]
    assert len(names) == len(set(names))
    assert seen.header("User-Agent") == user_agent("ops@example.org")
    assert seen.header("Accept") == "text/html"
    for browser_like in (
        "cookie",
        "accept-language",
        "referer",
        "origin",
        "dnt",
        "upgrade-insecure-requests",
    ):
        assert browser_like not in names
    assert not [n for n in names if n.startswith(("sec-", "sec-fetch-", "sec-ch-"))]


@pytest.mark.parametrize(("safe", "kp"), [("strict", "1"), ("moderate", "-1"), ("off", "-2")])
@pytest.mark.parametrize(
    ("period", "df"),
    [
        (None, None),
        ("day", "d"),
        ("week", "w"),
        ("month", "m"),
        ("year", "y"),
    ],
)
def test_req_eng_014_parameters_q_kl_kp_df(
    safe: str, kp: str, period: str | None, df: str | None
) -> None:
    request = driver().request(
        query(
            query="rust & bone 100%",
            language="pt-BR",
            region="BR",
            safe_search=safe,
            time_range=period,
        )
    )
    parts = urlsplit(request.url)
    assert (parts.scheme, parts.hostname, parts.path) == ("https", "html.duckduckgo.com", "/html/")
    params = parse_qs(parts.query, keep_blank_values=True)
    expected = {"q": ["rust & bone 100%"], "kl": ["br-pt"], "kp": [kp]}
    if df is not None:
        expected["df"] = [df]
    assert params == expected  # nothing more: no count, no session, no cookie-like token


def test_req_eng_014_kl_is_region_lower_dash_primary_language() -> None:
    assert duckduckgo.kl("en", "US") == "us-en"
    assert duckduckgo.kl("zh-Hant", "TW") == "tw-zh"
    assert duckduckgo.kl("de", "CH") == "ch-de"


def test_req_eng_014_parameters_reach_the_endpoint(tmp_path: Path) -> None:
    with provider() as standin:
        core = core_for(
            tmp_path,
            standin,
            '[search]\nlanguages = ["en", "pt-BR"]\nregion = "BR"\nsafe_search = "strict"\n',
        )
        search(core, query="ferrugem", language="pt-BR", time_range="week")
    [seen] = standin.to(DDG)
    assert seen.path == "/html/"
    assert seen.params == {"q": ["ferrugem"], "kl": ["br-pt"], "kp": ["1"], "df": ["w"]}


def test_req_eng_014_skips_only_what_the_record_cannot_honour() -> None:
    d = driver()
    for period in (None, "day", "week", "month", "year"):
        assert d.skip_reason(query(time_range=period)) is None
    for language in ("en", "pt-BR", "zh-Hant", "ja"):
        assert d.skip_reason(query(language=language)) is None
    assert d.skip_reason(query(time_range="decade")) == "time_range"
    assert d.skip_reason(query(query="x" * 500)) is None
    assert d.skip_reason(query(query="x" * 501)) == "query_too_long"


def test_req_eng_014_challenge_page_is_blocked_whatever_the_status() -> None:
    for status in (200, 202):
        assert failure("challenge.html", status).error_class == "blocked"
    # Also where the status says something else: the page decides (not a request_failure).
    assert failure("challenge.html", 418).error_class == "blocked"


@pytest.mark.parametrize(
    "marker",
    [
        '<div class="anomaly-modal__title">Please wait</div>',
        "<p>Unfortunately,\n   bots use <b>DuckDuckGo</b> too.</p>",
        '<form action="/html/anomaly?sv=html" method="POST"><button>Go</button></form>',
        '<form action="//duckduckgo.com/anomaly.js?sv=html&amp;cc=botnet" method="POST"></form>',
    ],
    ids=["class", "sentence", "form", "form-js"],
)
def test_req_eng_014_each_challenge_marker_alone_is_blocked(marker: str) -> None:
    assert failure(minimal(marker), 200).error_class == "blocked"
    # The same page without the marker has changed shape: parse_failure, not blocked.
    assert failure(minimal("<p>Please wait</p>"), 200).error_class == "parse_failure"


def test_req_eng_014_a_result_or_query_quoting_the_challenge_sentence_is_not_a_challenge() -> None:
    results = parse("odd_results.html")
    assert "https://d.example/bots" in [r.url for r in results]
    # The page's <title> repeats the query, whatever it was.
    asked = page("results.html").replace(
        b"<title>rust programming language at", b"<title>Unfortunately, bots use DuckDuckGo too at"
    )
    assert asked != page("results.html")
    assert triples(parse(asked)) == EXPECTED


def test_req_eng_014_403_is_blocked_whatever_the_body() -> None:
    for body in ("results.html", "challenge.html", b""):
        assert failure(body, 403).error_class == "blocked"


@pytest.mark.parametrize("status", [429, 503])
def test_req_eng_014_429_and_503_are_rate_limited_with_retry_after(status: int) -> None:
    plain = failure("results.html", status, header_lookup({"Retry-After": "120"}))
    assert plain.error_class == "rate_limited" and plain.retry_after_s == 120.0
    dated = failure(b"", status, header_lookup({"retry-after": "Fri, 31 Dec 2100 23:59:59 GMT"}))
    assert dated.error_class == "rate_limited"
    assert dated.retry_after_s is not None and dated.retry_after_s > 3600
    bare = failure("challenge.html", status, header_lookup({}))
    assert bare.error_class == "rate_limited" and bare.retry_after_s is None


def test_req_eng_014_retry_after_holds_the_engine_and_nothing_works_around_it(
    tmp_path: Path,
) -> None:
    with provider() as standin:
        standin.ddg = Reply(429, b"slow down", headers={"Retry-After": "120"})
        core = core_for(tmp_path, standin, wikipedia=True)
        lift_rate(core)
        first = search(core, query="rust")
        second = search(core, query="rust")
    assert {"code": "engine_unavailable", "engine": "ddg", "reason": "rate_limited"} in (
        first["notices"]
    )
    assert {"code": "engine_skipped", "engine": "ddg", "reason": "rate_limited"} in (
        second["notices"]
    )
    assert len(standin.to(DDG)) == 1  # no retry, no second request inside Retry-After


# -- REQ-TEST-018: the page states ------------------------------------------------------------


def test_req_test_018_results_in_order_with_wrappers_unwrapped() -> None:
    results = parse("results.html")
    assert triples(results) == EXPECTED
    assert all(r.markup is False and r.date is None for r in results)
    assert not [r for r in results if "duckduckgo.com" in r.url]


def test_req_test_018_ads_are_skipped() -> None:
    body = page("results.html")
    assert b"y.js?ad_domain" in body  # the fixture has ads...
    urls = [r.url for r in parse(body)]
    assert not [u for u in urls if "y.js" in u]  # ...and none is a result
    assert "Sponsored" not in " ".join(r.title for r in parse(body))
    # A page of ads only answered: nothing to show, nothing wrong.
    ads_only = minimal(
        '<div class="result result--ad"><a class="result__a" '
        'href="https://duckduckgo.com/y.js?ad_domain=a.example&amp;u3=x">Buy</a></div>'
    )
    assert parse(ads_only) == []


def test_req_test_018_odd_links_are_dropped_and_the_rest_kept() -> None:
    assert triples(parse("odd_results.html")) == [
        ("https://a.example/one", "First kept", "Alpha & omega <not a tag>"),
        ("http://c.example/plain", "Second kept", ""),
        (
            "https://d.example/bots",
            "Third kept",
            'A blog post titled "Unfortunately, bots use DuckDuckGo too."',
        ),
    ]


@pytest.mark.parametrize("name", ["no_results.html", "no_results_div.html"])
def test_req_test_018_no_results_page_is_empty_not_failed(name: str) -> None:
    assert parse(name) == []
    # Without its marker the same page is a page we do not know.
    text = page(name).replace(b"no-results", b"nothing-here")
    assert failure(text).error_class == "parse_failure"


def test_req_test_018_no_results_answer_is_empty_and_counts_no_failure(tmp_path: Path) -> None:
    with provider() as standin:
        standin.ddg = Reply(200, page("no_results.html"))
        core = core_for(tmp_path, standin)
        answer = search(core, query="qzxv wlorbnatsk ffyphj")
    assert answer == {"outcome": "empty", "notices": [], "results": []}
    circuit = core.store.circuits["ddg"]  # type: ignore[attr-defined]
    assert circuit.state == "closed"
    assert circuit._failures == 0


@pytest.mark.parametrize("name", ["drifted.html", "drifted_links.html"])
def test_req_eng_015_drifted_page_is_parse_failure(name: str) -> None:
    assert failure(name).error_class == "parse_failure"


def test_req_eng_015_a_page_in_another_shape_is_parse_failure() -> None:
    for body in (b"", b'{"results": []}', b"\x00\xff" * 100, minimal("<p>Hello</p>")):
        assert failure(body).error_class == "parse_failure"


def test_req_eng_015_other_statuses_are_request_failure() -> None:
    for status in (400, 404, 500, 502):
        assert failure("results.html", status).error_class == "request_failure"


def test_req_eng_015_charset_from_the_header_or_the_page() -> None:
    latin = (
        minimal(
            '<div class="result"><a class="result__a" href="https://a.example/">Caf\u00e9</a></div>'
        )
        .decode()
        .encode("windows-1252")
    )
    declared = header_lookup({"Content-Type": "text/html; charset=windows-1252"})
    assert [r.title for r in parse(latin, header=declared)] == ["Caf\u00e9"]
    undeclared = parse(page("results.html"), header=header_lookup({}))
    assert triples(undeclared) == EXPECTED  # the page's own <meta> (and UTF-8) decide


# -- REQ-ENG-015: bounded like web_fetch ------------------------------------------------------


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_req_eng_015_a_redirect_is_request_failure(status: int) -> None:
    moved = header_lookup({"Location": "https://html.duckduckgo.com/html/?q=again"})
    # Whatever the body says: a redirect is a redirect, not a page to read.
    for body in ("results.html", "challenge.html", "no_results.html"):
        assert failure(body, status, moved).error_class == "request_failure"


@pytest.mark.parametrize(
    "location",
    [
        "https://elsewhere.example/html/?q=rust",  # off the provider's host
        "https://html.duckduckgo.com/html/?q=again",  # on it: not followed either
    ],
    ids=["off-host", "on-host"],
)
def test_req_eng_015_no_redirect_is_followed(tmp_path: Path, location: str) -> None:
    with provider() as standin:
        standin.ddg = Reply(302, b"", None, {"Location": location})
        core = core_for(tmp_path, standin, wikipedia=True)
        answer = search(core, query="rust")
    assert answer["outcome"] == "partial"
    assert {"code": "engine_unavailable", "engine": "ddg", "reason": "request_failure"} in (
        answer["notices"]
    )
    assert [(s.host, s.path) for s in standin.seen if s.host != WIKI] == [(DDG, "/html/")]


def test_req_eng_015_the_256_kib_bound(tmp_path: Path) -> None:
    bound = 256 * KIB
    assert ADMISSION.response_bytes == bound == limits.default("LIM-E2")
    assert driver().request(query()).max_bytes == bound
    body = page("results.html")

    def padded(size: int) -> bytes:
        return body + b"<!--" + b"x" * (size - len(body) - 7) + b"-->"

    assert len(padded(bound)) == bound
    with provider() as standin:
        core = core_for(tmp_path, standin, wikipedia=True)
        lift_rate(core)
        standin.ddg = Reply(200, padded(bound))
        at_bound = search(core, query="rust", max_results=20)
        standin.ddg = Reply(200, padded(bound + 1))
        above = search(core, query="rust", max_results=20)
    assert at_bound["outcome"] == "ok"
    assert {r["url"] for r in at_bound["results"]} >= {url for url, _, _ in EXPECTED}
    assert above["outcome"] == "partial"
    assert {"code": "engine_unavailable", "engine": "ddg", "reason": "parse_failure"} in (
        above["notices"]
    )


def test_req_eng_015_the_node_bound() -> None:
    body = page("results.html").replace(b"</body>", b"")
    assert [r.url for r in parse(body + b"<p>x" * 10000)] == [u for u, _, _ in EXPECTED]
    crowded = body + b"<p>x" * 60000  # about 120 000 nodes in less than 256 KiB
    assert len(crowded) < ADMISSION.response_bytes
    assert limits.default("LIM-F10") < 120000
    started = time.monotonic()
    assert failure(crowded).error_class == "parse_failure"
    assert time.monotonic() - started < 5


def test_req_eng_015_the_depth_bound() -> None:
    body = page("results.html")
    marker = b'<div id="links" class="results">'

    def nested(levels: int) -> bytes:
        return body.replace(marker, marker + b"<div>" * levels)

    assert len(parse(nested(100))) == len(EXPECTED)
    assert limits.default("LIM-F11") < 300
    assert failure(nested(300)).error_class == "parse_failure"


def test_req_eng_015_the_parse_runs_in_a_worker_thread_under_the_parsing_permits(
    tmp_path: Path,
) -> None:
    """Two duckduckgo engines answer one search; with one parsing permit their parses never
    overlap, and neither runs on the event loop's thread."""
    assert ADMISSION.html_answer

    def run(permits: int) -> tuple[int, set[int], list[int], int]:
        with provider() as standin:
            core = core_for(
                tmp_path,
                standin,
                f"[limits]\nparsing_in_flight = {permits}\n",
                engines='[engines.ddg]\ntype = "duckduckgo"\ncategories = '
                '["general"]\n[engines.ddg2]\ntype = "duckduckgo"\n'
                'categories = ["general"]\n',
            )
            assert core.searches.parsing is core.fetches.parsing  # shared with web_fetch
            spies = {i: _Spy(core.searches.drivers[i], core) for i in ("ddg", "ddg2")}
            core.searches.drivers.update(spies)  # type: ignore[attr-defined]
            loop_thread: list[int] = []

            async def go() -> dict[str, Any]:
                loop_thread.append(threading.get_ident())
                return (await core.search({"query": "rust"})).to_json()

            answer = anyio.run(go)
        assert answer["outcome"] == "ok"
        threads = {t for s in spies.values() for t in s.threads}
        borrowed = [b for s in spies.values() for b in s.borrowed]
        return loop_thread[0], threads, borrowed, _Spy.peak

    _Spy.reset()
    loop, threads, borrowed, peak = run(1)
    assert threads and loop not in threads
    assert borrowed == [1, 1]  # each parse held the one permit
    assert peak == 1
    _Spy.reset()
    _, _, _, peak_two = run(2)
    assert peak_two == 2  # the test can see overlap: the permit is what prevented it


class _Spy:
    """Wraps a driver: where and under which permits its parse runs."""

    lock = threading.Lock()
    running = 0
    peak = 0

    def __init__(self, inner: Any, core: Rypsok) -> None:
        self.inner = inner
        self.admission = inner.admission
        self.parsing = core.searches.parsing
        self.threads: list[int] = []
        self.borrowed: list[int] = []

    @classmethod
    def reset(cls) -> None:
        cls.running = cls.peak = 0

    def skip_reason(self, q: EngineQuery) -> QuerySkipReason | None:
        result: QuerySkipReason | None = self.inner.skip_reason(q)
        return result

    def request(self, q: EngineQuery) -> OutboundRequest:
        result: OutboundRequest = self.inner.request(q)
        return result

    def parse(
        self,
        status: int,
        header: HeaderLookup,
        body: bytes,
        *,
        cancel: threading.Event | None = None,
    ) -> list[RawResult]:
        self.threads.append(threading.get_ident())
        self.borrowed.append(int(self.parsing.borrowed_tokens))
        with _Spy.lock:
            _Spy.running += 1
            _Spy.peak = max(_Spy.peak, _Spy.running)
        try:
            time.sleep(0.2)  # long enough for a second parse to start, were it allowed
            result: list[RawResult] = self.inner.parse(status, header, body, cancel=cancel)
            return result
        finally:
            with _Spy.lock:
                _Spy.running -= 1


def test_req_eng_002_parse_is_thread_safe_and_keeps_no_state() -> None:
    d = driver()
    names = [
        "results.html",
        "odd_results.html",
        "no_results.html",
        "challenge.html",
        "drifted.html",
    ] * 8

    def outcome(name: str) -> object:
        try:
            return triples(d.parse(200, HTML, page(name)))
        except EngineFailure as error:
            return error.error_class

    sequential = [outcome(n) for n in names]
    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(outcome, names)) == sequential


# -- REQ-CMP-002: ten a minute, one at a time ---------------------------------------------------


def test_req_cmp_002_ten_requests_a_minute_one_at_a_time() -> None:
    assert (ADMISSION.rate_per_minute, ADMISSION.burst, ADMISSION.concurrency) == (10, 1, 1)
    clock = FakeClock(0.0)
    limiter = ProviderLimiter(
        ADMISSION.rate_per_minute, ADMISSION.burst, ADMISSION.concurrency, clock
    )
    assert [limiter.reserve(deadline=1e9) for _ in range(3)] == [0.0, 6.0, 12.0]
    assert limiter.slots.total_tokens == 1


def test_req_cmp_002_the_facade_asks_duckduckgo_at_its_rate(tmp_path: Path) -> None:
    with provider() as standin:
        core = core_for(tmp_path, standin, "[limits]\nper_engine_in_flight = 8\n", wikipedia=True)
        limiter = core.store.limiters["ddg"]
        assert limiter.slots.total_tokens == 1  # the record's cap wins over the setting
        first = search(core, query="rust")
        second = search(core, query="rust")  # within six seconds: no turn before the deadline
    assert first["outcome"] == "ok"
    assert {"code": "engine_skipped", "engine": "ddg", "reason": "rate_limited"} in (
        second["notices"]
    )
    assert len(standin.to(DDG)) == 1 and len(standin.to(WIKI)) == 2


def test_req_cmp_002_one_request_in_flight_at_a_time(tmp_path: Path) -> None:
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}

    def during(seen: Any) -> None:
        if seen.host != DDG:
            return
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        time.sleep(0.1)
        with lock:
            state["now"] -= 1

    with provider() as standin:
        standin.during = during
        core = core_for(tmp_path, standin, "[limits]\nper_engine_in_flight = 8\n")
        lift_rate(core)

        async def many() -> None:
            async with anyio.create_task_group() as group:
                for _ in range(4):
                    group.start_soon(core.search, {"query": "rust"})

        anyio.run(many)
    assert len(standin.to(DDG)) == 4
    assert state["peak"] == 1


def test_req_cmp_007_duckduckgo_answers_are_never_stored() -> None:
    assert ADMISSION.cacheable is False


# -- The boundary: no provider text anywhere ----------------------------------------------------


def test_req_eng_006_no_provider_text_in_logs_or_notices(tmp_path: Path) -> None:
    marker = "PROVIDER-TEXT"
    answers = [
        Reply(200, page("challenge.html").replace(b"Error code", marker.encode())),
        Reply(202, page("challenge.html")),
        Reply(200, page("drifted.html").replace(b"GitHub", marker.encode())),
        Reply(500, f"<html><body>{marker}: internal trouble</body></html>".encode()),
        Reply(302, b"", None, {"Location": f"https://elsewhere.example/{marker}"}),
        Reply(429, marker.encode(), "text/plain", {"Retry-After": f"{marker}"}),
        Reply(403, page("challenge.html")),
    ]
    with provider() as standin, captured_log() as stream:
        core = core_for(tmp_path, standin, "[resilience]\nfailures_to_open = 10\n", wikipedia=True)
        outputs = []
        for reply in answers:
            standin.ddg = reply
            lift_rate(core)
            outputs.append(search(core, query="rust"))
    logged = stream.getvalue()
    shown = json.dumps(outputs)
    classes = [n["reason"] for o in outputs for n in o["notices"] if n.get("engine") == "ddg"]
    assert classes == [
        "blocked",
        "blocked",
        "parse_failure",
        "request_failure",
        "request_failure",
        "rate_limited",
        "blocked",
    ]
    assert "engine_failed" in logged  # the failures were logged...
    for text in (
        marker,
        "bots use",
        "Unfortunately",
        "anomaly",
        "elsewhere.example",
        "internal trouble",
        "challenge",
    ):
        assert text not in logged, text  # ...with rypsok's words only
        assert text not in shown, text


# -- end to end through the facade --------------------------------------------------------------


def test_req_test_018_web_search_end_to_end_through_the_facade(tmp_path: Path) -> None:
    with provider() as standin:
        standin.wikipedia = [("Rust & Bone", "A 2012 film", "2026-07-19T10:00:00Z")]
        core = core_for(tmp_path, standin, "[search]\nengine_attribution = true\n", wikipedia=True)
        answer = search(core, query="rust programming language", max_results=20)

        async def status() -> dict[str, Any]:
            return (await core.status()).to_json()

        engines = {e["id"]: e for e in anyio.run(status)["engines"]}
    assert answer["outcome"] == "ok" and answer["notices"] == []
    from_ddg = [r for r in answer["results"] if "ddg" in r["engines"]]
    # The page's order survives the fusion among the engine's own results.
    assert [r["url"] for r in from_ddg] == [url for url, _, _ in EXPECTED]
    assert [r["title"] for r in from_ddg] == [title for _, title, _ in EXPECTED]
    assert any("wikipedia" in r["engines"] for r in answer["results"])
    assert not [r for r in answer["results"] if "duckduckgo.com" in r["url"]]
    assert engines["ddg"]["state"] == "closed" and engines["ddg"]["latency_ms"] is not None
    [seen] = standin.to(DDG)
    assert seen.params["q"] == ["rust programming language"]


def test_req_eng_011_duckduckgo_results_are_cut_to_results_per_engine(tmp_path: Path) -> None:
    """The endpoint has no count: a page of twelve results keeps its first
    results_per_engine, set here to its minimum (LIM-S3), as every engine does."""
    blocks = "".join(
        f'<div class="result"><a class="result__a" href="https://r{i}.example/">Result {i}</a>'
        f'<a class="result__snippet" href="https://r{i}.example/">Snippet {i}</a></div>'
        for i in range(12)
    )
    least = limits.get("LIM-S3").low
    assert least is not None
    with provider() as standin:
        standin.ddg = Reply(200, minimal(blocks))
        core = core_for(tmp_path, standin, f"[search]\nresults_per_engine = {least}\n")
        answer = search(core, query="many results", max_results=20)
    assert answer["outcome"] == "ok", answer
    assert [r["url"] for r in answer["results"]] == [f"https://r{i}.example/" for i in range(least)]


def test_req_eng_012_decoded_text_is_shown_as_text_not_decoded_again(tmp_path: Path) -> None:
    """The page's `&amp;` and `&lt;` are decoded once by the parser (markup=False); the
    pipeline must not strip `<not a tag>` as if it were markup."""
    with provider() as standin:
        standin.ddg = Reply(200, page("odd_results.html"))
        answer = search(core_for(tmp_path, standin), query="odd")
    assert answer["outcome"] == "ok"
    shown = {r["url"]: r["snippet"] for r in answer["results"]}
    assert shown["https://a.example/one"] == "Alpha & omega <not a tag>"


def test_req_eng_004_every_admitted_type_has_its_driver() -> None:
    assert set(registry.ADMISSIONS) == {"wikipedia", "brave", "duckduckgo", "searxng"}
    assert isinstance(registry.driver_for(engine_settings()), DuckDuckGoDriver)
    assert registry.driver_for(engine_settings()).admission is ADMISSION


# -- the reader under arbitrary input ------------------------------------------------------------


def _assert_sound(status: int, body: bytes) -> None:
    """Any input: a list of http(s) results, or an EngineFailure carrying its class only."""
    try:
        results = driver().parse(status, HTML, body)
    except EngineFailure as error:
        assert error.error_class in ERROR_CLASSES
        assert error.__context__ is None and error.__cause__ is None
        return
    for r in results:
        parts = urlsplit(r.url)
        assert parts.scheme in ("http", "https") and parts.hostname, r.url
        assert r.title and r.markup is False
        for value in (r.url, r.title, r.snippet):
            value.encode("utf-8")  # no lone surrogate can reach the encoder


_FIXTURES = [
    "results.html",
    "odd_results.html",
    "no_results.html",
    "challenge.html",
    "drifted_links.html",
]
_TOKENS = [
    b"<",
    b">",
    b'"',
    b"'",
    b"&",
    b"&amp;",
    b"</div>",
    b'<div class="result">',
    b"result__a",
    b"result__snippet",
    b"no-results",
    b"//duckduckgo.com/l/?uddg=",
    b"%",
    b"%2",
    b"%ZZ",
    b"javascript:",
    b"http://[",
    b"\x00",
    b"\xff\xfe",
    b"\xed\xa0\x80",
    b"&#xD800;",
    b"y.js",
    b"anomaly",
    b'<a class="result__a" href="',
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=2048), st.sampled_from([200, 202, 404, 500]))
def test_req_test_018_reader_on_arbitrary_bytes(body: bytes, status: int) -> None:
    _assert_sound(status, body)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(_FIXTURES),
    st.lists(
        st.tuples(
            st.floats(0, 1),
            st.integers(0, 80),
            st.one_of(st.sampled_from(_TOKENS), st.binary(max_size=12)),
        ),
        max_size=8,
    ),
)
def test_req_test_018_reader_on_mutated_pages(
    name: str, edits: list[tuple[float, int, bytes]]
) -> None:
    body = page(name)
    for where, cut, insert in edits:
        at = int(where * len(body))
        body = body[:at] + insert + body[at + cut :]
    _assert_sound(200, body)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=120))
def test_req_test_018_reader_never_returns_a_non_http_url(href: str) -> None:
    escaped = href.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
    for shape in (escaped, "//duckduckgo.com/l/?uddg=" + escaped):
        _assert_sound(
            200, minimal(f'<div class="result"><a class="result__a" href="{shape}">Title</a></div>')
        )
