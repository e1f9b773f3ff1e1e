"""One contract for both store backends (issue 32): every operation of `Store`, the same
test body for `memory` and for `redis` (a real redis-server, two replicas: what one
writes the other reads), time moved by hand (tests/support/store_contract.py says how
Redis is put on that clock).

The rules exist twice, in Python (store/local/) and in Lua (store/scripts.py); these
tests hold the two to one behaviour, at the edges where they would drift apart: the
window's end, the cooldown's end and doubling, the end of an entry's life, the bounds.
Where the backends differ on purpose, the test says so.
"""

from __future__ import annotations

import ast
import dataclasses
import io
import json
from collections.abc import Callable, Iterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import anyio
import pytest

from rypsok.core import limits
from rypsok.core.fetch.robots import parse_robots
from rypsok.core.store.base import Store
from rypsok.core.store.values import CacheKey, EngineQuery, RawResult
from tests.support.redis import redis_server
from tests.support.store_contract import Backend, Kind, backend, contract_config

pytestmark = pytest.mark.anyio

ENGINE = "wikipedia"
QUERY = EngineQuery("zebracorn unicycle", "general", "en", "US", "moderate", None, 10)
RESULTS = (
    RawResult("https://a.example/one", "One", "the first", "2024-01-02", True, ("mojeek",)),
    RawResult("https://b.example/two", "Two &amp; more", "the second \ud800", None, False),
)
KEY = CacheKey(ENGINE, "mimlys", QUERY)
DAY_S = limits.default("LIM-F12")
MS = 0.001

Make = Callable[..., AbstractAsyncContextManager[Backend]]


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    # One server for the module; each test empties it first.
    with redis_server(tmp_path_factory.mktemp("redis")) as server:
        yield server.url


@pytest.fixture(params=["memory", "redis"])
def make(request: pytest.FixtureRequest, tmp_path: Path) -> Make:
    """`make(body)`: the backend of this run with `body` added to the configuration."""
    kind: Kind = request.param
    url = request.getfixturevalue("redis_url") if kind == "redis" else None

    def given(body: str = "") -> AbstractAsyncContextManager[Backend]:
        return backend(contract_config(tmp_path, kind, url, body), kind)

    return given


# -- per-caller tool limits ---------------------------------------------------------------


async def test_a_callers_window_admits_its_limit_and_ends_sixty_seconds_after_a_call(
    make: Make,
) -> None:
    # The redis configuration names two replicas: with Redis answering, the limit is the
    # deployment's whole, as the memory backend's is the process's. Only the redis
    # backend's local answers, while Redis is away, hold a replica's share
    # (test_redis_faults.py).
    async with make("[limits]\nweb_search_per_minute = 3\n") as b:
        s, o = b.store, b.other
        assert s.backend == o.backend == b.kind
        admitted = [await x.admit_call("mimlys", "web_search") for x in (s, o, s)]
        assert [a.wait_ms for a in admitted] == [None, None, None]
        assert (await o.admit_call("mimlys", "web_search")).wait_ms == 60_001
        # Another caller, another tool: windows of their own.
        assert (await o.admit_call("ops", "web_search")).wait_ms is None
        assert (await o.admit_call("mimlys", "web_fetch")).wait_ms is None
        await b.advance(30)
        assert (await s.admit_call("mimlys", "web_search")).wait_ms == 30_001
        await b.advance(30 - MS)
        # A millisecond before the end, still refused (the wait is 1 ms in memory, 2 in
        # Redis: the memory backend rounds the remaining seconds down).
        assert (await o.admit_call("mimlys", "web_search")).wait_ms in (1, 2)
        await b.advance(MS)
        assert (await o.admit_call("mimlys", "web_search")).wait_ms is None


async def test_a_refund_gives_back_one_place_in_the_window(make: Make) -> None:
    async with make("[limits]\nweb_fetch_per_minute = 2\n") as b:
        s = b.store
        await s.admit_call("mimlys", "web_fetch")
        second = await s.admit_call("mimlys", "web_fetch")
        refused = await s.admit_call("mimlys", "web_fetch")
        assert second.wait_ms is None and refused.wait_ms is not None
        await s.refund_call("mimlys", "web_fetch", second)
        assert (await s.admit_call("mimlys", "web_fetch")).wait_ms is None
        assert (await s.admit_call("mimlys", "web_fetch")).wait_ms is not None


# -- provider rate, Retry-After and concurrency -------------------------------------------


