"""The redis backend against a real redis-server (issue 21): two `RedisStore` instances in
one process stand for two replicas sharing one Redis; each has its own connection pool
and local fallback, as separate processes would.

What both backends must do alike (windows, buckets, cooldowns, the cache, strict mode,
robots rules, across replicas and in time) is the contract suite's (test_contract.py);
here is only what Redis alone does: tickets and leases in Redis, one probe among
concurrent replicas, what is written there, prefixes, sockets and passwords."""

from __future__ import annotations

import io
import time
from pathlib import Path
from typing import cast

import anyio
import pytest

from rypsok.core import limits
from rypsok.core.fetch.robots import parse_robots
from rypsok.core.store.redis_store import RedisStore
from rypsok.core.store.values import CacheKey, EngineQuery, RawResult
from tests.support.redis import RedisServer, redis_server
from tests.support.store import ENGINE, events, everything, inspector, make_config, replicas, tuned

pytestmark = pytest.mark.anyio

QUERY = EngineQuery("zebracorn unicycle", "general", "en", "US", "moderate", None, 10)
RESULTS = (
    RawResult("https://a.example/one", "One", "the first", "2024-01-02", True, ("mojeek",)),
    RawResult("https://b.example/two", "Two &amp; more", "the second \ud800", None, False),
)
CALLS = "rypsok:calls:web_search:mimlys"
# A slot's lease with engine_timeout_ms = 100; a probe's with deadline_ms = 500 too.
LEASE_S = (100 + limits.default("LIM-D5")) / 1000
PROBE_LEASE_S = (500 + limits.default("LIM-D5")) / 1000


# -- per-caller tool limits ---------------------------------------------------------------


async def test_the_call_window_holds_across_two_replicas_and_a_refund_frees_exactly_one(
    server: RedisServer, tmp_path: Path
) -> None:
    config = make_config(tmp_path, server.url, "[limits]\nweb_search_per_minute = 3\n")
    async with replicas(config) as (a, b):
        first = await a.admit_call("mimlys", "web_search")
        second = await b.admit_call("mimlys", "web_search")
        third = await a.admit_call("mimlys", "web_search")
        # The deployment's limit, not one replica's share (3 // 2).
        assert [x.wait_ms for x in (first, second, third)] == [None, None, None]
        refused = await b.admit_call("mimlys", "web_search")
        assert refused.wait_ms is not None and 59_000 < refused.wait_ms <= 60_001
        assert refused.ticket is None
        # Another caller, another tool: windows of their own.
        assert (await b.admit_call("ops", "web_search")).wait_ms is None
        assert (await b.admit_call("mimlys", "web_fetch")).wait_ms is None

        await a.refund_call("mimlys", "web_search", second)
        assert (await a.admit_call("mimlys", "web_search")).wait_ms is None
        assert (await b.admit_call("mimlys", "web_search")).wait_ms is not None

    members = cast(list[bytes], inspector(server.url).zrange(CALLS, 0, -1))
    assert len(members) == 3
    assert second.ticket is not None and second.ticket.encode() not in members
    assert {first.ticket, third.ticket} <= {m.decode() for m in members}


# -- provider rate, Retry-After and concurrency ------------------------------------------


async def test_slots_are_counted_across_replicas_and_a_dead_replicas_lease_expires(
    server: RedisServer, tmp_path: Path
) -> None:
    config = tuned(
        make_config(tmp_path, server.url, "[search]\nengine_timeout_ms = 100\n"), concurrency=2
    )
    peek = inspector(server.url)
    async with replicas(config) as (a, b):
        dead = a.slot(ENGINE)
        await dead.__aenter__()  # never left: the replica "dies" holding it
        leased = time.monotonic()
        async with b.slot(ENGINE):
            with anyio.move_on_after(0.3) as waited:
                async with a.slot(ENGINE):
                    pytest.fail("a third slot was taken while two were leased")
            assert waited.cancelled_caught
        with anyio.fail_after(0.5):  # b's slot came back at once
            async with a.slot(ENGINE):
                pass
        # b leases the other slot well after the dead one: only the dead lease expiring
        # (not the whole set) lets a in at the dead lease's end.
        await anyio.sleep(1.0)
        async with b.slot(ENGINE):
            with anyio.fail_after(LEASE_S):
                async with a.slot(ENGINE):
                    taken = time.monotonic()
                    assert peek.zcard("rypsok:slots:wikipedia") == 2  # b's and a's
    assert LEASE_S - 0.1 <= taken - leased < LEASE_S + 0.3
    assert peek.zcard("rypsok:slots:wikipedia") == 0


