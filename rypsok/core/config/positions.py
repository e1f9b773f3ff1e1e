"""Where each key of a TOML document stands, for messages that name a line.

tomllib gives values but no places. This scanner walks a document that
tomllib accepted (or rejected only for a duplicate) and records, for every
key path, the 1-based line and column of its value or table header, and
of the key itself (the first column of its last part: `w` in `[engines.w]`,
`type` in `type = ...`). It also finds the first key or table defined twice,
at the key of its second definition. It never interprets values.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field

Path = tuple[str | int, ...]

_BARE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_SCALAR_END = frozenset(",]}#\n\r \t")


class _Stop(Exception):
    """The text is not in a shape the scanner follows; positions stay partial."""


@dataclass
class Positions:
    places: dict[Path, tuple[int, int]] = field(default_factory=dict)
    keys: dict[Path, tuple[int, int]] = field(default_factory=dict)
    duplicate: tuple[Path, tuple[int, int]] | None = None

    def at(self, path: Path) -> tuple[int, int] | None:
        """Where the value (or the table header) of *path* stands."""
        return self.places.get(path)

    def key_at(self, path: Path) -> tuple[int, int] | None:
        """Where the key of *path* is written, for a message about the key itself."""
        return self.keys.get(path) or self.places.get(path)


class _Scanner:
    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0
        self.n = len(text)
        self.out = Positions()
        self._line_starts = [0]
        for k, ch in enumerate(text):
            if ch == "\n":
                self._line_starts.append(k + 1)
        self.explicit: set[Path] = set()
        self.values: set[Path] = set()
        self.aot_index: dict[tuple[str, ...], int] = {}
        self.arrays: set[Path] = set()  # paths of arrays of tables ([[...]])
        self.dotted: set[Path] = set()  # tables a dotted key created: never a header after

    # -- places ------------------------------------------------------------
    def place(self, pos: int) -> tuple[int, int]:
        lo, hi = 0, len(self._line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self._line_starts[mid] <= pos:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1, pos - self._line_starts[lo] + 1

    def record(self, path: Path, pos: int, *, value: bool, key: int | None = None) -> None:
        where = self.place(pos)
        seen = path in self.values or path in self.explicit or path in self.arrays
        if not value and path in self.dotted:
            seen = True
        if seen:
            self.duplicated(path, pos if key is None else key)
        self.out.places.setdefault(path, where)
        if key is not None:
            self.out.keys.setdefault(path, self.place(key))
        (self.values if value else self.explicit).add(path)

    def duplicated(self, path: Path, key: int) -> None:
        if self.out.duplicate is None:
            self.out.duplicate = (path, self.place(key))

    # -- lexing ------------------------------------------------------------
    def peek(self) -> str:
        return self.s[self.i] if self.i < self.n else ""

    def skip_ws(self) -> None:
        while self.i < self.n and self.s[self.i] in " \t":
            self.i += 1

    def skip_ws_nl_comments(self) -> None:
        while self.i < self.n:
            ch = self.s[self.i]
            if ch in " \t\r\n":
                self.i += 1
            elif ch == "#":
                self.skip_to_eol()
            else:
                return

    def skip_to_eol(self) -> None:
        end = self.s.find("\n", self.i)
        self.i = self.n if end < 0 else end + 1

    def string(self) -> str:
        s, i = self.s, self.i
        if s.startswith('"""', i) or s.startswith("'''", i):
            quote = s[i : i + 3]
            j = i + 3
            while True:
                j = s.find(quote, j)
                if j < 0:
                    raise _Stop
                if quote == '"""' and _escaped(s, j):
                    j += 1
                    continue
                # A closing run may carry up to two extra quotes of content.
                while s.startswith(quote[0], j + 3):
                    j += 1
                self.i = j + 3
                return s[i + 3 : j]
        quote = s[i]
        j = i + 1
        out: list[str] = []
        while j < self.n:
            ch = s[j]
            if ch == quote:
                self.i = j + 1
                return "".join(out)
            if ch == "\\" and quote == '"':
                out.append(s[j : j + 2])
                j += 2
                continue
            if ch == "\n":
                raise _Stop
            out.append(ch)
            j += 1
        raise _Stop

    def key(self) -> list[tuple[str, int]]:
        parts: list[tuple[str, int]] = []
        while True:
            self.skip_ws()
            start = self.i
            ch = self.peek()
            if ch in ('"', "'"):
                raw = self.string()
                parts.append((_unescape(raw) if ch == '"' else raw, start))
            else:
                j = self.i
                while j < self.n and self.s[j] in _BARE:
                    j += 1
                if j == self.i:
                    raise _Stop
                parts.append((self.s[self.i : j], start))
                self.i = j
            self.skip_ws()
            if self.peek() == ".":
                self.i += 1
                continue
            return parts

    # -- values ------------------------------------------------------------
    def value(self, path: Path) -> None:
        ch = self.peek()
        if ch in ('"', "'"):
            self.string()
        elif ch == "[":
            self.i += 1
            index = 0
            while True:
                self.skip_ws_nl_comments()
                if self.peek() == "]":
                    self.i += 1
                    return
                item = (*path, index)
                self.record(item, self.i, value=True)
                self.value(item)
                index += 1
                self.skip_ws_nl_comments()
                if self.peek() == ",":
                    self.i += 1
        elif ch == "{":
            self.i += 1
            while True:
                self.skip_ws()
                if self.peek() == "}":
                    self.i += 1
                    return
                self.keyval(path)
                self.skip_ws()
                if self.peek() == ",":
                    self.i += 1
        elif ch:
            while self.i < self.n and self.s[self.i] not in _SCALAR_END:
                self.i += 1
            # Dates with a space between date and time: "1979-05-27 07:32:00".
            if self.peek() == " " and self.s[self.i + 1 : self.i + 2].isdigit():
                self.i += 1
                while self.i < self.n and self.s[self.i] not in _SCALAR_END:
                    self.i += 1
        else:
            raise _Stop

    def keyval(self, prefix: Path) -> None:
        parts = self.key()
        if self.peek() != "=":
            raise _Stop
        self.i += 1
        self.skip_ws()
        path: Path = prefix
        for name, start in parts[:-1]:
            path = (*path, name)
            if path in self.values:  # a dotted key into a value that is not a table
                self.duplicated(path, start)
            self.dotted.add(path)
            # The table a dotted key creates stands where its name is first written.
            self.out.keys.setdefault(path, self.place(start))
        path = (*path, parts[-1][0])
        self.record(path, self.i, value=True, key=parts[-1][1])
        self.value(path)

    def header(self) -> Path:
        aot = self.s.startswith("[[", self.i)
        self.i += 2 if aot else 1
        parts = self.key()
        self.i += 2 if aot else 1
        names = tuple(name for name, _ in parts)
        resolved: list[str | int] = []
        for depth in range(1, len(names) + 1):
            resolved.append(names[depth - 1])
            if depth < len(names) and names[:depth] in self.aot_index:
                resolved.append(self.aot_index[names[:depth]])
        last_pos = parts[-1][1]
        if aot:
            index = self.aot_index.get(names, -1) + 1
            self.aot_index[names] = index
            # Tables below an entry of this array start afresh.
            for known in [k for k in self.aot_index if k[: len(names)] == names and k != names]:
                del self.aot_index[known]
            table_path: Path = (*resolved, index)
            array = tuple(resolved)
            if array in self.values or array in self.explicit or array in self.dotted:
                self.duplicated(array, last_pos)
            self.arrays.add(array)
            self.out.places.setdefault(array, self.place(last_pos))
            self.out.keys.setdefault(array, self.place(last_pos))
            self.record(table_path, last_pos, value=False, key=last_pos)
            return table_path
        table_path = tuple(resolved)
        self.record(table_path, last_pos, value=False, key=last_pos)
        return table_path

    def document(self) -> None:
        prefix: Path = ()
        while True:
            self.skip_ws_nl_comments()
            if self.i >= self.n:
                return
            if self.peek() == "[":
                prefix = self.header()
            else:
                self.keyval(prefix)


