"""The memory backend: every shared thing kept in this process, as one process needs.

It is also the redis backend's fallback: built with `share` = the configured replica
count, each limit is that replica's share of the deployment's (see `shares`), so that
replicas cut off from Redis together stay within the whole.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import anyio

from rypsok.core.config.settings import Config
from rypsok.core.engines.circuit import CircuitDecision, CircuitState
from rypsok.core.engines.health import HealthRegistry
from rypsok.core.engines.limiter import ProviderLimiter
from rypsok.core.fetch.robots import RobotsCache, RobotsRules
from rypsok.core.fetch.strict import ReturnedUrls
from rypsok.core.ratelimit import ToolRateLimiter
from rypsok.core.search.cache import CacheKey, ResultCache
from rypsok.core.store.base import Backend, CacheOutcome, CallAdmission

if TYPE_CHECKING:
    from rypsok.core.engines.base import RawResult


@dataclass(frozen=True, slots=True)
class Rate:
    per_minute: float
    burst: int
    concurrency: int


def share(value: int, replicas: int) -> int:
    """One replica's part of a whole count: never above its fair part, never below one
    (an engine or a tool with no part at all could not be used)."""
    return max(1, value // replicas)


def tool_limits(config: Config, replicas: int = 1) -> dict[str, int]:
    lim = config.limits
    return {
        "web_search": share(lim.web_search_per_minute, replicas),
        "web_fetch": share(lim.web_fetch_per_minute, replicas),
        "engine_status": share(lim.engine_status_per_minute, replicas),
    }


def engine_rates(config: Config, replicas: int = 1) -> dict[str, Rate]:
    """Each active engine's provider rate, burst and concurrency (capped by
    per_engine_in_flight), as this replica's share of the whole."""
    cap = config.limits.per_engine_in_flight
    return {
        e.id: Rate(
            e.rate[0] / replicas,
            share(e.rate[1], replicas),
            share(min(cap, e.rate[2]), replicas),
        )
        for e in config.engines
        if e.active
    }


class MemoryStore:
    backend: Backend = "memory"

    def __init__(self, config: Config, health: HealthRegistry, replicas: int = 1) -> None:
        self._health = health
        self.calls = ToolRateLimiter(tool_limits(config, replicas))
        self.limiters = {
            engine: ProviderLimiter(r.per_minute, r.burst, r.concurrency)
            for engine, r in engine_rates(config, replicas).items()
        }
        # Off by default (LIM-K1): without it no entry, no key and no sweeper exist.
        self.cache = ResultCache.from_settings(config.cache) if config.cache.enabled else None
        self.returned = ReturnedUrls(config.limits.strict_mode_urls)
        self.robots = RobotsCache(config.limits.robots_cache_entries)

    @property
    def cache_enabled(self) -> bool:
        return self.cache is not None

    async def open(self) -> None:
        return None

    async def close(self) -> None:
        return None

    async def admit_call(self, caller: str, tool: str) -> CallAdmission:
        return CallAdmission(self.calls.try_acquire(caller, tool))

    async def refund_call(self, caller: str, tool: str, admission: CallAdmission) -> None:
        self.calls.refund(caller, tool)

    async def reserve(self, engine: str, max_wait_s: float) -> float | None:
        return self.limiters[engine].reserve(time.monotonic() + max_wait_s)

    async def hold(self, engine: str, seconds: float) -> None:
        self.limiters[engine].hold(seconds)

    def slot(self, engine: str) -> Held:
        return Held(self.limiters[engine].slots)

    async def circuit_admit(self, engine: str) -> CircuitDecision:
        return self._health.get(engine).circuit.admit()

    async def circuit_success(self, engine: str) -> None:
        self._health.get(engine).circuit.record_success()

    async def circuit_failure(
        self, engine: str, error_class: str, retry_after_s: float | None = None
    ) -> None:
        self._health.get(engine).circuit.record_failure(error_class, retry_after_s)

    async def circuit_abandon(self, engine: str) -> None:
        self._health.get(engine).circuit.abandon_probe()

    async def circuit_states(self) -> Mapping[str, CircuitState]:
        return self._health.circuit_states()

    async def cache_get(self, key: CacheKey) -> tuple[RawResult, ...] | None:
        return self.cache.get(key) if self.cache is not None else None

    async def cache_put(self, key: CacheKey, results: Sequence[RawResult]) -> CacheOutcome:
        if self.cache is None:
            return "skipped"
        return "stored" if self.cache.put(key, results) else "too_large"

    async def remember_returned(self, urls: Sequence[str]) -> None:
        self.returned.remember(urls)

    async def was_returned(self, urls: Sequence[str]) -> bool:
        return any(url in self.returned for url in urls)

    async def robots_get(self, origin: str) -> RobotsRules | None:
        return self.robots.get(origin)

    async def robots_put(self, origin: str, rules: RobotsRules) -> None:
        self.robots.put(origin, rules)


class Held:
    """`async with` a capacity limiter's token, taken at once when one is free.

    anyio's own `async with` yields to the event loop even then (a checkpoint before and a
    shielded one after taking the token); here a free token costs no scheduling round, and
    only a full limiter makes the task wait, as anyio's acquire does.
    """

    __slots__ = ("limiter",)

    def __init__(self, limiter: anyio.CapacityLimiter) -> None:
        self.limiter = limiter

    async def __aenter__(self) -> None:
        try:
            self.limiter.acquire_nowait()
        except anyio.WouldBlock:
            await self.limiter.acquire()

    async def __aexit__(self, *exc_info: object) -> None:
        self.limiter.release()


__all__ = ["Held", "MemoryStore", "Rate", "engine_rates", "share", "tool_limits"]