# -- circuit breakers ---------------------------------------------------------------------


async def test_a_circuit_opened_by_failures_on_one_replica_is_open_on_the_other(
    server: RedisServer, tmp_path: Path, logs: io.StringIO
) -> None:
    config = make_config(tmp_path, server.url, "[resilience]\nfailures_to_open = 2\n")
    async with replicas(config) as (a, b):
        for _ in range(5):  # a refused key says nothing of the provider's health
            await a.circuit_failure(ENGINE, "auth_failure")
        assert await b.circuit_admit(ENGINE) == "go"
        await a.circuit_failure(ENGINE, "timeout")
        await b.circuit_failure(ENGINE, "rate_limited")  # failures in a row, deployment-wide
        assert await a.circuit_admit(ENGINE) == "skip"
        assert await b.circuit_admit(ENGINE) == "skip"
        assert await b.circuit_states() == {ENGINE: "open"}
        # The shared circuit, not the replicas' own.
        assert a.local.circuits[ENGINE].state == "closed"
    opened = events(logs, "circuit_opened")
    assert [(e["engine"], e["cooldown_ms"]) for e in opened] == [(ENGINE, 60_000)]


async def test_exactly_one_probe_in_the_deployment_and_its_success_closes_the_circuit_everywhere(
    server: RedisServer, tmp_path: Path, logs: io.StringIO
) -> None:
    config = tuned(
        make_config(tmp_path, server.url, "[resilience]\nfailures_to_open = 1\n"),
        first_cooldown_s=1,
        max_cooldown_s=4,
    )
    async with replicas(config) as (a, b):
        await a.circuit_failure(ENGINE, "timeout")
        assert await b.circuit_admit(ENGINE) == "skip"
        await anyio.sleep(1.05)
        # Cooldown over, not yet probed: still open, as the local circuit says.
        assert await b.circuit_states() == {ENGINE: "open"}

        decisions: list[str] = []

        async def admit(store: RedisStore) -> None:
            decisions.append(await store.circuit_admit(ENGINE))

        async with anyio.create_task_group() as tg:
            for i in range(20):
                tg.start_soon(admit, (a, b)[i % 2])
        assert sorted(decisions) == ["probe"] + ["skip"] * 19
        assert await a.circuit_states() == {ENGINE: "half_open"}

        prober = a if a._probe_tokens else b
        await prober.circuit_success(ENGINE)
        assert await a.circuit_admit(ENGINE) == "go"
        assert await b.circuit_admit(ENGINE) == "go"
        assert await b.circuit_states() == {ENGINE: "closed"}
    assert [e["engine"] for e in events(logs, "circuit_closed")] == [ENGINE]


async def test_a_dead_replicas_probe_lease_expires_and_only_its_holder_abandons_a_probe(
    server: RedisServer, tmp_path: Path
) -> None:
    config = make_config(
        tmp_path,
        server.url,
        "[search]\nengine_timeout_ms = 100\ndeadline_ms = 500\n"
        "[resilience]\nfailures_to_open = 1\n",
    )
    peek = inspector(server.url)
    async with replicas(config, 3) as (a, b, c):
        await a.circuit_failure(ENGINE, "timeout")
        peek.hset("rypsok:circuit:wikipedia", "open_until", 0)
        assert await a.circuit_admit(ENGINE) == "probe"
        probed = time.monotonic()
        # a goes silent; nobody probes until its lease ends.
        while (decision := await b.circuit_admit(ENGINE)) == "skip":
            assert time.monotonic() - probed < PROBE_LEASE_S + 0.5
            await anyio.sleep(0.05)
        assert decision == "probe" and time.monotonic() - probed >= PROBE_LEASE_S - 0.1
        await a.circuit_abandon(ENGINE)  # a's lease is gone: b's probe stays
        assert await c.circuit_admit(ENGINE) == "skip"
        assert await c.circuit_states() == {ENGINE: "half_open"}
        await b.circuit_abandon(ENGINE)
        assert await c.circuit_admit(ENGINE) == "probe"


