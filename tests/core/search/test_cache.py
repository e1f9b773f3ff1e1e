"""The result cache (REQ-CACHE-001 to -007, REQ-CMP-007, REQ-TEST-010; external design §12),
and the provenance of result text that travels with it (raw versus decoded).

Unit tests drive `ResultCache` on a fake clock; the end-to-end tests go through the
facade with the fake engine client of tests/support/fake_engines.py, whose `calls` list counts
every engine request; one test runs `rypsok serve` on stdio against a local MediaWiki
stand-in and counts the requests it receives.
"""

from __future__ import annotations

import ast
import dataclasses
import io
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import pytest

from rypsok.core.engines.base import EngineQuery, HeaderLookup, OutboundRequest, RawResult
from rypsok.core.facade import Rypsok
from rypsok.core.model import ToolError
from rypsok.core.net.client import Response
from rypsok.core.search.pipeline import eligible
from rypsok.core.search.rank import EngineAnswer, Observation, rank
from rypsok.core.store.local.cache import ResultCache, entry_bytes
from rypsok.core.store.local.circuit import Circuit
from rypsok.core.store.local.provider import ProviderLimiter
from rypsok.core.store.values import CacheKey
from rypsok.core.telemetry import log
from tests.support.clock import FakeClock
from tests.support.fake_engines import FakeClient, brave, fixture, wikipedia
from tests.support.mcp_lines import call
from tests.support.paths import REPO
from tests.support.run import check
from tests.support.searching import BRAVE, WIKI, engine_query, make
from tests.support.standin import mediawiki

CACHE_ON = "[cache]\nenabled = true\n"
WIKI_ONLY = (
    '[engines.wikipedia]\ntype = "wikipedia"\ncategories = ["general", "science"]\n'
    "preference = 10\n"
)
FROM_CACHE = {"code": "from_cache", "engine": "wikipedia"}
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def search(core: Rypsok, caller: str = "local", **arguments: Any) -> dict[str, Any]:
    async def go() -> dict[str, Any]:
        return (await core.search(arguments, caller)).to_json()

    return anyio.run(go)


def wiki_calls(fake: FakeClient) -> int:
    return sum(1 for c in fake.calls if c[0].endswith("wikipedia.org"))


def brave_calls(fake: FakeClient) -> int:
    return sum(1 for c in fake.calls if c[0] == BRAVE)


query = engine_query


def answer(*titles: str, markup: bool = True) -> tuple[RawResult, ...]:
    return tuple(
        RawResult(f"https://e.example/{i}", t, f"about {t}", None, markup)
        for i, t in enumerate(titles)
    )


def unit(
    clock: FakeClock, ttl_s: float = 300, max_entries: int = 1000, max_entry_bytes: int = 32768
) -> ResultCache:
    return ResultCache(
        ttl_s=ttl_s,
        max_entries=max_entries,
        max_entry_bytes=max_entry_bytes,
        clock=clock,
        sweep=False,
    )


def fake_clock_cache(core: Rypsok, clock: FakeClock) -> ResultCache:
    """The core's cache, rebuilt with the same settings on a clock the test moves."""
    c = core.config.cache
    cache = unit(clock, c.ttl_s, c.max_entries, c.max_entry_bytes)
    core.store.cache = cache
    return cache


def captured(fn: Any) -> str:
    stream = io.StringIO()
    previous = log._stream
    log._stream = stream
    try:
        fn()
    finally:
        log._stream = previous
    return stream.getvalue()


class Decoded:
    """A driver that keeps another's admission and request but marks its results as text a
    parser already decoded, as a scraping driver does (RawResult.markup = False)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.admission = inner.admission

    def skip_reason(self, q: EngineQuery) -> Any:
        return self.inner.skip_reason(q)

    def request(self, q: EngineQuery) -> OutboundRequest:
        request: OutboundRequest = self.inner.request(q)
        return request

    def parse(self, status: int, header: HeaderLookup, body: bytes) -> list[RawResult]:
        return [
            dataclasses.replace(r, markup=False) for r in self.inner.parse(status, header, body)
        ]


class Canned:
    """A driver with another's admission and request, answering fixed results."""

    def __init__(self, inner: Any, results: tuple[RawResult, ...]) -> None:
        self.inner = inner
        self.admission = inner.admission
        self.results = results

    def skip_reason(self, q: EngineQuery) -> Any:
        return self.inner.skip_reason(q)

    def request(self, q: EngineQuery) -> OutboundRequest:
        request: OutboundRequest = self.inner.request(q)
        return request

    def parse(
        self,
        status: int,
        header: HeaderLookup,
        body: bytes,
        *,
        cancel: threading.Event | None = None,  # handed to page-shaped drivers only
    ) -> list[RawResult]:
        return list(self.results)


