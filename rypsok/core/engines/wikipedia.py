"""Wikipedia (MediaWiki Action API): admission properties of the record, and the driver.

The request is the record's endpoint: `list=search` on the language edition's Action API
(or on a private MediaWiki named by `base_url`), asking for the snippet and the timestamp
of the last revision. The API's default JSON format (formatversion 1) is kept: it is the
shape the record and the fixtures describe, and the fields read here are the same in both
versions.

One parameter is added to the record's endpoint: `requestid`, which the Action API echoes
at the top of its answer. `parse` is not given the query, yet the result URL names the
edition that answered; the edition travels in `requestid` and comes back checked against
the shape of a subdomain, so the result host is always `<edition>.wikipedia.org`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import quote, urlsplit

from rypsok.core.config import admission
from rypsok.core.config.admission import Admission
from rypsok.core.engines import base
from rypsok.core.engines.base import EngineFailure, OutboundRequest
from rypsok.core.model import QuerySkipReason
from rypsok.core.net.egress import EngineEndpoint
from rypsok.core.net.retryafter import delay_seconds
from rypsok.core.store.values import EngineQuery, RawResult

if TYPE_CHECKING:
    from rypsok.core.config.settings import EngineSettings

ADMISSION = admission.WIKIPEDIA

# Language codes whose Wikipedia edition lives under another subdomain. Without these the
# request would meet a redirect (nb.wikipedia.org -> no.wikipedia.org), which the engine
# client does not follow.
_EDITION_OF: dict[str, str] = {
    "nb": "no",
    "yue": "zh-yue",
    "lzh": "zh-classical",
    "nan": "zh-min-nan",
}

# Characters MediaWiki leaves unescaped in its own article URLs (wfUrlencode); everything
# else is percent-encoded as UTF-8 (clarifications.md, "Wikipedia result URL").
_TITLE_SAFE = ";@$!*(),/~:"
# What quote() never escapes: its always-safe characters and _TITLE_SAFE.
_QUOTE_KEEPS = re.compile(r"[A-Za-z0-9_.\-~" + re.escape(_TITLE_SAFE) + r"]*")

_EDITION = re.compile(r"[a-z]{2,12}(?:-[a-z]{2,12}){0,2}")


def edition(language: str) -> str | None:
    """The edition's subdomain from the primary subtag: pt-BR -> pt, zh-Hans -> zh.

    None when the subtag cannot name a subdomain (validated tags always can).
    """
    primary = language.split("-", 1)[0].lower()
    name = _EDITION_OF.get(primary, primary)
    return name if _EDITION.fullmatch(name) else None


def article_path(title: str) -> str:
    """A page title as MediaWiki writes it in an article URL: Rust & Bone -> Rust_%26_Bone."""
    path = title.replace(" ", "_")
    # quote() keeps these characters as they are: a title of them alone is its own path.
    return path if _QUOTE_KEEPS.fullmatch(path) else quote(path, safe=_TITLE_SAFE)


def mirror_urls(base_url: str) -> tuple[str, str]:
    """The Action API and the article root of a private MediaWiki.

    `base_url` is the wiki's root as its users write it (https://wiki.example/w), or the
    api.php itself. The article root assumes the Wikimedia layout: scripts under /w and
    articles under /wiki/<Title>, so a trailing /w is replaced by /wiki. This is a guess for
    a wiki with another $wgArticlePath, whose URLs may then redirect or miss: the API would
    tell the real path (meta=siteinfo) only by widening the record's request.
    """
    root = base_url.rstrip("/")
    if root.endswith("api.php"):
        api = root
        root = root.rsplit("/", 1)[0]
    else:
        api = f"{root}/api.php"
    if root.endswith("/w"):
        root = root[: -len("/w")]
    return api, f"{root}/wiki/"


def endpoint(settings: EngineSettings) -> EngineEndpoint:
    """For the engine profile: the private wiki's host and port, or any language edition of
    wikipedia.org over HTTPS.

    A base_url is the operator's own endpoint (configured: its addresses are trusted, a
    private one included); the editions are the driver's default, judged by the table."""
    if settings.base_url is None:
        return EngineEndpoint("wikipedia.org", 443, editions=True)
    parts = urlsplit(settings.base_url)
    port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    return EngineEndpoint(parts.hostname or "", port, configured=True)