async def test_the_bucket_gives_the_burst_then_one_turn_an_interval_queued_in_order(
    make: Make,
) -> None:
    # Wikipedia's record: 100 a minute (a turn every 0.6 s), a burst of 10.
    async with make() as b:
        s, o = b.store, b.other
        assert [await (s, o)[n % 2].reserve(ENGINE, 0.0) for n in range(10)] == [0.0] * 10
        assert await s.reserve(ENGINE, 0.0) is None
        assert await o.reserve(ENGINE, 0.5) is None  # too late: nothing was taken
        # Turns taken now queue one behind the other.
        assert await o.reserve(ENGINE, 5.0) == pytest.approx(0.6, abs=MS)
        assert await s.reserve(ENGINE, 5.0) == pytest.approx(1.2, abs=MS)
        await b.advance(1.2)
        assert await o.reserve(ENGINE, 0.5) is None
        await b.advance(0.6)
        assert await o.reserve(ENGINE, 0.0) == 0.0
        await b.advance(60)  # full again, and never beyond the burst
        assert [await s.reserve(ENGINE, 0.0) for _ in range(11)] == [0.0] * 10 + [None]


async def test_a_providers_pause_holds_every_turn_until_it_ends(make: Make) -> None:
    async with make() as b:
        s, o = b.store, b.other
        await s.hold(ENGINE, 2.0)
        assert await o.reserve(ENGINE, 1.0) is None
        assert await o.reserve(ENGINE, 3.0) == pytest.approx(2.0, abs=MS)
        await o.hold(ENGINE, 0.5)  # a shorter pause leaves the longer one
        assert await s.reserve(ENGINE, 3.0) == pytest.approx(2.0, abs=MS)
        await b.advance(2.0)
        assert await o.reserve(ENGINE, 0.0) == 0.0


async def test_an_engine_has_as_many_slots_as_its_concurrency(make: Make) -> None:
    # Wikipedia's record: one request at a time. (Redis leases a slot until the engine
    # timeout and LIM-D5 have passed, for a replica that dies holding one; the memory
    # backend has no such lease: test_redis_store.py.)
    async with make() as b:
        s, o = b.store, b.other
        held, taken, release = anyio.Event(), anyio.Event(), anyio.Event()

        async def hold_one() -> None:
            async with s.slot(ENGINE):
                held.set()
                await release.wait()

        async def take_one() -> None:
            async with o.slot(ENGINE):
                taken.set()

        async with anyio.create_task_group() as group:
            group.start_soon(hold_one)
            await held.wait()
            group.start_soon(take_one)
            with anyio.move_on_after(0.2):
                await taken.wait()
            assert not taken.is_set(), "a second slot was taken while one was held"
            release.set()
            with anyio.fail_after(1):
                await taken.wait()


# -- circuit breakers ---------------------------------------------------------------------


async def test_counted_failures_in_a_row_open_the_circuit(make: Make, logs: io.StringIO) -> None:
    async with make("[resilience]\nfailures_to_open = 2\n") as b:
        s, o = b.store, b.other
        for _ in range(5):  # a refused key says nothing of the provider's health
            await s.circuit_failure(ENGINE, "auth_failure")
        await s.circuit_failure(ENGINE, "timeout")
        await o.circuit_success(ENGINE)  # a success ends the run of failures
        await s.circuit_failure(ENGINE, "timeout")
        assert await o.circuit_admit(ENGINE) == "go"
        assert await o.circuit_states() == {ENGINE: "closed"}
        await o.circuit_failure(ENGINE, "rate_limited")  # failures in a row, wherever
        assert await s.circuit_admit(ENGINE) == "skip"
        assert await o.circuit_admit(ENGINE) == "skip"
        assert await o.circuit_states() == {ENGINE: "open"}
    assert opened(logs) == [60_000]