def markup_response(title: str, snippet: str) -> Response:
    hit = {
        "ns": 0,
        "title": title,
        "pageid": 1,
        "snippet": snippet,
        "timestamp": "2026-09-01T00:00:00Z",
    }
    body = {"requestid": "en", "batchcomplete": "", "query": {"search": [hit]}}
    return Response(200, (("content-type", "application/json"),), json.dumps(body).encode())


# -- ResultCache on its own ---------------------------------------------------------------------


def test_req_cache_005_an_entry_expires_at_ttl_s() -> None:
    clock = FakeClock(100.0)
    cache = unit(clock, ttl_s=300)
    key = CacheKey("wikipedia", "local", query())
    assert cache.put(key, answer("A"))
    clock.now = 100.0 + 299.999
    assert cache.get(key) == answer("A")
    clock.now = 100.0 + 300
    assert cache.get(key) is None
    assert len(cache) == 0  # gone, not merely hidden


def test_req_cache_005_a_hit_does_not_extend_the_lifetime() -> None:
    clock = FakeClock()
    cache = unit(clock, ttl_s=10)
    key = CacheKey("wikipedia", "local", query())
    cache.put(key, answer("A"))
    for now in (3.0, 6.0, 9.0):
        clock.now = now
        assert cache.get(key) is not None
    clock.now = 10.0
    assert cache.get(key) is None


def test_req_cache_005_at_most_max_entries_the_least_recently_used_goes_first() -> None:
    clock = FakeClock()
    cache = unit(clock, max_entries=2)
    a, b, c = (CacheKey("wikipedia", "local", query(query=q)) for q in "abc")
    cache.put(a, answer("A"))
    cache.put(b, answer("B"))
    assert cache.get(a) is not None  # a is now the most recently used: b goes first
    cache.put(c, answer("C"))
    assert len(cache) == 2
    assert cache.get(b) is None
    assert cache.get(a) == answer("A") and cache.get(c) == answer("C")


def test_req_cache_005_storing_a_key_again_replaces_its_entry_and_restarts_its_life() -> None:
    clock = FakeClock()
    cache = unit(clock, ttl_s=10, max_entries=2)
    key = CacheKey("wikipedia", "local", query())
    cache.put(key, answer("old"))
    clock.now = 8.0
    cache.put(key, answer("new"))
    assert len(cache) == 1
    clock.now = 12.0
    assert cache.get(key) == answer("new")


def test_lim_k4_an_answer_larger_than_max_entry_bytes_is_not_stored() -> None:
    clock = FakeClock()
    # One result: URL 9 bytes, title and snippet in UTF-8 ("é" is two bytes), date 10.
    result = RawResult("https://x", "é" * 10, "s" * 5, "2026-09-01")
    size = entry_bytes([result])
    assert size == 9 + 20 + 5 + 10
    exact = unit(clock, max_entry_bytes=size)
    key = CacheKey("wikipedia", "local", query())
    assert exact.put(key, [result]) and exact.get(key) == (result,)
    small = unit(clock, max_entry_bytes=size - 1)
    assert not small.put(key, [result])
    assert small.get(key) is None and len(small) == 0


def test_req_cache_003_every_field_of_the_key_separates_entries() -> None:
    clock = FakeClock()
    cache = unit(clock)
    stored = CacheKey("wikipedia", "alice", query())
    cache.put(stored, answer("A"))
    assert cache.get(CacheKey("wikipedia", "alice", query())) == answer("A")
    others = [CacheKey("wikipedia_b", "alice", query()), CacheKey("wikipedia", "bob", query())]
    changes: dict[str, Any] = {
        "query": "rust ",
        "category": "science",
        "language": "de",
        "region": "DE",
        "safe_search": "strict",
        "time_range": "week",
        "count": 20,
        "engine_timeout_ms": 1500,
        "sites": ("python.org",),  # issue 36: the site terms are part of the request
        "not_sites": ("reddit.com",),
    }
    assert set(changes) == {f.name for f in dataclasses.fields(EngineQuery)}
    others += [
        CacheKey("wikipedia", "alice", query(**{name: value})) for name, value in changes.items()
    ]
    for key in others:
        assert cache.get(key) is None, key


