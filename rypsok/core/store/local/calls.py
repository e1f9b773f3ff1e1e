"""Per-tool call limits per minute, per caller (LIM-C6 to LIM-C8, REQ-MCP-010).

A sliding window of the last 60 seconds: a call is admitted while fewer than
`limit` calls of that caller and tool were admitted in the window. Memory
per caller and tool is bounded by the limit itself. The redis backend's twin is
`ADMIT_CALL` in store/scripts.py.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Mapping

from rypsok.core.store.values import CALL_WINDOW_S


class ToolRateLimiter:
    def __init__(
        self, per_minute: Mapping[str, int], clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._limits = dict(per_minute)
        self._clock = clock
        self._lock = threading.Lock()
        self._admitted: dict[tuple[str, str], deque[float]] = {}

    def try_acquire(self, caller: str, tool: str) -> int | None:
        """None when admitted; otherwise the milliseconds until a call may be admitted."""
        limit = self._limits[tool]
        now = self._clock()
        with self._lock:
            window = self._admitted.setdefault((caller, tool), deque(maxlen=limit))
            while window and now - window[0] >= CALL_WINDOW_S:
                window.popleft()
            if len(window) >= limit:
                return max(1, int((window[0] + CALL_WINDOW_S - now) * 1000) + 1)
            window.append(now)
            return None

    def refund(self, caller: str, tool: str) -> None:
        """A call refused before any outbound request does not use the budget."""
        with self._lock:
            window = self._admitted.get((caller, tool))
            if window:
                window.pop()