class WikipediaDriver:
    """The wikipedia driver type: one instance per configured engine, stateless per call."""

    admission: Admission

    def __init__(self, settings: EngineSettings) -> None:
        self.admission = ADMISSION
        # With base_url the engine is one private wiki whatever the language; without it,
        # the edition follows the language of each query.
        self._mirror = None if settings.base_url is None else mirror_urls(settings.base_url)

    def skip_reason(self, query: EngineQuery) -> QuerySkipReason | None:
        if self._mirror is None and edition(query.language) is None:
            return "language"
        if query.time_range is not None:
            return "time_range"  # the API has no period filter (time_ranges = None)
        if base.query_too_long(self.admission, base.query_text(self.admission, query)):
            return "query_too_long"
        return None

    def request(self, query: EngineQuery) -> OutboundRequest:
        params = {
            "action": "query",
            "list": "search",
            "srsearch": base.query_text(self.admission, query),
            "srlimit": str(max(1, query.count)),
            "srprop": "snippet|timestamp",
            "format": "json",
        }
        if self._mirror is not None:
            api = self._mirror[0]
        else:
            name = edition(query.language)
            if name is None:
                raise ValueError("no Wikipedia edition for this language: ask skip_reason first")
            api = f"https://{name}.wikipedia.org/w/api.php"
            params["requestid"] = name
        return OutboundRequest(
            url=f"{api}?{base.query_string(params)}",
            headers=(("Accept", "application/json"),),
            max_bytes=self.admission.response_bytes,
        )

    def parse(self, status: int, header: base.HeaderLookup, body: bytes) -> list[RawResult]:
        _check_status(status, header)
        answer = base.load_json(body)
        if not isinstance(answer, dict):
            raise EngineFailure("parse_failure")
        if "error" in answer:
            raise EngineFailure("request_failure")  # the API refused the request
        hits = _search_hits(answer)
        if not hits:
            return []  # the wiki answered: nothing matched
        root = self._article_root(answer)
        results = [r for r in (_result(hit, root) for hit in hits) if r is not None]
        if hits and not results:
            raise EngineFailure("parse_failure")  # hits in a shape we do not know: drift
        return results

    def _article_root(self, answer: dict[str, object]) -> str:
        if self._mirror is not None:
            return self._mirror[1]
        name = answer.get("requestid")
        if not isinstance(name, str) or _EDITION.fullmatch(name) is None:
            raise EngineFailure("parse_failure")
        return f"https://{name}.wikipedia.org/wiki/"


def _check_status(status: int, header: base.HeaderLookup) -> None:
    """The record's classes by status; a 2xx answer goes on to be parsed."""
    if 200 <= status < 300:
        return
    if status == 429:
        raise EngineFailure("rate_limited", delay_seconds(header("retry-after")))
    if status == 403:
        raise EngineFailure("blocked")  # how Wikimedia refuses a non-compliant User-Agent
    raise EngineFailure("request_failure")


def _search_hits(answer: dict[str, object]) -> list[object]:
    """`query.search`, the list of hits; an answer without it is in a shape we do not know."""
    query = answer.get("query")
    hits = query.get("search") if isinstance(query, dict) else None
    if not isinstance(hits, list):
        raise EngineFailure("parse_failure")
    return hits


def _result(hit: object, article_root: str) -> RawResult | None:
    """One hit as a raw result; None when it has no title to link to.

    The snippet keeps its markup: CirrusSearch writes `<span class="searchmatch">`, the
    built-in search of a private wiki `<span class='searchmatch'>` and a leading "...";
    cleaning is the pipeline's (REQ-ENG-012).
    """
    if not isinstance(hit, dict):
        return None
    title = base.text(hit.get("title"))
    if not title:
        return None
    return RawResult(
        url=article_root + article_path(title),
        title=title,
        snippet=base.text(hit.get("snippet")) or "",
        date=base.date_part(hit.get("timestamp")),
        markup=True,
    )