def test_the_cache_key_repr_shows_neither_the_query_nor_the_caller() -> None:
    key = CacheKey("wikipedia", "alice", query(query="zebracorn merger"))
    assert "zebracorn" not in repr(key) and "alice" not in repr(key)
    assert "wikipedia" in repr(key)


def test_req_cache_007_an_expired_entry_leaves_memory_without_another_call() -> None:
    # The real monotonic clock and its sweeper: the configuration page says the cache
    # retains the queries of the last ttl_s seconds, so an idle process must drop them.
    cache = ResultCache(ttl_s=0.2, max_entries=10, max_entry_bytes=4096)
    cache.put(CacheKey("wikipedia", "local", query(query="zebracorn")), answer("A"))
    assert len(cache) == 1
    deadline = time.monotonic() + 5
    while len(cache) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(cache) == 0
    assert not cache._ages and not cache._lru  # the keys (and their query text) are gone
    deadline = time.monotonic() + 5
    while cache._sweeper is not None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert cache._sweeper is None  # an empty cache keeps no thread


def test_req_cache_007_the_cache_module_writes_nothing_to_disk() -> None:
    source = (REPO / "rypsok" / "core" / "store" / "local" / "cache.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    called = {
        node.func.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    assert "open" not in called
    attributes = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    assert not attributes & {"write_text", "write_bytes", "open", "dump", "mkdir"}
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in (
            node.names if isinstance(node, ast.Import) else [ast.alias(node.module or "")]
        )
    }
    assert not imported & {
        "os",
        "io",
        "pathlib",
        "shelve",
        "pickle",
        "sqlite3",
        "dbm",
        "tempfile",
        "shutil",
        "marshal",
        "json",
    }


def test_req_cmp_007_eligibility_is_the_admission_record() -> None:
    from rypsok.core.engines.registry import ADMISSIONS

    assert eligible(ADMISSIONS["wikipedia"])
    assert not eligible(ADMISSIONS["brave"])
    assert not eligible(ADMISSIONS["duckduckgo"])
    for admission in ADMISSIONS.values():
        assert eligible(admission) is admission.cacheable


# -- through the facade ---------------------------------------------------------------------


def test_req_cache_001_the_cache_is_off_by_default(tmp_path: Path) -> None:
    core, fake = make(tmp_path)
    assert core.config.cache.enabled is False
    assert core.store.cache is None
    fake.by_host = {WIKI: wikipedia(["A"]), BRAVE: brave(["https://b.example/"])}
    first = search(core, query="rust")
    second = search(core, query="rust")
    assert wiki_calls(fake) == 2 and brave_calls(fake) == 2
    assert first == second and FROM_CACHE not in second["notices"]


def test_req_test_010_a_search_served_from_the_cache_makes_no_engine_request(
    tmp_path: Path,
) -> None:
    core, fake = make(tmp_path, CACHE_ON + WIKI_ONLY)
    fake.by_host = {WIKI: wikipedia(["Rust", "Rust & Bone"])}
    first = search(core, query="rust")
    assert wiki_calls(fake) == 1 and first["notices"] == []
    fake.by_host = {}  # a request now would fail: only the cache can answer
    second = search(core, query="rust")
    assert len(fake.calls) == 1
    assert second["outcome"] == "ok"
    assert second["results"] == first["results"]
    # The notice as the book's Notices table gives it: the code and the engine, nothing else.
    assert second["notices"] == [FROM_CACHE]


def test_req_cmp_007_an_engine_that_forbids_storage_is_never_served_from_the_cache(
    tmp_path: Path,
) -> None:
    core, fake = make(tmp_path, CACHE_ON)  # wikipedia and brave, both in "general"
    fake.by_host = {WIKI: wikipedia(["A"]), BRAVE: brave(["https://b.example/"])}
    for _ in range(3):
        got = search(core, query="rust")
    assert wiki_calls(fake) == 1 and brave_calls(fake) == 3
    assert got["notices"] == [FROM_CACHE]
    assert got["outcome"] == "ok" and len(got["results"]) == 2
    cache = core.store.cache
    assert cache is not None and len(cache) == 1
    assert [k.engine for k in cache._lru] == ["wikipedia"]


