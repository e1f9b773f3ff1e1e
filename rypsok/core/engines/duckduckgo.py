"""DuckDuckGo HTML endpoint (a scraping driver): admission properties and the driver.

The endpoint is a page made for people, so the driver reads it as one: the body is decoded
and parsed into the bounded tree web_fetch uses (LIM-F10 nodes, LIM-F11 levels), in a worker
thread under the shared parsing permits (the pipeline's part, asked for by `html_answer`).

What the driver does not do is as much part of the record as what it does (REQ-ENG-014): it
adds no header beyond `Accept: text/html` to the engine client's own (the standard
User-Agent), sends no cookie and nothing a browser would; a challenge is reported as
`blocked` and never answered; a redirect is never followed.

The page is told apart in this order: the challenge (whatever the status), then results,
then the no-results marker; a page with none of them has changed shape (`parse_failure`).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

from rypsok.core.config import admission
from rypsok.core.config.admission import Admission
from rypsok.core.engines import base
from rypsok.core.engines.base import (
    CancelFlag,
    EngineFailure,
    HeaderLookup,
    OutboundRequest,
    PageDriver,
    query_text,
    query_too_long,
    text,
)
from rypsok.core.model import QuerySkipReason
from rypsok.core.net import mediatype
from rypsok.core.net.egress import EngineEndpoint
from rypsok.core.net.retryafter import delay_seconds
from rypsok.core.store.values import EngineQuery, RawResult

if TYPE_CHECKING:
    from rypsok.core.config.settings import EngineSettings
    from rypsok.core.html.tree import Element, Text

ADMISSION = admission.DUCKDUCKGO

_ENDPOINT_HOST = "html.duckduckgo.com"
ENDPOINT = f"https://{_ENDPOINT_HOST}/html/"
_SAFE = {"strict": "1", "moderate": "-1", "off": "-2"}
_PERIOD = {"day": "d", "week": "w", "month": "m", "year": "y"}

# The challenge markers of the record. The sentence is compared after folding case and
# collapsing whitespace, since markup may break it over lines.
_CHALLENGE_SENTENCE = "bots use duckduckgo too"
_CHALLENGE_CLASS = "anomaly-modal__title"
_NO_RESULTS_CLASS = "no-results"
_WHITESPACE = re.compile(r"\s+")
_ASCII_WHITESPACE = re.compile(r"[\t\n\f\r ]+")  # what separates classes in HTML


def endpoint(settings: EngineSettings) -> EngineEndpoint:
    """The record's fixed endpoint, for the engine profile: not the operator's (no
    base_url), so its addresses are judged by the built-in table."""
    return EngineEndpoint(_ENDPOINT_HOST, 443)


def kl(language: str, region: str) -> str:
    """The region-language code: <region lower>-<primary language>, us-en for US and en."""
    return f"{region.lower()}-{language.split('-', 1)[0].lower()}"


class DuckDuckGoDriver:
    """The duckduckgo driver type: one instance per configured engine, no state per call.

    `parse` runs in worker threads, possibly several at once for different engines: it
    touches nothing but its arguments and the tree it builds. It is a `PageDriver`: the
    pipeline passes the cancel flag of the parsing permits.
    """

    admission: Admission

    def __init__(self, settings: EngineSettings) -> None:
        # The endpoint is fixed by the record: no base_url, no endpoint key.
        self.admission = ADMISSION

    def skip_reason(self, query: EngineQuery) -> QuerySkipReason | None:
        if query.time_range is not None and query.time_range not in _PERIOD:
            return "time_range"
        if query_too_long(self.admission, query_text(self.admission, query)):
            return "query_too_long"
        return None  # languages = All: every tag gives a kl value

    def request(self, query: EngineQuery) -> OutboundRequest:
        params = {"q": query_text(self.admission, query), "kl": kl(query.language, query.region)}
        safe = _SAFE.get(query.safe_search)
        if safe is not None:
            params["kp"] = safe
        if query.time_range is not None:
            params["df"] = _PERIOD[query.time_range]
        # No count: the endpoint has none; the pipeline keeps the first results_per_engine.
        return OutboundRequest(
            url=f"{ENDPOINT}?{base.query_string(params)}",
            headers=(("Accept", "text/html"),),
            max_bytes=self.admission.response_bytes,
        )

    def parse(
        self, status: int, header: HeaderLookup, body: bytes, *, cancel: CancelFlag = None
    ) -> list[RawResult]:
        """The page's results; `cancel`, when set, stops the parse with ParseCancelled (the
        call has gone: nothing reads what this raises)."""
        _check_status(status, header)
        page = _read(body, mediatype.charset(header("content-type")), cancel)
        if page.challenge:
            raise EngineFailure("blocked", kind="content")  # the provider's decision, as it is
        if status // 100 != 2:  # another status (404, 500, ...) with no challenge in its page
            raise EngineFailure("request_failure")
        if page.partial:
            raise EngineFailure("parse_failure")  # above the node or depth bound
        if page.results or page.ads:
            return page.results
        if page.no_results:
            return []  # the provider answered: nothing matched
        # Neither results nor the marker, or result blocks we cannot read: the page drifted.
        raise EngineFailure("parse_failure")


if TYPE_CHECKING:
    # html_answer promises the pipeline a parse that takes the cancel flag: mypy holds to it.
    _PAGE_DRIVER: type[PageDriver] = DuckDuckGoDriver


def _check_status(status: int, header: HeaderLookup) -> None:
    """The classes a status settles before the body is read; the rest wait for the page."""
    if status // 100 == 3:
        raise EngineFailure("request_failure")  # never followed, on the host or off it
    if status in (429, 503):
        raise EngineFailure("rate_limited", delay_seconds(header("retry-after")))
    if status == 403:
        raise EngineFailure("blocked")


# -- Reading the page ---------------------------------------------------------------------


@dataclass(slots=True)
class _Page:
    """What one page says: the driver decides from these facts, in its own order."""

    results: list[RawResult]
    ads: int = 0
    no_results: bool = False
    challenge: bool = False
    partial: bool = False


def _read(body: bytes, declared: str | None, cancel: threading.Event | None) -> _Page:
    # The HTML parser and charset detection load with the first page, not with the
    # process: a session that never asks DuckDuckGo does not hold them.
    from rypsok.core.html import charset
    from rypsok.core.html.tree import parse_html

    parsed = parse_html(charset.decode(body, declared), cancel=cancel)
    page = _Page(results=[], partial=parsed.partial)
    outside: list[str] = []  # the page's text outside result blocks, in document order
    for element in _walk(parsed.root, page, outside):
        if _is_result_block(element):
            _read_block(element, page)
    # Outside result blocks only: a snippet quoting the sentence is not a challenge.
    if _CHALLENGE_SENTENCE in _folded(" ".join(outside)):
        page.challenge = True
    return page


def _walk(root: Element, page: _Page, outside: list[str]) -> Iterator[Element]:
    """Elements in document order, noting the page-wide markers and collecting text on the
    way. The inside of a result block is not walked: a block nested in a block (or the
    no-results marker, which the provider may put inside one) is its parent's business.
    Nor is <head>: its <title> repeats the query, which may be any sentence at all."""
    from rypsok.core.html.tree import Text

    stack: list[Element | Text] = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, Text):
            outside.append(node.data)
            continue
        if node.name == "head" and node.namespace is None:
            continue
        classes = _classes(node)
        if _NO_RESULTS_CLASS in classes:
            page.no_results = True
        if _CHALLENGE_CLASS in classes or (node.name == "form" and _anomaly_form(node)):
            page.challenge = True
        yield node
        if not _is_result_block(node):
            stack.extend(reversed(node.children))


def _read_block(block: Element, page: _Page) -> None:
    """One div.result: a result, an ad, or nothing readable."""
    link: Element | None = None
    snippet: Element | None = None
    for element in block.iter_elements():
        classes = _classes(element)
        if _NO_RESULTS_CLASS in classes:
            page.no_results = True
        if element.name != "a" or element.namespace is not None:
            continue
        if link is None and "result__a" in classes:
            link = element
        elif snippet is None and "result__snippet" in classes:
            snippet = element
    if link is None:
        return
    href = link.attributes.get("href")
    target = _target(href) if isinstance(href, str) else None
    if target is None:
        return
    if _is_ad(target):
        page.ads += 1
        return
    title = _clean_text(link.text_content())
    if not title:
        return
    page.results.append(
        RawResult(
            url=target,
            title=title,
            snippet="" if snippet is None else _clean_text(snippet.text_content()),
            markup=False,  # text of the tree: entities decoded, tags gone
        )
    )


def _is_result_block(element: Element) -> bool:
    return element.name == "div" and element.namespace is None and "result" in _classes(element)


def _classes(element: Element) -> list[str]:
    value = element.attributes.get("class")
    return _ASCII_WHITESPACE.split(value) if isinstance(value, str) else []


def _anomaly_form(form: Element) -> bool:
    """A form posting to the challenge: /html/anomaly as recorded, /anomaly.js as seen."""
    action = form.attributes.get("action")
    if not isinstance(action, str):
        return False
    parts = _split(action.strip())  # relative or not, the path is what tells
    if parts is None:
        return False
    segments = parts[2].split("/")
    return any(s == "anomaly" or s.startswith("anomaly.") for s in segments)


def _target(href: str) -> str | None:
    """The result's destination: the uddg of the provider's wrapper, or an absolute http(s)
    link as it stands. Anything else (relative, javascript:, data:) is no destination."""
    href = href.strip()
    absolute = f"https:{href}" if href.startswith("//") else href  # scheme-relative
    parts = _split(absolute)
    if parts is None:
        return None
    scheme, host, path, query = parts
    if _provider_host(host) and path in ("/l/", "/l"):
        wrapped = _uddg(query)
        if wrapped is None:
            return None
        absolute = wrapped
        parts = _split(absolute)
        if parts is None:
            return None
        scheme, host = parts[0], parts[1]
    if scheme not in ("http", "https") or not host:
        return None
    return text(absolute)


def _uddg(query: str) -> str | None:
    values = parse_qs(query, keep_blank_values=False).get("uddg")
    return values[0].strip() if values else None


def _is_ad(url: str) -> bool:
    """An ad links to the provider's click counter, duckduckgo.com/y.js (clarifications)."""
    parts = _split(url)
    return parts is not None and _provider_host(parts[1]) and parts[2] == "/y.js"


def _provider_host(host: str) -> bool:
    return host == "duckduckgo.com" or host.endswith(".duckduckgo.com")


def _split(url: str) -> tuple[str, str, str, str] | None:
    """scheme, lower-case host, path, query; None when the URL cannot be split."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:  # e.g. a broken IPv6 literal; the message would quote the URL
        return None
    return parts.scheme.lower(), host, parts.path, parts.query


def _clean_text(value: str) -> str:
    """Text of an element as one line: the page's line breaks and indentation are layout."""
    return text(_WHITESPACE.sub(" ", value).strip()) or ""


def _folded(value: str) -> str:
    return _WHITESPACE.sub(" ", value).casefold()
