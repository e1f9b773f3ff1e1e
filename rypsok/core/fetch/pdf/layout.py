"""A PDF's text positions to Markdown a reader would write (docs/tools.md, "PDFs").

The input is what glyphs.py reads off each page: spans, pieces of one line's text with
their place, font size and weight. Pure Python, no PDFium, so it is tested with spans
written by hand. Per page: spans become blocks (lines close below one another and
overlapping sideways), blocks are put in reading order (columns one after another,
a block that spans the columns cuts the page into bands), rows of short cells
become tables. Over the whole document: the body's font size is the one most text is
set in, larger or bold short blocks are headings, a line in the top or bottom margin
that comes back on most pages (digits aside) is a running header or footer and goes,
as does a page number. No marker is written between pages: a paragraph that runs on to
the next page is joined, and a page break is otherwise a paragraph break.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Final

from rypsok.core.fetch.extraction.escape import plain_block, plain_inline

# Ligature glyphs some fonts map to one code point: written as their letters.
_LIGATURES: Final = {chr(c): unicodedata.normalize("NFKC", chr(c)) for c in range(0xFB00, 0xFB07)}
# PDFium marks a hyphen it found at a line end: U+FFFE (PDFium 159) or U+0002 (126, the
# Intel macOS pin); either is a hyphen for _join_lines, which drops it where a word goes on.
_LIGATURE_TABLE: Final = str.maketrans({**_LIGATURES, "\ufffe": "-", "\x02": "-"})
# A line-end hyphen PDFium found in the text (U+FFFE, U+0002), the soft hyphen, or a
# hyphen proper: a word broken across lines when the next line goes on in lower case.
_BREAK_HYPHENS: Final = ("-", "\u00ad", "\ufffe", "\x02", "\u2010")
# Bullets, with the private-use code points of the Symbol and Wingdings fonts that word
# processors draw them with.
_BULLETS: Final = frozenset("•◦▪▫‣∙●○■□–—-*·►▶➢✓✔❖\uf0b7\uf0a7\uf0d8\uf076\uf0fc\uf0a8\uf0e8")
# A list item's marker alone: a bullet, "1.", "a)", "(iv)".
_MARKER: Final = re.compile(
    "[" + re.escape("".join(sorted(_BULLETS))) + r"]|\(?(?:\d{1,3}|[a-z]|[ivx]{1,4})[.)]"
)
# A section number set apart from its title the same way: "2.1", "A".
_LABEL: Final = re.compile(r"\d{1,3}(?:\.\d{1,3})*|[A-Z]")
# A marker set apart from its text by a tab stop is joined to it when the text starts
# within this many font sizes.
MARKER_GAP: Final = 4.0
# The widest gap inside a line that join_gaps closes, in font sizes.
JOIN_GAP: Final = 4.0
_NUMBERED: Final = re.compile(r"(\(?\d{1,3}[.)]|\(?[a-z][.)]|\([ivx]{1,4}\))\s+")
_PAGE_NUMBER: Final = re.compile(
    r"(?:page|p\.|seite|página|pagina)?\s*[\[(-]?\s*(\d{1,5}|[ivxlcdm]{1,7})\s*[\])-]?"
    r"(?:\s*(?:of|/|von|de|di)\s*\d{1,5})?",
    re.IGNORECASE,
)
_DIGITS: Final = re.compile(r"\d+")
_LEADER: Final = re.compile(r"(?:\s?\.){4,}")
_CONTENTS_ENTRY: Final = re.compile(r" …\s*\S{1,8}$")
_SENTENCE_END: Final = frozenset(".!?:;")

# Fractions of the font size, found on the corpus of tests/support/pdfs.py and the bench.
SAME_LINE: Final = 0.35  # baselines closer than this are one line
NEW_BLOCK_GAP: Final = 1.55  # a baseline further below than this starts a new block
MARGIN: Final = 0.09  # the top and bottom part of a page where running lines stand
HEADING_RATIO: Final = 1.15  # a block this much larger than the body is a heading
MAX_HEADING_CHARS: Final = 200
RUNNING_SHARE: Final = 0.5  # a margin line on at least this share of pages repeats
MIN_GUTTER: Final = 6.0  # points of empty width that separate columns
TABLE_CELL_CHARS: Final = 25  # cells shorter than this on average make a table, not columns
MAX_TABLE_COLUMNS: Final = 30
MAX_DEPTH: Final = 32  # columns within columns; deeper, a page is read top to bottom


@dataclass(slots=True)
class Span:
    """One piece of a line: text with its left and right edge, baseline (PDF space:
    y grows upwards), font size and weight."""

    x0: float
    x1: float
    y: float
    size: float
    bold: bool
    text: str
    mono: bool = False  # set in a monospaced font: code

    @property
    def top(self) -> float:
        return self.y + self.size * 0.8

    @property
    def bottom(self) -> float:
        return self.y - self.size * 0.25


@dataclass(slots=True)
class PageSpans:
    width: float
    height: float
    spans: list[Span]


@dataclass(slots=True)
class Block:
    """Spans close below one another: a paragraph, a heading, a list, a table's cell."""

    spans: list[Span] = field(default_factory=list)
    x0: float = 0.0
    x1: float = 0.0
    top: float = 0.0
    bottom: float = 0.0

    def add(self, span: Span) -> None:
        if not self.spans:
            self.x0, self.x1, self.top, self.bottom = span.x0, span.x1, span.top, span.bottom
        else:
            self.x0, self.x1 = min(self.x0, span.x0), max(self.x1, span.x1)
            self.top, self.bottom = max(self.top, span.top), min(self.bottom, span.bottom)
        self.spans.append(span)

    @property
    def last(self) -> Span:
        return self.spans[-1]


