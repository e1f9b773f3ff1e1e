"""The web_fetch error sentences: our own words, never the URL or any part of it."""

from __future__ import annotations

from rypsok.core import limits
from rypsok.core.model import ToolError

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
        "denied", f"the URL scheme is not allowed; use {use}", {"reason": "scheme"},
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
        "denied", "the destination is not allowed by the egress policy", {"reason": "egress"},
    )


def network_unavailable() -> ToolError:
    # One sentence for every cause, a policy refusal after resolution included,
    # so that the answer tells nothing about names inside the network.
    return ToolError(
        "unavailable",
        "the site could not be reached; retry later or choose another page",
        {"reason": "network"},
    )
