"""The redis backend when Redis is away (issue 21): stopped, crashed, paused, refusing
the password, back again. Every operation still answers within the store timeout, from
this process, with this replica's share of each limit; the change is logged once each
way; a caller's cancellation is never taken for a store failure."""

from __future__ import annotations

import io
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import TypeVar

import anyio
import pytest

from rypsok.core import limits
from rypsok.core.config.settings import Config
from rypsok.core.fetch.robots import parse_robots
from rypsok.core.store.redis_store import RedisStore
from rypsok.core.store.values import CacheKey, EngineQuery, RawResult
from rypsok.core.telemetry import counters
from tests.support.redis import RedisServer
from tests.support.store import ENGINE, events, inspector, make_config, replicas, tuned

pytestmark = pytest.mark.anyio

T = TypeVar("T")
SLACK_S = 0.1
REST_S = limits.default("LIM-D4") / 1000
KEY = CacheKey(ENGINE, "mimlys", EngineQuery("q", "general", "en", "US", "moderate", None, 10))
RESULTS = (RawResult("https://a.example/", "A", "a"),)
CALLS = "rypsok:calls:web_search:mimlys"


def up(store: RedisStore) -> bool:
    """Whether the store is available now (a call: the state changes under the test)."""
    return store.available


def fault_config(tmp_path: Path, url: str, store: str = "") -> Config:
    # A deployment of 2 replicas: 4 calls a minute, rate 60 with a burst of 10,
    # 2 slots; one replica's share is 2 calls, a burst of 5 and 1 slot.
    return tuned(
        make_config(
            tmp_path,
            url,
            "[limits]\nweb_search_per_minute = 4\n[cache]\nenabled = true\n"
            "[resilience]\nfailures_to_open = 2\n",
            store,
            timeout_ms=None,
        ),
        rate_per_minute=60,
        concurrency=2,
    )


def timed(config: Config) -> Timer:
    return Timer(config.store.timeout_ms / 1000 + SLACK_S)


class Timer:
    """Awaits an operation and checks it ended within the store timeout (and slack)."""

    def __init__(self, budget_s: float) -> None:
        self.budget_s = budget_s
        self.longest_s = 0.0

    async def __call__(self, operation: Awaitable[T]) -> T:
        start = time.monotonic()
        result = await operation
        took = time.monotonic() - start
        self.longest_s = max(self.longest_s, took)
        assert took < self.budget_s, f"{took:.3f} s"
        return result


async def every_operation_answers_locally(store: RedisStore, within: Timer) -> None:
    """Each Store operation, answered by the local fallback: the replica's shares."""
    admitted = [await within(store.admit_call("mimlys", "web_search")) for _ in range(3)]
    assert [a.wait_ms is None for a in admitted] == [True, True, False]  # 4 // 2
    await within(store.refund_call("mimlys", "web_search", admitted[0]))
    assert (await within(store.admit_call("mimlys", "web_search"))).wait_ms is None

    turns = [await within(store.reserve(ENGINE, 0.01)) for _ in range(6)]
    assert turns == [0.0] * 5 + [None]  # a burst of 10 // 2
    await within(store.hold(ENGINE, 0.1))

    # 2 // 2: while another task holds this replica's one slot, none is free.
    taken, done = anyio.Event(), anyio.Event()

    async def hold_slot() -> None:
        async with store.slot(ENGINE):
            taken.set()
            await done.wait()

    async with anyio.create_task_group() as tg:
        tg.start_soon(hold_slot)
        await taken.wait()
        with anyio.move_on_after(0.2) as waited:
            async with store.slot(ENGINE):
                pytest.fail("a second local slot was taken")
        assert waited.cancelled_caught
        done.set()

    assert await within(store.circuit_admit(ENGINE)) == "go"
    await within(store.circuit_failure(ENGINE, "timeout"))
    await within(store.circuit_failure(ENGINE, "timeout"))
    assert await within(store.circuit_admit(ENGINE)) == "skip"
    assert await within(store.circuit_states()) == {ENGINE: "open"}
    assert store.local.circuits[ENGINE].state == "open"  # this process's own

    assert await within(store.cache_put(KEY, RESULTS)) == "skipped"
    assert await within(store.cache_get(KEY)) is None

    await within(store.remember_returned(["https://a.example/"]))
    assert await within(store.was_returned(["https://a.example/"]))
    assert not await within(store.was_returned(["https://b.example/"]))
    rules = parse_robots(b"User-agent: *\nDisallow: /x\n")
    await within(store.robots_put("https://a.example", rules))
    assert await within(store.robots_get("https://a.example")) == rules
    assert await within(store.robots_get("https://b.example")) is None


async def test_with_redis_stopped_every_operation_answers_locally_within_the_timeout(
    server: RedisServer, tmp_path: Path, logs: io.StringIO
) -> None:
    config = fault_config(tmp_path, server.url)
    async with replicas(config, 1, steady=False) as (store,):
        assert up(store)
        server.stop()
        await every_operation_answers_locally(store, timed(config))
        assert not up(store)
    unavailable = events(logs, "store_unavailable")
    assert len(unavailable) == 1
    assert unavailable[0]["operation"] == "admit_call"
    assert unavailable[0]["error"] == "ConnectionError"
    assert unavailable[0]["retry_in_ms"] == limits.default("LIM-D4")


async def test_with_redis_paused_every_operation_still_ends_within_the_timeout(
    server: RedisServer, tmp_path: Path, logs: io.StringIO
) -> None:
    config = fault_config(tmp_path, server.url)
    async with replicas(config, 1, steady=False) as (store,):
        await store.circuit_states()  # a connection is open and idle
        with server.paused():
            await every_operation_answers_locally(store, timed(config))
    assert [e["error"] for e in events(logs, "store_unavailable")] == ["TimeoutError"]


