"""Typed reads of TOML tables that collect problems instead of stopping.

Each read returns a usable value (the default when the file's value is
wrong) so that one pass reports every problem of a file.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from rypsok.core.config.positions import Path, Positions, hidden_reason, render, shown
from rypsok.core.config.problems import Problem, describe
from rypsok.core.limits import Limit

# A closed set of words (a Literal type of config/settings.py): `choice` keeps the type.
Word = TypeVar("Word", bound=str)

MISSING: Any = object()
Table = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Bound:
    """One end of a key's range that other keys set (a dependent range).

    *because* names those keys with their values, as the message shows them (`named`);
    *keys* are their paths, so that a bound set by a key that is itself wrong is not used.
    """

    value: int
    because: str
    keys: tuple[Path, ...]


def named(path: Path, value: int) -> str:
    """`fetch.max_chars_ceiling = 1000`: a key and the value in effect, for a Bound.

    The keys are this package's own words: joined directly, not through render(), whose
    check for a credential in a key loads the secret detectors.
    """
    return f"{'.'.join(str(part) for part in path)} = {value}"


class Reader:
    def __init__(self, positions: Positions) -> None:
        self.positions = positions
        self.problems: list[Problem] = []
        self.failed: set[Path] = set()  # the keys with a problem, for Bound.keys

    # -- reporting ---------------------------------------------------------
    def add(self, path: Path, message: str, *, key: bool = False) -> None:
        """A problem of *path*, placed at its value, or at its key (the first column of its
        name) when the key itself is the problem (*key*): unknown, not allowed, a table's."""
        where = self.positions.key_at(path) if key else self.positions.at(path)
        self.failed.add(path)
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
        top: int | None = None,
        floor: Bound | None = None,
        cap: Bound | None = None,
    ) -> int:
        """An integer within the row's range, narrowed by the bounds other keys set.

        *top* is the widest high of a row whose high only another key sets (its `high` is
        None); *floor* and *cap* are those other keys' bounds (see `ranged`).
        """
        low = limit.low if limit.low is not None else 0
        high = limit.high if limit.high is not None else top
        if high is None:  # pragma: no cover - a programming error, caught by any test
            raise ValueError(f"{limit.id} has no high bound: give its widest as top")
        return self.ranged(table, path, name, limit.default, low, high, floor=floor, cap=cap)

    def ranged(
        self,
        table: Table,
        path: Path,
        name: str,
        default: int,
        low: int,
        high: int,
        *,
        floor: Bound | None = None,
        cap: Bound | None = None,
    ) -> int:
        """An integer from *low* to *high*, or within the narrower range that *floor* and
        *cap* leave. A bound that narrows the range is named in the message with the keys
        and values that set it, so that the operator sees where each end comes from; one
        set by a key that is itself wrong is left out (that key's problem is told)."""
        key = (*path, name)
        causes: list[str] = []
        if floor is not None and floor.value > low and self._usable(floor):
            low = floor.value
            causes.append(floor.because)
        if cap is not None and cap.value < high and self._usable(cap):
            high = cap.value
            causes.append(cap.because)
        why = f" ({'; '.join(causes)})" if causes else ""
        if low > high:
            # The keys it depends on leave this one nothing: the message says so, whatever
            # the file holds here.
            self.add(key, f"no value fits: the range from {low} to {high} is empty{why}")
            return default
        expected = f"expected {_span(low, high)}{why}"
        value = table.get(name, MISSING)
        if value is MISSING:
            if not low <= default <= high:
                self.add(key, f"{expected}, found no value, and {_default(default, low, high)}")
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            self.add(key, f"{expected}, found {describe(value)}")
            return default
        if not low <= value <= high:
            self.add(key, f"{expected}, found {_number(value, low, high)}")
            return default
        return int(value)

    def _usable(self, bound: Bound) -> bool:
        return not any(path in self.failed for path in bound.keys)

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


def _span(low: int, high: int) -> str:
    # A range that another key narrowed to one value is written as that value.
    return f"the integer {low}" if low == high else f"an integer from {low} to {high}"


def _number(value: int, low: int, high: int) -> str:
    """What the file holds, in words that never repeat the number."""
    if low == high:
        return "another number"
    return f"a number {'below' if value < low else 'above'} that range"


def _default(default: int, low: int, high: int) -> str:
    """The default of a key the file leaves out, when another key's bound excludes it."""
    if low == high:
        return f"the default is {default}"
    return f"the default {default} is {'below' if default < low else 'above'} that range"


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
