"""The memory backend: every shared thing kept in this process, as one process needs.

It is also the redis backend's fallback: built with `share` = the configured replica
count, each limit is that replica's share of the deployment's (see `shares`), so that
replicas cut off from Redis together stay within the whole.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from rypsok.core.config.settings import Config
from rypsok.core.permits import Permit
from rypsok.core.store.base import Backend
from rypsok.core.store.local.cache import ResultCache
from rypsok.core.store.local.calls import ToolRateLimiter
from rypsok.core.store.local.circuit import Circuit, transition_logger
from rypsok.core.store.local.provider import ProviderLimiter
from rypsok.core.store.local.returned import ReturnedUrls
from rypsok.core.store.local.robots import RobotsCache
from rypsok.core.store.robots_rules import RobotsRules
from rypsok.core.store.values import (
    CacheKey,
    CacheOutcome,
    CallAdmission,
    CircuitDecision,
    CircuitState,
    RawResult,
)


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

    def __init__(
        self, config: Config, replicas: int = 1, clock: Callable[[], float] | None = None
    ) -> None:
        """`clock` (seconds, monotonic) is for tests that move time by hand; a cache on
        such a clock expires its entries as they are looked up, with no sweeper."""
        now = clock or time.monotonic
        self._now = now
        self.calls = ToolRateLimiter(tool_limits(config, replicas), now)
        self.limiters = {
            engine: ProviderLimiter(r.per_minute, r.burst, r.concurrency, now)
            for engine, r in engine_rates(config, replicas).items()
        }
        r = config.resilience
        # Every configured engine's, as engine_status lists them (reset at every start).
        self.circuits = {
            e.id: Circuit(
                r.failures_to_open,
                r.first_cooldown_s,
                r.max_cooldown_s,
                now,
                on_transition=transition_logger(e.id),
            )
            for e in sorted(config.engines, key=lambda e: e.id)
        }
        # Off by default (LIM-K1): without it no entry, no key and no sweeper exist.
        self.cache = (
            ResultCache.from_settings(config.cache, now, sweep=clock is None)
            if config.cache.enabled
            else None
        )
        self.returned = ReturnedUrls(config.limits.strict_mode_urls)
        self.robots = RobotsCache(config.limits.robots_cache_entries, now)

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
        return self.limiters[engine].reserve(self._now() + max_wait_s)

    async def hold(self, engine: str, seconds: float) -> None:
        self.limiters[engine].hold(seconds)

    def slot(self, engine: str) -> Permit:
        return Permit(self.limiters[engine].slots)

    async def circuit_admit(self, engine: str) -> CircuitDecision:
        return self.circuits[engine].admit()

    async def circuit_success(self, engine: str) -> None:
        self.circuits[engine].record_success()

    async def circuit_failure(
        self, engine: str, error_class: str, retry_after_s: float | None = None
    ) -> None:
        self.circuits[engine].record_failure(error_class, retry_after_s)

    async def circuit_abandon(self, engine: str) -> None:
        self.circuits[engine].abandon_probe()

    async def circuit_states(self) -> Mapping[str, CircuitState]:
        return {engine: circuit.state for engine, circuit in self.circuits.items()}

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


__all__ = ["MemoryStore", "Rate", "engine_rates", "share", "tool_limits"]
