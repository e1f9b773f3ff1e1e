"""The worst-case memory estimate of rypsok check (LIM-M rows).

    base + fetches × max_bytes + parses × (k × max_bytes + P)
         + sessions × S (legacy revisions only) + cache entries × entry bytes (cache on)

base, P, k and S are LIM-M1 to LIM-M4, measured for CPython on Linux with
html5lib by tools/measure-memory (docs/memory.md). Each share is rounded up to
a whole MiB, so the total is never below the exact figure.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from rypsok.core import limits

MIB = 1024 * 1024
KIB = 1024
BUILD = "CPython on Linux"


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
    total: int
    measured_here: bool  # the constants were measured on this platform (Linux)
    build: str
    over_unit: bool  # total above LIM-M5 where the figure applies


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
    platform: str = sys.platform,
    constants: Constants | None = None,
) -> MemoryEstimate:
    c = constants or Constants.measured()
    bodies = _ceil_div(fetches_in_flight * max_bytes, MIB)
    # Integer arithmetic in tenths of a byte, so the rounding is exact.
    parses = _ceil_div(
        parsing_in_flight * (c.parse_tenths * max_bytes + 10 * c.parse_fixed_mib * MIB), 10 * MIB
    )
    sessions = _ceil_div(max_sessions * c.session_kib * KIB, MIB) if legacy_revisions else 0
    cache = _ceil_div(cache_max_entries * cache_max_entry_bytes, MIB) if cache_enabled else 0
    total = c.base_mib + bodies + parses + sessions + cache
    here = platform.startswith("linux")
    return MemoryEstimate(
        base=c.base_mib,
        bodies=bodies,
        parses=parses,
        sessions=sessions,
        cache=cache,
        total=total,
        measured_here=here,
        build=BUILD,
        over_unit=here and total > limits.default("LIM-M5"),
    )
