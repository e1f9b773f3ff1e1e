"""Secrets by reference: read from the environment or a file, never shown.

A `Secret` prints as ``[redacted]`` in every form (``str``, ``repr``, f-strings,
logging), cannot be pickled, and gives its text only through `reveal()`.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NoReturn

from rypsok.core import limits

_VARIABLE_NAME = re.compile(r"[A-Z_][A-Z0-9_]{0,127}")
REDACTED = "[redacted]"


class Secret:
    """A credential held in memory; it never renders its text."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return REDACTED

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return REDACTED

    def __reduce__(self) -> NoReturn:
        raise TypeError("a Secret cannot be pickled")

    def __eq__(self, other: object) -> bool:
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


def is_variable_name(text: str) -> bool:
    """Upper-case letters, digits and underscores: what a variable name looks like."""
    return _VARIABLE_NAME.fullmatch(text) is not None


@dataclass(frozen=True, slots=True)
class Resolved:
    """The outcome of reading a secret: the secret, or why it could not be read."""

    secret: Secret | None
    problem: str | None = None  # our own words; names the variable, never the path
    world_readable: bool = False


def from_env(name: str, env: Mapping[str, str]) -> Resolved:
    value = env.get(name, "").strip()
    if not value:
        return Resolved(None, f"environment variable {name} is unset or empty")
    return Resolved(Secret(value))


def readable_by_everyone(mode: int, platform: str = sys.platform) -> bool:
    """The file's mode lets every local user read it. On Windows the mode only mirrors
    the read-only attribute (who may read is in the file's ACL, which this does not
    read), so it says nothing either way: no warning there."""
    return platform != "win32" and bool(mode & stat.S_IROTH)


def from_file(path: str, what: str) -> Resolved:
    """Read a secret file of at most LIM-X2 bytes; *what* names it in a problem."""
    bound = limits.default("LIM-X2")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return Resolved(None, f"the file named by {what} cannot be read")
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return Resolved(None, f"the file named by {what} is not a regular file")
        data = os.read(fd, bound + 1)
    except OSError:
        return Resolved(None, f"the file named by {what} cannot be read")
    finally:
        os.close(fd)
    if len(data) > bound:
        return Resolved(None, f"the file named by {what} is larger than {bound // 1024} KiB")
    try:
        text = data.decode("utf-8").strip()
    except UnicodeDecodeError:
        return Resolved(None, f"the file named by {what} is not UTF-8 text")
    world = readable_by_everyone(info.st_mode)
    if not text:
        return Resolved(None, f"the file named by {what} is empty", world)
    return Resolved(Secret(text), None, world)
