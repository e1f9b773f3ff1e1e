"""The worst-case memory estimate of rypsok check (LIM-M rows).

    base + fetches × max_bytes + parses × (k × max_bytes + P)
         + sessions × S (legacy revisions only)
         + cache entries × (entry bytes + E) (cache on)
         + continuation bytes + LIM-F19 × H (continuation on)

base, P, k and S are LIM-M1 to LIM-M4, measured for CPython on Linux with
html5lib by bench/memory.py (docs/memory.md); E and H are CACHE_ENTRY_BYTES and
HASH_BYTES below. A cache entry is kept as the UTF-8 bytes its size is counted in
(store/local/cache.py), so entry bytes + E bounds it. The pages kept for continuation are
counted at their byte bound, which is already an upper bound (fetch/continuation.py).
Each share is rounded up to a whole MiB, so the total is never below the exact figure.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from rypsok.core import limits
from rypsok.core.config.settings import FetchSettings

MIB = 1024 * 1024
KIB = 1024
BUILD = "CPython on Linux"
# One remembered content hash (a 32-byte key, its hex hash, an expiry and the map's slot):
# 342 bytes each for 1024 of them under tracemalloc, rounded up.
HASH_BYTES = 512
# What one cache entry holds beside its text: its key (the caller, the engine and the
# engine request, whose query is at most 600 characters of 4 bytes each), its place in
# the two maps, its bytes object and the framing of 20 results: 3,150 bytes at most
# under tracemalloc (a 600-character query with an emoji, 20 results), rounded up.
CACHE_ENTRY_BYTES = 4 * KIB


@dataclass(frozen=True, slots=True)
class Constants:
    base_mib: int  # LIM-M1: the process at rest
    parse_fixed_mib: int  # LIM-M2: the part of one parse that does not grow
    parse_tenths: int  # LIM-M3: bytes held per byte of page, in tenths
    session_kib: int  # LIM-M4: one live legacy-revision session

    @classmethod
    def measured(cls) -> Constants:
        return cls(
            limits.default("LIM-M1"),
            limits.default("LIM-M2"),
            limits.default("LIM-M3"),
            limits.default("LIM-M4"),
        )


@dataclass(frozen=True, slots=True)
class MemoryEstimate:
    """Shares in MiB, each rounded up; total is their sum."""

    base: int
    bodies: int
    parses: int
    sessions: int
    cache: int
    continuation: int
    total: int
    measured_here: bool  # the constants were measured on this platform (Linux)
    build: str
    over_unit: bool  # total above LIM-M5 where the figure applies


def pdf_parse_bytes(fetch: FetchSettings) -> int:
    """What one PDF read holds at most: the reader's process, which its address-space
    limit bounds, and its answer, read up to its own bound (fetch/pdf/reader.py). Once
    the process has ended, the text it left is smaller than the two together."""
    answer = fetch.pdf_max_chars * limits.PDF_ANSWER_BYTES_PER_CHAR + limits.PDF_ANSWER_EXTRA
    return fetch.pdf_memory_mib * MIB + answer


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def estimate(
    *,
    fetches_in_flight: int,
    max_bytes: int,
    parsing_in_flight: int,
    max_sessions: int,
    legacy_revisions: bool,
    cache_enabled: bool,
    cache_max_entries: int,
    cache_max_entry_bytes: int,
    continuation_max_bytes: int = 0,
    pdf_parse_bytes: int = 0,
    platform: str = sys.platform,
    constants: Constants | None = None,
) -> MemoryEstimate:
    c = constants or Constants.measured()
    bodies = _ceil_div(fetches_in_flight * max_bytes, MIB)
    # Integer arithmetic in tenths of a byte, so the rounding is exact. A parsing permit
    # holds a page's tree or a PDF reader's process, whichever costs more.
    one_parse = max(c.parse_tenths * max_bytes + 10 * c.parse_fixed_mib * MIB, 10 * pdf_parse_bytes)
    parses = _ceil_div(parsing_in_flight * one_parse, 10 * MIB)
    sessions = _ceil_div(max_sessions * c.session_kib * KIB, MIB) if legacy_revisions else 0
    cache = (
        _ceil_div(cache_max_entries * (cache_max_entry_bytes + CACHE_ENTRY_BYTES), MIB)
        if cache_enabled
        else 0
    )
    # 0 bytes: nothing is kept for continuation ([fetch] continuation_ttl_s = 0).
    continuation = (
        _ceil_div(continuation_max_bytes + limits.default("LIM-F19") * HASH_BYTES, MIB)
        if continuation_max_bytes
        else 0
    )
    total = c.base_mib + bodies + parses + sessions + cache + continuation
    here = platform.startswith("linux")
    return MemoryEstimate(
        base=c.base_mib,
        bodies=bodies,
        parses=parses,
        sessions=sessions,
        cache=cache,
        continuation=continuation,
        total=total,
        measured_here=here,
        build=BUILD,
        over_unit=here and total > limits.default("LIM-M5"),
    )
