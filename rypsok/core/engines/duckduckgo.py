"""DuckDuckGo HTML endpoint (a scraping driver): admission properties."""

from __future__ import annotations

from rypsok.core import limits
from rypsok.core.engines.base import Admission

ADMISSION = Admission(
    driver="duckduckgo",
    keyed=False,
    scraping=True,
    cacheable=False,  # storage terms unknown
    attribution_required=False,
    rate_per_minute=10,
    burst=1,
    concurrency=1,
    max_query_chars=500,
    max_query_words=None,
    time_ranges=True,
    response_bytes=limits.default("LIM-E2"),
)
