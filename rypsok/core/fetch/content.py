"""A page's cleaned Markdown, kept as the pieces it was cleaned in.

The text is the pieces one after another; it is never made into one string. Of
a large page only the window a call returns is: the whole Markdown of a 5 MiB
page with emoji in it is 16 MiB as one string, and glibc, once it has handed
such a block back, serves every smaller request from the heap it keeps instead
(its mmap threshold rises to the size of the largest block freed), which held
about 20 MiB more at the peak of four such fetches (docs/memory.md).
"""

from __future__ import annotations

import hashlib
from bisect import bisect_right
from collections.abc import Iterator, Sequence


class PageText:
    __slots__ = ("_ends", "_parts")

    def __init__(self, parts: Sequence[str]) -> None:
        self._parts = [p for p in parts if p]
        self._ends: list[int] = []
        total = 0
        for part in self._parts:
            total += len(part)
            self._ends.append(total)

    @classmethod
    def joined(cls, pieces: Sequence[str], separator: str, strip: str) -> PageText:
        """The text `separator.join(pieces).strip(strip)`, without making it."""
        parts: list[str] = []
        for i, piece in enumerate(pieces):
            if i:
                parts.append(separator)
            parts.append(piece)
        # Stripping may run through whole parts (pieces and separators alike).
        while parts and not parts[0].strip(strip):
            parts.pop(0)
        while parts and not parts[-1].strip(strip):
            parts.pop()
        if parts:
            parts[0] = parts[0].lstrip(strip)
            parts[-1] = parts[-1].rstrip(strip)
        return cls(parts)

    def pieces(self) -> Iterator[str]:
        """The text's pieces in order, never joined."""
        return iter(self._parts)

    def __len__(self) -> int:
        return self._ends[-1] if self._ends else 0

    def __str__(self) -> str:
        return "".join(self._parts)

    def sha256(self) -> str:
        """SHA-256 (hex) of the text's UTF-8, fed part by part: never one string."""
        digest = hashlib.sha256()
        for part in self._parts:
            digest.update(part.encode("utf-8", "surrogatepass"))
        return digest.hexdigest()

    def blank(self) -> bool:
        """Whether the text is nothing but white space (str.strip's)."""
        return not any(part.strip() for part in self._parts)

    def window(self, start: int, end: int) -> str:
        """The text's [start:end], for 0 <= start."""
        end = min(end, len(self))
        if start >= end:
            return ""
        out: list[str] = []
        i = bisect_right(self._ends, start)  # the part that holds `start`
        while i < len(self._parts):
            begins = self._ends[i] - len(self._parts[i])
            if begins >= end:
                break
            out.append(self._parts[i][max(0, start - begins) : end - begins])
            i += 1
        return "".join(out)
