"""The searxng driver against its admission record (docs/engines.md, "SearXNG"), one test
per row: the request it builds, the answers it reads, and how each failure is classed.

These call the driver directly on answers shaped as SearXNG's code writes them; the same
classes against a real SearXNG, and through `serve`, are in test_searxng_instance.py.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from rypsok.core.config import admission
from rypsok.core.config.load import load
from rypsok.core.config.settings import EngineSettings
from rypsok.core.engines import searxng
from rypsok.core.engines.base import (
    EngineFailure,
    EngineQuery,
    PartialAnswer,
    RawResult,
    header_lookup,
)
from rypsok.core.engines.registry import driver_for, endpoint_for
from rypsok.core.store.values import COUNTED

JSON = header_lookup({"Content-Type": "application/json; charset=utf-8"})


def settings(base_url: str = "http://127.0.0.1:8888") -> EngineSettings:
    config = load(None, {"SEARXNG_URL": base_url})
    return next(e for e in config.engines if e.id == "searxng")


def query(**changes: Any) -> EngineQuery:
    fields: dict[str, Any] = {
        "query": "rust borrow checker",
        "category": "general",
        "language": "en",
        "region": "US",
        "safe_search": "moderate",
        "time_range": None,
        "count": 10,
    }
    fields.update(changes)
    return EngineQuery(**fields)


def params(q: EngineQuery, base_url: str = "http://127.0.0.1:8888") -> dict[str, str]:
    request = driver_for(settings(base_url)).request(q)
    parts = urlsplit(request.url)
    assert parts.path.endswith("/search")
    return {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}


def answer(results: list[dict[str, Any]], **extra: Any) -> bytes:
    body = {"query": "x", "number_of_results": 0, "results": results, **extra}
    return json.dumps(body).encode()


def item(n: int, **extra: Any) -> dict[str, Any]:
    return {
        "url": f"https://site{n}.example/page",
        "title": f"Title {n}",
        "content": f"Snippet {n}",
        "engine": "alpha",
        "engines": ["alpha"],
        **extra,
    }


def parse(status: int, body: bytes, header: Any = JSON) -> list[RawResult] | PartialAnswer:
    return driver_for(settings()).parse(status, header, body)


def failure(status: int, body: bytes = b"", header: Any = JSON) -> EngineFailure:
    with pytest.raises(EngineFailure) as info:
        parse(status, body, header)
    return info.value


# -- Endpoint ----------------------------------------------------------------------------------


def test_searxng_record_endpoint_is_get_search_with_json_and_every_parameter() -> None:
    sent = params(query(time_range="week"))
    assert sent == {
        "q": "rust borrow checker",
        "format": "json",
        "categories": "general",
        "language": "en",
        "safesearch": "1",
        "pageno": "1",
        "time_range": "week",
        "timeout_limit": "1.5",
    }
    request = driver_for(settings("https://search.corp.example/searxng/")).request(query())
    assert request.url.startswith("https://search.corp.example/searxng/search?q=rust")
    pasted = driver_for(settings("http://127.0.0.1:8888/search")).request(query())
    assert pasted.url.startswith("http://127.0.0.1:8888/search?q=rust")
    assert ("Accept", "application/json") in request.headers
    assert request.max_bytes == admission.SEARXNG.response_bytes == 1024 * 1024


def test_searxng_record_timeout_limit_is_below_what_rypsok_waits() -> None:
    for waits_ms, told in ((2000, "1.5"), (5000, "4.5"), (900, "0.5"), (100, "0.5")):
        assert params(query(engine_timeout_ms=waits_ms))["timeout_limit"] == told


def test_searxng_record_categories_are_mapped_and_code_is_it() -> None:
    sent = {c: params(query(category=c))["categories"] for c in ("general", "news", "science")}
    assert sent == {"general": "general", "news": "news", "science": "science"}
    assert params(query(category="code"))["categories"] == "it"


def test_searxng_record_time_ranges_and_safe_search_levels() -> None:
    for period in ("day", "week", "month", "year"):
        assert params(query(time_range=period))["time_range"] == period
    assert "time_range" not in params(query())
    levels = {s: params(query(safe_search=s))["safesearch"] for s in ("off", "moderate", "strict")}
    assert levels == {"off": "0", "moderate": "1", "strict": "2"}


def test_searxng_record_languages_take_the_shape_the_instance_accepts() -> None:
    shown = {tag: searxng.language(tag) for tag in ("en", "pt-BR", "zh-Hant-TW", "zh-Hant", "x")}
    assert shown == {
        "en": "en",
        "pt-BR": "pt-BR",
        "zh-Hant-TW": "zh-TW",
        "zh-Hant": "zh",
        "x": "all",
    }
    assert params(query(language="de-AT"))["language"] == "de-AT"


def test_searxng_record_query_length_is_checked_before_the_request() -> None:
    driver = driver_for(settings())
    assert driver.skip_reason(query(query="a" * 600)) is None
    assert driver.skip_reason(query(query="a" * 601)) == "query_too_long"


def test_searxng_record_base_url_is_the_operators_endpoint() -> None:
    endpoint = endpoint_for(settings("http://searxng:8080"))
    assert (endpoint.host, endpoint.port, endpoint.configured) == ("searxng", 8080, True)
    secure = endpoint_for(settings("https://10.0.0.5/sx"))
    assert (secure.host, secure.port, secure.configured) == ("10.0.0.5", 443, True)


# -- Results -----------------------------------------------------------------------------------


def test_searxng_record_results_are_raw_text_with_dates_and_upstream_names() -> None:
    results = parse(
        200,
        answer(
            [
                item(1, publishedDate="2026-11-30T08:15:00", engines=["beta", "alpha"]),
                item(2, publishedDate=None),
                item(3, content="<b>bold</b> &amp; more"),
            ]
        ),
    )
    assert isinstance(results, list)
    assert [r.url for r in results] == [f"https://site{n}.example/page" for n in (1, 2, 3)]
    assert results[0].date == "2026-11-30" and results[1].date is None
    assert results[0].sources == ("alpha", "beta")
    # Raw text for the boundary, which strips markup and decodes entities itself.
    assert results[2].snippet == "<b>bold</b> &amp; more" and results[2].markup


def test_searxng_record_an_empty_answer_is_empty_not_a_failure() -> None:
    assert parse(200, answer([])) == []


def test_searxng_record_publisheddate_in_any_format_gives_a_date_or_none() -> None:
    dates = {
        "2026-01-02": "2026-01-02",
        "2026-01-02T03:04:05+02:00": "2026-01-02",
        "2. Januar 2026": None,  # an older instance's localised text
        "Jan 2, 2026": None,
        "2026-13-45": None,
        "": None,
        "9" * 5000: None,
    }
    for value, date in dates.items():
        [result] = parse(200, answer([item(1, publishedDate=value)]))  # type: ignore[misc]
        assert result.date == date, value
    for value in (12345, None, ["2026-01-02"], {"y": 2026}):
        [result] = parse(200, answer([item(1, publishedDate=value)]))  # type: ignore[misc]
        assert result.date is None


def test_searxng_record_upstream_names_are_kept_only_when_they_look_like_names() -> None:
    names = ["alpha", "Bad Name", "<script>", "x" * 41, "wikipedia", 7, "duck duck go", "a\u200bb"]
    [result] = parse(200, answer([item(1, engines=names)]))  # type: ignore[misc]
    assert result.sources == ("alpha", "duck duck go", "wikipedia")
    many = [f"engine{n}" for n in range(9)]
    [result] = parse(200, answer([item(1, engines=many)]))  # type: ignore[misc]
    assert result.sources == ("engine0", "engine1", "engine2", "engine3")


def test_searxng_record_unresponsive_engines_become_a_count() -> None:
    down = [["beta", "timeout"], ["gamma", "HTTP error"]]
    parsed = parse(200, answer([item(1)], unresponsive_engines=down))
    assert isinstance(parsed, PartialAnswer)
    assert parsed.sources_down == 2 and [r.url for r in parsed.results] == [
        "https://site1.example/page"
    ]
    # Down upstreams and nothing found: still an answer, with the count.
    parsed = parse(200, answer([], unresponsive_engines=down[:1]))
    assert isinstance(parsed, PartialAnswer) and parsed.results == [] and parsed.sources_down == 1
    assert isinstance(parse(200, answer([item(1)], unresponsive_engines=[])), list)
    assert isinstance(parse(200, answer([item(1)], unresponsive_engines="all")), list)


def test_searxng_record_paging_asks_the_first_page_only() -> None:
    assert params(query(count=20))["pageno"] == "1"


# -- Errors ------------------------------------------------------------------------------------


def test_searxng_record_errors_403_json_disabled_is_blocked_with_the_setting_in_the_hint() -> None:
    found = failure(
        403, b"<html>403 Forbidden</html>", header_lookup({"Content-Type": "text/html"})
    )
    assert found.error_class == "blocked" and found.error_class in COUNTED
    assert found.hint is not None and "search.formats" in found.hint and "json" in found.hint


def test_searxng_record_errors_429_is_rate_limited_without_retry_after() -> None:
    found = failure(429, b"Too Many Requests", header_lookup({"Content-Type": "text/plain"}))
    assert (found.error_class, found.retry_after_s) == ("rate_limited", None)
    proxied = failure(429, b"", header_lookup({"Retry-After": "30"}))
    assert (proxied.error_class, proxied.retry_after_s) == ("rate_limited", 30.0)


def test_searxng_record_errors_400_an_invalid_parameter_is_a_request_failure() -> None:
    found = failure(400, b"Bad Request", header_lookup({"Content-Type": "text/html"}))
    assert found.error_class == "request_failure"


def test_searxng_record_errors_5xx_and_the_json_error_500_are_request_failures() -> None:
    for status in (500, 502, 503, 504):
        assert failure(status, b'{"error": "search error"}').error_class == "request_failure"


def test_searxng_record_errors_a_proxy_page_or_login_redirect_is_a_request_failure() -> None:
    html = header_lookup({"Content-Type": "text/html; charset=utf-8"})
    assert failure(200, b"<html><form>Sign in</form></html>", html).error_class == (
        "request_failure"
    )
    moved = header_lookup({"Location": "https://sso.corp.example/login"})
    for status in (301, 302, 303, 307, 308):
        assert failure(status, b"", moved).error_class == "request_failure"
    for status in (401, 407):
        assert failure(status, b"").error_class == "auth_failure"


def test_searxng_record_errors_a_drifted_shape_is_a_parse_failure() -> None:
    drifted = [
        b"not json",
        b"[]",
        b'{"results": {"url": "https://a.example/"}}',
        b'{"answers": []}',
        json.dumps({"results": [{"link": "https://a.example/", "name": "A"}]}).encode(),
    ]
    for body in drifted:
        assert failure(200, body).error_class == "parse_failure", body


def test_searxng_record_errors_carry_no_instance_text() -> None:
    secret = b'{"error": "PROVIDER-TEXT at /srv/searx"}'
    found = failure(500, secret)
    assert "PROVIDER-TEXT" not in repr(found) and found.__context__ is None
    assert "PROVIDER-TEXT" not in str(found.hint)


# -- Configuration -----------------------------------------------------------------------------


def test_searxng_record_rate_and_concurrency_are_conservative_and_configurable(
    write_config: Any,
) -> None:
    record = admission.SEARXNG
    assert (record.rate_per_minute, record.burst, record.concurrency) == (60, 5, 2)
    assert record.cacheable and not record.attribution_required and not record.keyed
    path = write_config(
        'config_version = 1\n[engines.sx]\ntype = "searxng"\ncategories = ["general"]\n'
        'base_url = "http://127.0.0.1:8888"\nrate_per_minute = 300\nconcurrency = 4\n'
    )
    [engine] = load(str(path), {}).engines
    assert engine.rate == (300, 5, 4)
    slow = write_config(
        'config_version = 1\n[engines.sx]\ntype = "searxng"\ncategories = ["general"]\n'
        'base_url = "http://127.0.0.1:8888"\nrate_per_minute = 2\n'
    )
    assert load(str(slow), {}).engines[0].rate == (2, 2, 2)


def _problems(write_config: Any, text: str, env: dict[str, str] | None = None) -> list[str]:
    from rypsok.core.config.problems import ConfigError

    path = write_config("config_version = 1\n" + text)
    with pytest.raises(ConfigError) as info:
        load(str(path), env or {})
    return [p.render() for p in info.value.problems]


def test_issue_19_base_url_may_be_plain_http_on_any_host_for_an_instance(
    write_config: Any,
) -> None:
    path = write_config(
        'config_version = 1\n[engines.sx]\ntype = "searxng"\ncategories = ["general"]\n'
        'base_url = "http://searxng:8080/"\n'
    )
    [engine] = load(str(path), {}).engines
    assert engine.active and engine.base_url == "http://searxng:8080"
    # A MediaWiki's base_url keeps the older rule: plain http on loopback only.
    assert _problems(
        write_config,
        '[engines.w]\ntype = "wikipedia"\ncategories = ["general"]\n'
        'base_url = "http://wiki:8080/w"\n',
    ) == [
        "engines.w.base_url: expected an absolute https URL (plain http only on a loopback "
        "host), found text in another form (line 5, column 12)"
    ]


def test_issue_19_base_url_env_problems_are_told_without_the_value(write_config: Any) -> None:
    table = '[engines.sx]\ntype = "searxng"\ncategories = ["general"]\n'
    bad = _problems(
        write_config,
        table + 'base_url_env = "SX_URL"\n',
        {"SX_URL": "ftp://user:SECRET-PART@host/"},
    )
    assert bad == [
        "engines.sx.base_url_env: the variable SX_URL does not hold an absolute http or "
        "https URL without credentials, query or fragment (line 5, column 16)"
    ]
    both = _problems(write_config, table + 'base_url = "http://a:1"\nbase_url_env = "SX_URL"\n')
    assert both == ["engines.sx: give only one of base_url and base_url_env (line 2, column 10)"]
    assert _problems(write_config, table) == [
        "engines.sx: an instance engine needs base_url or base_url_env (line 2, column 10)"
    ]
    other = _problems(
        write_config,
        '[engines.w]\ntype = "wikipedia"\ncategories = ["general"]\nrate_per_minute = 5\n',
    )
    assert other == [
        "engines.w.rate_per_minute: the wikipedia driver takes no rate_per_minute"
        " (line 5, column 1)"
    ]
    too_fast = _problems(write_config, table + 'base_url = "http://a:1"\nrate_per_minute = 601\n')
    assert len(too_fast) == 1 and too_fast[0].startswith("engines.sx.rate_per_minute: ")


def test_issue_19_check_warns_about_plain_http_off_loopback_only(write_config: Any) -> None:
    from rypsok.core.config.report import warnings

    def warned(url: str) -> list[str]:
        path = write_config(
            'config_version = 1\n[engines.sx]\ntype = "searxng"\ncategories = ["general"]\n'
            f'base_url = "{url}"\n'
        )
        return [w for w in warnings(load(str(path), {})) if w.startswith("engines.sx")]

    assert warned("http://searxng:8080") == [
        "engines.sx: queries reach the instance over plain HTTP off loopback, readable and "
        "alterable on the way; use https, or keep the instance on this host or a private "
        "network you trust"
    ]
    assert warned("http://127.0.0.1:8888") == [] and warned("https://sx.example") == []
