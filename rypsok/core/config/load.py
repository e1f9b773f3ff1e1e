"""Find the configuration file, read it within its bound, and parse it.

The file is named by --config, then by RYPSOK_CONFIG, or there is none and
every default applies. Reading never blocks on a FIFO or a device, and a
file above LIM-X1 is refused before it is parsed.
"""

from __future__ import annotations

import ast
import os
import re
import stat
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rypsok.core import limits
from rypsok.core.config.positions import (
    Path,
    Positions,
    hidden_reason,
    render,
    scan,
    shown_prefix,
)
from rypsok.core.config.problems import ConfigError, Problem
from rypsok.core.config.settings import Config
from rypsok.core.config.validate import validate

ENV_VAR = "RYPSOK_CONFIG"
_WHERE = re.compile(r"\(at line (\d+), column (\d+)\)|\(at end of document\)")
# tomllib's messages, in our words; the raw text can quote the file.
_SYNTAX = (
    ("Invalid statement", "a line that is not a key, a table or a comment"),
    ("Expected '=' after a key", "expected = after a key"),
    ("Expected ']' at the end of a table", "expected ] at the end of a table header"),
    ("Expected ']]' at the end of an array", "expected ]] at the end of a table header"),
    ("Invalid initial character for a key", "a key that starts with a character not allowed"),
    ("Unclosed array", "an array without its closing ]"),
    ("Unclosed inline table", "an inline table without its closing }"),
    ("Unterminated string", "text without its closing quote"),
    ("Unescaped '\\' in a string", "a backslash that starts no escape"),
    ("Invalid hex value", "an escape with an invalid hexadecimal value"),
    ("Escaped character is not a Unicode scalar", "an escape that is not a Unicode character"),
    ("Invalid date or datetime", "an invalid date or time"),
    ("Invalid value", "an invalid value"),
    ("Found invalid character", "a character not allowed here"),
    ("Illegal character", "a character not allowed here"),
    ("Expected", "unexpected text"),
)
# tomllib names the table in these: "Cannot declare ('a', 'b') twice (at line 3, column 5)".
_NAMED = re.compile(
    r"^Cannot (?:declare|mutate immutable namespace) (\(.*\))(?: twice)? \(at (?:line|end)"
)
_DUPLICATE = (
    "Cannot declare",
    "Cannot overwrite",
    "Cannot mutate",
    "Cannot redefine",
    "Duplicate inline table key",
)


@dataclass(frozen=True, slots=True)
class Source:
    path: str | None
    label: str  # how the file was named, for messages: "--config" or "RYPSOK_CONFIG"
    description: str  # for check's first line


def locate(cli_path: str | None, env: Mapping[str, str]) -> Source:
    if cli_path is not None:
        return Source(cli_path, "--config", f"--config {cli_path}")
    from_env = env.get(ENV_VAR, "")
    if from_env:
        return Source(from_env, ENV_VAR, f"{ENV_VAR}={from_env}")
    return Source(None, "", "the defaults (no file)")


def read_text(source: Source) -> str:
    assert source.path is not None
    bound = limits.default("LIM-X1")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(source.path, flags)
    except FileNotFoundError:
        raise _single(source.label, "the file does not exist") from None
    except IsADirectoryError:
        raise _single(source.label, "names a directory, not a file") from None
    except OSError:
        raise _single(source.label, "the file cannot be read") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise _single(source.label, "names a directory, not a file")
        if not stat.S_ISREG(info.st_mode):
            raise _single(source.label, "names something that is not a regular file")
        if info.st_size > bound:
            raise _single(source.label, f"the file is larger than {bound // 1024 // 1024} MiB")
        chunks: list[bytes] = []
        size = 0
        while size <= bound:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError:
        raise _single(source.label, "the file cannot be read") from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > bound:
        raise _single(source.label, f"the file is larger than {bound // 1024 // 1024} MiB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        problem = Problem(source.label, "the file is not UTF-8 text", (line, column))
        raise ConfigError([problem]) from None
    return text.removeprefix("\ufeff")


def parse(text: str) -> tuple[dict[str, Any], Positions]:
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([_syntax_problem(str(exc), text)]) from None
    except RecursionError:
        raise ConfigError([Problem("", "TOML syntax error: values nested too deeply")]) from None
    return document, scan(text)


def _syntax_problem(message: str, text: str) -> Problem:
    if message.startswith(_DUPLICATE):
        duplicate = scan(text).duplicate
        if duplicate is not None:
            return _defined_twice(duplicate[0], duplicate[1])
        named = _NAMED.search(message)
        path = _tuple_path(named.group(1)) if named else None
        if path:
            # The scanner lost its way; tomllib still names the table, at its own place.
            return _defined_twice(path, _place(message, text))
        return Problem(
            "", "TOML syntax error: a table or key defined more than once", _place(message, text)
        )
    words = next((ours for theirs, ours in _SYNTAX if message.startswith(theirs)), "invalid TOML")
    return Problem("", f"TOML syntax error: {words}", _place(message, text))


def _defined_twice(path: Path, where: tuple[int, int] | None) -> Problem:
    shown_path, hidden = shown_prefix(path)
    if hidden is None:
        return Problem(render(path), "defined more than once", where)
    not_shown = f"(its name is not shown: {hidden_reason(hidden)})"
    if shown_path:
        return Problem(
            render(shown_path), f"a key or table defined more than once {not_shown}", where
        )
    return Problem("", f"a key or table defined more than once at the top level {not_shown}", where)


def _place(message: str, text: str) -> tuple[int, int] | None:
    match = _WHERE.search(message)
    if match is None:
        return None
    if match.group(1) is None:
        lines = text.split("\n")
        return len(lines), len(lines[-1]) + 1
    return int(match.group(1)), int(match.group(2))


def _tuple_path(text: str) -> Path | None:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    if isinstance(value, tuple) and value and all(isinstance(v, str) for v in value):
        return value
    return None


def _single(key: str, message: str) -> ConfigError:
    return ConfigError([Problem(key, message)])


def load(cli_path: str | None, env: Mapping[str, str], *, read_tokens: bool = True) -> Config:
    """The validated configuration, or ConfigError with every problem.

    *read_tokens* False (serve over stdio) leaves the HTTP callers' tokens unread.
    """
    source = locate(cli_path, env)
    if source.path is None:
        return validate({}, Positions(), source.description, env, read_tokens=read_tokens)
    document, positions = parse(read_text(source))
    return validate(document, positions, source.description, env, read_tokens=read_tokens)
