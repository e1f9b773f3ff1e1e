"""Both store backends on one clock that the test moves, for the contract suite
(tests/core/store/test_contract.py).

`memory`: a MemoryStore on the clock. `redis`: two RedisStores, as two replicas hold
them, on a real redis-server whose scripts read the time from a key of the clock's
(`clock_key`, `scripts.on_test_clock`) instead of TIME, and whose local parts
(strict-mode URLs and robots rules are kept in each process as well) run on the same
clock. A test reads through `other` what it wrote through `store`: another replica for
redis, which must then read Redis itself; the same store for memory, one process.

Redis cannot be told the time, so what it ends by time is judged here: the scripts set
each key's end of life as a time on the clock (PEXPIREAT, PXAT), and every move of the
clock deletes the keys whose end has passed, as Redis would (a key lives while its end
is not before now). The clock starts a day ahead of the server's own, so that Redis never
ends a key by its own clock while a test runs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import redis

from rypsok.core.config import load
from rypsok.core.config.settings import Config
from rypsok.core.store.base import Store
from rypsok.core.store.local.memory_store import MemoryStore
from rypsok.core.store.redis_store import RedisStore
from rypsok.core.telemetry import counters

Kind = Literal["memory", "redis"]
CLOCK_KEY = "rypsok-test:clock"
_DAY_MS = 24 * 3600 * 1000
_START_S = 1000.0  # the memory side's monotonic clock at the start


class Clock:
    """Whole milliseconds since the start; read as monotonic seconds by the memory side,
    as milliseconds since the epoch by the scripts."""

    def __init__(self, epoch_ms: int) -> None:
        self.epoch_ms = epoch_ms
        self.ms = 0

    def __call__(self) -> float:
        # Computed afresh each time, never summed: 1059999 / 1000 is the float nearest
        # 1059.999, whatever moves led there.
        return (_START_S * 1000 + self.ms) / 1000


@dataclass
class Backend:
    """One backend under test: its store, another replica's (or the same store), and
    how to move their clock."""

    kind: Kind
    store: Store
    other: Store
    clock: Clock
    client: redis.Redis | None = None

    async def advance(self, seconds: float) -> None:
        self.clock.ms += round(seconds * 1000)
        if self.client is None:
            return
        now = self.clock.epoch_ms + self.clock.ms
        self.client.set(CLOCK_KEY, now)
        for key in self.client.scan_iter(count=1000):
            ends = self.client.pexpiretime(key)
            if 0 <= ends < now:
                self.client.delete(key)


def contract_config(tmp_path: Path, kind: Kind, url: str | None, body: str = "") -> Config:
    """One Wikipedia engine on a loopback address (never asked) and `body`; for redis,
    the server at `url` shared by two replicas, with a store timeout a busy machine
    cannot run out (LIM-D1 allows at most 100 ms)."""
    store = ""
    if kind == "redis":
        store = '[store]\nbackend = "redis"\nurl_env = "RYPSOK_REDIS_URL"\nreplicas = 2\n'
    path = tmp_path / f"{kind}.toml"
    path.write_text(
        "config_version = 1\n"
        + store
        + body
        + '[engines.wikipedia]\ntype = "wikipedia"\ncategories = ["general"]\n'
        'base_url = "http://127.0.0.1:9/"\n',
        encoding="utf-8",
    )
    config = load(str(path), {"RYPSOK_REDIS_URL": url or ""})
    return dataclasses.replace(config, store=dataclasses.replace(config.store, timeout_ms=1000))


@asynccontextmanager
async def backend(config: Config, kind: Kind) -> AsyncIterator[Backend]:
    """A store of `kind` for `config` on a fresh clock; for redis, on an empty server."""
    if kind == "memory":
        clock = Clock(0)
        store = MemoryStore(config, clock=clock)
        yield Backend(kind, store, store, clock)
        return
    assert config.store.url is not None
    client = redis.Redis.from_url(config.store.url.reveal())
    client.flushall()
    seconds, micros = client.time()
    clock = Clock(seconds * 1000 + micros // 1000 + _DAY_MS)
    client.set(CLOCK_KEY, clock.epoch_ms)
    replicas = [RedisStore(config, clock_key=CLOCK_KEY) for _ in range(2)]
    for replica in replicas:
        # Strict-mode URLs and robots rules are looked up in this process first.
        replica.local = MemoryStore(config, replicas=config.store.replicas, clock=clock)
        await replica.open()
    before = _local_answers()
    try:
        yield Backend(kind, replicas[0], replicas[1], clock, client)
        # A contract run that passed on local answers would prove nothing of Redis.
        assert _local_answers() == before, "an operation was answered locally"
    finally:
        for replica in replicas:
            await replica.close()
        client.close()


def _local_answers() -> int:
    """Store operations this process answered itself so far (Redis away or late)."""
    return sum(counters.snapshot().get("store", {}).get("local", {}).values())


__all__ = ["CLOCK_KEY", "Backend", "Clock", "Kind", "backend", "contract_config"]