async def test_one_probe_after_the_cooldown_and_a_failed_probe_doubles_it_up_to_the_longest(
    make: Make, logs: io.StringIO
) -> None:
    body = "[resilience]\nfailures_to_open = 1\nfirst_cooldown_s = 60\nmax_cooldown_s = 200\n"
    async with make(body) as b:
        s, o = b.store, b.other

        async def rests_for(seconds: float) -> None:
            await b.advance(seconds - MS)
            assert await o.circuit_admit(ENGINE) == "skip"
            assert await o.circuit_states() == {ENGINE: "open"}
            await b.advance(MS)
            assert await s.circuit_admit(ENGINE) == "probe"
            assert await o.circuit_admit(ENGINE) == "skip"  # exactly one probe
            assert await o.circuit_states() == {ENGINE: "half_open"}

        await s.circuit_failure(ENGINE, "timeout")
        await rests_for(60)
        await s.circuit_failure(ENGINE, "request_failure")  # not the provider's health
        await rests_for(60)
        await s.circuit_failure(ENGINE, "timeout")
        await rests_for(120)
        await s.circuit_failure(ENGINE, "blocked")
        await rests_for(200)  # 240, capped by the longest cooldown
        await s.circuit_success(ENGINE)
        assert await s.circuit_states() == {ENGINE: "closed"}
        assert await s.circuit_admit(ENGINE) == "go"
        await s.circuit_failure(ENGINE, "timeout")  # a success reset the cooldown
        await rests_for(60)
    assert opened(logs) == [60_000, 60_000, 120_000, 200_000, 60_000]
    assert len(events(logs, "circuit_closed")) == 1


async def test_a_retry_after_longer_than_the_cooldown_is_honoured_up_to_the_longest(
    make: Make, logs: io.StringIO
) -> None:
    body = "[resilience]\nfailures_to_open = 1\nfirst_cooldown_s = 60\nmax_cooldown_s = 200\n"
    async with make(body) as b:
        s, o = b.store, b.other
        for retry_after_s, rest_s in ((90.0, 90), (1000.0, 200), (10.0, 60), (60.5, 60.5)):
            await s.circuit_failure(ENGINE, "rate_limited", retry_after_s=retry_after_s)
            await b.advance(rest_s - MS)
            assert await o.circuit_admit(ENGINE) == "skip", retry_after_s
            await b.advance(MS)
            assert await s.circuit_admit(ENGINE) == "probe", retry_after_s
            await s.circuit_success(ENGINE)
    assert opened(logs) == [90_000, 200_000, 60_000, 60_500]


async def test_an_abandoned_probe_lets_the_next_call_probe(make: Make) -> None:
    async with make("[resilience]\nfailures_to_open = 1\nfirst_cooldown_s = 60\n") as b:
        s, o = b.store, b.other
        await s.circuit_failure(ENGINE, "timeout")
        await b.advance(60)
        assert await s.circuit_admit(ENGINE) == "probe"
        await s.circuit_abandon(ENGINE)
        assert await o.circuit_states() == {ENGINE: "open"}
        assert await o.circuit_admit(ENGINE) == "probe"


# -- the result cache ---------------------------------------------------------------------


async def test_an_answer_is_kept_for_ttl_s_under_its_whole_key(make: Make) -> None:
    async with make("[cache]\nenabled = true\nttl_s = 60\n") as b:
        s, o = b.store, b.other
        assert s.cache_enabled and o.cache_enabled
        assert await s.cache_get(KEY) is None
        assert await s.cache_put(KEY, RESULTS) == "stored"
        assert await o.cache_get(KEY) == RESULTS
        assert await o.cache_get(CacheKey(ENGINE, "ops", QUERY)) is None
        for change in ({"count": 5}, {"language": "de"}, {"engine_timeout_ms": 900}):
            other = CacheKey(ENGINE, "mimlys", dataclasses.replace(QUERY, **change))
            assert await o.cache_get(other) is None, change
        # A hit does not lengthen the life. (At the very millisecond of its end, Redis
        # still has the entry and memory no longer: the edge is not part of the contract.)
        await b.advance(60 - MS)
        assert await o.cache_get(KEY) == RESULTS
        await b.advance(2 * MS)
        assert await o.cache_get(KEY) is None


async def test_an_answer_above_max_entry_bytes_is_not_stored(make: Make) -> None:
    async with make("[cache]\nenabled = true\nmax_entry_bytes = 1024\n") as b:
        s, o = b.store, b.other
        large = (RawResult("https://a.example/", "t", "x" * 1020),)  # 1041 bytes
        assert await s.cache_put(KEY, large) == "too_large"
        assert await o.cache_get(KEY) is None
        assert await s.cache_put(KEY, (RawResult("https://a.example/", "t", "x"),)) == "stored"


