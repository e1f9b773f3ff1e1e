"""SearXNG: an operator's own metasearch instance, asked through its JSON search API.

The instance is the operator's (`base_url` is required), so its address may be private, on
loopback or plain http, and its answers may be stored. What its own code does and this
driver relies on (docs/engines.md, "SearXNG"):

- JSON output is off unless the instance's `search.formats` lists `json`; a request for it
  is then refused with 403.
- An unknown category is dropped without a word and the search falls back to general, so
  only categories the instance knows are sent (rypsok's `code` is SearXNG's `it`).
- `timeout_limit` caps how long the instance waits for its own upstream engines; it is
  sent below the time rypsok waits for the instance, so a slow upstream is dropped by the
  instance (and named in `unresponsive_engines`) instead of failing the whole answer.
- `unresponsive_engines` is reported as a count, never by the instance's names.
"""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from rypsok.core.config import admission
from rypsok.core.config.admission import Admission
from rypsok.core.engines import base
from rypsok.core.engines.base import EngineFailure, OutboundRequest, PartialAnswer
from rypsok.core.model import QuerySkipReason
from rypsok.core.net import mediatype
from rypsok.core.net.egress import EngineEndpoint
from rypsok.core.net.retryafter import delay_seconds
from rypsok.core.store.values import EngineQuery, RawResult

if TYPE_CHECKING:
    from rypsok.core.config.settings import EngineSettings

ADMISSION = admission.SEARXNG

# rypsok's categories in SearXNG's words: each is one the instance knows.
CATEGORY = {"general": "general", "news": "news", "science": "science", "code": "it"}
TIME_RANGES = frozenset({"day", "week", "month", "year"})
SAFE_SEARCH = {"off": "0", "moderate": "1", "strict": "2"}
# The instance checks `language` against this shape and answers 400 otherwise: a primary
# subtag with at most a two-letter region (pt-BR); a script subtag (zh-Hant) is dropped.
_LANGUAGE = re.compile(r"[a-z]{2,3}(-[A-Za-z]{2})?")
# What the instance is told to spend on its upstreams, below what rypsok waits for it:
# the instance's own merging and the way back need the rest.
MARGIN_MS = 500
FLOOR_MS = 500
# Upstream engine names the driver reads from a result to count; the instance's own
# identifiers are lowercase words, anything else is not counted as a name.
_UPSTREAM = re.compile(r"[a-z0-9][a-z0-9 ._-]{0,39}")
# For the operator's log when the instance answers 403: the usual cause, and its setting.
JSON_REFUSED = (
    "the instance refused the JSON request: list json in search.formats of its "
    "settings.yml, or let this client past the proxy in front of it"
)


def endpoint(settings: EngineSettings) -> EngineEndpoint:
    """The instance's host and port: configured by the operator, so its addresses are
    the operator's own (a private one included)."""
    parts = urlsplit(settings.base_url or "")
    port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    return EngineEndpoint(parts.hostname or "", port, configured=True)


def language(tag: str) -> str:
    """The language value the instance accepts for a configured tag."""
    primary, *rest = tag.split("-")
    region = next((part for part in rest if len(part) == 2 and part.isalpha()), None)
    value = f"{primary.lower()}-{region.upper()}" if region else primary.lower()
    return value if _LANGUAGE.fullmatch(value) else "all"


def timeout_limit(engine_timeout_ms: int) -> str:
    """Seconds, to one decimal, the instance may spend on its upstream engines."""
    return f"{max(FLOOR_MS, engine_timeout_ms - MARGIN_MS) / 1000:.1f}"


