"""A saturated replica keeps its store (issue 31, item 9): a replica whose own event loop
is behind (bursts of CPU-bound work, many calls at once, more than the store's
connections) keeps a healthy Redis, because a late turn of its loop is not Redis's fault;
and a Redis that really stops while the replica is saturated is still judged away."""

from __future__ import annotations

import io
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from rypsok.core.config.settings import Config
from rypsok.core.store.redis_store import RedisStore
from rypsok.core.store.values import CacheKey, EngineQuery
from rypsok.core.telemetry import counters
from tests.support.redis import RedisServer
from tests.support.store import ENGINE, events, make_config, replicas, store_failures

pytestmark = pytest.mark.anyio

TIMEOUT_S = 0.1  # the store timeout at its default


def burn(seconds: float) -> None:
    """Hold the event loop, and a core, for `seconds`: CPU-bound work."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def burning(
    burst_s: float, every_s: float, turn_s: float
) -> Callable[[], Coroutine[Any, Any, None]]:
    """This process's own CPU-bound work on the event loop, until cancelled: a burst of
    `burst_s` every `every_s`, and `turn_s` at each of its turns in between."""

    async def run() -> None:
        while True:
            burn(burst_s)
            calm = anyio.current_time() + every_s
            while anyio.current_time() < calm:
                burn(turn_s)
                await anyio.lowlevel.checkpoint()

    return run


# A core at 100%: every 0.3 s the loop stops for 0.15 s (one and a half store timeouts),
# and between the bursts each turn of the loop takes 15 ms or more.
SATURATION = burning(0.15, 0.3, 0.015)


def saturated_config(tmp_path: Path, url: str, connections: int) -> Config:
    config = make_config(
        tmp_path,
        url,
        "[cache]\nenabled = true\n",
        f"max_connections = {connections}\n",
        timeout_ms=None,
    )
    assert config.store.timeout_ms / 1000 == TIMEOUT_S
    return config


class Calls:
    """`workers` tasks calling the store back to back, as a replica's calls do."""

    def __init__(self, store: RedisStore, workers: int) -> None:
        self.store = store
        self.workers = workers
        self.rounds = 0
        self.longest_s = 0.0

    async def worker(self, n: int) -> None:
        query = EngineQuery(f"q{n}", "general", "en", "US", "moderate", None, 10)
        key = CacheKey(ENGINE, f"caller{n}", query)
        while True:
            started = anyio.current_time()
            await self.store.admit_call(f"caller{n}", "engine_status")
            await self.store.circuit_states()
            await self.store.cache_get(key)
            self.longest_s = max(self.longest_s, anyio.current_time() - started)
            self.rounds += 1
            # A call's own I/O: answered locally, the store never yields to the loop.
            await anyio.lowlevel.checkpoint()

    def start(self, group: anyio.abc.TaskGroup) -> None:
        for n in range(self.workers):
            group.start_soon(self.worker, n)


def up(store: RedisStore) -> bool:
    """Whether the store is available now (a call: the state changes under the test)."""
    return store.available


def local_answers() -> int:
    return sum(counters.snapshot().get("store", {}).get("local", {}).values())


async def test_a_saturated_replica_does_not_judge_a_healthy_store_away(
    server: RedisServer, tmp_path: Path, logs: io.StringIO
) -> None:
    # 24 calls at once on 4 connections: most wait their turn here.
    config = saturated_config(tmp_path, server.url, 4)
    failed, local = store_failures(), local_answers()
    async with replicas(config, 1, steady=False) as (store,):
        calls = Calls(store, 24)
        async with anyio.create_task_group() as group:
            group.start_soon(SATURATION)
            calls.start(group)
            await anyio.sleep(3.0)
            group.cancel_scope.cancel()
        assert store.available
    assert calls.rounds >= calls.workers  # every call was answered, some more than once
    assert events(logs, "store_unavailable") == []
    assert store_failures() == failed
    # Redis answered: nothing was answered from this process's own memory.
    assert local_answers() == local


async def test_a_redis_that_stops_while_the_replica_is_saturated_is_judged_away(
    server: RedisServer, tmp_path: Path, logs: io.StringIO
) -> None:
    # As above, with every call on a connection of its own (a turn in a queue here is
    # never judged), so only the calls waiting on Redis can tell that it stopped.
    config = saturated_config(tmp_path, server.url, 32)
    async with replicas(config, 1, steady=False) as (store,):
        calls = Calls(store, 16)
        async with anyio.create_task_group() as group:
            group.start_soon(SATURATION)
            calls.start(group)
            await anyio.sleep(0.5)
            assert up(store)
            with server.paused():
                stopped = time.monotonic()
                while up(store) and time.monotonic() - stopped < 3.0:
                    await anyio.sleep(0.01)
                noticed_s = time.monotonic() - stopped
                calls.longest_s = 0.0
                rounds = calls.rounds
                await anyio.sleep(0.5)  # away: every call answers locally
                assert calls.rounds > rounds and not up(store)
                group.cancel_scope.cancel()
    [line] = events(logs, "store_unavailable")
    assert line["error"] == "TimeoutError"
    # Noticed within the timeout's looks plus the bursts and turns that delay them.
    assert noticed_s < 2.0
    assert calls.longest_s < 0.5
