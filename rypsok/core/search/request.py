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

from rypsok.core.config.settings import Config
from rypsok.core.model import (
    invalid_choice,
    invalid_kind,
    invalid_range,
    missing_parameter,
    unknown_parameter,
)

TIME_RANGES: Final = ("day", "week", "month", "year")


@dataclass(frozen=True, slots=True)
class SearchRequest:
    query: str  # trimmed
    category: str
    max_results: int
    language: str
    time_range: str | None

    def __repr__(self) -> str:  # the query is the caller's, possibly confidential
        return (f"SearchRequest(category={self.category!r}, max_results={self.max_results}, "
                f"language={self.language!r}, time_range={self.time_range!r})")


def parameters(config: Config) -> tuple[str, ...]:
    names = ["query", "category", "max_results"]
    if len(config.search.languages) >= 2:
        names.append("language")
    names.append("time_range")
    return tuple(names)


def _integer(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def search_request(config: Config, arguments: Mapping[str, Any]) -> SearchRequest:
    s = config.search
    allowed = parameters(config)
    for name in arguments:
        if name not in allowed:
            raise unknown_parameter(name, allowed)
    if "query" not in arguments:
        raise missing_parameter("query")
    query = arguments["query"]
    if not isinstance(query, str):
        raise invalid_kind("query", "text")
    query = query.strip()
    if not 1 <= len(query) <= s.query_max_chars:
        raise invalid_range("query", 1, s.query_max_chars)
    served = config.categories_served()
    category = arguments.get("category", "general")
    if not isinstance(category, str) or category not in served:
        raise invalid_choice("category", served)
    max_results = arguments.get("max_results", s.max_results)
    if not _integer(max_results) or not 1 <= max_results <= s.max_results_ceiling:
        raise invalid_range("max_results", 1, s.max_results_ceiling)
    language = arguments.get("language", s.languages[0])
    if not isinstance(language, str) or language not in s.languages:
        raise invalid_choice("language", s.languages)
    time_range = arguments.get("time_range")
    if time_range is not None and (not isinstance(time_range, str)
                                   or time_range not in TIME_RANGES):
        raise invalid_choice("time_range", TIME_RANGES)
    return SearchRequest(query, category, int(max_results), language, time_range)
