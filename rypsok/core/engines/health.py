"""Per-engine health in memory: the circuit and the recent latencies.

Reset at every start (REQ-RES-009); nothing is persisted.
"""

from __future__ import annotations

import statistics
import threading
from collections import deque
from collections.abc import Callable, Mapping

from rypsok.core import limits
from rypsok.core.config.settings import Config, EngineSettings
from rypsok.core.engines.circuit import Circuit, CircuitState
from rypsok.core.model import EngineReport, EngineState
from rypsok.core.telemetry import log


class EngineHealth:
    def __init__(self, engine: EngineSettings, circuit: Circuit) -> None:
        self.engine = engine
        self.circuit = circuit
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

    def report(self, state: CircuitState | None = None) -> EngineReport:
        """The engine's line in engine_status; `state` is the circuit as the store holds
        it (shared by every replica), else this process's own circuit."""
        reason = self.engine.inactive_reason
        if reason is not None:
            return EngineReport(self.engine.id, "disabled", None, reason)
        shown: EngineState = state or self.circuit.state
        return EngineReport(self.engine.id, shown, self.median_latency_ms())


class HealthRegistry:
    """Every configured engine's health, in identifier order."""

    def __init__(self, config: Config) -> None:
        r = config.resilience
        self._by_id = {
            e.id: EngineHealth(
                e,
                Circuit(
                    r.failures_to_open,
                    r.first_cooldown_s,
                    r.max_cooldown_s,
                    on_transition=transition_logger(e.id),
                ),
            )
            for e in config.engines
        }

    def get(self, engine_id: str) -> EngineHealth:
        return self._by_id[engine_id]

    def ids(self) -> tuple[str, ...]:
        return tuple(sorted(self._by_id))

    def circuit_states(self) -> dict[str, CircuitState]:
        """This process's own circuits."""
        return {i: self._by_id[i].circuit.state for i in sorted(self._by_id)}

    def reports(self, states: Mapping[str, CircuitState] | None = None) -> tuple[EngineReport, ...]:
        states = states or {}
        return tuple(self._by_id[i].report(states.get(i)) for i in sorted(self._by_id))


def transition_logger(engine_id: str) -> Callable[[str, float | None], None]:
    """The circuit's changes as the log events operators look for (Troubleshooting)."""

    def tell(change: str, cooldown_s: float | None) -> None:
        if change == "opened":
            log.warn("circuit_opened", engine=engine_id, cooldown_ms=int((cooldown_s or 0) * 1000))
        else:
            log.info("circuit_closed", engine=engine_id)

    return tell
