"""The values that cross the store's interface, whichever backend holds them.

The pipelines and the drivers build and read these; both backends keep them. They sit
here, below the pipelines and the drivers, so that the store imports nothing of either.
Robots.txt rules, which carry their own matching, are `robots_rules.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Literal

from rypsok.core import limits
from rypsok.core.config.settings import SafeSearch

# -- engine requests and their answers ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EngineQuery:
    """One engine's share of a search, after validation and the secret check."""

    query: str = field(repr=False)  # never in a repr that might reach a log
    category: str
    language: str  # a configured language tag, e.g. "en", "pt-BR"
    region: str  # two uppercase letters, e.g. "US"
    safe_search: SafeSearch
    time_range: str | None  # day, week, month, year
    count: int  # results requested (LIM-S3)
    # What rypsok waits for one engine request (LIM-S5): a metasearch instance is told to
    # give up on its own upstreams before then.
    engine_timeout_ms: int = limits.default("LIM-S5")
    # The query's site: and -site: hosts (search/sites.py); `query` is then its other
    # words, and each driver adds the terms in its provider's form (base.query_text).
    # Words of the query, so never in a repr either.
    sites: tuple[str, ...] = field(default=(), repr=False)
    not_sites: tuple[str, ...] = field(default=(), repr=False)


@dataclass(frozen=True, slots=True)
class RawResult:
    """One result as the provider gave it; the pipeline cleans and bounds it."""

    url: str
    title: str
    snippet: str
    date: str | None = None  # YYYY-MM-DD when the provider supplied one
    markup: bool = True  # title/snippet may carry markup and entities
    # A metasearch provider's own upstream engines that gave the result, as names its
    # driver checked against a strict shape: shown only with attribution.
    sources: tuple[str, ...] = ()


# -- the result cache (REQ-CACHE-003, -004) -------------------------------------------------


@dataclass(frozen=True, slots=True)
class CacheKey:
    """The caller, the engine and the whole engine request (REQ-CACHE-003, -004).

    The request is the `EngineQuery` after the privacy check: query, category, language,
    region, safe search, time range and result count. Every field takes part, so two
    requests that could make a driver send anything different never share an entry.
    The caller and the request are left out of the repr: a key must never reach a log.
    """

    engine: str
    caller: str = field(repr=False)
    request: EngineQuery = field(repr=False)


# What a store did with an answer: stored; too large for max_entry_bytes; or skipped (no
# cache, or its backend is away). The pipeline counts the word as it is.
CacheOutcome = Literal["stored", "too_large", "skipped"]

# -- per-caller tool limits (LIM-C6 to LIM-C8) ----------------------------------------------


@dataclass(frozen=True, slots=True)
class CallAdmission:
    """A per-caller tool limit's answer: admitted (wait_ms None) or how long to wait.

    `ticket` names the admitted call's place in the window, so that a refund removes
    exactly that call and no other replica's."""

    wait_ms: int | None
    ticket: str | None = None


# The window of the per-caller tool limits, in seconds.
CALL_WINDOW_S: Final = 60.0

# -- circuit breakers (LIM-B1 to LIM-B5) ----------------------------------------------------

# The failure classes that say the provider is unwell and so count towards opening: a
# refused key (auth_failure) or a malformed request (request_failure) opens nothing.
COUNTED: Final = frozenset({"timeout", "rate_limited", "blocked", "parse_failure"})
# What the circuit says of a request about to go (not an engine's admission record).
CircuitDecision = Literal["go", "probe", "skip"]
CircuitState = Literal["closed", "open", "half_open"]

__all__ = [
    "CALL_WINDOW_S",
    "COUNTED",
    "CacheKey",
    "CacheOutcome",
    "CallAdmission",
    "CircuitDecision",
    "CircuitState",
    "EngineQuery",
    "RawResult",
]
