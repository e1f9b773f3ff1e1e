"""How a fetch ends when it does not end with content: rypsok's own sentences.

Each is at most LIM-I4 characters and never holds the URL or any part of it, a host, an
address or page text; only `redirected` carries external data, in detail.location.
"""

from __future__ import annotations

from typing import Final

from rypsok.core import limits
from rypsok.core.model import ToolError
from rypsok.core.net import retryafter

URL_MAX_CHARS = limits.default("LIM-F9")


def url_too_long() -> ToolError:
    return ToolError(
        "invalid_request",
        f"url must be at most {URL_MAX_CHARS} characters",
        {"parameter": "url"},
    )


def url_invalid() -> ToolError:
    return ToolError(
        "invalid_request",
        "url must be an absolute http or https URL with a valid host",
        {"parameter": "url"},
    )


def scheme_not_allowed(*, allow_http: bool = False) -> ToolError:
    use = "an http or https URL" if allow_http else "an https URL"
    return ToolError(
        "denied",
        f"the URL scheme is not allowed; use {use}",
        {"reason": "scheme"},
    )


def https_retry_failed() -> ToolError:
    return ToolError(
        "denied",
        "an http URL was retried over https and that request failed",
        {"reason": "scheme"},
    )


def credential_in_url(position: int | None) -> ToolError:
    # A user name is not a secret, so the detail carries the reason only; the
    # message says where when that is known, so that the caller can remove it.
    where = "" if position is None else f" at character {position}"
    return ToolError(
        "denied",
        f"the URL carries a user name before @{where}; remove it and fetch again",
        {"reason": "credential_in_url"},
    )


def secret_in_url(kind: str, position: int) -> ToolError:
    return ToolError(
        "denied",
        f"the URL looks like it carries a secret ({kind}) at character {position}; "
        "remove it and fetch again",
        {"reason": "secret_in_url", "kind": kind, "position": position},
    )


def egress_denied() -> ToolError:
    return ToolError(
        "denied",
        "the destination is not allowed by the egress policy",
        {"reason": "egress"},
    )


def network_unavailable() -> ToolError:
    # One sentence for every cause, a policy refusal after resolution included,
    # so that the answer tells nothing about names inside the network.
    return ToolError(
        "unavailable",
        "the site could not be reached; retry later or choose another page",
        {"reason": "network"},
    )


# -- after intake: policy, robots.txt, the answer, the page -----------------------------

RETRY_AFTER_MAX_S: Final = 3600
_RETRYABLE: Final = frozenset({408, 425, 429})


def strict_mode() -> ToolError:
    return ToolError(
        "denied",
        "strict mode is on: only URLs a search returned, or hosts the operator allows, can be read",
        {"reason": "strict_mode"},
    )


def robots_denied() -> ToolError:
    return ToolError(
        "denied",
        "the site's robots.txt asks not to read this page; do not retry",
        {"reason": "robots_txt"},
    )


def redirected(location: str) -> ToolError:
    return ToolError(
        "redirected",
        "the page moved to another host; see detail.location",
        {"location": location[: limits.default("LIM-F9")]},
    )


def http_status(status: int, retry_after: str | None) -> ToolError:
    detail: dict[str, object] = {"reason": "http_status", "status": status}
    if status in _RETRYABLE or status >= 500:
        seconds = _retry_after_s(retry_after)
        if seconds is not None:
            detail["retry_after_ms"] = seconds * 1000
        return ToolError(
            "unavailable", f"the site answered with status {status}; retry later", detail
        )
    return ToolError(
        "unavailable",
        f"the site answered with status {status}: it refused the "
        "request or has no such page; retrying the same URL will not help",
        detail,
    )


def _retry_after_s(value: str | None) -> int | None:
    """Whole seconds up to an hour; a date there is ignored (the book, REQ-FETCH-011)."""
    found = retryafter.parse(value)
    seconds = None if found is None else found.seconds
    return seconds if seconds is not None and seconds <= RETRY_AFTER_MAX_S else None


def too_large(limit_bytes: int) -> ToolError:
    return ToolError(
        "too_large",
        f"the page is larger than {limit_bytes} bytes; choose another page",
        {"limit_bytes": limit_bytes},
    )


def fetch_deadline() -> ToolError:
    return ToolError(
        "unavailable",
        "the page was not retrieved before the deadline; retry later",
        {"reason": "deadline"},
    )


def busy() -> ToolError:
    return ToolError(
        "unavailable", "too many pages are being read at once; retry later", {"reason": "busy"}
    )


def unsupported_media(media_type: str) -> ToolError:
    shown = "".join(c for c in media_type[:100] if c.isascii() and c.isprintable())
    return ToolError(
        "unsupported_content",
        "the page is not HTML, XHTML, plain text or Markdown; choose another page",
        {"reason": "media_type", "media_type": shown},
    )


def extraction_failed() -> ToolError:
    return ToolError(
        "unsupported_content",
        "no readable content could be extracted from the page; choose another page",
        {"reason": "extraction_failed"},
    )


def needs_scripts() -> ToolError:
    """A page a script renders (an application shell) whose data holds no prose:
    rypsok runs no script, so the agent is told to look elsewhere, not that the
    page is empty (issue 34)."""
    return ToolError(
        "unsupported_content",
        "the page builds its text with scripts, which rypsok does not run; try another "
        "source, such as a cached, text-only or printable version of the page",
        {"reason": "needs_scripts"},
    )


def challenge_page() -> ToolError:
    """The site answered with a bot challenge (a captcha, "checking your browser") in
    place of the page: rypsok runs no script and never poses as a browser to pass it."""
    return ToolError(
        "unavailable",
        "the site answered with a bot challenge instead of the page; it may let the page "
        "through later, or read another source; retry later",
        {"reason": "blocked"},
    )


def pdf_encrypted() -> ToolError:
    return ToolError(
        "unsupported_content",
        "the PDF is encrypted and needs a password to be read; choose another source",
        {"reason": "encrypted"},
    )


def pdf_no_text() -> ToolError:
    """A PDF without a text layer (a scan, pages of images): rypsok does not recognise
    text in images, and says so rather than answering an empty page."""
    return ToolError(
        "unsupported_content",
        "the PDF has no text to read (scanned pages or images only); choose another source",
        {"reason": "no_text"},
    )
