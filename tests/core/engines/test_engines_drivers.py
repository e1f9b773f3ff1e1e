"""The Wikipedia and Brave drivers against hand-written fixtures (REQ-TEST-002).

Each fixture in fixtures/engines/<engine>/ is one provider answer: its status, headers and
body (a JSON value under "body", or the exact text under "body_text"). Provider text that
must never leave a driver is marked PROVIDER-TEXT in the fixtures.

A timeout is classified by the pipeline, which owns the clock: a driver only ever sees an
answer that arrived, so no driver test produces one. Wikipedia's record has no
auth_failure (it is keyless) and Brave's none of blocked.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

import pytest

from rypsok.core.config.secrets import Secret
from rypsok.core.engines import base, brave, registry, wikipedia
from rypsok.core.engines.base import (
    EngineFailure,
    EngineQuery,
    HeaderLookup,
    RawResult,
    date_part,
    header_lookup,
)
from rypsok.core.engines.brave import BraveDriver
from rypsok.core.engines.wikipedia import WikipediaDriver
from rypsok.core.net.retryafter import delay_seconds
from tests.support import paths
from tests.support.drivers import TOKEN, brave_driver, settings, wiki

FIXTURES = paths.FIXTURES / "engines"
MIB = 1024 * 1024


# -- helpers --------------------------------------------------------------------------------


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def header(self) -> HeaderLookup:
        return header_lookup({**self.headers, **self.extra})


def answer(engine: str, name: str, **extra_headers: str) -> Answer:
    raw = json.loads((FIXTURES / engine / f"{name}.json").read_text(encoding="utf-8"))
    if "body" in raw:
        body = json.dumps(raw["body"]).encode("ascii")
    else:
        body = raw["body_text"].encode("utf-8")
    return Answer(raw["status"], raw["headers"], body, dict(extra_headers))


def query(
    text: str = "rust programming language",
    *,
    language: str = "en",
    region: str = "US",
    safe_search: str = "moderate",
    time_range: str | None = None,
    count: int = 10,
    category: str = "general",
) -> EngineQuery:
    return EngineQuery(
        query=text,
        category=category,
        language=language,
        region=region,
        safe_search=safe_search,
        time_range=time_range,
        count=count,
    )


def params(url: str) -> dict[str, str]:
    parsed = parse_qs(urlsplit(url).query, keep_blank_values=True, strict_parsing=True)
    assert all(len(v) == 1 for v in parsed.values()), parsed
    return {k: v[0] for k, v in parsed.items()}


def parse(driver: WikipediaDriver | BraveDriver, a: Answer) -> list[RawResult]:
    return driver.parse(a.status, a.header, a.body)


def failure(driver: WikipediaDriver | BraveDriver, a: Answer) -> EngineFailure:
    with pytest.raises(EngineFailure) as info:
        parse(driver, a)
    return info.value


# -- Wikipedia: fixtures (REQ-TEST-002) -------------------------------------------------------


def test_req_test_002_wikipedia_success() -> None:
    results = parse(wiki(), answer("wikipedia", "success"))
    assert [r.url for r in results] == [
        "https://en.wikipedia.org/wiki/Rust_(programming_language)",
        "https://en.wikipedia.org/wiki/Rust_%26_Bone",
        "https://en.wikipedia.org/wiki/R%C3%BCdiger_Rost",
        "https://en.wikipedia.org/wiki/C%2B%2B",
        "https://en.wikipedia.org/wiki/100%25_Rust",
        "https://en.wikipedia.org/wiki/AC/DC",
    ]
    first, second, third = results[:3]
    assert first.title == "Rust (programming language)"
    assert second.title == "Rust & Bone"
    assert third.title == "Rüdiger Rost"
    # Raw text with its markup and entities: cleaning is the pipeline's (REQ-ENG-012).
    assert first.snippet.startswith('<span class="searchmatch">Rust</span> is a general-purpose')
    assert "&mdash;" in first.snippet
    assert "&amp;" in third.snippet
    assert all(r.markup for r in results)


def test_req_test_002_wikipedia_success_dates_are_the_revision_date() -> None:
    results = parse(wiki(), answer("wikipedia", "success"))
    assert [r.date for r in results] == [
        "2026-09-01",
        "2026-07-19",
        "2025-12-31",
        "2026-08-30",
        "2024-02-29",
        None,
    ]


def test_req_test_002_wikipedia_empty() -> None:
    assert parse(wiki(), answer("wikipedia", "empty")) == []


def test_req_test_002_wikipedia_rate_limited_with_retry_after() -> None:
    caught = failure(wiki(), answer("wikipedia", "rate_limited"))
    assert caught.error_class == "rate_limited"
    assert caught.retry_after_s == 30.0


def test_req_test_002_wikipedia_rate_limited_without_retry_after() -> None:
    a = answer("wikipedia", "rate_limited")
    del a.headers["Retry-After"]
    caught = failure(wiki(), a)
    assert (caught.error_class, caught.retry_after_s) == ("rate_limited", None)


def test_req_test_002_wikipedia_blocked() -> None:
    caught = failure(wiki(), answer("wikipedia", "blocked"))
    assert (caught.error_class, caught.retry_after_s) == ("blocked", None)


@pytest.mark.parametrize("name", ["error_object", "server_error"])
def test_req_test_002_wikipedia_request_failure(name: str) -> None:
    caught = failure(wiki(), answer("wikipedia", name))
    assert (caught.error_class, caught.retry_after_s) == ("request_failure", None)


@pytest.mark.parametrize("status", [301, 400, 404, 500, 502])
def test_req_eng_006_wikipedia_other_statuses_are_request_failure(status: int) -> None:
    a = answer("wikipedia", "success")
    caught = failure(wiki(), Answer(status, a.headers, a.body))
    assert caught.error_class == "request_failure"


@pytest.mark.parametrize("name", ["malformed", "challenge", "wrong_shape"])
def test_req_test_002_wikipedia_parse_failure(name: str) -> None:
    caught = failure(wiki(), answer("wikipedia", name))
    assert (caught.error_class, caught.retry_after_s) == ("parse_failure", None)


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"[]",
        b"null",
        b'"text"',
        b'{"batchcomplete": ""}',
        b'{"query": []}',
        b'{"requestid": "en", "query": {"search": [1, "x", {"ns": 0}]}}',
        b"\xff\xfe\x00garbage",
        b"[" * 100_000,
    ],
)
def test_req_test_002_wikipedia_parse_failure_on_other_shapes(body: bytes) -> None:
    assert failure(wiki(), Answer(200, {}, body)).error_class == "parse_failure"


def test_req_test_002_wikipedia_private_wiki_snippets_are_passed_raw() -> None:
    driver = wiki("https://wiki.example/w")
    results = parse(driver, answer("wikipedia", "private_wiki"))
    assert [r.url for r in results] == [
        "https://wiki.example/wiki/Gate_maintenance",
        "https://wiki.example/wiki/Paint_%26_primer",
    ]
    assert results[0].snippet == (
        "...the <span class='searchmatch'>rust</span> on the north gate hinges is treated every spri"
    )
    assert results[1].snippet.startswith("...primer")
    assert [r.date for r in results] == ["2026-03-14", "2026-01-02"]


def test_req_eng_005_wikipedia_result_host_comes_from_the_edition_asked() -> None:
    a = answer("wikipedia", "success")
    doc = json.loads(a.body)
    doc["requestid"] = "pt"
    results = parse(wiki(), Answer(200, {}, json.dumps(doc).encode()))
    assert results[1].url == "https://pt.wikipedia.org/wiki/Rust_%26_Bone"


@pytest.mark.parametrize("requestid", [None, "evil.example/x", "en.evil", "EN", 7, ""])
def test_req_eng_005_wikipedia_an_echo_that_is_not_an_edition_is_a_parse_failure(
    requestid: object,
) -> None:
    doc = json.loads(answer("wikipedia", "success").body)
    if requestid is None:
        del doc["requestid"]
    else:
        doc["requestid"] = requestid
    caught = failure(wiki(), Answer(200, {}, json.dumps(doc).encode()))
    assert caught.error_class == "parse_failure"


def test_req_eng_005_wikipedia_skips_unusable_hits_and_keeps_the_rest() -> None:
    body = json.dumps(
        {
            "requestid": "en",
            "query": {
                "search": [
                    {"ns": 0, "snippet": "no title"},
                    "junk",
                    {"ns": 0, "title": "Kept", "snippet": 5, "timestamp": 20260101},
                ]
            },
        }
    ).encode()
    assert parse(wiki(), Answer(200, {}, body)) == [
        RawResult(url="https://en.wikipedia.org/wiki/Kept", title="Kept", snippet="", date=None),
    ]


def test_req_eng_005_wikipedia_lone_surrogate_in_a_title_cannot_break_the_url() -> None:
    body = b'{"requestid": "en", "query": {"search": [{"title": "A\\ud800B", "snippet": "s"}]}}'
    [result] = parse(wiki(), Answer(200, {}, body))
    assert result.title == "A\ufffdB"
    assert result.url == "https://en.wikipedia.org/wiki/A%EF%BF%BDB"


# -- Wikipedia: the request -------------------------------------------------------------------


def test_req_eng_011_wikipedia_request_carries_every_parameter() -> None:
    request = wiki().request(query("rust programming language", count=10))
    url = urlsplit(request.url)
    assert (url.scheme, url.netloc, url.path) == ("https", "en.wikipedia.org", "/w/api.php")
    assert params(request.url) == {
        "action": "query",
        "list": "search",
        "srsearch": "rust programming language",
        "srlimit": "10",
        "srprop": "snippet|timestamp",
        "format": "json",
        "requestid": "en",
    }
    assert request.max_bytes == wikipedia.ADMISSION.response_bytes == MIB
    assert dict(request.headers) == {"Accept": "application/json"}


@pytest.mark.parametrize(
    ("language", "host"),
    [
        ("en", "en.wikipedia.org"),
        ("pt-BR", "pt.wikipedia.org"),
        ("zh-Hans", "zh.wikipedia.org"),
        ("zh-Hant-TW", "zh.wikipedia.org"),
        ("de-CH", "de.wikipedia.org"),
        ("ja", "ja.wikipedia.org"),
        ("nb", "no.wikipedia.org"),
        ("yue", "zh-yue.wikipedia.org"),
        ("EN-gb", "en.wikipedia.org"),
    ],
)
def test_req_search_004_wikipedia_language_selects_the_edition(language: str, host: str) -> None:
    request = wiki().request(query(language=language))
    assert urlsplit(request.url).netloc == host
    assert params(request.url)["requestid"] == host.removesuffix(".wikipedia.org")


@pytest.mark.parametrize(
    "text",
    [
        "Rust & Bone",
        "C++ vs Rust",
        "100% a=b#frag?x",
        "AC/DC",
        "Zürich straße",
        "東京",
        "'quoted'",
    ],
)
def test_req_eng_005_wikipedia_query_survives_encoding(text: str) -> None:
    request = wiki().request(query(text))
    assert params(request.url)["srsearch"] == text
    assert " " not in request.url and "#" not in urlsplit(request.url).query


@pytest.mark.parametrize(
    ("base_url", "api", "article"),
    [
        ("https://wiki.example/w", "https://wiki.example/w/api.php", "https://wiki.example/wiki/"),
        (
            "https://wiki.example/w/api.php",
            "https://wiki.example/w/api.php",
            "https://wiki.example/wiki/",
        ),
        ("https://wiki.example", "https://wiki.example/api.php", "https://wiki.example/wiki/"),
        (
            "https://wiki.example/kb/w",
            "https://wiki.example/kb/w/api.php",
            "https://wiki.example/kb/wiki/",
        ),
        (
            "http://127.0.0.1:8080/w",
            "http://127.0.0.1:8080/w/api.php",
            "http://127.0.0.1:8080/wiki/",
        ),
    ],
)
def test_req_eng_005_wikipedia_base_url_names_a_private_wiki(
    base_url: str, api: str, article: str
) -> None:
    driver = wiki(base_url)
    request = driver.request(query(language="pt-BR"))
    assert request.url.split("?", 1)[0] == api
    assert "requestid" not in params(request.url)  # one wiki, whatever the language
    body = b'{"query": {"search": [{"title": "Rust & Bone", "snippet": ""}]}}'
    assert parse(driver, Answer(200, {}, body))[0].url == article + "Rust_%26_Bone"


# -- Wikipedia: skips (REQ-ENG-010) -----------------------------------------------------------


def test_req_eng_010_wikipedia_query_of_250_characters_is_sent() -> None:
    assert wiki().skip_reason(query("x" * 250)) is None
    assert wiki().skip_reason(query("é" * 250)) is None  # code points, not bytes


def test_req_eng_010_wikipedia_query_of_251_characters_is_skipped() -> None:
    assert wiki().skip_reason(query("x" * 251)) == "query_too_long"
    assert wiki().skip_reason(query("word " * 50 + "x")) == "query_too_long"


@pytest.mark.parametrize("period", ["day", "week", "month", "year"])
def test_req_eng_010_wikipedia_skips_any_time_range(period: str) -> None:
    assert wiki().skip_reason(query(time_range=period)) == "time_range"
    assert wiki("https://wiki.example/w").skip_reason(query(time_range=period)) == "time_range"


def test_req_eng_010_wikipedia_honours_every_language() -> None:
    for language in ("en", "pt-BR", "zh-Hant", "tlh", "sw", "yue"):
        assert wiki().skip_reason(query(language=language)) is None


# -- Wikipedia: the result URL table of clarifications.md -------------------------------------


@pytest.mark.parametrize(
    ("title", "path"),
    [
        ("Rust & Bone", "Rust_%26_Bone"),
        ("C++", "C%2B%2B"),
        ("100%", "100%25"),
        ("AC/DC", "AC/DC"),
        ("Rust (programming language)", "Rust_(programming_language)"),
        ("Zürich", "Z%C3%BCrich"),
        ("東京", "%E6%9D%B1%E4%BA%AC"),
        ("a:b;c@d$e!f*g,h~i", "a:b;c@d$e!f*g,h~i"),
        ('Who\'s there? #1 = "x"', "Who%27s_there%3F_%231_%3D_%22x%22"),
    ],
)
def test_req_eng_005_wikipedia_result_url_is_encoded_like_mediawiki(title: str, path: str) -> None:
    assert wikipedia.article_path(title) == path


# -- Brave: fixtures (REQ-TEST-002) -----------------------------------------------------------


def test_req_test_002_brave_success() -> None:
    results = parse(brave_driver("web"), answer("brave", "web_success"))
    assert [r.url for r in results] == [
        "https://www.rust-lang.example/",
        "https://films.example/rust-&-bone?ref=a&b=1",
        "https://rost.example.ch/anleitung",
    ]
    assert [r.title for r in results] == [
        "Rust Programming Language",
        "Rust & Bone – a review",
        "Zürcher Rostschutz — Anleitung",
    ]
    # Raw description with Brave's marks: cleaning is the pipeline's (REQ-ENG-012).
    assert results[0].snippet == (
        "A <strong>language</strong> empowering everyone to build reliable and efficient software."
    )
    assert all(r.markup for r in results)


def test_req_test_002_brave_success_ignores_the_news_cluster() -> None:
    results = parse(brave_driver("web"), answer("brave", "web_success"))
    assert all("NEWS-CLUSTER" not in f"{r.title} {r.snippet}" for r in results)
    assert "https://news.example.org/rust-release" not in [r.url for r in results]


def test_req_test_002_brave_success_dates_are_the_page_age_date() -> None:
    results = parse(brave_driver("web"), answer("brave", "web_success"))
    # The second has only the human-readable "age": no date rather than a guess.
    assert [r.date for r in results] == ["2026-09-30", None, "2025-02-28"]


def test_req_test_002_brave_news_success() -> None:
    results = parse(brave_driver("news"), answer("brave", "news_success"))
    assert [(r.title, r.url, r.date) for r in results] == [
        ("Rust 9.99 released", "https://blog.example.org/2026/10/01/rust-9.99", "2026-10-01"),
        ("Ferrous news roundup", "https://news.example.net/roundup", None),
    ]
    assert results[0].snippet == "The <strong>release</strong> brings faster builds."


def test_req_test_002_brave_empty() -> None:
    assert parse(brave_driver("web"), answer("brave", "web_empty")) == []
    assert parse(brave_driver("news"), answer("brave", "news_empty")) == []


@pytest.mark.parametrize(
    "body",
    [
        b'{"type": "search", "web": null}',
        b'{"type": "search", "web": {"type": "search"}}',
        b'{"type": "search", "web": {"results": []}}',
    ],
)
def test_req_test_002_brave_empty_web_sections(body: bytes) -> None:
    assert parse(brave_driver("web"), Answer(200, {}, body)) == []


def test_req_test_002_brave_web_endpoint_does_not_read_top_level_results() -> None:
    # A news-shaped answer on the web endpoint has no web section: nothing, not news items.
    assert parse(brave_driver("web"), answer("brave", "news_success")) == []


def test_req_test_002_brave_rate_limited_with_retry_after() -> None:
    a = answer("brave", "rate_limited_429", **{"Retry-After": "7"})
    caught = failure(brave_driver(), a)
    assert (caught.error_class, caught.retry_after_s) == ("rate_limited", 7.0)


def test_req_res_002_brave_rate_limited_with_x_ratelimit_reset_takes_the_first_number() -> None:
    caught = failure(brave_driver(), answer("brave", "rate_limited_429"))
    assert (caught.error_class, caught.retry_after_s) == ("rate_limited", 1.0)


def test_req_res_002_brave_rate_limited_without_a_delay() -> None:
    a = answer("brave", "rate_limited_429")
    del a.headers["X-RateLimit-Reset"]
    caught = failure(brave_driver(), a)
    assert (caught.error_class, caught.retry_after_s) == ("rate_limited", None)


def test_req_res_002_brave_unusable_retry_after_falls_back_to_the_reset_header() -> None:
    a = answer("brave", "rate_limited_429", **{"Retry-After": "soon"})
    assert failure(brave_driver(), a).retry_after_s == 1.0


@pytest.mark.parametrize("status", [401, 403])
def test_req_test_002_brave_auth_failure(status: int) -> None:
    a = answer("brave", "unauthorized_401")
    caught = failure(brave_driver(), Answer(status, a.headers, a.body))
    assert (caught.error_class, caught.retry_after_s) == ("auth_failure", None)


def test_req_test_002_brave_auth_failure_422_subscription_token_invalid() -> None:
    assert failure(brave_driver(), answer("brave", "token_invalid_422")).error_class == (
        "auth_failure"
    )


def test_req_test_002_brave_auth_failure_422_validation() -> None:
    assert failure(brave_driver(), answer("brave", "validation_422")).error_class == (
        "auth_failure"
    )


def _validation_422(errors: object, code: str = "VALIDATION") -> bytes:
    meta = {"errors": errors}
    body = {"type": "ErrorResponse", "error": {"status": 422, "code": code, "meta": meta}}
    return json.dumps(body).encode()


def _problem(loc: object) -> dict[str, object]:
    return {"type": "missing", "loc": loc, "msg": "PROVIDER-TEXT", "input": None}


@pytest.mark.parametrize(
    ("errors", "expected"),
    [
        # The token header, as the provider writes it and in another case.
        ([_problem(["header", "x-subscription-token"])], "auth_failure"),
        ([_problem(["header", "X-Subscription-Token"])], "auth_failure"),
        # A query parameter: the request is at fault, not the key.
        ([_problem(["query", "q"])], "request_failure"),
        ([_problem(["query", "count"])], "request_failure"),
        ([_problem(["query", "search_lang"]), _problem(["query", "country"])], "request_failure"),
        # Both: the missing token comes first.
        ([_problem(["query", "q"]), _problem(["header", "x-subscription-token"])], "auth_failure"),
        # Another header, or a location that is not the token header's shape.
        ([_problem(["header", "accept"])], "request_failure"),
        ([_problem(["header"])], "request_failure"),
        ([_problem(["header", "x-subscription-token", "extra"])], "request_failure"),
        ([_problem(["query", "x-subscription-token"])], "request_failure"),
        ([_problem("header.x-subscription-token")], "request_failure"),
        ([_problem({"header": "x-subscription-token"})], "request_failure"),
        ([_problem(["header", 7])], "request_failure"),
        ([_problem(None)], "request_failure"),
        ([{"type": "missing"}], "request_failure"),
        (["header", "x-subscription-token"], "request_failure"),
        ([], "request_failure"),
        ({"loc": ["header", "x-subscription-token"]}, "request_failure"),
        (None, "request_failure"),
    ],
)
def test_req_test_002_brave_422_validation_is_auth_failure_only_at_the_token_header(
    errors: object, expected: str
) -> None:
    assert failure(brave_driver(), Answer(422, {}, _validation_422(errors))).error_class == (
        expected
    )


@pytest.mark.parametrize(
    "body",
    [
        b'{"error": {"code": "VALIDATION"}}',  # no meta
        b'{"error": {"code": "VALIDATION", "meta": {}}}',  # meta without errors
        b'{"error": {"code": "VALIDATION", "meta": null}}',
        b'{"error": {"code": "VALIDATION", "meta": ["header", "x-subscription-token"]}}',
        b'{"error": {"code": "VALIDATION", "meta": {"errors": "x-subscription-token"}}}',
        b'{"error": {"code": "VALIDATION", "meta": {"errors": [["header"]]}}}',
        # Truncated in the middle of the token header's location.
        b'{"error": {"code": "VALIDATION", "meta": {"errors": [{"loc": ["header", "x-sub',
        # The token header named, but under another code.
        _validation_422([_problem(["header", "x-subscription-token"])], code="NOT_FOUND"),
        # Deeply nested: the parser's recursion bound, not a crash.
        b'{"error": {"code": "VALIDATION", "meta": {"errors": ' + b"[" * 100_000,
    ],
)
def test_req_test_002_brave_malformed_422_validation_bodies_are_request_failure(
    body: bytes,
) -> None:
    assert failure(brave_driver(), Answer(422, {}, body)).error_class == "request_failure"


def test_req_test_002_brave_huge_422_body_is_classified_by_its_location() -> None:
    # Many errors, the token header's last, near the driver's response bound.
    filler = [_problem(["query", f"p{i}"]) for i in range(11_000)]
    body = _validation_422([*filler, _problem(["header", "x-subscription-token"])])
    assert 800_000 < len(body) <= brave.ADMISSION.response_bytes
    assert failure(brave_driver(), Answer(422, {}, body)).error_class == "auth_failure"
    body = _validation_422(filler)
    assert failure(brave_driver(), Answer(422, {}, body)).error_class == "request_failure"


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"<html>PROVIDER-TEXT</html>",
        b'{"error": "VALIDATION"}',
        b'{"error": {"code": 422}}',
        b'["SUBSCRIPTION_TOKEN_INVALID"]',
    ],
)
def test_req_test_002_brave_request_failure_422_without_an_auth_code(body: bytes) -> None:
    assert failure(brave_driver(), Answer(422, {}, body)).error_class == "request_failure"


@pytest.mark.parametrize("name", ["other_422", "server_error"])
def test_req_test_002_brave_request_failure(name: str) -> None:
    caught = failure(brave_driver(), answer("brave", name))
    assert (caught.error_class, caught.retry_after_s) == ("request_failure", None)


@pytest.mark.parametrize("status", [301, 400, 404, 500, 503])
def test_req_eng_006_brave_other_statuses_are_request_failure(status: int) -> None:
    a = answer("brave", "web_success")
    assert failure(brave_driver(), Answer(status, a.headers, a.body)).error_class == (
        "request_failure"
    )


@pytest.mark.parametrize("name", ["malformed", "challenge", "wrong_shape"])
def test_req_test_002_brave_parse_failure(name: str) -> None:
    caught = failure(brave_driver(), answer("brave", name))
    assert (caught.error_class, caught.retry_after_s) == ("parse_failure", None)


@pytest.mark.parametrize(
    ("endpoint", "body"),
    [
        ("web", b"[]"),
        ("web", b'{"web": []}'),
        ("web", b'{"web": {"results": [{"title": "t"}]}}'),
        ("news", b'{"results": {}}'),
        ("news", b'{"results": [{"url": 1, "title": "t"}]}'),
        ("news", b"\xef\xbb\xbf{"),
        ("web", b"[" * 100_000),
    ],
)
def test_req_test_002_brave_parse_failure_on_other_shapes(endpoint: str, body: bytes) -> None:
    assert failure(brave_driver(endpoint), Answer(200, {}, body)).error_class == "parse_failure"


# -- Brave: the request -----------------------------------------------------------------------


def test_req_eng_011_brave_web_request_carries_every_parameter() -> None:
    request = brave_driver("web").request(
        query("rust & c++", language="de", region="DE", safe_search="strict", time_range="week")
    )
    url = urlsplit(request.url)
    assert (url.scheme, url.netloc, url.path) == ("https", brave.HOST, "/res/v1/web/search")
    assert params(request.url) == {
        "q": "rust & c++",
        "count": "10",
        "search_lang": "de",
        "country": "DE",
        "safesearch": "strict",
        "freshness": "pw",
    }
    assert request.max_bytes == brave.ADMISSION.response_bytes == MIB


def test_req_eng_011_brave_news_request_uses_the_news_endpoint() -> None:
    request = brave_driver("news").request(query(category="news", safe_search="off"))
    assert urlsplit(request.url).path == "/res/v1/news/search"
    assert params(request.url) == {
        "q": "rust programming language",
        "count": "10",
        "search_lang": "en",
        "country": "US",
        "safesearch": "off",
    }


@pytest.mark.parametrize(
    ("asked", "sent"), [(5, "5"), (10, "10"), (20, "20"), (21, "20"), (50, "20")]
)
def test_req_eng_011_brave_count_is_capped_at_20(asked: int, sent: str) -> None:
    for endpoint in ("web", "news"):
        assert params(brave_driver(endpoint).request(query(count=asked)).url)["count"] == sent


@pytest.mark.parametrize(
    ("period", "freshness"),
    [
        ("day", "pd"),
        ("week", "pw"),
        ("month", "pm"),
        ("year", "py"),
    ],
)
def test_req_eng_010_brave_time_range_is_freshness(period: str, freshness: str) -> None:
    assert brave_driver().skip_reason(query(time_range=period)) is None
    assert params(brave_driver().request(query(time_range=period)).url)["freshness"] == freshness


def test_req_eng_010_brave_no_time_range_sends_no_freshness() -> None:
    assert "freshness" not in params(brave_driver().request(query()).url)


@pytest.mark.parametrize(
    ("language", "region", "code"),
    [
        ("en", "US", "en"),
        ("en-US", "GB", "en"),
        ("en-GB", "US", "en-gb"),
        ("en", "GB", "en-gb"),
        ("ja", "JP", "jp"),
        ("ja-JP", "US", "jp"),
        ("zh", "US", "zh-hans"),
        ("zh-Hans", "TW", "zh-hans"),
        ("zh-Hant", "US", "zh-hant"),
        ("zh-TW", "US", "zh-hant"),
        ("zh-CN", "TW", "zh-hans"),
        ("zh", "TW", "zh-hant"),
        ("zh-Hant-HK", "US", "zh-hant"),
        ("pt-BR", "PT", "pt-br"),
        ("pt-PT", "BR", "pt-pt"),
        ("pt", "BR", "pt-br"),
        ("pt", "US", "pt-pt"),
        ("nb", "NO", "nb"),
        ("no", "NO", "nb"),
        ("de-AT", "AT", "de"),
        ("he", "US", "he"),
    ],
)
def test_req_search_004_brave_search_lang_mapping(language: str, region: str, code: str) -> None:
    assert brave.search_lang(language, region) == code
    driver = brave_driver()
    assert driver.skip_reason(query(language=language, region=region)) is None
    assert (
        params(driver.request(query(language=language, region=region)).url)["search_lang"] == code
    )


@pytest.mark.parametrize("language", ["sw", "fa", "id", "nn", "tlh", "yue", "ga-IE"])
def test_req_search_004_brave_skips_a_language_it_does_not_list(language: str) -> None:
    driver = brave_driver()
    assert driver.skip_reason(query(language=language)) == "language"
    with pytest.raises(ValueError, match="skip_reason"):
        driver.request(query(language=language))


@pytest.mark.parametrize(
    ("region", "sent"), [("US", "US"), ("GB", "GB"), ("JP", "JP"), ("IE", "ALL"), ("XX", "ALL")]
)
def test_req_search_004_brave_country_is_the_region_or_all(region: str, sent: str) -> None:
    assert params(brave_driver().request(query(region=region)).url)["country"] == sent


# -- Brave: skips (REQ-ENG-010) ---------------------------------------------------------------


def test_req_eng_010_brave_query_of_600_characters_and_75_words_is_sent() -> None:
    assert brave_driver().skip_reason(query("x" * 600)) is None
    assert brave_driver().skip_reason(query(" ".join(["w"] * 75))) is None


def test_req_eng_010_brave_query_of_601_characters_is_skipped() -> None:
    assert brave_driver().skip_reason(query("x" * 601)) == "query_too_long"


def test_req_eng_010_brave_query_of_76_words_is_skipped() -> None:
    assert brave_driver().skip_reason(query(" ".join(["w"] * 76))) == "query_too_long"
    assert brave_driver().skip_reason(query("\t".join(["w"] * 76))) == "query_too_long"


# -- the credential ---------------------------------------------------------------------------


def test_req_sec_brave_token_goes_only_in_its_header_and_only_to_the_brave_host() -> None:
    for endpoint in ("web", "news"):
        request = brave_driver(endpoint).request(query())
        headers = dict(request.headers)
        assert headers == {"Accept": "application/json", "X-Subscription-Token": TOKEN}
        assert urlsplit(request.url).scheme == "https"
        assert urlsplit(request.url).netloc == brave.HOST
        assert TOKEN not in request.url


@pytest.mark.parametrize("base_url", [None, "https://wiki.example/w"])
def test_req_sec_wikipedia_request_carries_no_credential(base_url: str | None) -> None:
    request = wiki(base_url).request(query())
    assert all(name.lower() != "x-subscription-token" for name, _ in request.headers)
    assert TOKEN not in repr(request)


def test_req_sec_brave_without_a_credential_sends_nothing() -> None:
    driver = BraveDriver(settings(brave.ADMISSION, endpoint="web", credential=None))
    with pytest.raises(EngineFailure) as info:
        driver.request(query())
    assert info.value.error_class == "auth_failure"


# -- no provider text leaves a driver (REQ-ENG-006) ------------------------------------------

FAILING = (
    [
        ("wikipedia", None, name)
        for name in (
            "error_object",
            "rate_limited",
            "blocked",
            "server_error",
            "malformed",
            "challenge",
            "wrong_shape",
        )
    ]
    + [
        ("brave", endpoint, name)
        for endpoint in ("web", "news")
        for name in (
            "token_invalid_422",
            "validation_422",
            "other_422",
            "unauthorized_401",
            "rate_limited_429",
            "server_error",
            "malformed",
            "challenge",
        )
    ]
    + [("brave", "web", "wrong_shape")]
)  # on the news endpoint it has no results section


@pytest.mark.parametrize(("engine", "endpoint", "name"), FAILING)
def test_req_eng_006_no_provider_text_in_an_engine_failure(
    engine: str, endpoint: str | None, name: str
) -> None:
    driver = wiki() if engine == "wikipedia" else brave_driver(endpoint or "web")
    a = answer(engine, name)
    assert b"PROVIDER-TEXT" in a.body  # the fixture does carry text that must not leak
    caught = failure(driver, a)
    assert caught.error_class in base.ERROR_CLASSES
    assert str(caught) == caught.error_class
    assert repr(caught) == f"EngineFailure({caught.error_class!r})"
    assert caught.args == (caught.error_class,)
    assert caught.retry_after_s is None or isinstance(caught.retry_after_s, float)
    # Neither an explicit cause nor an implicit context (a JSONDecodeError holds the body).
    assert caught.__cause__ is None and caught.__context__ is None
    assert "PROVIDER-TEXT" not in f"{caught!s} {caught!r} {vars(caught)!r}"


# -- the registry (REQ-ENG-004) ---------------------------------------------------------------


def test_req_eng_004_driver_for_builds_the_configured_type() -> None:
    assert isinstance(registry.driver_for(settings(wikipedia.ADMISSION)), WikipediaDriver)
    driver = registry.driver_for(
        settings(brave.ADMISSION, endpoint="news", credential=Secret(TOKEN))
    )
    assert isinstance(driver, BraveDriver)
    assert driver.admission is brave.ADMISSION
    assert urlsplit(driver.request(query()).url).path == "/res/v1/news/search"


def test_req_eng_004_driver_for_a_loaded_configuration(write_config) -> None:  # type: ignore[no-untyped-def]
    from rypsok.core.config import load

    path = write_config(
        'config_version = 1\n[engines.wikipedia]\ntype = "wikipedia"\ncategories = ["general"]\n'
        '[engines.brave]\ntype = "brave"\napi_key_env = "BRAVE_API_KEY"\n'
        'categories = ["news"]\nendpoint = "news"\n'
    )
    config = load(str(path), {"BRAVE_API_KEY": TOKEN})
    drivers = {e.id: registry.driver_for(e) for e in config.engines}
    request = drivers["brave"].request(query(category="news"))
    assert dict(request.headers)["X-Subscription-Token"] == TOKEN
    assert urlsplit(request.url).path == "/res/v1/news/search"
    assert drivers["wikipedia"].skip_reason(query(time_range="day")) == "time_range"


# -- the shared helpers -----------------------------------------------------------------------


def test_req_res_002_header_lookup_ignores_case_and_joins_repeats() -> None:
    lookup = header_lookup([("Retry-After", "3"), ("X-A", "1"), ("x-a", "2")])
    assert lookup("retry-after") == "3"
    assert lookup("RETRY-AFTER") == "3"
    assert lookup("x-a") == "1, 2"
    assert lookup("missing") is None


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("120", 120.0),
        ("0", 0.0),
        ("1, 1419704", 1.0),
        (" 5 ", 5.0),
        ("Thu, 01 Jan 2026 00:02:00 GMT", 120.0),
        ("Thu, 01 Jan 2026 00:00:00 GMT", 0.0),
        ("Wed, 31 Dec 2025 23:00:00 GMT", 0.0),
        (None, None),
        ("", None),
        ("-5", None),
        ("soon", None),
        ("1e9", None),
        ("inf", None),
        ("12345678901", None),
        ("\u0661\u0662", None),  # Arabic-Indic digits: a delay is ASCII digits only
    ],
)
def test_req_res_002_retry_after_seconds(value: str | None, seconds: float | None) -> None:
    now = 1767225600.0  # 2026-01-01T00:00:00Z
    assert delay_seconds(value, now) == seconds


@pytest.mark.parametrize(
    ("value", "day"),
    [
        ("2026-09-01T08:15:42Z", "2026-09-01"),
        ("2026-09-30T23:30:00", "2026-09-30"),
        ("2026-09-30T23:30:00-05:00", "2026-09-30"),
        ("2024-02-29", "2024-02-29"),
        ("2026-02-30T00:00:00", None),
        ("2026-9-1", None),
        ("20260901", None),
        ("2026-09-011", None),
        ("September 1, 2026", None),
        ("", None),
        (None, None),
        (1756684800, None),
        ("\u0662\u0660\u0662\u0664-\u0660\u0661-\u0660\u0665", None),
        ("\uff12\uff10\uff12\uff14-01-05", None),
    ],
)
def test_req_test_002_date_part(value: object, day: str | None) -> None:
    assert date_part(value) == day
