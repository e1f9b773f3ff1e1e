"""The content boundary's pipeline for external text: titles, snippets, fetched content.

Everything here is a pure function of its arguments: no I/O, no clock, no
randomness, no configuration read behind the caller's back. Same input, same
output, byte for byte (for one Unicode version of the running Python; see
"Unicode data" in ``unicode``).

Theory of operation (REQ-CTX-004, REQ-SEC-015, REQ-CTX-006, REQ-SEC-003):

1. ``clean_text`` turns raw provider text into plain text. When the provider
   sends HTML (``markup=True``) the markup is removed by a small scanner that
   never evaluates anything, then character references are decoded, once.
   Decoded text is never parsed again: ``&lt;b&gt;`` comes back as the literal
   text ``<b>``, which is data like any other.
2. Invisible and control characters are removed and counted; that count feeds
   the ``characters_removed`` notice. Tab, newline and the other line breaks
   become spaces and are not counted. Two joiners and the variation selectors
   survive only where they carry writing (rules in ``unicode``).
3. Whitespace runs collapse to one space and the ends are trimmed. The book
   orders "whitespace collapsed" before "invisible characters removed"; we
   collapse after removal instead, which gives the book's result plus the one
   extra collapse a removed character between two spaces needs.
4. ``bound`` cuts to a number of Unicode scalar values (LIM-U1) at a character
   boundary and, when it can, at a grapheme boundary.
5. ``looks_like_instruction`` flags text that addresses a model. The text is
   never rewritten for it (REQ-SEC-003): the caller adds a notice or drops the
   result.

The rules of each step are in the module that applies it: ``unicode`` (the
invisible characters and joiners), ``markup`` (tags and references), ``bounds``
(cutting) and ``instructions`` (text addressed to a model).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from rypsok.core.boundary.bounds import bound
from rypsok.core.boundary.instructions import _either_instruction_like, _instruction_like
from rypsok.core.boundary.markup import _decode_entities, _strip_markup
from rypsok.core.boundary.unicode import (
    _collapse_whitespace,
    _remove_invisible,
    _spaced,
    _visible,
)
from rypsok.core.limits import TABLE

TITLE_MAX_CHARS: Final[int] = TABLE["LIM-S10"].default
SNIPPET_MAX_CHARS: Final[int] = TABLE["LIM-S9"].default


# --------------------------------------------------------------------------
# Results


@dataclass(frozen=True, slots=True)
class Cleaned:
    """Plain text, and how many invisible or control characters were removed."""

    text: str
    removed: int


@dataclass(frozen=True, slots=True)
class CleanedField:
    """One external field after cleaning, bounding and the instruction check."""

    text: str
    removed: int
    truncated: bool
    instruction_like: bool


@dataclass(frozen=True, slots=True)
class CleanedResult:
    """A search result's title and snippet, and what the boundary did to them."""

    title: str
    snippet: str
    characters_removed: int
    title_truncated: bool
    snippet_truncated: bool
    instruction_like: bool


# --------------------------------------------------------------------------
# The pipeline


def clean_text(raw: str, *, markup: bool) -> Cleaned:
    """Plain, visible text from provider text, and the count of removed characters.

    ``markup`` says the provider sends HTML: tags are removed and character
    references decoded. ``removed`` counts only what the invisible and
    control rule removed, never markup or collapsed whitespace. Never raises
    on any string. On its own output with ``markup=False`` it is the identity
    and removes 0.
    """
    text = _decode_entities(_strip_markup(raw)) if markup else raw
    text, removed = _remove_invisible(text)
    return Cleaned(_collapse_whitespace(text), removed)


def clean_field(raw: str, *, markup: bool, limit: int) -> CleanedField:
    """Clean, bound and check one external field (a title or a snippet).

    The instruction check reads the text that is returned, after the cut: the
    notice speaks of what the caller receives.
    """
    text, removed, truncated, visible = _clean_bound(raw, markup, limit)
    # A cut of collapsed text is collapsed too: bound only drops whitespace at its end.
    flagged = _instruction_like(text, collapsed=True, visible=visible)
    return CleanedField(text, removed, truncated, flagged)


def _clean_bound(raw: str, markup: bool, limit: int) -> tuple[str, int, bool, bool]:
    """clean_text and bound without the intermediate objects (a search cleans twenty
    fields or more), and whether the text held nothing invisible: then it keeps none
    through collapsing and the cut, and the instruction check need not look again."""
    text = _decode_entities(_strip_markup(raw)) if markup else raw
    visible = _visible(text)
    text, removed = (_spaced(text), 0) if visible else _remove_invisible(text)
    text, truncated = bound(_collapse_whitespace(text), limit)
    return text, removed, truncated, visible


def clean_result(
    title: str,
    snippet: str,
    *,
    title_markup: bool,
    snippet_markup: bool,
    title_max_chars: int = TITLE_MAX_CHARS,
    snippet_max_chars: int = SNIPPET_MAX_CHARS,
) -> CleanedResult:
    """A result's title and snippet through the boundary (REQ-CTX-004 order).

    The bounds are the effective ``title_max_chars`` and ``snippet_max_chars``
    of the configuration (LIM-S10, LIM-S9); the defaults are the book's.
    """
    title, title_removed, title_cut, title_visible = _clean_bound(
        title, title_markup, title_max_chars
    )
    snippet, snippet_removed, snippet_cut, snippet_visible = _clean_bound(
        snippet, snippet_markup, snippet_max_chars
    )
    # The instruction check of each field as returned (collapsed, cut), both at once.
    flagged = _either_instruction_like(
        title, snippet, first_visible=title_visible, second_visible=snippet_visible
    )
    return CleanedResult(
        title=title,
        snippet=snippet,
        characters_removed=title_removed + snippet_removed,
        title_truncated=title_cut,
        snippet_truncated=snippet_cut,
        instruction_like=flagged,
    )


def tally(results: Iterable[CleanedResult]) -> dict[str, int]:
    """Notice counts for a response, keyed by notice code; zero counts omitted.

    ``characters_removed`` counts characters; the other three count results.
    Dropping flagged results (``drop_flagged_results``) is the pipeline's
    decision, not this function's.
    """
    counts = {
        "title_truncated": 0,
        "snippet_truncated": 0,
        "characters_removed": 0,
        "instruction_like_content": 0,
    }
    for r in results:
        counts["title_truncated"] += r.title_truncated
        counts["snippet_truncated"] += r.snippet_truncated
        counts["characters_removed"] += r.characters_removed
        counts["instruction_like_content"] += r.instruction_like
    return {code: count for code, count in counts.items() if count}


# --------------------------------------------------------------------------
# Fetched content: Markdown keeps its lines


def clean_content(markdown: str) -> tuple[str, int]:
    """Invisible and control characters removed line by line (REQ-SEC-015), so the
    Markdown's line structure stays; returns the text and how many were removed."""
    removed = 0
    lines: list[str] = []
    for line in markdown.split("\n"):
        cleaned, count = _remove_invisible(line.replace("\r", ""))
        removed += count
        lines.append(cleaned.rstrip())
    return "\n".join(lines).strip("\n"), removed
