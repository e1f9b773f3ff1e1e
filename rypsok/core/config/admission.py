"""The engines' admission records in code: what each driver type may do with its provider.

A record is data the configuration checks an `[engines.<id>]` table against and the shared
stages (selection, limits, cache) read; it never names a provider's quirks, which stay in the
drivers. This module imports only `limits`, so reading the configuration does not load the
drivers, their parsers or the HTML tree (tests/test_layering.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from rypsok.core import limits

# The book's categories, in its order (the order engine_status and check list them in).
CATEGORIES: tuple[str, ...] = ("general", "news", "science", "code")
# The values of an engine's `endpoint` key, over every driver type (Brave's web and news).
Endpoint = Literal["web", "news"]


SiteTerms = Literal["none", "one", "any"]


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
    endpoints: tuple[Endpoint, ...] = ()  # values of the `endpoint` key; () when none
    accepts_base_url: bool = False
    # The engine is an instance the operator runs: it has no endpoint without base_url,
    # which may then be plain http on any host (a compose service, a private address),
    # and the operator may set its rate and concurrency in the engine's table.
    operator_instance: bool = False
    # The request names how many results to return; without it the pipeline keeps the
    # first results_per_engine of the answer.
    takes_count: bool = True
    response_bytes: int = 0  # bound after decompression
    # The answer is a page made for people: the driver's parse runs in a worker thread
    # under the parsing permits shared with web_fetch (LIM-C5), never on the event loop.
    html_answer: bool = False
    # What the provider understands of site: terms in its query (issue 36): "any" (one
    # or several hosts, joined with OR, and -site:), "one" (a single site: host, and
    # -site:) or "none". Results are filtered by host whatever it says.
    site_terms: SiteTerms = "none"


WIKIPEDIA: Final = Admission(
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

BRAVE: Final = Admission(
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
    site_terms="any",  # its search operators: site:, -site:, OR
)

DUCKDUCKGO: Final = Admission(
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
    takes_count=False,  # the endpoint has no count: a page holds what it holds
    response_bytes=limits.default("LIM-E2"),
    html_answer=True,
    site_terms="one",  # its syntax help names site: and -site:, one host at a time
)

SEARXNG: Final = Admission(
    driver="searxng",
    keyed=False,
    scraping=False,
    cacheable=True,  # the operator's own instance: its answers are the operator's
    attribution_required=False,
    # Defaults for an instance that serves other users too; rate_per_minute and
    # concurrency in the engine's table set others (OPERATOR_RATES).
    rate_per_minute=60,
    burst=5,
    concurrency=2,
    max_query_chars=600,
    max_query_words=None,
    time_ranges=True,
    accepts_base_url=True,
    operator_instance=True,
    takes_count=False,
    response_bytes=limits.default("LIM-E1"),
    # Passed on as words to the instance's upstream engines, which read one site: host
    # (Google, Bing, DuckDuckGo); rypsok filters what comes back.
    site_terms="one",
)

# What an operator may set for an engine of an operator_instance record: (least, most).
OPERATOR_RATES: Final = {"rate_per_minute": (1, 600), "concurrency": (1, 8)}

# The driver types this build admits, by the name a configuration uses; each has its driver
# in engines/registry.py.
ADMISSIONS: Final[dict[str, Admission]] = {
    a.driver: a for a in (WIKIPEDIA, BRAVE, DUCKDUCKGO, SEARXNG)
}


def admission(driver: str) -> Admission | None:
    return ADMISSIONS.get(driver)
