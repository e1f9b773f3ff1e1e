"""A web_search request and its validation, before any work (REQ-SEARCH-006).

Transport-independent: the stdio and HTTP adapters both hand the caller's
arguments here. Every refusal is invalid_request naming the parameter and
its range or allowed values; nothing an argument says can change a limit,
an engine or a destination.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from rypsok.core.arguments import integer_in_range, only_known, required_text
from rypsok.core.config.settings import Config
from rypsok.core.model import invalid_choice, invalid_range
from rypsok.core.search.sites import SiteFilter, read_sites

TIME_RANGES: Final = ("day", "week", "month", "year")


@dataclass(frozen=True, slots=True)
class SearchRequest:
    query: str  # trimmed
    category: str
    max_results: int
    language: str
    time_range: str | None
    # Its site: and -site: terms, read (search/sites.py); none by default.
    sites: SiteFilter | None = None

    def __repr__(self) -> str:  # the query is the caller's, possibly confidential
        return (
            f"SearchRequest(category={self.category!r}, max_results={self.max_results}, "
            f"language={self.language!r}, time_range={self.time_range!r})"
        )


def parameters(config: Config) -> tuple[str, ...]:
    names = ["query", "category", "max_results"]
    if len(config.search.languages) >= 2:
        names.append("language")
    if config.time_ranges_served():
        names.append("time_range")
    return tuple(names)


def search_request(config: Config, arguments: Mapping[str, Any]) -> SearchRequest:
    s = config.search
    only_known(arguments, parameters(config))
    query = required_text(arguments, "query")
    if not 1 <= len(query) <= s.query_max_chars:
        raise invalid_range("query", 1, s.query_max_chars)
    served = config.categories_served()
    category = arguments.get("category", "general")
    if not isinstance(category, str) or category not in served:
        raise invalid_choice("category", served)
    max_results = integer_in_range(
        arguments, "max_results", s.max_results, 1, s.max_results_ceiling
    )
    language = arguments.get("language", s.languages[0])
    if not isinstance(language, str) or language not in s.languages:
        raise invalid_choice("language", s.languages)
    time_range = arguments.get("time_range")
    if time_range is not None and (
        not isinstance(time_range, str) or time_range not in TIME_RANGES
    ):
        raise invalid_choice("time_range", TIME_RANGES)
    # Its site: terms are read here, before any work: a term that names no host is refused.
    return SearchRequest(query, category, max_results, language, time_range, read_sites(query))
