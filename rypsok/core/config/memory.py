"""The worst-case memory estimate of rypsok check (LIM-M rows)."""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

from rypsok.core import limits

MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class MemoryEstimate:
    base: int
    bodies: int
    parses: int
    sessions: int
    cache: int
    total: int
    measured_here: bool
    build: str
    over_unit: bool


def estimate(*, fetches_in_flight: int, max_bytes: int, parsing_in_flight: int,
             max_sessions: int, legacy_revisions: bool, cache_enabled: bool,
             cache_max_entries: int, cache_max_entry_bytes: int,
             platform: str = sys.platform) -> MemoryEstimate:
    base = limits.default("LIM-M1")
    bodies = math.ceil(fetches_in_flight * max_bytes / MIB)
    per_parse = limits.default("LIM-M3") * max_bytes / 10 / MIB + limits.default("LIM-M2")
    parses = math.ceil(parsing_in_flight * per_parse)
    sessions = math.ceil(max_sessions * limits.default("LIM-M4") / 1024) if legacy_revisions else 0
    cache = math.ceil(cache_max_entries * cache_max_entry_bytes / MIB) if cache_enabled else 0
    total = base + bodies + parses + sessions + cache
    here = platform.startswith("linux")
    return MemoryEstimate(base, bodies, parses, sessions, cache, total, here,
                          "CPython on Linux", here and total > limits.default("LIM-M5"))
