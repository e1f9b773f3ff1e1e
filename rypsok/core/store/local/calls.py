"""Per-tool call limits per minute, per caller (LIM-C6 to LIM-C8, REQ-MCP-010).

A sliding window of the last 60 seconds: a call is admitted while fewer than
`limit` calls of that caller and tool were admitted in the window. Memory
per caller and tool is bounded by the limit itself, and the number of windows by
LIM-A12: callers from OAuth tokens are not known in advance, so when a new window would
pass the bound, the windows with nothing left in them go, then the oldest. The redis
backend's twin is `ADMIT_CALL` in store/scripts.py.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Mapping

from rypsok.core import limits
from rypsok.core.store.values import CALL_WINDOW_S

MAX_WINDOWS = limits.default("LIM-A12")


class ToolRateLimiter:
    def __init__(
        self, per_minute: Mapping[str, int], clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._limits = dict(per_minute)
        self._clock = clock
        self._lock = threading.Lock()
        self._admitted: dict[tuple[str, str], deque[float]] = {}
        self.max_windows = MAX_WINDOWS

    def try_acquire(self, caller: str, tool: str) -> int | None:
        """None when admitted; otherwise the milliseconds until a call may be admitted."""
        limit = self._limits[tool]
        now = self._clock()
        with self._lock:
            window = self._admitted.get((caller, tool))
            if window is None:
                if len(self._admitted) >= self.max_windows:
                    self._make_room(now)
                window = self._admitted[(caller, tool)] = deque(maxlen=limit)
            while window and now - window[0] >= CALL_WINDOW_S:
                window.popleft()
            if len(window) >= limit:
                return max(1, int((window[0] + CALL_WINDOW_S - now) * 1000) + 1)
            window.append(now)
            return None

    def _make_room(self, now: float) -> None:
        """Drop the windows whose calls all left the window, then the oldest ones, until
        a new one fits (insertion order: the first made go first)."""
        for key in [k for k, w in self._admitted.items() if not w or now - w[-1] >= CALL_WINDOW_S]:
            del self._admitted[key]
        while len(self._admitted) >= self.max_windows:
            del self._admitted[next(iter(self._admitted))]

    def __len__(self) -> int:
        return len(self._admitted)

    def refund(self, caller: str, tool: str) -> None:
        """A call refused before any outbound request does not use the budget."""
        with self._lock:
            window = self._admitted.get((caller, tool))
            if window:
                window.pop()
