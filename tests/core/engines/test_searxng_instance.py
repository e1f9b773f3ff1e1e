"""Issue 19 against a real SearXNG: the instance of tests/support/searxng.py runs on
127.0.0.1 with upstream engines served by the test, and rypsok asks it through `serve`
(the real engine client, egress policy, pipeline and boundary). Each test is named by the
row of the admission record (docs/engines.md, "SearXNG") it checks.

Answers rypsok never provokes (a 400 for a parameter it never sends wrong, the instance's
own 500, a redirect) are taken from the real instance and handed to the driver.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from rypsok.core.config import load
from rypsok.core.engines.base import EngineFailure, PartialAnswer, header_lookup
from rypsok.core.engines.registry import driver_for
from rypsok.core.facade import Rypsok
from rypsok.core.net.client import Response
from tests.support.fake_engines import FakeClient, brave, wikipedia
from tests.support.mcp_lines import answers, call, lines
from tests.support.run import Run, cli
from tests.support.searxng import (
    Hit,
    Searxng,
    running_searxng,
    searxng_fixture,
    searxng_instance_fixture,
    searxng_instance_nojson_fixture,
    searxng_nojson_fixture,
)
from tests.support.standin import mediawiki

__all__ = [  # the fixtures, imported for pytest
    "searxng_fixture",
    "searxng_instance_fixture",
    "searxng_instance_nojson_fixture",
    "searxng_nojson_fixture",
]

# engine_timeout_ms 2500: rypsok tells the instance timeout_limit 2.0, so the instance's
# own engine timeout (1.5 s) decides when a hanging upstream is given up.
SEARCH = "[search]\nengine_timeout_ms = 2500\ndeadline_ms = 3000\n"


def _config(write_config: Any, base_url: str, extra: str = "", engines: str = "") -> Path:
    path: Path = write_config(
        "config_version = 1\n"
        + SEARCH
        + extra
        + '[engines.searxng]\ntype = "searxng"\ncategories = ["general", "news", "science", '
        f'"code"]\nbase_url = "{base_url}"\n' + engines
    )
    return path


def _serve(path: Path, *calls: dict[str, Any]) -> tuple[list[dict[str, Any]], Run]:
    requests = [call(n, "web_search", args) for n, args in enumerate(calls, start=1)]
    run = cli("serve", "--config", str(path), stdin=lines(*requests))
    got = answers(run.out)
    return [got[n]["result"] for n in range(1, len(calls) + 1)], run


def _hits(prefix: str, count: int) -> list[Hit]:
    return [
        Hit(f"https://{prefix}{n}.example/page", f"{prefix} title {n}", f"{prefix} text {n}")
        for n in range(count)
    ]


def _events(run: Run) -> list[dict[str, Any]]:
    return [json.loads(line) for line in run.err.splitlines()]


# -- Endpoint, results, attribution ------------------------------------------------------------


def test_searxng_record_result_web_results_come_back_deduplicated_with_upstream_names(
    searxng: Searxng, write_config: Any
) -> None:
    shared = Hit("https://shared.example/doc", "Shared doc", "found by two upstreams")
    searxng.upstream.results("alpha", shared, *_hits("a", 2))
    searxng.upstream.results(
        "beta", Hit("http://shared.example/doc", "Shared", "x"), *_hits("b", 1)
    )
    path = _config(write_config, searxng.base_url, "engine_attribution = true\n")
    [result], run = _serve(path, {"query": "shared doc", "max_results": 10})
    answer = result["structuredContent"]
    assert answer["outcome"] == "ok" and answer["notices"] == [], answer
    urls = [r["url"] for r in answer["results"]]
    assert sorted(urls) == sorted(
        [
            "https://shared.example/doc",
            "https://a0.example/page",
            "https://a1.example/page",
            "https://b0.example/page",
        ]
    )
    by_url = {r["url"]: r for r in answer["results"]}
    # The instance merged the two (https preferred) and named both upstreams.
    assert by_url["https://shared.example/doc"]["engines"] == [
        "searxng",
        "searxng/alpha",
        "searxng/beta",
    ]
    assert by_url["https://b0.example/page"]["engines"] == ["searxng", "searxng/beta"]
    assert {r.query for r in searxng.upstream.requests} == {"shared doc"}
    assert "shared doc" not in run.err  # no query text in the log at the default level


def test_searxng_record_result_an_empty_answer_is_outcome_empty(
    searxng: Searxng, write_config: Any
) -> None:
    [result], _ = _serve(_config(write_config, searxng.base_url), {"query": "nothing at all"})
    assert result["structuredContent"] == {"notices": [], "outcome": "empty", "results": []}
    assert {r.engine for r in searxng.upstream.requests} == {"alpha", "beta"}


def test_searxng_record_date_comes_from_publisheddate(searxng: Searxng, write_config: Any) -> None:
    from datetime import UTC, datetime

    searxng.upstream.results(
        "delta",
        Hit(
            "https://forum.example/t/1", "Thread", "post", datetime(2026, 11, 2, 9, 30, tzinfo=UTC)
        ),
    )
    # The stand-in's page is on 127.0.0.1: an allow rule keeps it (web_fetch could read it).
    path = write_config(
        "config_version = 1\n"
        + SEARCH
        + '[egress]\nallow = ["127.0.0.1"]\n'
        + '[engines.searxng]\ntype = "searxng"\ncategories = ["general"]\n'
        f'base_url = "{searxng.base_url}"\n'
    )
    # delta serves SearXNG's own "dated" category only: ask it by the query syntax.
    [result], _ = _serve(path, {"query": "!delta thread"})
    [row] = result["structuredContent"]["results"]
    assert row["date"] == "2026-11-02" and row["url"] == searxng.upstream.delta_url(1)


# -- Categories, time range, safe search, language, paging -------------------------------------


def test_searxng_record_categories_reach_the_instances_own_and_code_is_it(
    searxng: Searxng, write_config: Any
) -> None:
    path = _config(write_config, searxng.base_url)
    asked: dict[str, set[str]] = {}
    for category in ("general", "code", "news", "science"):
        searxng.upstream.reset()
        _serve(path, {"query": f"about {category}", "category": category})
        asked[category] = {r.engine for r in searxng.upstream.requests}
    assert asked == {
        "general": {"alpha", "beta"},
        "code": {"beta"},  # beta is the only engine of SearXNG's "it"
        "news": {"gamma"},
        "science": {"gamma"},
    }


def test_searxng_record_time_range_and_safe_search_reach_the_upstreams(
    searxng: Searxng, write_config: Any
) -> None:
    path = _config(write_config, searxng.base_url)
    strict = write_config(
        "config_version = 1\n" + SEARCH + 'safe_search = "strict"\n'
        '[engines.searxng]\ntype = "searxng"\ncategories = ["general"]\n'
        f'base_url = "{searxng.base_url}"\n',
        "strict.toml",
    )
    _serve(path, {"query": "recent", "time_range": "month"})
    alpha = searxng.upstream.requests_to("alpha")
    assert [(r.time_range, r.safesearch) for r in alpha] == [("month", 1)]
    searxng.upstream.reset()
    _serve(strict, {"query": "kids"})
    assert [(r.time_range, r.safesearch) for r in searxng.upstream.requests_to("alpha")] == [
        (None, 2)
    ]


def test_searxng_record_paging_asks_page_one_and_cuts_to_results_per_engine(
    searxng: Searxng, write_config: Any
) -> None:
    searxng.upstream.results("alpha", *_hits("p", 9))
    path = _config(write_config, searxng.base_url, "results_per_engine = 5\n")
    [result], _ = _serve(path, {"query": "many pages", "max_results": 20})
    assert len(result["structuredContent"]["results"]) == 5
    assert {r.page for r in searxng.upstream.requests_to("alpha")} == {1}


# -- Unresponsive upstreams, errors, circuit ---------------------------------------------------


def test_searxng_record_unresponsive_engines_become_engine_incomplete(
    searxng: Searxng, write_config: Any
) -> None:
    searxng.upstream.results("alpha", *_hits("u", 2))
    searxng.upstream.hang("beta")
    [result], run = _serve(_config(write_config, searxng.base_url), {"query": "half there"})
    answer = result["structuredContent"]
    assert answer["outcome"] == "ok", answer
    assert answer["notices"] == [{"code": "engine_incomplete", "engine": "searxng", "count": 1}]
    assert [r["url"] for r in answer["results"]] == [
        "https://u0.example/page",
        "https://u1.example/page",
    ]
    assert "beta" not in run.out  # the instance's names stay out of the answer


def test_searxng_record_errors_403_json_disabled_is_blocked_and_the_log_names_the_setting(
    searxng_nojson: Searxng, write_config: Any
) -> None:
    [result], run = _serve(_config(write_config, searxng_nojson.base_url), {"query": "hello"})
    assert result["isError"]
    assert result["structuredContent"]["error"]["detail"] == {"reason": "all_failed"}
    [failed] = [e for e in _events(run) if e["event"] == "engine_failed"]
    assert failed["class"] == "blocked" and "search.formats" in failed["hint"]
    assert searxng_nojson.upstream.requests == []  # refused before any engine ran


def test_searxng_record_circuit_opens_after_repeated_refusals(
    searxng_nojson: Searxng, write_config: Any
) -> None:
    """403 is counted by the circuit: three refusals (resilience.failures_to_open) open
    it, and the next search skips the instance instead of asking it again. The searches
    run one after another in one process, through the real engine client."""
    core = Rypsok(load(str(_config(write_config, searxng_nojson.base_url)), {}))

    async def four() -> list[str]:
        from rypsok.core.model import ToolError
        from rypsok.core.search.request import SearchRequest

        reasons = []
        for n in range(4):
            try:
                await core.searches.search(
                    SearchRequest(f"try {n}", "general", 5, "en", None), caller="test"
                )
            except ToolError as error:
                reasons.append(str(error.detail.get("reason")))
        return reasons

    assert anyio.run(four) == ["all_failed", "all_failed", "all_failed", "no_engine"]
    [status] = core.health.reports(anyio.run(core.store.circuit_states))
    assert (status.id, status.state) == ("searxng", "open")


def _real(searxng: Searxng, params: dict[str, str]) -> tuple[int, Any, bytes]:
    reply = searxng.get("/search", params)
    return reply.status, header_lookup(reply.headers), reply.body


def _class_of(searxng: Searxng, params: dict[str, str]) -> str:
    status, header, body = _real(searxng, params)
    driver = driver_for(
        next(e for e in load(None, {"SEARXNG_URL": searxng.base_url}).engines if e.id == "searxng")
    )
    with pytest.raises(EngineFailure) as info:
        driver.parse(status, header, body)
    assert "PROVIDER" not in repr(info.value)
    return info.value.error_class


def test_searxng_record_errors_400_from_the_instance_is_a_request_failure(
    searxng: Searxng,
) -> None:
    assert _class_of(searxng, {"q": "x", "format": "json", "safesearch": "9"}) == "request_failure"
    assert _class_of(searxng, {"q": "x", "format": "json", "language": "zh-Hant"}) == (
        "request_failure"
    )


def test_searxng_record_errors_the_instances_own_500_is_a_request_failure(
    searxng: Searxng,
) -> None:
    params = {"q": "x", "format": "json", "engine_data": "1"}
    status, _, body = _real(searxng, params)
    assert status == 500 and json.loads(body) == {"error": "search error"}
    assert _class_of(searxng, params) == "request_failure"


def test_searxng_record_errors_a_redirect_is_a_request_failure(searxng: Searxng) -> None:
    assert _class_of(searxng, {"q": "!!g rust", "format": "json"}) == "request_failure"


def test_searxng_record_errors_the_403_page_is_blocked(searxng_nojson: Searxng) -> None:
    assert _class_of(searxng_nojson, {"q": "x", "format": "json"}) == "blocked"


# -- Fusion with the other engines -------------------------------------------------------------


def test_issue_19_searxng_fuses_with_wikipedia_through_serve(
    searxng: Searxng, write_config: Any
) -> None:
    with mediawiki() as wiki:
        wiki_url = wiki["base_url"].removesuffix("/w") + "/wiki/Rust_(programming_language)"
        searxng.upstream.results(
            "alpha",
            Hit(wiki_url, "Rust (programming language)", "via the instance"),
            *_hits("w", 1),
        )
        path = _config(
            write_config,
            searxng.base_url,
            'engine_attribution = true\n[egress]\nallow = ["127.0.0.1"]\n',
            '[engines.wiki]\ntype = "wikipedia"\ncategories = ["general"]\n'
            f'base_url = "{wiki["base_url"]}"\n',
        )
        [result], _ = _serve(path, {"query": "rust", "max_results": 10})
    answer = result["structuredContent"]
    assert answer["outcome"] == "ok", answer
    first = answer["results"][0]
    assert first["url"] == wiki_url and first["engines"] == ["searxng", "wiki", "searxng/alpha"]


def test_issue_19_searxng_fuses_with_wikipedia_and_brave(searxng: Searxng, tmp_path: Path) -> None:
    """The instance's real answer beside Brave's and Wikipedia's: one page found by all three
    comes first and once; each engine's other pages follow."""
    shared = "https://en.wikipedia.org/wiki/Rust_(programming_language)"
    searxng.upstream.results("alpha", Hit(shared, "Rust", "language"), *_hits("s", 2))
    reply = searxng.get("/search", {"q": "rust", "format": "json", "categories": "general"})
    instance = Response(reply.status, tuple(reply.headers.items()), reply.body)
    path = tmp_path / "c.toml"
    path.write_text(
        "config_version = 1\n[search]\nengine_attribution = true\n"
        '[engines.searxng]\ntype = "searxng"\ncategories = ["general"]\n'
        'base_url = "http://searxng.internal:8080"\n'
        '[engines.wikipedia]\ntype = "wikipedia"\ncategories = ["general"]\n'
        '[engines.brave]\ntype = "brave"\ncategories = ["general"]\napi_key_env = "K"\n'
    )
    fake = FakeClient(
        {
            "searxng.internal": instance,
            "en.wikipedia.org": wikipedia(["Rust (programming language)", "Rust (fungus)"]),
            "api.search.brave.com": brave([shared, "https://brave-only.example/"]),
        }
    )
    core = Rypsok(load(str(path), {"K": "brave-test-key-0123456789"}), client=fake)  # type: ignore[arg-type]

    async def go() -> dict[str, Any]:
        from rypsok.core.search.request import SearchRequest

        response = await core.searches.search(
            SearchRequest("rust", "general", 10, "en", None), caller="test"
        )
        return response.to_json()

    answer = anyio.run(go)
    assert answer["outcome"] == "ok", answer
    first = answer["results"][0]
    assert first["url"] == shared
    assert first["engines"] == ["brave", "searxng", "wikipedia", "searxng/alpha"]
    urls = [r["url"] for r in answer["results"]]
    assert len(urls) == len(set(urls)) == 5  # 2 + 2 + 3 pages, the shared one once
    assert {"https://brave-only.example/", "https://s0.example/page"} <= set(urls)


