"""Brave Search API: admission properties of the record, and the driver.

Two endpoints share one driver: `web` reads `web.results` (the `news` cluster a web answer
may carry is not web results and is ignored) and `news` reads the top-level `results`
(clarifications.md, "Brave, news endpoint shape").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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

ADMISSION = admission.BRAVE

HOST = "api.search.brave.com"
_PATHS = {"web": "/res/v1/web/search", "news": "/res/v1/news/search"}
MAX_COUNT = 20  # the record: count is at most 20
_FRESHNESS = {"day": "pd", "week": "pw", "month": "pm", "year": "py"}

# search_lang values the provider lists. Most are the primary subtag; the exceptions are
# handled in `search_lang` (clarifications.md, "Brave, search_lang").
_SEARCH_LANGS = frozenset(
    {
        "ar",
        "bg",
        "bn",
        "ca",
        "cs",
        "da",
        "de",
        "el",
        "en",
        "en-gb",
        "es",
        "et",
        "eu",
        "fi",
        "fr",
        "gl",
        "gu",
        "he",
        "hi",
        "hr",
        "hu",
        "is",
        "it",
        "jp",
        "kn",
        "ko",
        "lt",
        "lv",
        "ml",
        "mr",
        "ms",
        "nb",
        "nl",
        "pa",
        "pl",
        "pt-br",
        "pt-pt",
        "ro",
        "ru",
        "sk",
        "sl",
        "sr",
        "sv",
        "ta",
        "te",
        "th",
        "tr",
        "uk",
        "vi",
        "zh-hans",
        "zh-hant",
    }
)

# Languages Brave lists only as regional or script variants: a region or script subtag of
# the tag picks one; a bare tag goes by the configured region; otherwise the default.
_VARIANTS: dict[str, tuple[dict[str, str], str]] = {
    "zh": (
        {
            "hans": "zh-hans",
            "cn": "zh-hans",
            "sg": "zh-hans",
            "hant": "zh-hant",
            "tw": "zh-hant",
            "hk": "zh-hant",
            "mo": "zh-hant",
        },
        "zh-hans",
    ),
    "pt": ({"br": "pt-br", "pt": "pt-pt"}, "pt-pt"),
    "en": ({"gb": "en-gb"}, "en"),
}
_ALIASES = {"ja": "jp", "no": "nb"}  # the provider's code differs from the ISO 639-1 one

# country values the provider lists; another region is searched as ALL rather than sent
# as a value the API refuses with 422 VALIDATION.
_COUNTRIES = frozenset(
    {
        "AR",
        "AT",
        "AU",
        "BE",
        "BR",
        "CA",
        "CH",
        "CL",
        "CN",
        "DE",
        "DK",
        "ES",
        "FI",
        "FR",
        "GB",
        "GR",
        "HK",
        "ID",
        "IN",
        "IT",
        "JP",
        "KR",
        "MX",
        "MY",
        "NL",
        "NO",
        "NZ",
        "PH",
        "PL",
        "PT",
        "RU",
        "SA",
        "SE",
        "TR",
        "TW",
        "US",
        "ZA",
    }
)

# 422 answers that mean the token, not the request (clarifications.md, "Brave, a wrong or
# expired key"): SUBSCRIPTION_TOKEN_INVALID (a wrong or expired token) always; VALIDATION
# only when one of its errors is located at the token header (a missing token). Another
# VALIDATION is about a parameter of the request (loc ["query", "q"]) and is a
# request_failure: auth_failure would send the operator to a key that is fine.
_CODE_KEY_INVALID = "SUBSCRIPTION_TOKEN_INVALID"
_CODE_VALIDATION = "VALIDATION"
_KEY_HEADER = "x-subscription-token"  # a header name, not a secret


def endpoint(settings: EngineSettings) -> EngineEndpoint:
    """The fixed origin of the API, for the engine profile: the token goes nowhere else.
    Not the operator's (no base_url), so its addresses are judged by the built-in table."""
    return EngineEndpoint(HOST, 443)


def search_lang(language: str, region: str) -> str | None:
    """Brave's search_lang for a language tag; None when Brave does not list the language."""
    primary, *rest = language.lower().split("-")
    if primary in _VARIANTS:
        choices, default = _VARIANTS[primary]
        picks = rest if rest else [region.lower()]
        return next((choices[p] for p in picks if p in choices), default)
    code = _ALIASES.get(primary, primary)
    return code if code in _SEARCH_LANGS else None


def country(region: str) -> str:
    return region if region in _COUNTRIES else "ALL"