def test_req_cmp_007_the_pipeline_reads_cacheability_from_the_record(tmp_path: Path) -> None:
    core, fake = make(tmp_path, CACHE_ON + WIKI_ONLY)
    fake.by_host = {WIKI: wikipedia(["A"])}
    admission = core.config.engines[0].admission
    object.__setattr__(admission, "cacheable", False)
    try:
        search(core, query="rust")
        got = search(core, query="rust")
    finally:
        object.__setattr__(admission, "cacheable", True)
    assert wiki_calls(fake) == 2 and got["notices"] == []
    assert core.store.cache is not None and len(core.store.cache) == 0


def test_req_cmp_007_every_engine_type_follows_its_record_with_the_cache_on(
    tmp_path: Path,
) -> None:
    # Every type this build knows, DuckDuckGo included, each with canned answers: only the
    # types whose record allows storage are answered from the cache.
    body = (
        "[scraping]\nenabled = true\n"
        + CACHE_ON
        + WIKI_ONLY
        + '[engines.brave]\ntype = "brave"\ncategories = ["general"]\npreference = 20\n'
        'api_key_env = "BRAVE_API_KEY"\n'
        '[engines.ddg]\ntype = "duckduckgo"\ncategories = ["general"]\npreference = 30\n'
    )
    core, fake = make(tmp_path, body)
    drivers = dict(core.searches.drivers)
    assert set(drivers) == {"wikipedia", "brave", "ddg"}
    for engine_id, driver in drivers.items():
        results = (RawResult(f"https://{engine_id}.example/", f"{engine_id} title", "text"),)
        drivers[engine_id] = Canned(driver, results)
    core.searches.drivers = drivers
    # DuckDuckGo's record admits 10 requests a minute; the test needs three in a second.
    core.store.limiters = {e: ProviderLimiter(6000, 10, 1) for e in drivers}
    host_of = {urlsplit(d.request(query()).url).hostname: e for e, d in drivers.items()}
    assert len(host_of) == 3  # three hosts, so the requests tell the engines apart
    page = Response(200, (("content-type", "text/html"),), b"<html></html>")
    fake.by_host = {str(host): page for host in host_of}
    for _ in range(3):
        got = search(core, query="rust")
    by_engine = {e: sum(1 for c in fake.calls if host_of.get(c[0]) == e) for e in drivers}
    assert by_engine == {"wikipedia": 1, "brave": 3, "ddg": 3}
    assert got["notices"] == [FROM_CACHE]
    assert len(got["results"]) == 3


def test_req_cache_004_callers_never_share_an_entry(tmp_path: Path) -> None:
    core, fake = make(tmp_path, CACHE_ON + WIKI_ONLY)
    fake.by_host = {WIKI: wikipedia(["A"])}
    alice = search(core, "alice", query="rust")
    bob = search(core, "bob", query="rust")
    assert wiki_calls(fake) == 2
    assert alice["notices"] == [] and bob["notices"] == []
    again = search(core, "alice", query="rust")
    assert wiki_calls(fake) == 2 and again["notices"] == [FROM_CACHE]
    assert search(core, "bob", query="rust")["notices"] == [FROM_CACHE]
    assert search(core, query="rust")["notices"] == []  # "local" is a caller of its own
    assert wiki_calls(fake) == 3


def test_req_cache_003_an_entry_is_valid_only_for_its_caller_engine_and_parameters(
    tmp_path: Path,
) -> None:
    core, fake = make(tmp_path, CACHE_ON + '[search]\nlanguages = ["en", "de"]\n' + WIKI_ONLY)
    fake.by_host = {WIKI: wikipedia(["A"]), "de.wikipedia.org": wikipedia(["B"], "de")}
    search(core, query="rust")
    variants: list[dict[str, Any]] = [
        {"query": "rust cargo"},
        {"query": "rust", "language": "de"},
        {"query": "rust", "category": "science"},
    ]
    for arguments in variants:
        assert search(core, **arguments)["notices"] == [], arguments
    assert wiki_calls(fake) == 1 + len(variants)
    # Each variant is now an entry of its own; max_results is not part of the engine
    # request (the engine is asked for results_per_engine), so it shares the entry.
    for arguments in [{"query": "rust"}, *variants, {"query": "rust", "max_results": 3}]:
        assert search(core, **arguments)["notices"] == [FROM_CACHE], arguments
    assert wiki_calls(fake) == 1 + len(variants)