def test_searxng_record_partial_answer_parses_from_the_real_instance(searxng: Searxng) -> None:
    searxng.upstream.results("alpha", *_hits("r", 1))
    searxng.upstream.fail("beta", 503)
    status, header, body = _real(searxng, {"q": "x", "format": "json", "categories": "general"})
    driver = driver_for(
        next(e for e in load(None, {"SEARXNG_URL": searxng.base_url}).engines if e.id == "searxng")
    )
    parsed = driver.parse(status, header, body)
    assert isinstance(parsed, PartialAnswer) and parsed.sources_down == 1
    assert [r.url for r in parsed.results] == ["https://r0.example/page"]


class _InstanceBesideFakes(FakeClient):
    """The engine client for a zero-configuration search: the instance on 127.0.0.1 is
    asked through the real client, every other host (Wikipedia) answers from a fake."""

    def __init__(self, real: Any, by_host: dict[str, Any]) -> None:
        super().__init__(by_host)
        self.real = real

    async def get(self, url: str, **kwargs: Any) -> Any:
        if url.startswith("http://127.0.0.1:"):
            return await self.real.get(url, **kwargs)
        return await super().get(url, **kwargs)


def test_issue_19_with_only_searxng_url_set_a_search_returns_the_instances_web_results(
    searxng: Searxng,
) -> None:
    """No configuration file, SEARXNG_URL set: the default engine `searxng` is active and
    its web results come back fused with the default Wikipedia engine's."""
    shared = "https://en.wikipedia.org/wiki/Moth"
    searxng.upstream.results("alpha", Hit(shared, "Moth", "insect"), *_hits("m", 2))
    searxng.upstream.results("beta", *_hits("m", 1), Hit("https://moths.example/", "Moths", "x"))
    config = load(None, {"SEARXNG_URL": searxng.base_url})
    assert [e.id for e in config.engines if e.active] == ["searxng", "wikipedia"]
    real = Rypsok(config).client
    fake = _InstanceBesideFakes(real, {"en.wikipedia.org": wikipedia(["Moth", "Lamp"])})
    core = Rypsok(config, client=fake)  # type: ignore[arg-type]

    async def go() -> dict[str, Any]:
        from rypsok.core.search.request import SearchRequest

        response = await core.searches.search(
            SearchRequest("moth", "general", 10, "en", None), caller="test"
        )
        return response.to_json()

    answer = anyio.run(go)
    assert answer["outcome"] == "ok", answer
    urls = [r["url"] for r in answer["results"]]
    assert urls[0] == shared  # found by the instance and by Wikipedia
    assert len(urls) == len(set(urls)) == 5
    assert {"https://m0.example/page", "https://moths.example/"} <= set(urls)
    assert {r.query for r in searxng.upstream.requests} == {"moth"}


