"""Typed reads of TOML tables that collect problems instead of stopping.

Each read returns a usable value (the default when the file's value is
wrong) so that one pass reports every problem of a file.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from rypsok.core.config.positions import Path, Positions, hidden_reason, render, shown
from rypsok.core.config.problems import Problem, describe
from rypsok.core.limits import Limit

# A closed set of words (a Literal type of config/settings.py): `choice` keeps the type.
Word = TypeVar("Word", bound=str)

MISSING: Any = object()
Table = dict[str, Any]


class Reader:
    def __init__(self, positions: Positions) -> None:
        self.positions = positions
        self.problems: list[Problem] = []

    # -- reporting ---------------------------------------------------------
    def add(self, path: Path, message: str, *, key: bool = False) -> None:
        """A problem of *path*, placed at its value, or at its key (the first column of its
        name) when the key itself is the problem (*key*): unknown, not allowed, a table's."""
        where = self.positions.key_at(path) if key else self.positions.at(path)
        self.problems.append(Problem(render(path), message, where))

    def present(self, path: Path) -> bool:
        return self.positions.at(path) is not None

    # -- structure -----------------------------------------------------------
    def table(self, parent: Table, path: Path, name: str) -> Table:
        value = parent.get(name, MISSING)
        if value is MISSING:
            return {}
        if not isinstance(value, dict):
            self.add((*path, name), f"expected a table, found {describe(value)}")
            return {}
        return value

    def unknown(self, table: Table, path: Path, known: Iterable[str], what: str = "key") -> None:
        """Refuse keys this table does not have, each by its full dotted name and place.

        *what* is kept for callers that name the kind; the message says whether the file
        holds a key or a table there.
        """
        names = list(known)
        for name in table:
            if name not in names:
                problem = unknown_problem(self.positions, path, name, table[name], names)
                self.problems.append(problem)

    # -- scalars -------------------------------------------------------------
    def boolean(self, table: Table, path: Path, name: str, default: bool) -> bool:
        value = table.get(name, MISSING)
        if value is MISSING:
            return default
        if not isinstance(value, bool):
            self.add((*path, name), f"expected true or false, found {describe(value)}")
            return default
        return value

    def integer(
        self,
        table: Table,
        path: Path,
        name: str,
        limit: Limit,
        *,
        high: int | None = None,
        low: int | None = None,
        because: str | None = None,
    ) -> int:
        """An integer within the row's range, then within a dependent range.

        *low*/*high* narrow the row's range when another key sets them;
        *because* names those keys with their values for the message.
        """
        static_low = limit.low if limit.low is not None else 0
        static_high = limit.high if limit.high is not None else (high or 0)
        dep_low = static_low if low is None else max(static_low, low)
        dep_high = static_high if high is None else min(static_high, high)
        return self.ranged(
            table, path, name, limit.default, static_low, static_high, dep_low, dep_high, because
        )

    def ranged(
        self,
        table: Table,
        path: Path,
        name: str,
        default: int,
        static_low: int,
        static_high: int,
        dep_low: int | None = None,
        dep_high: int | None = None,
        because: str | None = None,
    ) -> int:
        key = (*path, name)
        value = table.get(name, MISSING)
        expected = f"expected an integer from {static_low} to {static_high}"
        if value is MISSING:
            value = default
        elif isinstance(value, bool) or not isinstance(value, int):
            self.add(key, f"{expected}, found {describe(value)}")
            value = default
        elif value < static_low:
            self.add(key, f"{expected}, found a number below that range")
            return default
        elif value > static_high:
            self.add(key, f"{expected}, found a number above that range")
            return default
        low = static_low if dep_low is None else dep_low
        high = static_high if dep_high is None else dep_high
        if not low <= value <= high:
            reason = f" ({because})" if because else ""
            self.add(key, f"must be between {low} and {high}{reason}")
        return int(value)

    def choice(
        self, table: Table, path: Path, name: str, choices: tuple[Word, ...], default: Word
    ) -> Word:
        value = table.get(name, MISSING)
        if value is MISSING:
            return default
        expected = "expected one of " + ", ".join(choices)
        if not isinstance(value, str):
            self.add((*path, name), f"{expected}, found {describe(value)}")
            return default
        if value not in choices:
            self.add((*path, name), f"{expected}, found an unknown word")
            return default
        return choices[choices.index(value)]  # the word as its closed set types it

    def text(
        self,
        table: Table,
        path: Path,
        name: str,
        default: str,
        expected: str,
        check: Callable[[str], str | None],
    ) -> str:
        """A string that *check* accepts; *check* returns the normalized form or None."""
        value = table.get(name, MISSING)
        if value is MISSING:
            return default
        if not isinstance(value, str):
            self.add((*path, name), f"expected {expected}, found {describe(value)}")
            return default
        normal = check(value)
        if normal is None:
            self.add((*path, name), f"expected {expected}, found text in another form")
            return default
        return normal

    def string_list(
        self,
        table: Table,
        path: Path,
        name: str,
        default: tuple[str, ...],
        expected_item: str,
        *,
        max_items: int = 64,
    ) -> list[tuple[int, str]] | None:
        """Strings of an array with their index; None when absent or not an array."""
        value = table.get(name, MISSING)
        if value is MISSING:
            return None
        if not isinstance(value, list):
            found = describe(value)
            self.add((*path, name), f"expected an array of {expected_item}, found {found}")
            return None
        if len(value) > max_items:
            self.add((*path, name), f"expected at most {max_items} entries")
            return None
        items: list[tuple[int, str]] = []
        for index, item in enumerate(value):
            if not isinstance(item, str):
                self.add((*path, name, index), f"expected {expected_item}, found {describe(item)}")
                continue
            items.append((index, item))
        return items


IDENTIFIER = re.compile(r"[a-z][a-z0-9_]{0,63}")


def _kind(value: object) -> str:
    if isinstance(value, dict):
        return "table"
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return "array of tables"
    return "key"


def unknown_problem(
    positions: Positions, path: Path, name: str, value: object, known: list[str]
) -> Problem:
    """`<table>.<name>: an unknown key; did you mean <known>?`, at the key's first column.

    A name that cannot be shown (too long, or a credential) is not repeated: the problem
    then names the table it stands in.
    """
    where = positions.key_at((*path, name))
    kind = _kind(value)
    close = difflib.get_close_matches(name.lower(), known, n=1, cutoff=0.75)
    hint = f"; did you mean {close[0]}?" if close else ""
    if shown(name) is not None:
        return Problem(render((*path, name)), f"an unknown {kind}{hint}", where)
    not_shown = f"(its name is not shown: {hidden_reason(name)})"
    if path:
        return Problem(render(path), f"an unknown {kind} {not_shown}", where)
    return Problem("", f"an unknown {kind} at the top level {not_shown}", where)