@dataclass(slots=True)
class Piece:
    """A block made text, waiting for the document-wide decisions."""

    kind: str  # "text" or "table"
    lines: list[str]  # a text block's lines; a table's rows, cells joined by "\x1f"
    size: float
    bold: bool
    chars: int
    margin: str | None = None  # "top" or "bottom" when the block stands in a margin
    right_short: list[bool] = field(default_factory=list)  # a line ending well short
    # Set in a monospaced font: its lines as laid out (indentation kept), for a code block.
    code: list[str] | None = None
    column_end: bool = True  # the last piece of its column or page


# -- one page --------------------------------------------------------------------------------


def rows(spans: Iterable[Span]) -> list[list[Span]]:
    """Spans grouped by baseline, top to bottom, each row left to right."""
    out: list[list[Span]] = []
    for span in sorted(spans, key=lambda s: (-s.y, s.x0)):
        if out and abs(out[-1][0].y - span.y) <= SAME_LINE * max(span.size, out[-1][0].size):
            out[-1].append(span)
        else:
            out.append([span])
    for row in out:
        row.sort(key=lambda s: s.x0)
    return out


def join_gaps(spans: list[Span]) -> list[Span]:
    """Spans of one line joined across a gap that text passes through on the line above
    or below: a wide space inside a column (a justified line, a sentence's space), not
    a gutter between columns or between a table's cells, which stay empty all the way
    down. The reader cut the line at the gap because it cannot tell them apart alone."""
    lines = rows(spans)
    out: list[Span] = []
    for index, row in enumerate(lines):
        near = [
            lines[i]
            for i in (index - 1, index + 1)
            if 0 <= i < len(lines) and abs(lines[i][0].y - row[0].y) <= 2.5 * row[0].size
        ]
        merged: list[Span] = []
        for span in row:
            last = merged[-1] if merged else None
            if last is not None and 0 <= span.x0 - last.x1 <= JOIN_GAP * last.size:
                middle = (last.x1 + span.x0) / 2
                if any(s.x0 < middle < s.x1 for line in near for s in line):
                    merged[-1] = Span(
                        last.x0,
                        span.x1,
                        last.y,
                        last.size,
                        last.bold,
                        f"{last.text} {span.text}",
                        last.mono,
                    )
                    continue
            merged.append(span)
        out.extend(merged)
    return out


