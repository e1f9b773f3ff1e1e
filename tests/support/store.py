"""What the redis store's tests share: a configuration naming a real redis-server, two or
more `RedisStore` replicas on it, a plain client to look into Redis, and the log lines."""

from __future__ import annotations

import dataclasses
import io
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, cast

import redis

from rypsok.core.config import load
from rypsok.core.config.settings import Config
from rypsok.core.store.redis_store import RedisStore
from rypsok.core.telemetry import counters

ENGINE = "wikipedia"


def make_config(
    tmp_path: Path, url: str, body: str = "", store: str = "", timeout_ms: int | None = 1000
) -> Config:
    """A configuration with the redis backend at `url`, two replicas, one Wikipedia
    engine on a loopback address (never asked: these tests call the store only).

    `timeout_ms` replaces the store timeout (LIM-D1 allows at most 100 ms): a test of
    what replicas share must not fall back to local answers because the machine is
    busy. None keeps the configured one, for the fault tests."""
    path = tmp_path / "rypsok.toml"
    path.write_text(
        "config_version = 1\n"
        '[store]\nbackend = "redis"\nurl_env = "RYPSOK_REDIS_URL"\nreplicas = 2\n'
        + store
        + body
        + '[engines.wikipedia]\ntype = "wikipedia"\ncategories = ["general"]\n'
        'base_url = "http://127.0.0.1:9/"\n',
        encoding="utf-8",
    )
    config = load(str(path), {"RYPSOK_REDIS_URL": url})
    if timeout_ms is None:
        return config
    return dataclasses.replace(
        config, store=dataclasses.replace(config.store, timeout_ms=timeout_ms)
    )


def tuned(
    config: Config,
    *,
    rate_per_minute: int | None = None,
    concurrency: int | None = None,
    first_cooldown_s: int | None = None,
    max_cooldown_s: int | None = None,
) -> Config:
    """Values the configuration's ranges forbid for an operator (a 1 s cooldown, a
    Wikipedia rate of one's own), so that a test waits seconds, not minutes."""
    engines = tuple(
        dataclasses.replace(
            e,
            rate_per_minute=rate_per_minute or e.rate_per_minute,
            concurrency=concurrency or e.concurrency,
        )
        for e in config.engines
    )
    r = config.resilience
    resilience = dataclasses.replace(
        r,
        first_cooldown_s=first_cooldown_s or r.first_cooldown_s,
        max_cooldown_s=max_cooldown_s or r.max_cooldown_s,
    )
    return dataclasses.replace(config, engines=engines, resilience=resilience)


@asynccontextmanager
async def replicas(
    config: Config, count: int = 2, steady: bool = True
) -> AsyncIterator[list[RedisStore]]:
    """`count` stores as `count` replicas would hold them: each its own pool and its
    own local fallback, one Redis.

    `steady`: Redis answered every operation of the block; a test of shared state that
    passed on local answers would prove nothing."""
    failed_before = store_failures()
    stores = [RedisStore(config) for _ in range(count)]
    for store in stores:
        await store.open()
    try:
        yield stores
        if steady:
            assert store_failures() == failed_before, "an operation answered locally"
    finally:
        for store in stores:
            await store.close()


def store_failures() -> int:
    """Store operations that failed or timed out in this process so far."""
    return sum(counters.snapshot().get("store", {}).get("errors", {}).values())


def inspector(url: str) -> redis.Redis:
    """A plain client on the same Redis, to look at what the store wrote."""
    return redis.Redis.from_url(url)


def everything(client: redis.Redis) -> dict[bytes, bytes]:
    """Every key in Redis and the text of its value, read by type (a DUMP could compress
    the very text a test looks for)."""
    found: dict[bytes, bytes] = {}
    for key in client.scan_iter(count=1000):
        kind = client.type(key)
        parts: list[bytes]
        if kind == b"string":
            parts = [cast(bytes, client.get(key) or b"")]
        elif kind == b"zset":
            parts = cast(list[bytes], client.zrange(key, 0, -1))
        elif kind == b"hash":
            pairs = cast(dict[bytes, bytes], client.hgetall(key))
            parts = [b for pair in pairs.items() for b in pair]
        else:
            raise AssertionError(f"the store wrote a {kind!r} at {key!r}")
        found[key] = b"\n".join(parts)
    return found


def events(stream: io.StringIO, name: str) -> list[dict[str, Any]]:
    found = []
    for line in stream.getvalue().splitlines():
        record = json.loads(line)
        if record.get("event") == name:
            found.append(record)
    return found