async def test_the_cache_keeps_at_most_max_entries_and_the_oldest_go_first(make: Make) -> None:
    # Nothing is read between the stores: memory lets the least recently used go, Redis
    # the oldest stored (a read does not move an entry there), and here they are alike.
    async with make("[cache]\nenabled = true\nmax_entries = 3\n") as b:
        s, o = b.store, b.other
        keys = [CacheKey(ENGINE, "mimlys", dataclasses.replace(QUERY, count=n)) for n in range(5)]
        for n, key in enumerate(keys):
            assert await (s, o)[n % 2].cache_put(key, RESULTS) == "stored"
            await b.advance(MS)
        assert [await o.cache_get(key) is not None for key in keys] == [False, False] + [True] * 3


async def test_a_cache_that_is_off_stores_nothing(make: Make) -> None:
    async with make() as b:
        s = b.store
        assert not s.cache_enabled
        assert await s.cache_put(KEY, RESULTS) == "skipped"
        assert await s.cache_get(KEY) is None


# -- strict mode's memory -----------------------------------------------------------------


async def test_returned_urls_are_known_up_to_the_bound_for_as_long_as_they_stay(
    make: Make,
) -> None:
    old = ["https://old.example/0", "https://old.example/1"]
    new = [f"https://new.example/{n}" for n in range(100)]
    async with make("[limits]\nstrict_mode_urls = 100\n") as b:
        s, o = b.store, b.other
        await s.remember_returned(old)
        await s.remember_returned([])
        assert await o.was_returned(["https://elsewhere.example/", old[1]])
        assert not await o.was_returned(["https://elsewhere.example/"])
        assert not await o.was_returned([])
        await b.advance(30 * DAY_S)  # no time limit: only newer URLs push one out
        assert await o.was_returned([old[0]])
        for start in range(0, 100, 25):
            await b.advance(MS)
            await s.remember_returned(new[start : start + 25])
        # Gone on both: the replica that returned them keeps the same bound.
        for x in (s, o):
            assert not await x.was_returned(old[:1]) and not await x.was_returned(old[1:])
        assert all([await o.was_returned([url]) for url in new])


# -- robots.txt rules ---------------------------------------------------------------------


async def test_robots_rules_are_kept_a_day_per_origin(make: Make) -> None:
    rules = parse_robots(
        b"User-agent: *\nDisallow: /private\nAllow: /private/open$\nDisallow: /*.pdf$\n"
        b"Disallow: /caf%c3%a9\n"
    )
    async with make() as b:
        s, o = b.store, b.other
        assert await s.robots_get("https://example.org:8443") is None
        await s.robots_put("HTTPS://Example.ORG:8443", rules)
        got = await o.robots_get("https://example.org:8443")
        assert got == rules and got is not None and got.rules
        targets = ("/private/x", "/private/open", "/private/open/x", "/a.pdf", "/café", "/a")
        assert [got.allows(t) for t in targets] == [False, True, False, False, False, True]
        assert await o.robots_get("https://example.org:443") is None
        await b.advance(DAY_S - MS)
        assert await o.robots_get("https://example.org:8443") == rules
        await b.advance(2 * MS)
        for x in (s, o):
            assert await x.robots_get("https://example.org:8443") is None


async def test_robots_rules_are_kept_for_at_most_robots_cache_entries_origins(
    make: Make,
) -> None:
    rules = parse_robots(b"User-agent: *\nDisallow: /x\n")
    async with make("[limits]\nrobots_cache_entries = 10\n") as b:
        s, o = b.store, b.other
        for n in range(12):
            await s.robots_put(f"https://site{n}.example:443", rules)
            await b.advance(MS)
        for x in (s, o):
            found = [await x.robots_get(f"https://site{n}.example:443") for n in range(12)]
            assert found == [None, None] + [rules] * 10


def events(logs: io.StringIO, name: str) -> list[dict[str, object]]:
    lines = (json.loads(line) for line in logs.getvalue().splitlines())
    return [record for record in lines if record.get("event") == name]


def opened(logs: io.StringIO) -> list[object]:
    """The cooldowns the circuit_opened lines gave, in order (the same lines whichever
    backend holds the circuit)."""
    return [record["cooldown_ms"] for record in events(logs, "circuit_opened")]


# -- the suite itself ---------------------------------------------------------------------


def test_the_suite_asks_every_operation_of_the_store() -> None:
    # A new operation of the interface needs its contract here, for both backends.
    names = set(vars(Store)) | set(Store.__annotations__)
    operations = {name for name in names if not name.startswith("_")}
    asked = {
        node.attr
        for node in ast.walk(ast.parse(Path(__file__).read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in ("s", "o", "x")
    }
    # open and close are the harness's (tests/support/store_contract.py), around each test.
    assert operations - asked == {"open", "close"}
