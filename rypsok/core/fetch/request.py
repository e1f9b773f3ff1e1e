"""A web_fetch request and its parameter validation (the first stage of REQ-PAGE-001)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from rypsok.core import limits
from rypsok.core.config.settings import Config
from rypsok.core.model import (
    ToolError,
    invalid_kind,
    invalid_range,
    missing_parameter,
    unknown_parameter,
)

PARAMETERS: Final = ("url", "max_chars", "start_char")
MIN_CHARS: Final = limits.get("LIM-F1").low or 0


@dataclass(frozen=True, slots=True)
class FetchRequest:
    url: str
    max_chars: int
    start_char: int

    def __repr__(self) -> str:  # the URL is the caller's, possibly confidential
        return f"FetchRequest(max_chars={self.max_chars}, start_char={self.start_char})"


def _integer(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def fetch_request(config: Config, arguments: Mapping[str, Any]) -> FetchRequest:
    for name in arguments:
        if name not in PARAMETERS:
            raise unknown_parameter(name, PARAMETERS)
    if "url" not in arguments:
        raise missing_parameter("url")
    url = arguments["url"]
    if not isinstance(url, str):
        raise invalid_kind("url", "text")
    url = url.strip()
    bound = limits.default("LIM-F9")
    if not url or len(url) > bound:
        raise ToolError("invalid_request",
                        f"url must be 1 to {bound} characters long",
                        {"parameter": "url", "min": 1, "max": bound})
    ceiling = config.fetch.max_chars_ceiling
    max_chars = arguments.get("max_chars", config.fetch.max_chars)
    if not _integer(max_chars) or not MIN_CHARS <= max_chars <= ceiling:
        raise invalid_range("max_chars", MIN_CHARS, ceiling)
    start_char = arguments.get("start_char", 0)
    if not _integer(start_char) or start_char < 0:
        raise ToolError("invalid_request", "start_char must be 0 or more",
                        {"parameter": "start_char", "min": 0})
    return FetchRequest(url, int(max_chars), int(start_char))


def start_beyond_content(length: int) -> ToolError:
    return ToolError(
        "invalid_request",
        f"start_char must be below the content length, {length} characters; "
        "the page may have changed since the last call",
        {"parameter": "start_char", "min": 0, "max": max(0, length - 1)},
    )
