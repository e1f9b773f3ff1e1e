"""Wikipedia (MediaWiki Action API): admission properties of the record."""

from __future__ import annotations

from rypsok.core import limits
from rypsok.core.engines.base import Admission

ADMISSION = Admission(
    driver="wikipedia",
    keyed=False,
    scraping=False,
    cacheable=True,
    attribution_required=False,
    rate_per_minute=100,
    burst=10,
    concurrency=1,
    max_query_chars=250,
    max_query_words=None,
    time_ranges=False,
    accepts_base_url=True,
    response_bytes=limits.default("LIM-E1"),
)
