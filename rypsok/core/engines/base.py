"""What every driver declares about its provider, and the contract every driver keeps.

The admission records live in config/admission.py, a query and a result in
store/values.py (both re-exported here); the shared stages (configuration, selection,
limits, cache) read the records and never name a provider themselves.
`Driver` is the contract between the search pipeline and a driver;
the helpers at the end are the parts of parsing that every API driver needs alike.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import quote

# Re-exported: the records are their own module, which the configuration reads alone;
# a query and a result are values the store keeps too, so they live below it.
from rypsok.core.config.admission import CATEGORIES as CATEGORIES
from rypsok.core.config.admission import Admission as Admission
from rypsok.core.model import ENGINE_ERROR_CLASSES, QuerySkipReason
from rypsok.core.net.failure import FailureKind
from rypsok.core.store.values import EngineQuery as EngineQuery
from rypsok.core.store.values import RawResult as RawResult


@dataclass(frozen=True, slots=True)
class PartialAnswer:
    """An answer whose provider said that some of its own upstream sources did not
    answer (a metasearch instance): the results, and how many sources were missing."""

    results: list[RawResult]
    sources_down: int


@dataclass(frozen=True, slots=True)
class OutboundRequest:
    """A GET the pipeline sends through the engine client for a driver."""

    url: str  # absolute; https, or http only on a loopback host the operator configured
    # The driver's own, e.g. a credential header: never shown in a repr or a log.
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    max_bytes: int = 0  # bound after decompression


class EngineFailure(Exception):
    """A failed engine request, classified; carries no provider text."""

    def __init__(
        self,
        error_class: str,
        retry_after_s: float | None = None,
        hint: str | None = None,
        kind: FailureKind | None = None,
    ) -> None:
        super().__init__(error_class)
        self.error_class = error_class
        self.retry_after_s = retry_after_s
        # The driver's own sentence for the operator's log (what to change), never
        # provider text.
        self.hint = hint
        # The operator's failure kind (net.failure): a body we cannot read is `content`,
        # anything else a driver classifies was settled by the status, unless it says.
        self.kind: FailureKind = kind or ("content" if error_class == "parse_failure" else "status")


# -- The driver contract ---------------------------------------------------------------------


# REQ-ENG-006: every failed engine request is exactly one of these.
ERROR_CLASSES: tuple[str, ...] = ENGINE_ERROR_CLASSES

HeaderLookup = Callable[[str], str | None]
"""A response header by name, matched without regard to case (drivers ask in lower case);
None when absent. `net.client.Response.header` is one; `header_lookup` builds one."""


class Driver(Protocol):
    """What the pipeline asks of an engine driver (REQ-ENG-001, REQ-ENG-005).

    A driver is built once per configured engine from its `EngineSettings` and is used
    concurrently (REQ-ENG-002): its methods keep no state between calls. It never does I/O;
    the pipeline sends the request through the engine client and hands the answer back.
    """

    @property
    def admission(self) -> Admission: ...

    def skip_reason(self, query: EngineQuery) -> QuerySkipReason | None:
        """Why this engine cannot honour the query, or None when it can."""
        ...

    def request(self, query: EngineQuery) -> OutboundRequest:
        """The GET to send, with every parameter; only for a query that is not skipped."""
        ...

    def parse(
        self, status: int, header: HeaderLookup, body: bytes
    ) -> list[RawResult] | PartialAnswer:
        """Results of a provider answer; raises `EngineFailure` for every failure.

        An empty list is an empty answer, not a failure. A `PartialAnswer` is an answer
        whose provider reported some of its own sources down. A timeout is the
        pipeline's to classify: the driver only sees answers that arrived.
        """
        ...


def results_of(answer: list[RawResult] | PartialAnswer) -> list[RawResult]:
    """The results of a parse, whether or not the provider reported sources down."""
    return answer.results if isinstance(answer, PartialAnswer) else answer


# What a page driver's parse reads between steps: set once the call no longer waits for it.
CancelFlag = threading.Event | None


class PageDriver(Driver, Protocol):
    """A driver whose admission says `html_answer`: its parse may be abandoned midway.

    The pipeline runs such a parse in a worker thread and passes `cancel`, which is set once
    the call no longer waits for it; the driver hands it to the tree builder, whose
    ParseCancelled then ends the thread early (REQ-AGG-006). The keyword is optional, so a
    page driver is still a `Driver`, and only page drivers need it.
    """

    def parse(
        self, status: int, header: HeaderLookup, body: bytes, *, cancel: CancelFlag = None
    ) -> list[RawResult]: ...


# -- Helpers the drivers share ---------------------------------------------------------------


def header_lookup(fields: Mapping[str, str] | Iterable[tuple[str, str]]) -> HeaderLookup:
    """A `HeaderLookup` over response header fields, matched without regard to case."""
    pairs = fields.items() if isinstance(fields, Mapping) else fields
    joined: dict[str, str] = {}
    for name, value in pairs:
        key = name.lower()
        joined[key] = f"{joined[key]}, {value}" if key in joined else value

    def lookup(name: str) -> str | None:
        return joined.get(name.lower())

    return lookup


def query_text(admission: Admission, query: EngineQuery) -> str:
    """The query as this provider is sent it: its words, then its site: terms in the
    provider's own form where its admission record says it reads them (issue 36)."""
    if admission.site_terms == "none":
        return query.query
    terms: list[str] = []
    if len(query.sites) == 1:
        terms.append(f"site:{query.sites[0]}")
    elif query.sites and admission.site_terms == "any":
        terms.append("(" + " OR ".join(f"site:{host}" for host in query.sites) + ")")
    terms += [f"-site:{host}" for host in query.not_sites]
    return " ".join([query.query, *terms])


