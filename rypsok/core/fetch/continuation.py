"""What web_fetch keeps of a page between calls, so that the next part costs no request.

Two bounded maps, private to each caller (the facade's caller identifier is part of
every key), held in this process's memory and nowhere else:

* pages: the extracted content of a page, under the URL as the caller gave it
  (normalized) and under the URL it was read at after redirects, for
  `[fetch] continuation_ttl_s` seconds from the moment it was read, however often it
  is used meanwhile (so a part is never older than that). At most
  `continuation_max_entries` pages and `continuation_max_bytes` bytes, counted as 4
  bytes a character (CPython stores no character wider) plus a fixed allowance for
  the entry; past either bound the least recently used page goes, and a page larger
  than the whole byte bound is never kept.
* hashes: the SHA-256 of the content last served to a caller for a URL, kept ten times
  as long as a page (LIM-F20) for at most 1024 caller-URL pairs (LIM-F19), so that a
  continuation that had to read the page again can say the content changed. Its keys
  are digests of the caller and the URL: the URL itself is not kept past its page.

Expired entries are removed when the maps are next used (any web_fetch call), not by a
thread. A TTL of 0 keeps nothing at all, hashes included. The maps are used from the
event loop only; the lock makes them safe anywhere, and is never held across a wait.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

from rypsok.core import limits
from rypsok.core.config.settings import FetchSettings

T = TypeVar("T")

# The widest character CPython stores takes 4 bytes: the text's size is at most this.
BYTES_PER_CHARACTER = 4
# What one kept page holds besides its characters (its objects, keys and the slots of its
# maps): an allowance, above the few hundred bytes they take.
ENTRY_BYTES = 1024


def page_bytes(characters: int) -> int:
    """The bytes a kept page counts for: its characters (content, title and URLs)."""
    return BYTES_PER_CHARACTER * characters + ENTRY_BYTES


@dataclass(slots=True)
class _Entry(Generic[T]):
    value: T
    keys: tuple[tuple[str, str], ...]  # (caller, URL): the URL given and the URL read
    size: int
    expires: float


class PageMemory(Generic[T]):
    def __init__(
        self,
        *,
        ttl_s: int,
        max_entries: int,
        max_bytes: int,
        hashes: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.clock = clock  # public so that a test can move time on
        self._hash_entries = limits.default("LIM-F19") if hashes is None else hashes
        self._hash_life_s = ttl_s * limits.default("LIM-F20")
        self._entries: OrderedDict[int, _Entry[T]] = OrderedDict()  # least recent first
        self._index: dict[tuple[str, str], int] = {}
        self._bytes = 0
        self._serial = 0
        # digest of (caller, URL) -> (content hash, expiry); in expiry order, since every
        # write moves its pair to the end and every pair lives equally long.
        self._hashes: OrderedDict[bytes, tuple[str, float]] = OrderedDict()
        self._lock = threading.Lock()

    @classmethod
    def of(cls, settings: FetchSettings) -> PageMemory[T]:
        return cls(
            ttl_s=settings.continuation_ttl_s,
            max_entries=settings.continuation_max_entries,
            max_bytes=settings.continuation_max_bytes,
        )

    @property
    def enabled(self) -> bool:
        return self.ttl_s > 0

    # -- pages ---------------------------------------------------------------------------

    def get(self, caller: str, url: str) -> T | None:
        """The page kept for this caller under this URL, or None."""
        if not self.enabled:
            return None
        with self._lock:
            self._expire(self.clock())
            serial = self._index.get((caller, url))
            if serial is None:
                return None
            self._entries.move_to_end(serial)
            return self._entries[serial].value

    def put(self, caller: str, urls: Iterable[str], value: T, size: int) -> bool:
        """Keep *value* under each of *urls* for this caller; whether it was kept.

        A page kept before under one of the URLs is replaced (the new one is fresher),
        even when the new one is too large to keep."""
        if not self.enabled:
            return False
        keys = tuple(dict.fromkeys((caller, url) for url in urls))
        with self._lock:
            now = self.clock()
            self._expire(now)
            for key in keys:
                serial = self._index.get(key)
                if serial is not None:
                    self._drop(serial)
            if size > self.max_bytes:
                return False
            self._serial += 1
            self._entries[self._serial] = _Entry(value, keys, size, now + self.ttl_s)
            for key in keys:
                self._index[key] = self._serial
            self._bytes += size
            while len(self._entries) > self.max_entries or self._bytes > self.max_bytes:
                self._drop(next(iter(self._entries)))
            return True

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    @property
    def bytes(self) -> int:
        with self._lock:
            return self._bytes

    def _drop(self, serial: int) -> None:
        entry = self._entries.pop(serial)
        for key in entry.keys:
            if self._index.get(key) == serial:
                del self._index[key]
        self._bytes -= entry.size

    def _expire(self, now: float) -> None:
        # At most max_entries (LIM-F17) entries to look at.
        for serial in [s for s, e in self._entries.items() if e.expires <= now]:
            self._drop(serial)
        while self._hashes and next(iter(self._hashes.values()))[1] <= now:
            self._hashes.popitem(last=False)

    # -- hashes of what was served ---------------------------------------------------------

    def last_served(self, caller: str, url: str) -> str | None:
        """The content hash last served to this caller for this URL, if still known."""
        if not self.enabled:
            return None
        with self._lock:
            self._expire(self.clock())
            found = self._hashes.get(_pair(caller, url))
            return None if found is None else found[0]

    def served(self, caller: str, urls: Iterable[str], sha256: str) -> None:
        """Remember that this caller was given the content with this hash for *urls*."""
        if not self.enabled:
            return
        with self._lock:
            now = self.clock()
            self._expire(now)
            for url in urls:
                pair = _pair(caller, url)
                self._hashes[pair] = (sha256, now + self._hash_life_s)
                self._hashes.move_to_end(pair)
            while len(self._hashes) > self._hash_entries:
                self._hashes.popitem(last=False)


def _pair(caller: str, url: str) -> bytes:
    """A digest of the caller and the URL: the hash map keeps neither as text."""
    who = caller.encode("utf-8", "surrogatepass")
    digest = hashlib.sha256(len(who).to_bytes(8, "big") + who)  # no two pairs run together
    digest.update(url.encode("utf-8", "surrogatepass"))
    return digest.digest()
