"""The result cache of web_search, kept in this process (external design §12; REQ-CACHE-001
to -007, REQ-CMP-007). The redis backend's twin is `BOUNDED_PUT` in store/scripts.py.

Off by default. When the operator turns it on, one entry holds one engine's answer to one
engine request of one caller, in this process's memory and nowhere else: nothing here
opens a file, and an entry leaves memory when it expires, when it is the least recently
used one and room is needed, or when the process ends.

What the cache decides is only *whether an answer can be reused*. Which engines may be
cached (their admission record), which queries (none the privacy check flagged) and when
a lookup is skipped (a circuit probe) are the search pipeline's decisions, made before a
key is built; the pipeline also guards every call into the store's cache, so a failure
here costs speed and nothing else (REQ-CACHE-006).

Retention: a key holds the query text, so enabling the cache retains queries for
`ttl_s` (REQ-CACHE-007). Expired entries are not merely ignored: a sweeper thread removes
them when they expire, even in a process that receives no further call, and stops once
the cache is empty.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rypsok.core.config.settings import CacheSettings
from rypsok.core.store.values import CacheKey, RawResult

# The sweeper wakes this long after the earliest expiry, so that a float rounding of the
# clock never finds the entry a hair short of expired and spins.
_SWEEP_SLACK_S = 0.01


@dataclass(frozen=True, slots=True)
class _Entry:
    packed: bytes  # the answer as `pack` wrote it
    stored_at: float


def entry_bytes(results: Sequence[RawResult]) -> int:
    """The size an answer counts against `max_entry_bytes` (LIM-K4).

    LIM-K4 bounds the raw text an entry holds: for each result, the UTF-8 bytes of its
    URL, title, snippet and date. An entry is kept as those bytes (`pack`, 7 bytes a
    result of framing), so this is also what it weighs; what its key and the maps cost
    beside it is counted by the memory estimate of `check` (config/estimate.py).
    """
    total = 0
    for r in results:
        for text in (r.url, r.title, r.snippet, r.date or ""):
            total += len(_utf8(text))
    return total


# An entry is one bytes object: the text of its results in UTF-8, framed by bytes that
# never occur in UTF-8. As Python objects the same answer took 1.1 to 4 times its UTF-8
# size: a string stores every character as wide as its widest (one emoji makes a
# snippet 4 bytes a character), and each field is an object (docs/memory.md).
_RESULT, _FIELD, _SOURCE = b"\xfd", b"\xff", b"\xfe"
_MARKUP, _DATED = 1, 2  # the flag digit of a packed result


def _utf8(text: str) -> bytes:
    # surrogatepass: a stray surrogate is kept as its bytes instead of failing.
    return text.encode("utf-8", "surrogatepass")


def _text(data: bytes) -> str:
    return data.decode("utf-8", "surrogatepass")


def pack(results: Sequence[RawResult]) -> bytes:
    """The answer as one bytes object; `unpack` gives back equal results."""
    return _RESULT.join(
        _FIELD.join(
            (
                _utf8(r.url),
                _utf8(r.title),
                _utf8(r.snippet),
                _utf8(r.date or ""),
                # RawResult keeps `markup`, so raw versus decoded provenance is restored
                # with a hit; and a date of None stays None.
                b"%d" % ((_MARKUP if r.markup else 0) | (_DATED if r.date is not None else 0)),
                b"".join(_SOURCE + _utf8(name) for name in r.sources),
            )
        )
        for r in results
    )


def unpack(packed: bytes) -> tuple[RawResult, ...]:
    if not packed:
        return ()
    out = []
    for one in packed.split(_RESULT):
        url, title, snippet, date, flags, sources = one.split(_FIELD)
        bits = int(flags)
        out.append(
            RawResult(
                _text(url),
                _text(title),
                _text(snippet),
                _text(date) if bits & _DATED else None,
                bool(bits & _MARKUP),
                tuple(_text(name) for name in sources.split(_SOURCE)[1:]),
            )
        )
    return tuple(out)


class ResultCache:
    """A bounded, expiring map from `CacheKey` to an engine's answer.

    At most `max_entries` entries (the least recently used goes first), each at most
    `max_entry_bytes` (see `entry_bytes`; a larger answer is not stored), each valid for
    `ttl_s` after it was stored on `clock` (monotonic; a hit does not extend it).

    Thread-safe: the event loop and the sweeper thread share it under one lock, and no
    method waits for anything while holding it.
    """

    def __init__(
        self,
        *,
        ttl_s: float,
        max_entries: int,
        max_entry_bytes: int,
        clock: Callable[[], float] = time.monotonic,
        sweep: bool = True,
    ) -> None:
        if ttl_s <= 0 or max_entries < 1 or max_entry_bytes < 0:
            raise ValueError("cache bounds must be positive")
        self.ttl_s = float(ttl_s)
        self.max_entries = max_entries
        self.max_entry_bytes = max_entry_bytes
        self._clock = clock
        # The sweeper waits on real time: only a cache on the real monotonic clock sweeps
        # (tests that move a fake clock pass sweep=False and expire entries by lookups).
        self._sweep = sweep
        self._lock = threading.Lock()
        self._lru: OrderedDict[CacheKey, _Entry] = OrderedDict()  # least recently used first
        # Store order is expiry order (one ttl, a clock that never goes back): the oldest
        # entries are found at the front, without scanning the whole cache.
        self._ages: OrderedDict[CacheKey, float] = OrderedDict()
        self._sweeper: threading.Thread | None = None
        self._wake = threading.Event()

    @classmethod
    def from_settings(
        cls,
        settings: CacheSettings,
        clock: Callable[[], float] = time.monotonic,
        *,
        sweep: bool = True,
    ) -> ResultCache:
        return cls(
            ttl_s=settings.ttl_s,
            max_entries=settings.max_entries,
            max_entry_bytes=settings.max_entry_bytes,
            clock=clock,
            sweep=sweep,
        )

    def __len__(self) -> int:
        with self._lock:
            return len(self._lru)

    def get(self, key: CacheKey) -> tuple[RawResult, ...] | None:
        """The stored answer, or None when there is none or it has expired."""
        with self._lock:
            self._purge(self._clock())
            entry = self._lru.get(key)
            if entry is None:
                return None
            self._lru.move_to_end(key)  # the most recently used now
        return unpack(entry.packed)  # outside the lock: the bytes never change

    def put(self, key: CacheKey, results: Sequence[RawResult]) -> bool:
        """Store an answer; False when it is larger than `max_entry_bytes` (not stored)."""
        if entry_bytes(results) > self.max_entry_bytes:
            return False
        packed = pack(results)
        with self._lock:
            now = self._clock()
            self._purge(now)
            self._lru.pop(key, None)
            self._ages.pop(key, None)
            while len(self._lru) >= self.max_entries:
                oldest, _ = self._lru.popitem(last=False)
                del self._ages[oldest]
            self._lru[key] = _Entry(packed, now)
            self._ages[key] = now
            if self._sweep:
                self._arm()
        return True

    # -- under the lock ---------------------------------------------------------------------

    def _purge(self, now: float) -> int:
        removed = 0
        while self._ages:
            key, stored_at = next(iter(self._ages.items()))
            if now - stored_at < self.ttl_s:
                break
            del self._ages[key]
            del self._lru[key]
            removed += 1
        return removed

    def _arm(self) -> None:
        if self._sweeper is None:
            self._wake.clear()
            self._sweeper = threading.Thread(
                target=self._run_sweeper, name="rypsok-cache-sweeper", daemon=True
            )
            self._sweeper.start()

    # -- the sweeper thread -----------------------------------------------------------------

    def _run_sweeper(self) -> None:
        """Remove entries as they expire; end when the cache is empty (a later store
        starts a new sweeper), so an idle process holds no query past its ttl."""
        while True:
            with self._lock:
                now = self._clock()
                self._purge(now)
                if not self._ages:
                    self._sweeper = None
                    return
                first = next(iter(self._ages.values()))
                wait = max(0.0, first + self.ttl_s - now) + _SWEEP_SLACK_S
            self._wake.wait(wait)
            self._wake.clear()
