"""A document's outline and where its parts end (issue 36).

Both are read off the cleaned Markdown a web_fetch answer is cut from, so every
offset is one a caller can pass back as ``start_char``:

* the outline: the document's ATX headings (``#`` to ``######`` at a line's start,
  outside fenced code), each with its level, its words (link targets, emphasis and
  escapes taken out, then cleaned and bounded like a title) and the offset of its
  first ``#``. Over LIM-F27 headings or LIM-F28 characters of their text, the
  levels that fit whole are listed, coarsest first, and of the next level as many
  as still fit, evenly spread over the document (a coarse outline that reaches
  the end beats a fine one of the first screens); how many went is counted.
* the fenced code blocks, so that a part's end is looked for outside them.

One pass over the text, with a regular expression that stops only at lines that
start with ``#`` or a fence: computed once for a document and kept with it in the
continuation memory. Setext headings ("Title" over "=====") are not listed: the
extractor and the PDF reader write ATX headings, and a Markdown page written the
other way still reads whole, part after part.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right
from dataclasses import dataclass

from rypsok.core import boundary, limits
from rypsok.core.fetch.content import PageText
from rypsok.core.model import OutlineEntry as Heading

__all__ = ["NO_OUTLINE", "Outline", "part_end", "read_outline"]

MAX_ENTRIES = limits.default("LIM-F27")
MAX_TEXT = limits.default("LIM-F28")
# Characters of a heading line read at most: its text is cut to the title's bound
# anyway, and a heading line of megabytes is never copied whole.
_LINE_READ = 4096
# Lines that may matter: a heading (1 to 6 "#", then a space, a tab or the line's
# end) or a code fence (three backticks or tildes, indented by 3 spaces at most).
_LINE = re.compile(
    r"^(?:(#{1,6})(?=[ \t]|$)[ \t]*([^\n]{0,"
    + str(_LINE_READ)
    + r"})|( {0,3})(`{3,}|~{3,})[^\n]*)",
    re.MULTILINE,
)
_CLOSING = re.compile(r"[ \t]+#+[ \t]*$|^#+[ \t]*$")  # an optional closing run of "#"
_IMAGE_OR_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
# An escaped character (kept, without its backslash) or an emphasis or code mark (gone).
_ESCAPED_OR_MARK = re.compile(r"\\([!-/:-@\[-`{-~])|\*\*|__|\*|`")


@dataclass(frozen=True, slots=True)
class Outline:
    headings: tuple[Heading, ...]
    left_out: int  # headings over the bounds, not listed
    shortened: int  # listed headings whose text was cut to the title's bound
    instruction_like: int  # listed headings whose text reads like an instruction
    # Offsets where fenced code starts and ends, by turns (an odd count: the last runs
    # to the end of the text).
    fences: array[int]

    def characters(self) -> int:
        """What the outline costs the memory, in characters: its text and its numbers."""
        return sum(len(h.text) + 16 for h in self.headings) + 2 * len(self.fences)


NO_OUTLINE = Outline((), 0, 0, 0, array("q"))
_Entry = tuple[Heading, bool, bool]  # a heading, whether cut, whether instruction-like


def _plain(markdown: str) -> str:
    """A heading's words: link and image targets, emphasis and escapes taken out."""
    text = _CLOSING.sub("", markdown)
    text = _IMAGE_OR_LINK.sub(r"\1", text)
    return _ESCAPED_OR_MARK.sub(lambda m: m.group(1) or "", text).strip()