def attach_markers(spans: list[Span]) -> list[Span]:
    """A list marker drawn apart from its text (a hanging indent's tab stop) joined to
    the text that follows it on its line, so that the item is one line, not a column of
    bullets beside a column of text."""
    out: list[Span] = []
    for row in rows(spans):
        merged: list[Span] = []
        for span in row:
            last = merged[-1] if merged else None
            label = last.text.strip() if last is not None else ""
            if (
                last is not None
                and (_MARKER.fullmatch(label) or _LABEL.fullmatch(label))
                and 0 <= span.x0 - last.x1 <= MARKER_GAP * max(last.size, 0.1)
            ):
                mark = "•" if label in _BULLETS else label
                joined = f"{mark} {span.text.lstrip()}"
                merged[-1] = Span(last.x0, span.x1, span.y, span.size, span.bold, joined, span.mono)
            else:
                merged.append(span)
        out.extend(merged)
    return out


def blocks_of(spans: Sequence[Span]) -> list[Block]:
    """Spans to blocks: a span joins the open block whose last line it continues (just
    below it, overlapping it sideways, a like font size), else starts one."""
    blocks: list[Block] = []
    open_: list[Block] = []
    lines = rows(spans)
    leading = _leading(lines)
    for row in lines:
        taken: set[int] = set()
        for span in row:
            home = None
            for index, block in enumerate(open_):
                if index in taken:
                    continue
                last = block.last
                drop = last.y - span.y
                if drop <= SAME_LINE * span.size or drop > _block_gap(span.size, leading):
                    continue
                if span.x0 >= block.x1 or span.x1 <= block.x0:
                    continue
                if not 0.8 <= span.size / max(last.size, 0.1) <= 1.25:
                    continue
                home = index
                break
            if home is None:
                block = Block()
                blocks.append(block)
                open_.append(block)
                home = len(open_) - 1
            open_[home].add(span)
            taken.add(home)
        # A block whose last line is far above this row takes nothing more.
        floor = row[0].y
        open_ = [b for b in open_ if b.last.y - floor <= NEW_BLOCK_GAP * 2 * max(b.last.size, 1)]
    return blocks


def _leading(lines: list[list[Span]]) -> float | None:
    """The page's usual distance from one baseline to the next, when it has one."""
    drops: Counter[float] = Counter()
    for upper, lower in pairwise(lines):
        size = upper[0].size
        drop = upper[0].y - lower[0].y
        if SAME_LINE * size < drop < 3 * size:
            drops[round(drop * 2) / 2] += 1
    if not drops:
        return None
    value, seen = drops.most_common(1)[0]
    return value if seen >= 3 else None


def _block_gap(size: float, leading: float | None) -> float:
    """How far below a line the next may stand and still be in its block: the usual
    line distance and a bit (double-spaced pages too), never less than the default."""
    floor = NEW_BLOCK_GAP * max(size, 1.0)
    if leading is None or leading > 2.6 * size:
        return floor
    return max(floor, leading * 1.3)