async def test_many_concurrent_operations_on_a_paused_redis_end_within_the_timeout(
    server: RedisServer, tmp_path: Path
) -> None:
    config = fault_config(tmp_path, server.url, "max_connections = 4\n")
    within = timed(config)
    async with replicas(config, 1, steady=False) as (store,):
        with server.paused():
            async with anyio.create_task_group() as tg:
                for n in range(40):
                    tg.start_soon(within, store.admit_call(f"caller{n}", "web_search"))
                    tg.start_soon(within, store.reserve(ENGINE, 0.0))
        assert not up(store)
    assert within.longest_s > 0  # every one was timed


async def test_the_store_recovers_after_a_restart_logging_each_change_once(
    server: RedisServer, tmp_path: Path, logs: io.StringIO
) -> None:
    config = fault_config(tmp_path, server.url)
    peek = inspector(server.url)
    before = counters.snapshot().get("store", {}).get("state", {})
    async with replicas(config, 1, steady=False) as (store,):
        server.kill()  # a crash, not a shutdown
        await store.admit_call("mimlys", "web_search")
        assert not up(store)
        server.restart()
        # Resting: nothing tries Redis, though it answers again.
        for _ in range(3):
            admitted = await store.admit_call("mimlys", "web_search")
        assert admitted.ticket is None and peek.zcard(CALLS) == 0
        await anyio.sleep(REST_S + 0.05)
        admitted = await store.admit_call("mimlys", "web_search")
        assert up(store)
        assert admitted.ticket is not None and peek.zcard(CALLS) == 1
        for _ in range(3):  # the deployment's 4 again, not the share of 2
            assert (await store.admit_call("mimlys", "web_search")).wait_ms is None
        assert (await store.admit_call("mimlys", "web_search")).wait_ms is not None
    assert len(events(logs, "store_unavailable")) == 1
    assert len(events(logs, "store_recovered")) == 1
    after = counters.snapshot().get("store", {}).get("state", {})
    assert after.get("unavailable", 0) - before.get("unavailable", 0) == 1
    assert after.get("recovered", 0) - before.get("recovered", 0) == 1


async def test_a_failed_trial_rests_again_without_a_second_log_line(
    server: RedisServer, tmp_path: Path, logs: io.StringIO
) -> None:
    config = fault_config(tmp_path, server.url)
    async with replicas(config, 1, steady=False) as (store,):
        server.stop()
        await store.admit_call("mimlys", "web_search")
        await anyio.sleep(REST_S + 0.05)
        await store.admit_call("mimlys", "web_search")  # the trial, refused again
        assert not up(store)
        server.restart()
        await store.admit_call("mimlys", "web_search")  # the rest began anew: local
        assert not up(store)
        await anyio.sleep(REST_S + 0.05)
        await store.admit_call("mimlys", "web_search")
        assert up(store)
    assert len(events(logs, "store_unavailable")) == 1
    assert len(events(logs, "store_recovered")) == 1


async def test_open_with_redis_away_logs_once_and_does_not_fail(
    server: RedisServer, tmp_path: Path, logs: io.StringIO
) -> None:
    config = fault_config(tmp_path, server.url)
    server.stop()
    async with replicas(config, 1, steady=False) as (store,):
        assert not up(store)
        assert (await store.admit_call("mimlys", "web_search")).wait_ms is None
    assert [e["operation"] for e in events(logs, "store_unavailable")] == ["open"]


async def test_a_callers_cancellation_propagates_and_is_no_store_failure(
    server: RedisServer, tmp_path: Path, logs: io.StringIO
) -> None:
    config = fault_config(tmp_path, server.url, "timeout_ms = 100\n")
    async with replicas(config, 1, steady=False) as (store,):
        with server.paused():
            # Cancelled by the caller (a deadline the guard sees coming is answered
            # locally instead: see test_guard).
            async with anyio.create_task_group() as group:
                with anyio.CancelScope() as scope:
                    group.start_soon(_cancel_after, scope, 0.02)
                    await store.admit_call("mimlys", "web_search")
                    pytest.fail("the cancelled call went on")
            assert scope.cancelled_caught
            assert up(store)
            async with anyio.create_task_group() as group:
                with anyio.CancelScope() as scope:
                    group.start_soon(_cancel_after, scope, 0.02)
                    async with store.slot(ENGINE):
                        pytest.fail("the cancelled slot was entered")
            assert scope.cancelled_caught
        assert (await store.admit_call("mimlys", "web_search")).ticket is not None
    assert events(logs, "store_unavailable") == []


async def test_a_slot_taken_while_redis_was_away_is_given_back_locally(
    server: RedisServer, tmp_path: Path
) -> None:
    config = fault_config(tmp_path, server.url)
    async with replicas(config, 1, steady=False) as (store,):
        server.stop()
        for _ in range(3):  # one local slot: each exit gave it back
            with anyio.fail_after(1):
                async with store.slot(ENGINE):
                    pass
        server.restart()
        await anyio.sleep(REST_S + 0.05)
        async with store.slot(ENGINE):
            assert up(store)
            assert inspector(server.url).zcard("rypsok:slots:wikipedia") == 1
        assert inspector(server.url).zcard("rypsok:slots:wikipedia") == 0


async def _cancel_after(scope: anyio.CancelScope, seconds: float) -> None:
    await anyio.sleep(seconds)
    scope.cancel()