def read_outline(text: PageText, title_max_chars: int) -> Outline:
    """The outline of the text and its fences."""
    found: list[tuple[int, str, int, bool]] = []  # level, Markdown, offset, cut
    fences: array[int] = array("q")
    fence = ""  # the open fence's run, "" outside code
    at = 0
    line_start = True  # whether the piece begins a line
    for piece in text.pieces():
        for match in _LINE.finditer(piece):
            where = at + match.start()
            if match.start() == 0 and not line_start:
                continue  # the rest of a line the last piece began
            run = match.group(4)
            if run is not None:
                if not fence:
                    fence = run
                    fences.append(where)
                elif run[0] == fence[0] and len(run) >= len(fence):
                    fence = ""
                    fences.append(at + match.end())
                continue
            if fence:
                continue
            words = match.group(2)
            long = match.end() < len(piece) and piece[match.end()] != "\n"
            if words:
                found.append((len(match.group(1)), words, where, long))
        at += len(piece)
        if piece:
            line_start = piece.endswith("\n")
    return _bounded(found, fences, title_max_chars)


def _bounded(
    found: list[tuple[int, str, int, bool]], fences: array[int], title_max_chars: int
) -> Outline:
    entries: list[_Entry] = []
    for level, words, where, long in found:
        field = boundary.clean_field(_plain(words), markup=False, limit=title_max_chars)
        if not field.text.strip():
            continue  # invisible characters only: nothing a reader sees
        heading = Heading(level, field.text, where)
        entries.append((heading, field.truncated or long, field.instruction_like > 0))
    listed = _chosen(entries)
    return Outline(
        headings=tuple(h for h, _, _ in listed),
        left_out=len(entries) - len(listed),
        shortened=sum(1 for _, cut, _ in listed if cut),
        instruction_like=sum(1 for _, _, flagged in listed if flagged),
        fences=fences,
    )


def _fits(entries: list[_Entry]) -> bool:
    return len(entries) <= MAX_ENTRIES and sum(len(e[0].text) for e in entries) <= MAX_TEXT


def _chosen(entries: list[_Entry]) -> list[_Entry]:
    """The headings listed: every level that fits whole, from the coarsest down; then,
    of the first level that does not, as many as still fit, spread evenly over the
    document (every k-th), so the outline reaches its end. In document order."""
    if _fits(entries):
        return entries
    levels = sorted({e[0].level for e in entries})
    whole: list[_Entry] = []
    spread: list[_Entry] = []
    for level in levels:
        more = [e for e in entries if e[0].level <= level]
        if not _fits(more):
            spread = [e for e in entries if e[0].level == level]
            break
        whole = more
    room = MAX_ENTRIES - len(whole)
    text = MAX_TEXT - sum(len(e[0].text) for e in whole)
    picked: list[_Entry] = []
    if room > 0:
        step = len(spread) / room
        for i in range(room):
            entry = spread[int(i * step)]
            if len(entry[0].text) > text:
                break
            picked.append(entry)
            text -= len(entry[0].text)
    return sorted(whole + picked, key=lambda e: e[0].start_char)


def _in_fence(fences: array[int], at: int) -> bool:
    """Whether offset ``at`` lies inside fenced code: an odd count of fence offsets
    at or before it."""
    return bisect_right(fences, at) % 2 == 1


def part_end(text: PageText, start: int, max_chars: int, fences: array[int]) -> int:
    """Where a part of at most ``max_chars`` characters from ``start`` ends: the end of
    the text when it fits; else the last block edge (the first character after a
    blank line, outside fenced code) in the part's last 5 %; else the last line's
    end there; else just after the last space there; else exactly ``max_chars``
    on. A part is never empty."""
    end = start + max_chars
    if end >= len(text):
        return len(text)
    low = max(start + 1, end - max(1, max_chars // 20))
    base = max(start, low - 2)
    window = text.window(base, end)  # text[base:end]
    line = space = -1
    for after in range(end, low - 1, -1):
        before = window[after - 1 - base]
        if before == "\n":
            blank = after - 2 >= base and window[after - 2 - base] == "\n"
            if blank and not _in_fence(fences, after):
                return after
            if line < 0:
                line = after
        elif space < 0 and before in " \t":
            space = after
    if line >= 0:
        return line
    return space if space >= 0 else end