def _gaps(intervals: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The empty stretches at least MIN_GUTTER wide between merged intervals."""
    merged: list[list[float]] = []
    for lo, hi in sorted(intervals):
        if merged and lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return [(a[1], b[0]) for a, b in pairwise(merged) if b[0] - a[1] >= MIN_GUTTER]


def columns(blocks: Sequence[Block]) -> list[list[Block]]:
    """Blocks split at every vertical gutter, left to right (one group when none)."""
    gaps = _gaps([(b.x0, b.x1) for b in blocks])
    if not gaps:
        return [list(blocks)]
    groups: list[list[Block]] = [[] for _ in range(len(gaps) + 1)]
    for block in blocks:
        groups[sum(1 for lo, _ in gaps if block.x0 >= lo)].append(block)
    return [g for g in groups if g]


def _table_like(groups: list[list[Block]]) -> bool:
    """Columns of short pieces are a table's; columns of prose have long lines."""
    if len(groups) > MAX_TABLE_COLUMNS:  # scattered pieces, not a table: read row by row
        return False
    spans = [s for g in groups for b in g for s in b.spans]
    mean = sum(len(s.text) for s in spans) / max(len(spans), 1)
    return mean < TABLE_CELL_CHARS


@dataclass(slots=True)
class Region:
    """Blocks in reading order, or the spans of a table."""

    blocks: list[Block]
    table: list[list[Block]] | None = None  # the table's columns, left to right


def bands(blocks: Sequence[Block]) -> list[list[Block]]:
    """Blocks cut where nothing stands between one and the next, top to bottom."""
    out: list[list[Block]] = []
    floor = 0.0
    for block in sorted(blocks, key=lambda b: -b.top):
        if out and block.top >= floor:  # it reaches up beside what the band holds
            out[-1].append(block)
            floor = min(floor, block.bottom)
        else:
            out.append([block])
            floor = block.bottom
    return out


def _same_columns(upper: list[list[Block]], lower: list[list[Block]]) -> bool:
    if len(upper) < 2 or len(upper) != len(lower):
        return False
    for a, b in zip(upper, lower, strict=True):
        a0, a1 = min(x.x0 for x in a), max(x.x1 for x in a)
        b0, b1 = min(x.x0 for x in b), max(x.x1 for x in b)
        if a0 >= b1 or b0 >= a1:
            return False
    return True


def reading_order(blocks: list[Block], depth: int = 0) -> list[Region]:
    """Blocks in the order a reader takes them: the page is cut into bands where a gap
    runs across it; bands that run on in the same columns are one band again (two
    columns whose paragraph gaps happen to line up); a band's columns are read one
    after another, each in the same way; a band of short pieces in columns is a table."""
    if len(blocks) <= 1 or depth > MAX_DEPTH:
        return [Region(sorted(blocks, key=lambda b: (-b.top, b.x0)))]
    merged: list[tuple[list[Block], list[list[Block]]]] = []
    for band in bands(blocks):
        groups = columns(band)
        if merged and _same_columns(merged[-1][1], groups):
            joined = merged[-1][0] + band
            merged[-1] = (joined, columns(joined))
        else:
            merged.append((band, groups))
    out: list[Region] = []
    for band, groups in merged:
        if len(groups) == 1:
            out.append(Region(sorted(band, key=lambda b: (-b.top, b.x0))))
        elif _table_like(groups):
            out.append(Region(sorted(band, key=lambda b: (-b.top, b.x0)), table=groups))
        else:
            for group in groups:
                out.extend(reading_order(group, depth + 1))
    return out


def _line_text(row: list[Span]) -> str:
    """A row's text; a table of contents' dot leaders ("Introduction . . . . 1") become
    one ellipsis."""
    text = " ".join(s.text.strip() for s in row if s.text.strip())
    return _LEADER.sub(" …", text) if ". ." in text or "...." in text else text


def _table_piece(groups: list[list[Block]]) -> Piece:
    where = {id(s): i for i, g in enumerate(groups) for b in g for s in b.spans}
    spans = [s for g in groups for b in g for s in b.spans]
    lines: list[str] = []
    for row in rows(spans):
        cells = [""] * len(groups)
        for span in row:
            i = where[id(span)]
            cells[i] = f"{cells[i]} {span.text.strip()}".strip()
        lines.append("\x1f".join(cells))
    sizes = Counter(round(s.size) for s in spans)
    return Piece("table", lines, sizes.most_common(1)[0][0], False, sum(len(s.text) for s in spans))


def _text_piece(block: Block, page: PageSpans) -> Piece:
    lines: list[str] = []
    short: list[bool] = []
    for row in rows(block.spans):
        text = _line_text(row)
        if text:
            lines.append(text)
            short.append(row[-1].x1 < block.x1 - 2 * row[-1].size)
    weights = Counter[float]()
    bold = 0
    for span in block.spans:
        weights[round(span.size * 2) / 2] += len(span.text)
        bold += len(span.text) if span.bold else 0
    chars = sum(weights.values())
    margin = None
    if block.bottom >= page.height * (1 - MARGIN):
        margin = "top"
    elif block.top <= page.height * MARGIN:
        margin = "bottom"
    mono = sum(len(s.text) for s in block.spans if s.mono)
    return Piece(
        "text",
        lines,
        weights.most_common(1)[0][0],
        bold * 2 > chars,
        chars,
        margin,
        short,
        _code_lines(block) if mono * 2 > chars else None,
    )


def _code_lines(block: Block) -> list[str]:
    """A monospaced block's lines with their indentation, in character widths."""
    widths = [(s.x1 - s.x0) / len(s.text) for s in block.spans if s.mono and len(s.text) > 1]
    width = sorted(widths)[len(widths) // 2] if widths else 0.0
    out: list[str] = []
    for row in rows(block.spans):
        line = ""
        for span in row:
            column = round((span.x0 - block.x0) / width) if width > 0 else len(line)
            line += " " * max(column - len(line), 1 if line else 0) + span.text
        out.append(line.rstrip())
    return out


def page_pieces(page: PageSpans) -> list[Piece]:
    """One page's blocks as pieces in reading order."""
    out: list[Piece] = []
    tops: list[tuple[float, float]] = []  # each piece's top and bottom
    for region in reading_order(blocks_of(attach_markers(join_gaps(page.spans)))):
        if region.table is not None:
            out.append(_table_piece(region.table))
            blocks = [b for group in region.table for b in group]
            tops.append((max(b.top for b in blocks), min(b.bottom for b in blocks)))
            continue
        for block in region.blocks:
            out.append(_text_piece(block, page))
            tops.append((block.top, block.bottom))
    # A piece the next one starts above ends a column (the reader goes up to the next
    # one's top); the page's last piece ends one too. Lines in the margins (a running
    # footer, a page number) do not count: they may go before the document is done.
    body = [i for i, piece in enumerate(out) if not piece.margin]
    for position, index in enumerate(body):
        following = tops[body[position + 1]][0] if position + 1 < len(body) else None
        out[index].column_end = following is None or following > tops[index][1]
    return [p for p in out if p.lines]


# -- the whole document --------------------------------------------------------------------


def _running_key(piece: Piece) -> str:
    return _DIGITS.sub("#", " ".join(piece.lines).lower())


def drop_running(pages: list[list[Piece]]) -> None:
    """Remove, in place, page numbers in the margins, and running headers and footers:
    a margin line that comes back (digits aside) on at least half the pages, two at least."""
    seen: Counter[tuple[str | None, str]] = Counter()
    for pieces in pages:
        seen.update({(p.margin, _running_key(p)) for p in pieces if p.margin})
    needed = max(2, -(-len(pages) * RUNNING_SHARE // 1))

    def running(piece: Piece) -> bool:
        if not piece.margin:
            return False
        if len(piece.lines) == 1 and _PAGE_NUMBER.fullmatch(piece.lines[0].strip()):
            return True
        return seen[(piece.margin, _running_key(piece))] >= needed

    for pieces in pages:
        pieces[:] = [p for p in pieces if not running(p)]


def body_size(pages: list[list[Piece]]) -> float:
    sizes: Counter[float] = Counter()
    for pieces in pages:
        for p in pieces:
            sizes[p.size] += p.chars
    return sizes.most_common(1)[0][0] if sizes else 0.0


def heading_levels(pages: list[list[Piece]], body: float) -> dict[float, int]:
    """Font size to heading level: the largest size above the body's is level 1."""
    larger = sorted(
        {p.size for ps in pages for p in ps if p.kind == "text" and p.size >= body * HEADING_RATIO},
        reverse=True,
    )
    return {size: min(i + 1, 3) for i, size in enumerate(larger)}


def _join_lines(lines: list[str]) -> str:
    """Lines of a paragraph as one: a word broken by a hyphen at a line end is joined."""
    out: list[str] = []
    for line in lines:
        if out:
            last = out[-1]
            if last.endswith(_BREAK_HYPHENS) and last[-2:-1].isalpha():
                # A word broken for the line goes on in lower case: one word again.
                # Else the hyphen is the word's own ("Smith-" "Jones"): kept, no space.
                if line[:1].islower():
                    out[-1] = last[:-1]
            else:
                out.append(" ")
        out.append(line)
    return "".join(out)


def _list_item(line: str) -> tuple[str, str] | None:
    """("-" or "1.", the item's text) when a line starts a list item."""
    if len(line) > 2 and line[0] in _BULLETS and line[1] in " \t":
        return "-", line[2:].strip()
    match = _NUMBERED.match(line)
    if match and match.end() < len(line):
        label = match.group(1).strip("()")
        number = label[:-1] if label[-1] in ".)" else label
        mark = f"{number}." if number.isdigit() else "-"
        text = line[match.end() :]
        return mark, (text if number.isdigit() else f"{match.group(1).strip()} {text}")
    return None


def _text_blocks(piece: Piece) -> list[tuple[str, str]]:
    """A text piece as ("p" | "li:<mark>", text) parts: list items and paragraphs."""
    parts: list[tuple[str, list[str]]] = []
    for line, short in zip(
        piece.lines, piece.right_short or [False] * len(piece.lines), strict=False
    ):
        item = _list_item(line)
        if item is not None:
            parts.append((f"li:{item[0]}", [item[1]]))
        elif parts and not parts[-1][0].startswith("end"):
            parts[-1][1].append(line)
        else:
            parts.append(("p", [line]))
        if ((short and line[-1:] in _SENTENCE_END) or _contents(line)) and parts[-1][0] == "p":
            parts[-1] = ("end", parts[-1][1])  # the paragraph ends on this short line
    return [("p" if kind == "end" else kind, _join_lines(lines)) for kind, lines in parts]


def _table_markdown(piece: Piece) -> str:
    """A table of two rows or more; a single row is a line of text."""
    rows_ = [r.split("\x1f") for r in piece.lines]
    if len(rows_) < 2:
        return plain_block(" ".join(c for c in rows_[0] if c))
    width = max(len(r) for r in rows_)

    def cell(text: str) -> str:
        return plain_inline(text).replace("|", "\\|")

    lines = ["| " + " | ".join(cell(c) for c in rows_[0]) + " |", "|" + " --- |" * width]
    lines += ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows_[1:]]
    return "\n".join(lines)


def to_markdown(pages: list[list[Piece]]) -> tuple[list[str], str | None]:
    """The document's Markdown blocks, and its first heading (a title when the file's
    metadata has none)."""
    drop_running(pages)
    levels = heading_levels(pages, body_size(pages))
    out: list[str] = []
    first_heading: str | None = None
    # A paragraph or a list item a page ended in the middle of: its kind and its parts,
    # written once it ends.
    running: list[str] = []
    running_kind = "p"

    def close() -> None:
        if running:
            text = plain_block(_join_lines(running))
            out.append(text if running_kind == "p" else f"{running_kind[3:]} {text}")
            running.clear()

    # Monospaced blocks are code, unless most of the document is set that way (a
    # typewritten page, a plain-text file printed): then they are its text.
    total = sum(p.chars for ps in pages for p in ps)
    coded = sum(p.chars for ps in pages for p in ps if p.code is not None)
    code_blocks = coded * 2 <= total
    for pieces in pages:
        for piece in pieces:
            if piece.kind == "table":
                close()
                out.append(_table_markdown(piece))
                continue
            if piece.code is not None and code_blocks:
                close()
                out.append(_fence(piece.code))
                continue
            text = " ".join(piece.lines)
            level = levels.get(piece.size)
            if level is None and _bold_heading(piece, text):
                level = min(len(levels) + 1, 4)
            if level is not None and len(text) <= MAX_HEADING_CHARS and not _contents(text):
                close()
                heading = " ".join(text.split())
                out.append("#" * level + " " + _heading_text(heading))
                first_heading = first_heading or heading
                continue
            parts = _text_blocks(piece)
            # A paragraph the last column or page left unfinished goes on here when this
            # block starts in lower case.
            if running and parts and parts[0][0] == "p" and _goes_on(parts[0][1]):
                running.append(parts[0][1])
                parts = parts[1:]
                if not parts and running[-1][-1:] in _SENTENCE_END:
                    close()  # it ended here
            if parts:
                close()
            for number, (kind, para) in enumerate(parts):
                last = number == len(parts) - 1 and piece.column_end
                if last and para[-1:] not in _SENTENCE_END:
                    running.append(para)
                    running_kind = kind
                elif kind == "p":
                    out.append(plain_block(para))
                else:  # an item's text starts a line of its own in Markdown
                    out.append(f"{kind[3:]} {plain_block(para)}")
    close()
    # A block of characters the escaper takes out (noncharacters) is empty: not a block.
    return _merge_lists([b for b in out if b.strip()]), first_heading


def _heading_text(text: str) -> str:
    """A heading's text as Markdown: a run of "#" at its end would close the heading."""
    written = plain_inline(text)
    stripped = written.rstrip("#")
    return stripped + "\\#" * (len(written) - len(stripped))


def _fence(lines: list[str]) -> str:
    """A fenced code block longer than any run of backticks in it."""
    longest = max((len(m) for m in re.findall(r"`+", "\n".join(lines))), default=0)
    fence = "`" * max(3, longest + 1)
    return "\n".join([fence, *lines, fence])


def _contents(text: str) -> bool:
    """Whether a line is a table of contents' entry (its page after a leader)."""
    return bool(_CONTENTS_ENTRY.search(text))


def _goes_on(text: str) -> bool:
    return text[:1].islower()


def _bold_heading(piece: Piece, text: str) -> bool:
    """A short bold line of its own that does not read as a sentence or an item."""
    if not piece.bold or len(piece.lines) != 1 or len(text) > 100:
        return False
    return text[-1:] not in ".,;" and _list_item(text) is None


def _merge_lists(blocks: list[str]) -> list[str]:
    """Consecutive list items as one list block (no blank line between them), and
    consecutive code blocks as one (a blank line inside code splits its block)."""
    out: list[str] = []
    for block in blocks:
        if block.startswith("```") and out and out[-1].startswith("```"):
            before, fence = out[-1].rsplit("\n", 1)
            first, after = block.split("\n", 1)
            if fence == first:
                out[-1] = f"{before}\n\n{after}"
                continue
        item = block.startswith("- ") or bool(re.match(r"\d{1,3}\. ", block))
        if item and out and out[-1].split("\n")[-1][:1] in "-0123456789" and _is_item(out[-1]):
            out[-1] += "\n" + block
        else:
            out.append(block)
    return out


def _is_item(block: str) -> bool:
    last = block.split("\n")[-1]
    return last.startswith("- ") or bool(re.match(r"\d{1,3}\. ", last))


def normalise(text: str) -> str:
    """A span's text as a reader wants it: ligatures as letters."""
    return text.translate(_LIGATURE_TABLE)
