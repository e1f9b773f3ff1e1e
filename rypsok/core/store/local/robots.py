"""robots.txt rules per origin, kept in this process (LIM-F12, LIM-F15)."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from rypsok.core import limits
from rypsok.core.store.robots_rules import RobotsRules


class RobotsCache:
    """Rules per origin (``https://host:port``), for LIM-F12, at most ``entries``.

    The least recently used origin goes first when the cache is full; an entry
    older than LIM-F12 is never returned. Thread-safe; ``clock`` is seconds.
    """

    def __init__(self, entries: int, clock: Callable[[], float] = time.monotonic) -> None:
        if entries < 1:
            raise ValueError("entries must be at least 1")
        self._entries = entries
        self._clock = clock
        self._ttl = float(limits.default("LIM-F12"))
        self._lock = threading.Lock()
        self._data: OrderedDict[str, tuple[float, RobotsRules]] = OrderedDict()

    def get(self, origin: str) -> RobotsRules | None:
        key = origin.lower()  # scheme and host are case-insensitive
        with self._lock:
            item = self._data.get(key)
            if item is None:
                return None
            expires, rules = item
            if self._clock() >= expires:
                del self._data[key]
                return None
            self._data.move_to_end(key)
            return rules

    def put(self, origin: str, rules: RobotsRules) -> None:
        key = origin.lower()
        with self._lock:
            self._data[key] = (self._clock() + self._ttl, rules)
            self._data.move_to_end(key)
            while len(self._data) > self._entries:
                self._data.popitem(last=False)

    def __len__(self) -> int:
        with self._lock:
            return len(self._data)
