"""Requests, responses, notices and errors: the vocabulary callers see.

Everything here is rypsok's own words. Codes, reasons and kinds come from
fixed vocabularies; a message is at most LIM-I4 characters and is built
only from our sentences and numbers, never from external text, a secret,
an address or a trace.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal, get_args

from rypsok.core import limits

MESSAGE_MAX: Final = limits.default("LIM-I4")

Outcome = Literal["ok", "partial", "empty"]
# What kind of page web_fetch read (issue 34), a fixed vocabulary.
PAGE_KINDS: Final = (
    "article",
    "forum",
    "documentation",
    "listing",
    "collection",
    "product",
    "service",
    "other",
)
ErrorKind = Literal[
    "invalid_request", "denied", "unavailable", "redirected", "unsupported_content", "too_large"
]
NoticeCode = Literal[
    "engine_unavailable",
    "engine_skipped",
    "snippet_truncated",
    "title_truncated",
    "characters_removed",
    "instruction_like_content",
    "results_dropped",
    "credential_masked",
    "extraction_partial",
    "from_cache",
    "engine_incomplete",
    "content_changed",  # web_fetch: the page's content differs from the hash the caller had
    "not_content",  # web_fetch: the page is a soft 404, a login or a consent wall (reason)
    "outline_truncated",  # web_fetch: headings left out of the outline or cut (count)
    "site_filter_ignored",  # web_search: an engine got the query without its site: terms
]
EngineErrorClass = Literal[
    "timeout", "rate_limited", "blocked", "parse_failure", "auth_failure", "request_failure"
]
# Why an engine was not asked (engine_skipped's reason): what a driver says of the query
# (Driver.skip_reason), or the pipeline's own word (the circuit's cooldown, the rate turn).
QuerySkipReason = Literal["time_range", "language", "query_too_long"]
SkipReason = Literal[QuerySkipReason, "cooldown", "rate_limited"]
DropReason = Literal["instruction_like_content", "url_too_long", "url_invalid", "outside_site"]
DeniedReason = Literal[
    "egress",
    "robots_txt",
    "scheme",
    "strict_mode",
    "credential_in_url",
    "secret_in_query",
    "secret_in_url",
]
UnavailableReason = Literal[
    "no_engine",
    "all_failed",
    "rate_limited",
    "network",
    "deadline",
    "http_status",
    "busy",
    "blocked",  # web_fetch: the site answered with a bot challenge instead of the page
]
EngineState = Literal["disabled", "closed", "open", "half_open"]
DisabledReason = Literal["disabled", "no_credential", "no_base_url"]

ENGINE_ERROR_CLASSES: Final[tuple[EngineErrorClass, ...]] = get_args(EngineErrorClass)


@dataclass(frozen=True, slots=True)
class Notice:
    """What rypsok did or could not do; every field from a fixed vocabulary."""

    code: NoticeCode
    engine: str | None = None  # a configured engine identifier (the operator's label)
    reason: str | None = None
    count: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code}
        if self.engine is not None:
            out["engine"] = self.engine
        if self.reason is not None:
            out["reason"] = self.reason
        if self.count is not None:
            out["count"] = self.count
        return out


class ToolError(Exception):
    """A tool execution error: one kind, one short message, fixed detail keys."""

    def __init__(self, kind: ErrorKind, message: str, detail: dict[str, Any] | None = None) -> None:
        if len(message) > MESSAGE_MAX:  # a programming error, caught by the tests
            raise ValueError("error message above LIM-I4")
        super().__init__(kind)
        self.kind: ErrorKind = kind
        self.message = message
        self.detail: dict[str, Any] = detail or {}
        # A name the caller made up (an unknown parameter): never part of a counter's key.
        self.caller_word = False

    def to_json(self) -> dict[str, Any]:
        return {"error": {"kind": self.kind, "message": self.message, "detail": self.detail}}


# -- error constructors: one place for every sentence -------------------------------------


def invalid_range(parameter: str, low: int, high: int) -> ToolError:
    return ToolError(
        "invalid_request",
        f"{parameter} must be between {low} and {high}",
        {"parameter": parameter, "min": low, "max": high},
    )


def invalid_choice(parameter: str, allowed: tuple[str, ...]) -> ToolError:
    return ToolError(
        "invalid_request",
        _bounded(f"{parameter} must be one of: {', '.join(allowed)}"),
        {"parameter": parameter, "allowed": list(allowed)},
    )


def invalid_kind(parameter: str, expected: str) -> ToolError:
    return ToolError(
        "invalid_request", _bounded(f"{parameter} must be {expected}"), {"parameter": parameter}
    )


def unknown_parameter(parameter: str, allowed: tuple[str, ...]) -> ToolError:
    # The name is shown only when it is a plain identifier of reasonable length.
    shown = parameter if parameter.isidentifier() and len(parameter) <= 40 else "a parameter"
    error = ToolError(
        "invalid_request",
        _bounded(
            f"{shown} is not a parameter of this tool; the parameters are: {', '.join(allowed)}"
        ),
        {"parameter": shown, "allowed": list(allowed)},
    )
    error.caller_word = True
    return error


def missing_parameter(parameter: str) -> ToolError:
    return ToolError("invalid_request", f"{parameter} is required", {"parameter": parameter})


def rate_limited(tool: str, retry_after_ms: int) -> ToolError:
    return ToolError(
        "unavailable",
        f"{tool} was called more often than this server allows per minute; retry later",
        {"reason": "rate_limited", "retry_after_ms": retry_after_ms},
    )


def secret_in_query(kind: str, position: int) -> ToolError:
    return ToolError(
        "denied",
        f"the query looks like it carries a secret ({kind}) at character {position}; "
        "remove it and search again",
        {"reason": "secret_in_query", "kind": kind, "position": position},
    )


def no_engine(category: str) -> ToolError:
    return ToolError(
        "unavailable",
        f"no engine can answer the category {category} now; try another category",
        {"reason": "no_engine"},
    )


# What to say when every engine of the category was skipped for one parameter's sake.
_PARAMETER_ADVICE = {
    "time_range": "filters by time_range; search again without time_range",
    "language": "serves this language; search again in another language",
}


def no_engine_for(parameter: str, category: str) -> ToolError:
    """no_engine caused by a parameter, not by the category: the message and the detail
    name the parameter, so a caller changes that one (issue 20)."""
    return ToolError(
        "unavailable",
        f"no engine of the category {category} {_PARAMETER_ADVICE[parameter]}",
        {"reason": "no_engine", "parameter": parameter},
    )


def all_failed() -> ToolError:
    return ToolError(
        "unavailable", "every engine asked failed; retry later", {"reason": "all_failed"}
    )


def search_deadline() -> ToolError:
    return ToolError(
        "unavailable", "no engine answered before the deadline; retry later", {"reason": "deadline"}
    )


def status_deadline() -> ToolError:
    # Reading the engines' states takes microseconds; only a starved event loop gets here.
    return ToolError(
        "unavailable", "the engine states were not read in time; retry", {"reason": "deadline"}
    )


def _bounded(text: str) -> str:
    return text if len(text) <= MESSAGE_MAX else text[: MESSAGE_MAX - 1] + "…"


# -- responses ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SearchResult:
    title: str
    url: str
    snippet: str
    date: str | None = None
    engines: tuple[str, ...] | None = None  # only with attribution

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"title": self.title, "url": self.url, "snippet": self.snippet}
        if self.date is not None:
            out["date"] = self.date
        if self.engines is not None:
            out["engines"] = list(self.engines)
        return out


@dataclass(frozen=True, slots=True)
class SearchResponse:
    outcome: Outcome
    notices: tuple[Notice, ...]
    results: tuple[SearchResult, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "notices": [n.to_json() for n in self.notices],
            "outcome": self.outcome,
            "results": [r.to_json() for r in self.results],
        }


@dataclass(frozen=True, slots=True)
class OutlineEntry:
    """One heading of a long document's outline (issue 36): its level (1 to 6), its
    words, and the start_char where it begins."""

    level: int
    text: str
    start_char: int

    def to_json(self) -> dict[str, Any]:
        return {"level": self.level, "start_char": self.start_char, "text": self.text}


@dataclass(frozen=True, slots=True)
class FetchResponse:
    url: str
    title: str
    content: str
    truncated: bool
    next_start_char: int | None
    notices: tuple[Notice, ...] = ()
    outcome: Outcome = "ok"
    # SHA-256 (hex) of the whole extracted content, not only of this part: a caller
    # continuing with start_char can tell whether the page changed in between.
    content_sha256: str = ""
    # An HTML page's kind (PAGE_KINDS) and how sure the read is, 0 to 1 (issue 34):
    # additive fields, absent for a PDF, plain text or Markdown.
    page_kind: str | None = None
    confidence: float | None = None
    # The document's headings, when this answer does not hold the whole document.
    outline: tuple[OutlineEntry, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "content": self.content,
            "content_sha256": self.content_sha256,
            "notices": [n.to_json() for n in self.notices],
            "outcome": self.outcome,
            "title": self.title,
            "truncated": self.truncated,
            "url": self.url,
        }
        if self.next_start_char is not None:
            out["next_start_char"] = self.next_start_char
        if self.page_kind is not None:
            out["page_kind"] = self.page_kind
        if self.confidence is not None:
            out["confidence"] = self.confidence
        if self.outline is not None:
            out["outline"] = [entry.to_json() for entry in self.outline]
        return out


@dataclass(frozen=True, slots=True)
class EngineReport:
    id: str
    state: EngineState
    latency_ms: int | None
    reason: DisabledReason | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "state": self.state, "latency_ms": self.latency_ms}
        if self.reason is not None:
            out["reason"] = self.reason
        return out


@dataclass(frozen=True, slots=True)
class StatusResponse:
    engines: tuple[EngineReport, ...]
    outcome: Outcome = "ok"
    notices: tuple[Notice, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "engines": [e.to_json() for e in self.engines],
            "notices": [n.to_json() for n in self.notices],
            "outcome": self.outcome,
        }