def test_req_cache_003_the_key_is_the_caller_the_engine_and_the_engine_request(
    tmp_path: Path,
) -> None:
    core, fake = make(tmp_path, CACHE_ON + "[search]\nresults_per_engine = 7\n" + WIKI_ONLY)
    fake.by_host = {WIKI: wikipedia(["A"])}
    search(core, "alice", query="rust", category="science")
    cache = core.store.cache
    assert cache is not None
    (key,) = list(cache._lru)
    assert (key.caller, key.engine) == ("alice", "wikipedia")
    assert key.request == EngineQuery(
        query="rust",
        category="science",
        language="en",
        region=core.config.search.region,
        safe_search=core.config.search.safe_search,
        time_range=None,
        count=7,
    )


def test_req_cache_005_expiry_through_the_facade(tmp_path: Path) -> None:
    core, fake = make(tmp_path, CACHE_ON + "ttl_s = 60\n" + WIKI_ONLY)
    clock = FakeClock(1000.0)
    fake_clock_cache(core, clock)
    fake.by_host = {WIKI: wikipedia(["A"])}
    search(core, query="rust")
    clock.now = 1059.9
    assert search(core, query="rust")["notices"] == [FROM_CACHE]
    clock.now = 1060.0
    assert search(core, query="rust")["notices"] == []
    assert wiki_calls(fake) == 2
    assert search(core, query="rust")["notices"] == [FROM_CACHE]  # stored again


def test_req_cache_005_max_entries_through_the_facade(tmp_path: Path) -> None:
    core, fake = make(tmp_path, CACHE_ON + "max_entries = 1\n" + WIKI_ONLY)
    fake.by_host = {WIKI: wikipedia(["A"])}
    search(core, query="one")
    search(core, query="two")  # takes the only place
    assert search(core, query="one")["notices"] == []
    assert wiki_calls(fake) == 3
    assert search(core, query="one")["notices"] == [FROM_CACHE]


def test_lim_k4_a_large_answer_is_served_but_not_stored(tmp_path: Path) -> None:
    core, fake = make(tmp_path, CACHE_ON + "max_entry_bytes = 1024\n" + WIKI_ONLY)
    fake.by_host = {WIKI: wikipedia([f"Title number {i} " * 4 for i in range(10)])}
    first = search(core, query="rust", max_results=10)
    assert len(first["results"]) == 10
    second = search(core, query="rust")
    assert wiki_calls(fake) == 2 and second["notices"] == []
    fake.by_host = {WIKI: wikipedia(["Small"])}
    search(core, query="small")
    assert search(core, query="small")["notices"] == [FROM_CACHE]


def test_req_test_010_a_circuit_probe_bypasses_the_lookup(tmp_path: Path) -> None:
    core, fake = make(tmp_path, CACHE_ON + WIKI_ONLY)
    clock = FakeClock(50.0)
    circuit = core.store.circuits["wikipedia"] = Circuit(  # type: ignore[attr-defined]
        1, 10, 60, clock=clock
    )
    fake.by_host = {WIKI: wikipedia(["A"])}
    search(core, query="rust")  # stored
    fake.by_host = {WIKI: fixture("wikipedia", "malformed")}
    with pytest.raises(ToolError):  # all_failed; opens the circuit
        search(core, query="other")
    assert circuit.state == "open"
    calls = wiki_calls(fake)
    # While the engine rests, its stored answer is still served, without a request.
    assert search(core, query="rust")["notices"] == [FROM_CACHE]
    assert wiki_calls(fake) == calls and circuit.state == "open"
    # The cooldown is over: this call holds the probe, which goes to the engine even
    # though the cache has an answer for it.
    clock.now = 61.0
    fake.by_host = {WIKI: wikipedia(["Fresh"])}
    probed = search(core, query="rust")
    assert wiki_calls(fake) == calls + 1
    assert probed["notices"] == [] and probed["results"][0]["title"] == "Fresh"
    assert circuit.state == "closed"
    # The probe's answer replaced the entry.
    again = search(core, query="rust")
    assert again["notices"] == [FROM_CACHE] and again["results"][0]["title"] == "Fresh"
    assert wiki_calls(fake) == calls + 1


