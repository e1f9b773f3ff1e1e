"""What every driver declares about its provider: the admission properties.

These are the facts of the engine's admission record in code. The shared
stages (configuration, selection, limits, cache) read them and never name a
provider themselves.
"""

from __future__ import annotations

from dataclasses import dataclass

CATEGORIES: tuple[str, ...] = ("general", "news", "science", "code")


@dataclass(frozen=True, slots=True)
class Admission:
    driver: str  # the value of `type` in an [engines.<id>] table
    keyed: bool  # needs api_key_env or api_key_file
    scraping: bool  # reads a human-facing page; runs only with [scraping] enabled
    cacheable: bool  # the provider allows storing its answers
    attribution_required: bool
    rate_per_minute: int  # requests the record admits (LIM-C9)
    burst: int
    concurrency: int  # requests in flight the record admits (caps LIM-C2)
    max_query_chars: int
    max_query_words: int | None
    time_ranges: bool  # honours time_range
    endpoints: tuple[str, ...] = ()  # values of the `endpoint` key; () when none
    accepts_base_url: bool = False
    response_bytes: int = 0  # bound after decompression
