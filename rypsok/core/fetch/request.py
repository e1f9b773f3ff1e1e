"""A web_fetch request and its parameter validation (the first stage of REQ-PAGE-001)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from rypsok.core import limits
from rypsok.core.arguments import integer_in_range, only_known, required_text
from rypsok.core.config.settings import Config
from rypsok.core.model import ToolError

PARAMETERS: Final = ("url", "max_chars", "start_char")
MIN_CHARS: Final = limits.get("LIM-F1").low or 0


@dataclass(frozen=True, slots=True)
class FetchRequest:
    url: str
    max_chars: int
    start_char: int

    def __repr__(self) -> str:  # the URL is the caller's, possibly confidential
        return f"FetchRequest(max_chars={self.max_chars}, start_char={self.start_char})"


def fetch_request(config: Config, arguments: Mapping[str, Any]) -> FetchRequest:
    only_known(arguments, PARAMETERS)
    url = required_text(arguments, "url")
    bound = limits.default("LIM-F9")
    if not url or len(url) > bound:
        raise ToolError(
            "invalid_request",
            f"url must be 1 to {bound} characters long",
            {"parameter": "url", "min": 1, "max": bound},
        )
    max_chars = integer_in_range(
        arguments, "max_chars", config.fetch.max_chars, MIN_CHARS, config.fetch.max_chars_ceiling
    )
    start_char = arguments.get("start_char", 0)
    if isinstance(start_char, bool) or not isinstance(start_char, int) or start_char < 0:
        raise ToolError(
            "invalid_request", "start_char must be 0 or more", {"parameter": "start_char", "min": 0}
        )
    return FetchRequest(url, max_chars, start_char)


def start_beyond_content(length: int) -> ToolError:
    return ToolError(
        "invalid_request",
        f"start_char must be below the content length, {length} characters; "
        "the page may have changed since the last call",
        {"parameter": "start_char", "min": 0, "max": max(0, length - 1)},
    )
