"""Cutting external text to a length (LIM-U1, LIM-S9, LIM-S10).

A cut counts Unicode scalar values, falls at a character boundary and, when it
can, at a grapheme boundary. It adds no ellipsis (the notice says the text was
cut, and rypsok does not add words to external text) and drops the whitespace
and any joiner left at the end of the cut.
"""

from __future__ import annotations

import unicodedata

from rypsok.core.boundary.unicode import (
    _EMOJI_MODIFIERS,
    _JOINERS,
    _PREPENDED_MARKS,
    _REGIONAL_INDICATORS,
    _TAGS,
    _WHITESPACE,
    ZWJ,
    ZWNJ,
    _in,
    _indic_script,
    _is_variation_selector,
    _is_virama,
)


def _boundary_allowed(text: str, p: int) -> bool:
    """Whether a cut between text[p-1] and text[p] keeps graphemes whole.

    A simplified extended-grapheme rule: no cut before a mark, a ZWJ, a
    selector, a skin-tone modifier or a tag character; none after a ZWJ or a
    prepended mark; none inside an Indic conjunct, a pair of regional
    indicators or a surrogate pair. A ZWNJ separates by definition, so a cut
    may fall on either side of it (``bound`` then drops it from the end).
    """
    a, b = text[p - 1], text[p]
    cb = ord(b)
    if b == ZWNJ:
        return True
    if (
        unicodedata.category(b) in ("Mn", "Mc", "Me")
        or b == ZWJ
        or _is_variation_selector(cb)
        or _in(cb, _EMOJI_MODIFIERS)
        or _in(cb, _TAGS)
    ):
        return False
    if a == ZWJ or ord(a) in _PREPENDED_MARKS:
        return False
    if _is_virama(a) and _indic_script(a) == _indic_script(b):
        return False
    if 0xD800 <= ord(a) <= 0xDBFF and 0xDC00 <= cb <= 0xDFFF:
        return False
    if _in(ord(a), _REGIONAL_INDICATORS) and _in(cb, _REGIONAL_INDICATORS):
        run = 0
        k = p - 1
        while k >= 0 and _in(ord(text[k]), _REGIONAL_INDICATORS):
            run += 1
            k -= 1
        return run % 2 == 0  # a flag is a pair: cut only between pairs
    return True


def bound(text: str, limit: int) -> tuple[str, bool]:
    """At most `limit` Unicode scalar values of `text`, and whether it was cut.

    The cut backs off to a grapheme boundary (see ``_boundary_allowed``); when
    a single grapheme is longer than the whole bound (a base with hundreds of
    marks) the cut falls at `limit` instead, since an empty field says less
    than a partial one. Whitespace and joiners left at the end of a cut are
    dropped. The result is always a prefix of `text`.
    """
    if limit < 0:
        raise ValueError("limit must not be negative")
    if len(text) <= limit:
        return text, False
    cut = limit
    while cut > 0 and not _boundary_allowed(text, cut):
        cut -= 1
    if cut == 0:
        cut = limit
    head = text[:cut].rstrip("".join(sorted(_WHITESPACE | _JOINERS)))
    return head, True
