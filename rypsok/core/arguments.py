"""Checks shared by the tools' argument validation: each refusal names the parameter."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rypsok.core.model import invalid_kind, invalid_range, missing_parameter, unknown_parameter


def only_known(arguments: Mapping[str, Any], allowed: tuple[str, ...]) -> None:
    for name in arguments:
        if name not in allowed:
            raise unknown_parameter(name, allowed)


def required_text(arguments: Mapping[str, Any], name: str) -> str:
    """The parameter's text, trimmed; missing or not text is invalid_request."""
    if name not in arguments:
        raise missing_parameter(name)
    value = arguments[name]
    if not isinstance(value, str):
        raise invalid_kind(name, "text")
    return value.strip()


def integer_in_range(
    arguments: Mapping[str, Any], name: str, default: int, low: int, high: int
) -> int:
    """An integer (never a boolean) within low..high, or invalid_request stating the range."""
    value = arguments.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise invalid_range(name, low, high)
    return value
