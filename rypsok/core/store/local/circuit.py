"""The circuit breaker of one engine (LIM-B1 to LIM-B5), as a small state machine.

closed --(failures_to_open counted failures in a row)--> open
open   --(cooldown over; the next call takes the probe)--> half_open
half_open --(probe succeeds)--> closed;  --(probe fails)--> open, cooldown doubled

Only the classes that say the provider is unwell count: a refused key
(auth_failure) or a malformed request (request_failure) opens nothing, so a
corrected key is used at once after a restart. No synthetic probe is ever
sent: the probe is the next real request. The redis backend's twins are the
`CIRCUIT_*` scripts in store/scripts.py.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

from rypsok.core.store.values import COUNTED, CircuitDecision, CircuitState
from rypsok.core.telemetry import log

# Told of every change: ("opened", cooldown in seconds) or ("closed", None).
TransitionHook = Callable[[str, float | None], None]


class Circuit:
    def __init__(
        self,
        failures_to_open: int,
        first_cooldown_s: int,
        max_cooldown_s: int,
        clock: Callable[[], float] = time.monotonic,
        on_transition: TransitionHook | None = None,
    ) -> None:
        self._threshold = failures_to_open
        self._first = float(first_cooldown_s)
        self._max = float(max_cooldown_s)
        self._clock = clock
        self._lock = threading.Lock()
        self._failures = 0
        self._open_until: float | None = None
        self._cooldown = self._first
        self._probing = False
        self._hook = on_transition
        # The latest changes, for engine_status tests; bounded like every other record.
        self.transitions: deque[str] = deque(maxlen=32)

    @property
    def state(self) -> CircuitState:
        with self._lock:
            if self._probing:
                return "half_open"
            return "open" if self._open_until is not None else "closed"

    def admit(self) -> CircuitDecision:
        """Whether a request may go now; "probe" makes this request the one probe."""
        with self._lock:
            if self._probing:
                return "skip"
            if self._open_until is None:
                return "go"
            if self._clock() < self._open_until:
                return "skip"
            self._probing = True
            return "probe"

    def retry_in_s(self) -> float | None:
        with self._lock:
            if self._open_until is None:
                return None
            return max(0.0, self._open_until - self._clock())

    def record_success(self) -> None:
        with self._lock:
            reopened = self._open_until is not None
            self._failures = 0
            self._open_until = None
            self._probing = False
            self._cooldown = self._first
            if reopened:
                self.transitions.append("closed")
        if reopened:
            self._tell("closed", None)

    def record_failure(self, error_class: str, retry_after_s: float | None = None) -> None:
        opened: float | None = None
        with self._lock:
            if error_class not in COUNTED:
                # Not the provider's health; a probe that ends so is still over.
                if self._probing:
                    self._probing = False
                    opened = self._open(retry_after_s)
            elif self._probing:
                self._probing = False
                self._cooldown = min(self._cooldown * 2, self._max)
                opened = self._open(retry_after_s)
            else:
                self._failures += 1
                if self._failures >= self._threshold and self._open_until is None:
                    opened = self._open(retry_after_s)
        if opened is not None:
            self._tell("opened", opened)

    def _tell(self, change: str, cooldown_s: float | None) -> None:
        # Outside the lock: the hook writes a log line.
        if self._hook is not None:
            self._hook(change, cooldown_s)

    def abandon_probe(self) -> None:
        """The probe was cancelled before an answer: let the next call probe."""
        with self._lock:
            self._probing = False

    def _open(self, retry_after_s: float | None) -> float:
        cooldown = self._cooldown
        if retry_after_s is not None:
            # A provider's Retry-After is honoured, up to the longest cooldown (LIM-B4).
            cooldown = max(cooldown, min(float(retry_after_s), self._max))
        self._open_until = self._clock() + cooldown
        self.transitions.append("opened")
        return cooldown


def transition_logger(engine_id: str) -> TransitionHook:
    """The circuit's changes as the log events operators look for (Troubleshooting):
    the same lines whichever backend holds the circuit."""

    def tell(change: str, cooldown_s: float | None) -> None:
        if change == "opened":
            log.warn("circuit_opened", engine=engine_id, cooldown_ms=int((cooldown_s or 0) * 1000))
        else:
            log.info("circuit_closed", engine=engine_id)

    return tell
