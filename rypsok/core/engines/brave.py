"""Brave Search API: admission properties of the record."""

from __future__ import annotations

from rypsok.core import limits
from rypsok.core.engines.base import Admission

ADMISSION = Admission(
    driver="brave",
    keyed=True,
    scraping=False,
    cacheable=False,  # the terms forbid storage beyond the call
    attribution_required=False,
    rate_per_minute=60,
    burst=1,
    concurrency=2,
    max_query_chars=600,
    max_query_words=75,
    time_ranges=True,
    endpoints=("web", "news"),
    response_bytes=limits.default("LIM-E1"),
)