def test_req_test_010_a_hit_takes_no_provider_rate_token(tmp_path: Path) -> None:
    core, fake = make(tmp_path, CACHE_ON + WIKI_ONLY)
    # Two tokens and practically no refill: two engine requests, then rate_limited.
    core.store.limiters = {"wikipedia": ProviderLimiter(1, 2, 1)}
    fake.by_host = {WIKI: wikipedia(["A"])}
    search(core, query="first")
    for _ in range(5):
        assert search(core, query="first")["notices"] == [FROM_CACHE]
    assert search(core, query="second")["notices"] == []  # the second token was left
    assert wiki_calls(fake) == 2
    with pytest.raises(ToolError) as info:  # the limiter does bind
        search(core, query="third")
    assert info.value.detail == {"reason": "no_engine"}


def test_req_test_010_a_hit_leaves_the_circuit_and_the_latency_alone(tmp_path: Path) -> None:
    core, fake = make(tmp_path, CACHE_ON + "[resilience]\nfailures_to_open = 2\n" + WIKI_ONLY)
    health = core.health.get("wikipedia")
    fake.by_host = {WIKI: wikipedia(["A"])}
    search(core, query="rust")
    latencies = len(health._latencies)
    fake.by_host = {WIKI: fixture("wikipedia", "malformed")}
    with pytest.raises(ToolError):  # one counted failure
        search(core, query="broken one")
    assert search(core, query="rust")["notices"] == [FROM_CACHE]  # no record_success
    with pytest.raises(ToolError):  # the second failure in a row
        search(core, query="broken two")
    # The hit did not reset the count.
    assert core.store.circuits["wikipedia"].state == "open"  # type: ignore[attr-defined]
    assert len(health._latencies) == latencies + 2  # the two failures' requests, no hit


def test_req_priv_003_a_query_the_privacy_check_warned_about_bypasses_the_cache(
    tmp_path: Path,
) -> None:
    core, fake = make(tmp_path, CACHE_ON + '[privacy]\nsecret_detection = "warn"\n' + WIKI_ONLY)
    fake.by_host = {WIKI: wikipedia(["A"])}
    for _ in range(2):
        assert search(core, query=f"why {TOKEN}")["notices"] == []
    assert wiki_calls(fake) == 2
    assert core.store.cache is not None and len(core.store.cache) == 0
    search(core, query="plain words")  # a clean query in the same mode is cached
    assert search(core, query="plain words")["notices"] == [FROM_CACHE]


def test_req_priv_003_a_masked_query_bypasses_the_cache(tmp_path: Path) -> None:
    core, fake = make(tmp_path, CACHE_ON + '[privacy]\nsecret_detection = "mask"\n' + WIKI_ONLY)
    fake.by_host = {WIKI: wikipedia(["A"])}
    for _ in range(2):
        got = search(core, query=f"why {TOKEN}")
        assert got["notices"] == [{"code": "credential_masked", "count": 1}]
    assert wiki_calls(fake) == 2
    assert core.store.cache is not None and len(core.store.cache) == 0


def test_req_cache_006_a_cache_failure_only_costs_speed(tmp_path: Path) -> None:
    core, fake = make(tmp_path, CACHE_ON + WIKI_ONLY)
    fake.by_host = {WIKI: wikipedia(["A"])}

    class Broken(ResultCache):
        def get(self, key: CacheKey) -> tuple[RawResult, ...] | None:
            raise RuntimeError(f"lookup broke on {key.request.query}")

        def put(self, key: CacheKey, results: Any) -> bool:
            raise MemoryError(f"store broke on {key.request.query}")

    core.store.cache = Broken(ttl_s=60, max_entries=10, max_entry_bytes=4096)
    answers: list[dict[str, Any]] = []
    logs = captured(lambda: answers.extend(search(core, query="zebracorn") for _ in range(2)))
    assert [a["outcome"] for a in answers] == ["ok", "ok"]
    assert all(a["notices"] == [] and a["results"] for a in answers)
    assert wiki_calls(fake) == 2  # uncached, as if the cache were off
    events = [json.loads(line) for line in logs.splitlines()]
    failed = [e for e in events if e["event"] == "cache_failed"]
    assert {(e["stage"], e["error_type"]) for e in failed} == {
        ("lookup", "RuntimeError"),
        ("store", "MemoryError"),
    }
    assert "zebracorn" not in logs  # neither the key nor the exception's text is logged


