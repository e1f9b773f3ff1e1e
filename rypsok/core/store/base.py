"""What a store keeps for the pipelines, whichever backend holds it.

The state that replicas must agree on sits behind this one interface: per-caller tool
limits, provider rates and concurrency, circuit breakers, the result cache, strict-mode
URL memory and robots.txt rules. `memory` keeps it in this process (the default, exactly
the single-process behaviour); `redis` keeps it in a Redis that every replica reaches,
and falls back to this process's memory while that Redis cannot answer.

Every method is async so the pipelines read one way for both backends; the memory
backend never awaits anything, so a call costs it no scheduling round. What crosses this
interface is in `values.py` and `robots_rules.py`; the pipelines import those and this
module, never a backend. tests/core/store/test_contract.py runs every operation on both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Literal, Protocol

from rypsok.core.store.robots_rules import RobotsRules
from rypsok.core.store.values import (
    CacheKey,
    CacheOutcome,
    CallAdmission,
    CircuitDecision,
    CircuitState,
    RawResult,
)

Backend = Literal["memory", "redis"]


class Store(Protocol):
    backend: Backend

    @property
    def cache_enabled(self) -> bool:
        """Whether the result cache is on: off, the pipeline builds no key at all."""

    async def open(self) -> None:
        """Reach the backend once at start; a backend that cannot be reached is logged
        and served around, never a reason not to start."""

    async def close(self) -> None: ...

    # -- per-caller tool limits (LIM-C6 to LIM-C8) ---------------------------------------

    async def admit_call(self, caller: str, tool: str) -> CallAdmission: ...

    async def refund_call(self, caller: str, tool: str, admission: CallAdmission) -> None: ...

    # -- provider limits of one engine ---------------------------------------------------

    async def reserve(self, engine: str, max_wait_s: float) -> float | None:
        """Seconds until this request's rate turn, taken now; None when the turn comes
        later than `max_wait_s` (the engine is then skipped, nothing was taken)."""

    async def hold(self, engine: str, seconds: float) -> None:
        """The provider asked for a pause (Retry-After): no request before it ends."""

    def slot(self, engine: str) -> AbstractAsyncContextManager[None]:
        """One of the engine's concurrent-request slots, waited for and held while the
        request is in flight."""

    # -- circuit breakers (LIM-B1 to LIM-B5) ---------------------------------------------

    async def circuit_admit(self, engine: str) -> CircuitDecision: ...

    async def circuit_success(self, engine: str) -> None: ...

    async def circuit_failure(
        self, engine: str, error_class: str, retry_after_s: float | None = None
    ) -> None: ...

    async def circuit_abandon(self, engine: str) -> None:
        """The probe ended without an answer (cancelled, or skipped by the rate)."""

    async def circuit_states(self) -> Mapping[str, CircuitState]:
        """Every engine's circuit state, for engine_status."""

    # -- the result cache (REQ-CACHE-001 to -007) ----------------------------------------

    async def cache_get(self, key: CacheKey) -> tuple[RawResult, ...] | None: ...

    async def cache_put(self, key: CacheKey, results: Sequence[RawResult]) -> CacheOutcome:
        """Stored; too large for max_entry_bytes; or skipped (no cache, or its backend is
        away): the word is counted as it is."""

    # -- strict mode's memory of returned URLs (LIM-F14) --------------------------------

    async def remember_returned(self, urls: Sequence[str]) -> None: ...

    async def was_returned(self, urls: Sequence[str]) -> bool:
        """Whether any of `urls` (the same address as written and as normalised) was
        returned by a web_search."""

    # -- robots.txt rules per origin (LIM-F12, LIM-F15) ---------------------------------

    async def robots_get(self, origin: str) -> RobotsRules | None: ...

    async def robots_put(self, origin: str, rules: RobotsRules) -> None: ...


__all__ = ["Backend", "CacheOutcome", "CallAdmission", "Store"]
