"""What every fuzz target shares: the optional fuzzer, and a reader of its bytes.

atheris is imported only when it is there, so pytest can import every target and
run its seeds without it (tests/fuzz/test_fuzz_targets.py). The fuzzer itself is run by
fuzz/run.py through ``python -m fuzz.targets.<name>``.

A target reads its input through :class:`Input`, never through atheris'
FuzzedDataProvider: the same bytes then mean the same call with or without the
fuzzer, and a committed seed or a saved crash replays anywhere.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Sequence
from typing import Any

try:
    import atheris  # type: ignore[import-untyped, import-not-found, unused-ignore]
except ImportError:  # pytest runs the seeds without the fuzzer
    atheris = None

# Modules whose branches guide the fuzzer; a target adds the libraries it drives.
INSTRUMENTED: tuple[str, ...] = ("rypsok",)


def instrumented(module: str, extra: Sequence[str] = ()) -> contextlib.AbstractContextManager[Any]:
    """Import the code under test inside this block so atheris sees its branches.

    Only when the target runs as the fuzzer (``module`` is ``__main__``): imported by
    pytest, the code stays as it is and the seeds run at full speed.
    """
    if atheris is None or module != "__main__":
        return contextlib.nullcontext()
    hook: contextlib.AbstractContextManager[Any] = atheris.instrument_imports(
        include=[*INSTRUMENTED, *extra]
    )
    return hook


def main(test_one_input: Callable[[bytes], None]) -> None:
    """Hand the target to libFuzzer; the command line is libFuzzer's own."""
    if atheris is None:
        raise SystemExit("atheris is not installed: run `tools/release-checks fuzz`")
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


class Input:
    """The fuzzer's bytes, read front to back; reading past the end gives zeros/empty."""

    __slots__ = ("_data", "_pos")

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._pos = 0

    def byte(self) -> int:
        if self._pos >= len(self._data):
            return 0
        value = self._data[self._pos]
        self._pos += 1
        return value

    def pick(self, choices: Sequence[Any]) -> Any:
        """One of ``choices``, chosen by the next byte."""
        return choices[self.byte() % len(choices)]

    def take(self, size: int) -> bytes:
        chunk = self._data[self._pos : self._pos + size]
        self._pos += len(chunk)
        return chunk

    def rest(self) -> bytes:
        chunk = self._data[self._pos :]
        self._pos = len(self._data)
        return chunk


def as_text(data: bytes, wide: bool) -> str:
    """Bytes as a str the way a target wants to explore it.

    Narrow: UTF-8, each undecodable byte a lone surrogate (U+DC80..U+DCFF), so
    ordinary seeds read as the text they hold. Wide: every three bytes one code
    point anywhere in U+0000..U+10FFFF, surrogates included, so the fuzzer can reach
    the whole code space without writing valid UTF-8.
    """
    if not wide:
        return data.decode("utf-8", "surrogateescape")
    return "".join(
        chr(int.from_bytes(data[i : i + 3], "big") % 0x110000) for i in range(0, len(data), 3)
    )