def test_req_test_010_a_cancelled_call_stores_nothing(tmp_path: Path) -> None:
    core, fake = make(tmp_path, CACHE_ON)
    fake.by_host = {WIKI: wikipedia(["A"]), BRAVE: brave(["https://b.example/"])}
    fake.delays = {BRAVE: 5}  # wikipedia answers at once; the call waits for brave

    async def go() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(core.search, {"query": "rust"}, "local")
            await anyio.sleep(0.3)
            group.cancel_scope.cancel()

    anyio.run(go)
    assert wiki_calls(fake) == 1  # wikipedia had answered before the cancel
    assert core.store.cache is not None and len(core.store.cache) == 0


def test_req_cache_002_only_web_search_uses_the_cache() -> None:
    # Fetched content is never cached: the search pipeline is the cache's only user.
    users = []
    for path in sorted((REPO / "rypsok").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            asks = isinstance(node, ast.Attribute) and node.attr in ("cache_get", "cache_put")
            keys = isinstance(node, ast.ImportFrom) and any(
                a.name == "CacheKey" for a in node.names
            )
            if asks or keys:
                users.append(path.relative_to(REPO).as_posix())
    # The stores hold entries for the search pipeline; nothing that fetches a page may.
    assert "rypsok/core/search/pipeline.py" in users
    assert all(
        p == "rypsok/core/search/pipeline.py" or p.startswith("rypsok/core/store/") for p in users
    ), users


def test_req_cache_007_a_cached_search_writes_nothing_to_disk(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    core, fake = make(tmp_path, CACHE_ON + WIKI_ONLY)
    fake.by_host = {WIKI: wikipedia(["A"])}
    home, cwd = tmp_path / "home", tmp_path / "cwd"
    home.mkdir()
    cwd.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.chdir(cwd)
    search(core, query="rust")
    assert search(core, query="rust")["notices"] == [FROM_CACHE]
    assert list(home.iterdir()) == [] and list(cwd.iterdir()) == []


# -- provenance: raw versus decoded text (external design §9, RFC 019 D3) ----------------------


def test_req_eng_012_raw_results_are_cleaned_as_markup_decoded_ones_as_text(
    tmp_path: Path,
) -> None:
    raw_title, raw_snippet = "A &amp; <b>B</b>", "x &lt;T&gt; <span>y</span>"
    core, fake = make(tmp_path, WIKI_ONLY)
    fake.by_host = {WIKI: markup_response(raw_title, raw_snippet)}
    raw = search(core, query="rust")["results"][0]
    assert raw["title"] == "A & B" and raw["snippet"] == "x <T> y"
    core.searches.drivers = {"wikipedia": Decoded(core.searches.drivers["wikipedia"])}
    decoded = search(core, query="rust")["results"][0]
    assert decoded["title"] == raw_title and decoded["snippet"] == raw_snippet


def test_req_cache_003_provenance_travels_with_the_entry(tmp_path: Path) -> None:
    raw_title, raw_snippet = "Vec<T> &amp; <b>slices</b>", "std::vec::Vec&lt;T&gt;"
    core, fake = make(tmp_path, CACHE_ON + WIKI_ONLY)
    core.searches.drivers = {"wikipedia": Decoded(core.searches.drivers["wikipedia"])}
    fake.by_host = {WIKI: markup_response(raw_title, raw_snippet)}
    first = search(core, query="rust")
    second = search(core, query="rust")
    assert second["notices"] == [FROM_CACHE] and wiki_calls(fake) == 1
    for got in (first, second):
        assert got["results"][0]["title"] == raw_title
        assert got["results"][0]["snippet"] == raw_snippet


def test_the_lead_observation_gives_the_provenance_of_a_merged_result() -> None:
    url = "https://example.org/page"
    decoded = EngineAnswer("scraper", 10, [Observation(url, "A <b>", "s", None, False)])
    raw = EngineAnswer("api", 20, [Observation(url, "A &lt;b&gt;", "s", None, True)])
    for answers in ([decoded, raw], [raw, decoded]):
        (merged,) = rank(answers, max_results=5).results
        assert merged.title == "A <b>" and merged.markup is False
    (alone,) = rank([raw], max_results=5).results
    assert alone.markup is True
    assert Observation(url, "t", "s").markup is True  # unmarked is raw: the safe side


# -- check ------------------------------------------------------------------------------------


def test_req_cmp_007_check_warns_when_no_enabled_engine_allows_storage(write_config) -> None:
    brave_only = (
        "config_version = 1\n" + CACHE_ON + '[engines.b]\ntype = "brave"\n'
        'categories = ["general"]\napi_key_env = "K"\n'
    )
    run = check(write_config(brave_only))
    assert run.code == 0
    warned = [x for x in run.lines if x.startswith("rypsok: warning: cache.enabled: ")]
    assert warned == [
        "rypsok: warning: cache.enabled: the cache is on and no enabled engine allows its "
        "results to be stored (Wikipedia and SearXNG do, Brave and DuckDuckGo do not), so it holds "
        "nothing; turn the cache off, or enable an engine that allows storage"
    ]
    with_wiki = check(write_config("config_version = 1\n" + CACHE_ON + WIKI_ONLY))
    assert not [x for x in with_wiki.lines if "warning: cache.enabled" in x]
    off = check(
        write_config(
            'config_version = 1\n[engines.b]\ntype = "brave"\n'
            'categories = ["general"]\napi_key_env = "K"\n'
        )
    )
    assert not [x for x in off.lines if "warning: cache.enabled" in x]


# -- stdio, end to end ------------------------------------------------------------------------


@pytest.fixture
def serve_dirs(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    home, cwd = tmp_path / "home", tmp_path / "cwd"
    home.mkdir()
    cwd.mkdir()
    yield home, cwd


def test_req_test_010_through_stdio_a_repeated_search_reaches_the_engine_once(
    tmp_path: Path,
    serve_dirs: tuple[Path, Path],
) -> None:
    home, cwd = serve_dirs
    with mediawiki() as wiki:
        config = tmp_path / "rypsok.toml"
        config.write_text(
            # The stand-in's result URLs are on 127.0.0.1, kept only under an allow rule.
            'config_version = 1\n[egress]\nallow = ["127.0.0.1"]\n'
            + CACHE_ON
            + '[engines.wikipedia]\ntype = "wikipedia"\n'
            f'categories = ["general"]\nbase_url = "{wiki["base_url"]}"\n',
            encoding="utf-8",
        )
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(home),
            "PYTHONPATH": str(REPO),
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        proc = subprocess.Popen(
            [sys.executable, "-m", "rypsok", "serve", "--config", str(config)],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        watchdog = threading.Timer(60, proc.kill)
        watchdog.start()
        try:
            assert proc.stdin is not None and proc.stdout is not None
            answers = []
            for request_id in (1, 2):  # one after the other: the second starts after the first
                proc.stdin.write(
                    json.dumps(call(request_id, "web_search", {"query": "zebracorn"})).encode()
                    + b"\n"
                )
                proc.stdin.flush()
                answers.append(json.loads(proc.stdout.readline()))
            proc.stdin.close()  # end of input: a graceful shutdown
            assert proc.stderr is not None
            err = proc.stderr.read()  # until the child exits (the watchdog bounds it)
            proc.wait(timeout=30)
        finally:
            watchdog.cancel()
            if proc.poll() is None:
                proc.kill()
        queries = list(wiki["queries"])
    assert proc.returncode == 0
    first, second = (a["result"]["structuredContent"] for a in answers)
    assert queries == ["zebracorn"]  # the stand-in received one request for two searches
    assert first["notices"] == [] and second["notices"] == [FROM_CACHE]
    assert second["results"] == first["results"] and len(first["results"]) == 2
    assert b"zebracorn" not in err  # no query text in the log at the default level
    assert list(home.iterdir()) == [] and list(cwd.iterdir()) == []  # nothing on disk