# -- the result cache ---------------------------------------------------------------------


async def test_no_key_and_no_value_in_redis_holds_the_query_text(
    server: RedisServer, tmp_path: Path
) -> None:
    config = make_config(tmp_path, server.url, "[cache]\nenabled = true\n")
    async with replicas(config) as (a, _):
        await a.admit_call("mimlys", "web_search")
        await a.cache_put(CacheKey(ENGINE, "mimlys", QUERY), RESULTS)
        await a.remember_returned(["https://a.example/one"])
        await a.robots_put("https://a.example", parse_robots(b"User-agent: *\nDisallow: /x\n"))
    contents = everything(inspector(server.url))
    assert len(contents) >= 6
    for name, value in contents.items():
        assert name.startswith(b"rypsok:")
        assert b"zebracorn" not in name and b"unicycle" not in name
        assert b"zebracorn" not in value and b"unicycle" not in value
        assert b"a.example" not in name


async def test_a_disabled_cache_never_touches_redis(server: RedisServer, tmp_path: Path) -> None:
    async with replicas(make_config(tmp_path, server.url)) as (a, _):
        assert not a.cache_enabled
        assert await a.cache_put(CacheKey(ENGINE, "mimlys", QUERY), RESULTS) == "skipped"
        assert await a.cache_get(CacheKey(ENGINE, "mimlys", QUERY)) is None
    assert everything(inspector(server.url)) == {}


# -- prefixes, sockets, passwords ---------------------------------------------------------


async def test_two_key_prefixes_share_nothing(server: RedisServer, tmp_path: Path) -> None:
    body = "[limits]\nweb_search_per_minute = 1\n"
    one = make_config(tmp_path, server.url, body, 'key_prefix = "team-a:"\n')
    two = make_config(tmp_path, server.url, body, 'key_prefix = "team-b:"\n')
    async with replicas(one, 1) as (a,), replicas(two, 1) as (b,):
        assert (await a.admit_call("mimlys", "web_search")).wait_ms is None
        assert (await b.admit_call("mimlys", "web_search")).wait_ms is None
        assert (await b.admit_call("mimlys", "web_search")).wait_ms is not None
    names = sorted(everything(inspector(server.url)))
    assert names == [b"team-a:calls:web_search:mimlys", b"team-b:calls:web_search:mimlys"]


async def test_a_unix_socket_url_reaches_redis(tmp_path: Path) -> None:
    with redis_server(tmp_path, unix_socket=True) as server:
        config = make_config(tmp_path, server.url, "[limits]\nweb_search_per_minute = 1\n")
        async with replicas(config) as (a, b):
            assert (await a.admit_call("mimlys", "web_search")).wait_ms is None
            assert (await b.admit_call("mimlys", "web_search")).wait_ms is not None
            assert a.available and b.available


async def test_the_url_and_its_password_never_reach_the_log(
    tmp_path: Path, logs: io.StringIO
) -> None:
    with redis_server(tmp_path, password="right-Pw-4811") as server:
        right = make_config(tmp_path, server.url)
        async with replicas(right, 1) as (a,):
            assert (await a.admit_call("mimlys", "web_search")).ticket is not None
            assert a.available
        wrong_url = server.url.replace("right-Pw-4811", "wrong-Pw-9377")
        wrong = make_config(tmp_path, wrong_url)
        async with replicas(wrong, 1, steady=False) as (b,):
            assert not b.available
            admitted = await b.admit_call("mimlys", "web_search")
            assert admitted.wait_ms is None and admitted.ticket is None  # local
    text = logs.getvalue()
    assert len(events(logs, "store_unavailable")) == 1
    for secret in ("right-Pw-4811", "wrong-Pw-9377", "redis://", "127.0.0.1", str(server.port)):
        assert secret not in text
