"""Views of a text for the secret check: the text as a reader sees it (REQ-PRIV-002).

The text is read through two views. Both drop the characters a reader does not
see, by the content boundary's rule (``rypsok.core.boundary.unicode.is_invisible``:
format characters such as zero-width spaces, soft hyphens, bidirectional marks,
tag characters; default-ignorable code points, assigned or not, variation
selectors among them; control characters other than tab and line breaks; lone
surrogates and noncharacters), and every other format character too.
The second view also percent-decodes ``%XX`` sequences, so ``Bearer%20...`` and
``password%3D...`` read as their decoded forms. Each view keeps, for every
character, the span of the original text it came from, so a finding is reported
in the original text's indices (0-based Unicode scalar values) and masking
removes the invisible characters inside it too. User information in a URL is
read in the first view only: decoding would turn ``%40`` into a delimiter that
the URL does not have.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from rypsok.core.boundary.unicode import is_invisible

_HEX: Final = frozenset("0123456789abcdefABCDEF")
_KEEP_CONTROLS: Final = frozenset("\t\n\r")


def _invisible(ch: str, keep: frozenset[str]) -> bool:
    if ch in keep:
        return False
    cp = ord(ch)
    if 0x20 <= cp < 0x7F:  # printable ASCII, the common case
        return False
    # The content boundary's rule, plus the format characters it keeps because they
    # are drawn (the prepended marks): no credential contains one, so reading through
    # them too can only find more.
    return is_invisible(ch) or unicodedata.category(ch) == "Cf"


@dataclass(frozen=True, slots=True)
class _View:
    text: str
    starts: Sequence[int]  # original index of each character's first code point
    ends: Sequence[int]  # original index after each character's last code point

    def span(self, start: int, end: int) -> tuple[int, int]:
        return self.starts[start], self.ends[end - 1]


def _utf8_length(lead: int) -> int:
    if lead < 0x80:
        return 1
    if 0xC2 <= lead <= 0xDF:
        return 2
    if 0xE0 <= lead <= 0xEF:
        return 3
    if 0xF0 <= lead <= 0xF4:
        return 4
    return 0


def _percent_run(text: str, i: int) -> tuple[list[tuple[str, int, int]], int]:
    """Decode the run of %XX triplets at ``i`` as UTF-8, one character at a time.

    A byte that does not start a valid character stays literal text. Returns
    the characters with their original spans, and the index after the run.
    """
    n = len(text)
    raw = bytearray()
    offsets: list[int] = []
    j = i
    while j + 2 < n and text[j] == "%" and text[j + 1] in _HEX and text[j + 2] in _HEX:
        raw.append(int(text[j + 1 : j + 3], 16))
        offsets.append(j)
        j += 3
    out: list[tuple[str, int, int]] = []
    k = 0
    while k < len(raw):
        if raw[k] < 0x80:  # the common case: one ASCII byte
            out.append((chr(raw[k]), offsets[k], offsets[k] + 3))
            k += 1
            continue
        size = _utf8_length(raw[k])
        decoded: str | None = None
        if size and k + size <= len(raw):
            try:
                decoded = bytes(raw[k : k + size]).decode("utf-8")
            except UnicodeDecodeError:
                decoded = None
        if decoded is None:
            o = offsets[k]
            out.extend((text[o + m], o + m, o + m + 1) for m in range(3))
            k += 1
        else:
            out.append((decoded, offsets[k], offsets[k + size - 1] + 3))
            k += size
    return out, j


# Runs of printable ASCII copy through a view unchanged; they are taken in
# bulk so that only the rare other characters cost a step of Python each.
_ASCII_RUN: Final = re.compile(r"[\x20-\x7e]+")
_ASCII_RUN_NO_PERCENT: Final = re.compile(r"[\x20-\x24\x26-\x7e]+")


def _view(text: str, *, decode: bool, keep: frozenset[str] = _KEEP_CONTROLS) -> _View:
    n = len(text)
    if text.isascii() and text.isprintable() and not (decode and "%" in text):
        return _View(text, range(n), range(1, n + 1))  # nothing to drop or decode
    bulk = _ASCII_RUN_NO_PERCENT if decode else _ASCII_RUN
    pieces: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    i = 0
    while i < n:
        run = bulk.match(text, i)
        if run is not None:
            pieces.append(run.group())
            starts.extend(range(i, run.end()))
            ends.extend(range(i + 1, run.end() + 1))
            i = run.end()
            continue
        ch = text[i]
        if decode and ch == "%" and i + 2 < n and text[i + 1] in _HEX and text[i + 2] in _HEX:
            decoded, i = _percent_run(text, i)
        else:
            decoded = [(ch, i, i + 1)]
            i += 1
        for c, start, end in decoded:
            if not _invisible(c, keep):
                pieces.append(c)
                starts.append(start)
                ends.append(end)
    return _View("".join(pieces), starts, ends)