def _escaped(s: str, j: int) -> bool:
    backslashes = 0
    k = j - 1
    while k >= 0 and s[k] == "\\":
        backslashes += 1
        k -= 1
    return backslashes % 2 == 1


_ESCAPE = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))", re.DOTALL)
_SIMPLE = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\"}


def _unescape(raw: str) -> str:
    # Keys are compared with what tomllib produced, so every escape of a basic string counts:
    # a key written "\u001b[2J" must find its place like any other.
    def one(m: re.Match[str]) -> str:
        code = m.group(1) or m.group(2)
        if code is not None:
            value = int(code, 16)
            return chr(value) if value <= 0x10FFFF else m.group(0)
        return _SIMPLE.get(m.group(3), m.group(0))

    return _ESCAPE.sub(one, raw)


def scan(text: str) -> Positions:
    """Positions of every key path in *text*; partial if the text is unusual."""
    scanner = _Scanner(text)
    with contextlib.suppress(_Stop, RecursionError, IndexError):
        scanner.document()
    return scanner.out


# A key a message shows as the file wrote it; any other is shown quoted with escapes.
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
SHOWN_MAX = 64  # characters of one shown key, escapes included (LIM-I4 bounds the message)


def shown(part: str) -> str | None:
    """One key as a message may print it, or None when it cannot be shown safely.

    A bare key is printed as is. Any other is printed as a TOML basic string whose
    every character outside printable ASCII is an escape: a newline, a terminal escape or
    a bidirectional control never reaches a terminal, and a look-alike letter (a Cyrillic
    a in "brave") shows as what it is. The form can be pasted back into the file. A key
    too long to show, or that looks like a credential, is not shown at all.
    """
    if _BARE_KEY.fullmatch(part):
        text = part
    else:
        out = ['"']
        for ch in part:
            code = ord(ch)
            if ch in '"\\':
                out.append("\\" + ch)
            elif 0x20 <= code < 0x7F:
                out.append(ch)
            elif code <= 0xFFFF:
                out.append(f"\\u{code:04X}")
            else:
                out.append(f"\\U{code:08X}")
        out.append('"')
        text = "".join(out)
    if len(text) > SHOWN_MAX or _credential(part):
        return None
    return text


def _credential(part: str) -> bool:
    # Imported here: the detectors are the costly part of the privacy package and a
    # configuration without a problem to show never needs them (start-up time, issue 17).
    from rypsok.core.privacy import find_secrets

    return bool(find_secrets(part))  # the recognizer queries pass through


def hidden_reason(part: str) -> str:
    """Why shown() refused *part*, in our words."""
    return "it looks like a credential" if _credential(part) else "it is too long"


def shown_prefix(path: Path) -> tuple[Path, str | None]:
    """The longest start of *path* that can be shown, and the first part that cannot."""
    for depth, part in enumerate(path):
        if isinstance(part, str) and shown(part) is None:
            return path[:depth], part
    return path, None


def render(path: Path) -> str:
    """A key path as messages write it: engines.brave.api_key_env, egress.deny[0].

    Every part goes through shown(); a part that cannot be shown is written <not shown>
    (callers that may meet one use shown_prefix() to say which table instead).
    """
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + (shown(part) or "<not shown>")
    return out
