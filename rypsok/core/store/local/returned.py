"""Strict mode's memory: the URLs web_search returned in this process (LIM-F14).

A bounded LRU of returned URLs; nothing else is kept, and it is empty at start. The
redis backend's twin is `REMEMBER` in store/scripts.py.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable


class ReturnedUrls:
    def __init__(self, entries: int) -> None:
        self._entries = entries
        self._urls: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()

    def remember(self, urls: Iterable[str]) -> None:
        with self._lock:
            for url in urls:
                self._urls[url] = None
                self._urls.move_to_end(url)
            while len(self._urls) > self._entries:
                self._urls.popitem(last=False)

    def __contains__(self, url: object) -> bool:
        with self._lock:
            return url in self._urls

    def __len__(self) -> int:
        with self._lock:
            return len(self._urls)