class SearxngDriver:
    """The searxng driver type: one instance per configured engine, stateless per call."""

    admission: Admission

    def __init__(self, settings: EngineSettings) -> None:
        self.admission = ADMISSION
        if settings.base_url is None:
            raise ValueError("the searxng driver needs a base_url")
        root = settings.base_url.rstrip("/")
        # An operator may paste the search page's own address: it is the root's /search.
        self._search_url = root if root.endswith("/search") else root + "/search"

    def skip_reason(self, query: EngineQuery) -> QuerySkipReason | None:
        if query.time_range is not None and query.time_range not in TIME_RANGES:
            return "time_range"
        if base.query_too_long(self.admission, base.query_text(self.admission, query)):
            return "query_too_long"
        return None

    def request(self, query: EngineQuery) -> OutboundRequest:
        params = {
            "q": base.query_text(self.admission, query),
            "format": "json",
            "categories": CATEGORY[query.category],
            "language": language(query.language),
            "safesearch": SAFE_SEARCH[query.safe_search],
            "pageno": "1",  # no pagination (REQ-SEARCH-007): the first page, cut to count
            "timeout_limit": timeout_limit(query.engine_timeout_ms),
        }
        if query.time_range is not None:
            params["time_range"] = query.time_range
        return OutboundRequest(
            url=f"{self._search_url}?{base.query_string(params)}",
            headers=(("Accept", "application/json"),),
            max_bytes=self.admission.response_bytes,
        )

    def parse(
        self, status: int, header: base.HeaderLookup, body: bytes
    ) -> list[RawResult] | PartialAnswer:
        _check_status(status, header)
        if not _is_json(header("content-type")):
            # A proxy's login page or an error page in front of the instance.
            raise EngineFailure("request_failure", kind="content")
        answer = base.load_json(body)
        if not isinstance(answer, dict):
            raise EngineFailure("parse_failure")
        items = answer.get("results")
        if not isinstance(items, list):
            raise EngineFailure("parse_failure")
        results = [r for r in map(_result, items) if r is not None]
        if items and not results:
            raise EngineFailure("parse_failure")  # results in a shape we do not know: drift
        down = _unresponsive(answer.get("unresponsive_engines"))
        if down:
            return PartialAnswer(results, down)
        return results


def _check_status(status: int, header: base.HeaderLookup) -> None:
    """The record's classes by status; a 2xx answer goes on to be parsed."""
    if 200 <= status < 300:
        return
    if status == 429:
        # The instance's limiter sends no Retry-After; one from a proxy in front is honoured.
        raise EngineFailure("rate_limited", delay_seconds(header("retry-after")))
    if status == 403:
        # JSON not enabled in search.formats, or a proxy refusing rypsok: the instance
        # refuses this client, which a retry does not change.
        raise EngineFailure("blocked", hint=JSON_REFUSED)
    if status in (401, 407):
        raise EngineFailure("auth_failure")  # a proxy in front asks for credentials
    raise EngineFailure("request_failure")  # 400 (a parameter), 5xx, a redirect to a login


def _is_json(content_type: str | None) -> bool:
    if content_type is None:
        return True  # some proxies drop it; the body decides
    media = mediatype.essence(content_type) or ""
    return media == "application/json" or media.endswith("+json")


def _unresponsive(value: object) -> int:
    """How many of the instance's upstream engines did not answer: entries are
    [name, reason] pairs; anything else in the list still counts as one."""
    if not isinstance(value, list):
        return 0
    return len(value)


def _result(item: object) -> RawResult | None:
    """One result as a raw result; None without a URL or a title.

    `content` is the upstream's snippet as the instance passed it on: raw text for the
    boundary. `publishedDate` is an ISO date-time in current instances; an older one sent
    localised text, which gives no date rather than a wrong one.
    """
    found = base.json_result(item, "content", "publishedDate")
    if found is None or not isinstance(item, dict):
        return None
    return dataclasses.replace(found, sources=_sources(item.get("engines")))


def _sources(value: object) -> tuple[str, ...]:
    """The instance's upstream engines that gave the result, for attribution: names of
    the instance's own settings, kept only when they look like one, at most four."""
    if not isinstance(value, list):
        return ()
    names = [v for v in value if isinstance(v, str) and _UPSTREAM.fullmatch(v)]
    return tuple(sorted(set(names)))[:4]