# -- The instance's own limiter ----------------------------------------------------------------


def test_searxng_record_errors_429_from_the_real_limiter_is_rate_limited(
    write_config: Any,
) -> None:
    """An instance with server.limiter on (and the Redis server the harness starts for it)
    refuses rypsok, which sends no browser's headers and never will: 429, before any engine
    runs, with no Retry-After. rypsok counts it as rate_limited and takes no cooldown from
    it, and none of the instance's text reaches the answer."""
    with running_searxng(limiter=True) as instance:
        [result], run = _serve(_config(write_config, instance.base_url), {"query": "x"})
        status, header, body = _real(instance, {"q": "x", "format": "json"})
        asked, refused, log = instance.upstream.requests, instance.refused(), instance.log_text()
    assert "requires Valkey" not in log and refused == []  # the limiter was installed
    assert asked == []  # refused before any engine ran
    assert result["isError"]
    assert result["structuredContent"]["error"]["detail"] == {"reason": "all_failed"}
    assert "Too Many Requests" not in run.out and "retry_after" not in run.out
    [failed] = [e for e in _events(run) if e["event"] == "engine_failed"]
    assert (failed["engine"], failed["class"]) == ("searxng", "rate_limited")
    assert "hint" not in failed
    assert not [e for e in _events(run) if "cooldown" in json.dumps(e)]
    # The limiter's 429 to a plain request, read directly and handed to the driver.
    assert (status, header("retry-after"), body) == (429, None, b"Too Many Requests")
    driver = driver_for(
        next(e for e in load(None, {"SEARXNG_URL": instance.base_url}).engines if e.id == "searxng")
    )
    with pytest.raises(EngineFailure) as info:
        driver.parse(status, header, body)
    assert (info.value.error_class, info.value.retry_after_s) == ("rate_limited", None)
