"""Configuration problems: a key, our own sentence, and where it stands.

A message never repeats a value from the file: it says what kind of value
was expected and what kind was found.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from rypsok.core import limits

MESSAGE_MAX = limits.default("LIM-I4")


@dataclass(frozen=True, slots=True)
class Problem:
    key: str
    message: str
    place: tuple[int, int] | None = None

    def render(self) -> str:
        text = f"{self.key}: {self.message}" if self.key else self.message
        if self.place is not None:
            text += f" (line {self.place[0]}, column {self.place[1]})"
        if len(text) > MESSAGE_MAX:
            text = text[: MESSAGE_MAX - 1] + "…"
        return text


class ConfigError(Exception):
    """The configuration cannot be used; `problems` says why, key by key."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__(f"{len(problems)} configuration problem(s)")
        self.problems = problems


def describe(value: object) -> str:
    """The kind of a TOML value, in words; never the value itself."""
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a decimal number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, datetime.date | datetime.time):
        return "a date or time"
    return "a value of another kind"