def sites_honoured(admission: Admission, query: EngineQuery) -> bool:
    """Whether the provider is sent every site: term of the query (query_text)."""
    if not (query.sites or query.not_sites):
        return True
    if admission.site_terms == "none":
        return False
    return admission.site_terms == "any" or len(query.sites) <= 1


def query_too_long(admission: Admission, query: str) -> bool:
    """The record's query bounds: characters (code points) and, where set, words."""
    if len(query) > admission.max_query_chars:
        return True
    return admission.max_query_words is not None and len(query.split()) > admission.max_query_words


def load_json(body: bytes) -> object:
    """The body as JSON, or `EngineFailure("parse_failure")`.

    The failure is raised outside the `except` block on purpose: a JSONDecodeError holds the
    whole body in `.doc`, and an implicit `__context__` would carry provider text out of the
    driver with the classification (REQ-ENG-006).
    """
    try:
        return json.loads(body)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        pass
    raise EngineFailure("parse_failure")


_SURROGATE = re.compile("[\ud800-\udfff]")


def text(value: object) -> str | None:
    """A JSON string as text safe to encode: lone surrogates (legal in JSON escapes, illegal
    in UTF-8) become U+FFFD so later encoding cannot fail on provider data."""
    if not isinstance(value, str):
        return None
    # json.loads already joined every valid pair: a surrogate left over is a lone one.
    # ASCII text holds none, and isascii() costs nothing (a flag of the string).
    return value if value.isascii() else _SURROGATE.sub("\ufffd", value)


def json_result(item: object, snippet_key: str, date_key: str) -> RawResult | None:
    """A result object of a JSON API as a raw result: its `url` and `title`, the snippet
    and the date under the provider's own keys (raw text, cleaned by the pipeline); None
    when it is no object or lacks a URL or a title."""
    if not isinstance(item, dict):
        return None
    url = text(item.get("url"))
    title = text(item.get("title"))
    if not url or title is None:
        return None
    return RawResult(
        url=url,
        title=title,
        snippet=text(item.get(snippet_key)) or "",
        date=date_part(item.get(date_key)),
        markup=True,
    )


# ASCII digits only: \d also matches other scripts' digits, which a date field must not echo.
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})(?:$|[Tt ])")


# What quote(value, safe="") leaves as it is: letters, digits and "_.-~".
_UNRESERVED = re.compile(r"[A-Za-z0-9_.~-]*")


def query_string(params: Mapping[str, str]) -> str:
    """urlencode(params, quote_via=quote), without a call to quote for a key or value
    it would leave unchanged (most of a request's are)."""
    return "&".join(f"{_escaped(key)}={_escaped(value)}" for key, value in params.items())


def _escaped(part: str) -> str:
    return part if _UNRESERVED.fullmatch(part) else quote(part, safe="")


def date_part(value: object) -> str | None:
    """YYYY-MM-DD from an ISO 8601 date or date-time, its own clock (no time-zone shift);
    None when the value is absent or not a real date."""
    if not isinstance(value, str):
        return None
    match = _DATE.match(value)
    if match is None:
        return None
    try:
        _dt.date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        return None
    return f"{match[1]}-{match[2]}-{match[3]}"