class BraveDriver:
    """The brave driver type: one instance per configured engine, stateless per call."""

    admission: Admission

    def __init__(self, settings: EngineSettings) -> None:
        self.admission = ADMISSION
        self._endpoint = settings.endpoint or "web"
        if self._endpoint not in _PATHS:
            raise ValueError(f"the brave driver has no endpoint {self._endpoint!r}")
        self._credential = settings.credential

    def skip_reason(self, query: EngineQuery) -> QuerySkipReason | None:
        if search_lang(query.language, query.region) is None:
            return "language"
        if query.time_range is not None and query.time_range not in _FRESHNESS:
            return "time_range"
        if base.query_too_long(self.admission, base.query_text(self.admission, query)):
            return "query_too_long"
        return None

    def request(self, query: EngineQuery) -> OutboundRequest:
        lang = search_lang(query.language, query.region)
        if lang is None:
            raise ValueError("Brave does not list this language: ask skip_reason first")
        if self._credential is None:
            # An engine without its key is inactive and never asked; should one be asked,
            # no request goes out without the token.
            raise EngineFailure("auth_failure")
        params = {
            "q": base.query_text(self.admission, query),
            "count": str(max(1, min(query.count, MAX_COUNT))),
            "search_lang": lang,
            "country": country(query.region),
            "safesearch": query.safe_search,
        }
        if query.time_range is not None:
            params["freshness"] = _FRESHNESS[query.time_range]
        return OutboundRequest(
            # The host is fixed: the token is only ever sent to Brave's own origin.
            url=f"https://{HOST}{_PATHS[self._endpoint]}?{base.query_string(params)}",
            headers=(
                ("Accept", "application/json"),
                ("X-Subscription-Token", self._credential.reveal()),
            ),
            max_bytes=self.admission.response_bytes,
        )

    def parse(self, status: int, header: base.HeaderLookup, body: bytes) -> list[RawResult]:
        _check_status(status, header, body)
        answer = base.load_json(body)
        if not isinstance(answer, dict):
            raise EngineFailure("parse_failure")
        items = self._items(answer)
        results = [r for r in map(_result, items) if r is not None]
        if items and not results:
            raise EngineFailure("parse_failure")  # results in a shape we do not know: drift
        return results

    def _items(self, answer: dict[str, object]) -> list[object]:
        """The endpoint's result list; an answer without its section found nothing."""
        section: object = answer if self._endpoint == "news" else answer.get("web")
        if section is None:
            return []
        if not isinstance(section, dict):
            raise EngineFailure("parse_failure")
        items = section.get("results", [])
        if not isinstance(items, list):
            raise EngineFailure("parse_failure")
        return items


def _check_status(status: int, header: base.HeaderLookup, body: bytes) -> None:
    """The record's classes by status; a 2xx answer goes on to be parsed."""
    if 200 <= status < 300:
        return
    if status == 429:
        delay = delay_seconds(header("retry-after"))
        if delay is None:
            delay = delay_seconds(header("x-ratelimit-reset"))
        raise EngineFailure("rate_limited", delay)
    if status in (401, 403):
        raise EngineFailure("auth_failure")
    if status == 422 and _about_the_token(body):
        raise EngineFailure("auth_failure")
    raise EngineFailure("request_failure")


def _about_the_token(body: bytes) -> bool:
    """Whether a 422 ErrorResponse blames the subscription token; False for any body that
    is not one, or does not say so in the shape the provider documents."""
    try:
        answer = base.load_json(body)
    except EngineFailure:
        return False
    error = answer.get("error") if isinstance(answer, dict) else None
    if not isinstance(error, dict):
        return False
    code = error.get("code")
    if code == _CODE_KEY_INVALID:
        return True
    if code != _CODE_VALIDATION:
        return False
    meta = error.get("meta")
    problems = meta.get("errors") if isinstance(meta, dict) else None
    if not isinstance(problems, list):
        return False
    return any(_at_token_header(p.get("loc")) for p in problems if isinstance(p, dict))


def _at_token_header(loc: object) -> bool:
    """A location such as ["header", "x-subscription-token"] (header names fold case)."""
    return (
        isinstance(loc, list)
        and len(loc) == 2
        and loc[0] == "header"
        and isinstance(loc[1], str)
        and loc[1].lower() == _KEY_HEADER
    )


def _result(item: object) -> RawResult | None:
    """One result as a raw result; None without a URL.

    The description keeps Brave's `<strong>` marks; cleaning is the pipeline's
    (REQ-ENG-012). page_age carries no time zone: its date part is the date.
    """
    return base.json_result(item, "description", "page_age")
