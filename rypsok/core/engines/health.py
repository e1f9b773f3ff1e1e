"""Per-engine health in memory: the recent latencies, and each engine's line in
engine_status with its circuit's state as the store holds it (store/local/circuit.py in
this process, or the deployment's in Redis).

Reset at every start (REQ-RES-009); nothing is persisted.
"""

from __future__ import annotations

import statistics
import threading
from collections import deque
from collections.abc import Mapping

from rypsok.core import limits
from rypsok.core.config.settings import Config, EngineSettings
from rypsok.core.model import EngineReport
from rypsok.core.store.values import CircuitState


class EngineHealth:
    def __init__(self, engine: EngineSettings) -> None:
        self.engine = engine
        self._latencies: deque[int] = deque(maxlen=limits.default("LIM-S11"))
        self._lock = threading.Lock()

    def record_latency(self, ms: int) -> None:
        with self._lock:
            self._latencies.append(ms)

    def median_latency_ms(self) -> int | None:
        with self._lock:
            if not self._latencies:
                return None
            return int(statistics.median_low(self._latencies))

    def report(self, state: CircuitState) -> EngineReport:
        """The engine's line in engine_status; `state` is its circuit as the store holds
        it (shared by every replica, or this process's own)."""
        reason = self.engine.inactive_reason
        if reason is not None:
            return EngineReport(self.engine.id, "disabled", None, reason)
        return EngineReport(self.engine.id, state, self.median_latency_ms())


class HealthRegistry:
    """Every configured engine's health, in identifier order."""

    def __init__(self, config: Config) -> None:
        self._by_id = {e.id: EngineHealth(e) for e in config.engines}

    def get(self, engine_id: str) -> EngineHealth:
        return self._by_id[engine_id]

    def reports(self, states: Mapping[str, CircuitState]) -> tuple[EngineReport, ...]:
        """Every engine's line; `states` is `Store.circuit_states()`, which names every
        configured engine."""
        return tuple(self._by_id[i].report(states[i]) for i in sorted(self._by_id))
