"""Unicode tables and the one rule for invisible characters (REQ-SEC-015).

``is_invisible`` is the rule: what a reader does not see, or a control. The
content boundary removes what it answers yes for (with the joiner and selector
exceptions below, and the whitespace controls made spaces), and the secret
check (``rypsok.core.privacy``) reads text through the same characters.

Removal rules:

- removed and counted: C0 and C1 controls other than the whitespace ones, DEL,
  lone surrogates, noncharacters, every format character (Cf) except the
  prepended concatenation marks, and every Default_Ignorable_Code_Point (soft
  hyphen, combining grapheme joiner, Hangul fillers, bidi marks, embeddings,
  overrides and isolates, zero-width space, word joiner, invisible operators,
  BOM, tag characters);
- ZWNJ (U+200C) is kept between two letters or marks of Arabic script, or of
  one Indic script; ZWJ (U+200D) between a virama and a letter of one Indic
  script (a conjunct) or between two emoji, with the emoji's variation selector
  and skin-tone modifier allowed in between. Of a run of joiners at most one
  is kept, so none starts or ends the text and never two in a row;
- a variation selector is kept only right after a base it can select:
  VS15/VS16 after an emoji-capable character, VS1-VS14 after any visible
  character, the ideographic selectors after a Han ideograph, the Mongolian
  ones after a Mongolian letter. A second selector in a row is removed: that
  is how data is smuggled in selectors after an emoji;
- tag characters are always removed and counted. A subdivision flag such as
  Scotland's comes back as the black flag U+1F3F4, which stays.

Decisions where the book is silent:

- private-use characters stay: they are visible (an icon glyph or a box), not
  format characters, and removing them would hide that the provider sent them;
- unassigned code points stay (a newer emoji than our Unicode tables), except
  the 66 noncharacters, which are never assigned, and the unassigned code points
  of the default-ignorable ranges, which Unicode reserves to be shown as nothing;
- the prepended concatenation marks (U+0600..U+0605, U+06DD, U+070F, U+0890,
  U+0891, U+08E2, U+110BD, U+110CD) are Cf but visible signs, so they stay.

Unicode data: the categories come from the running Python's ``unicodedata``
(Unicode 14.0 on 3.11); the ranges below are written out. Two Python versions
can differ only on code points assigned after Unicode 14.0.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Final

ZWNJ: Final = "\u200c"
ZWJ: Final = "\u200d"
_JOINERS: Final = frozenset((ZWNJ, ZWJ))


# --------------------------------------------------------------------------
# Code point tables. Ranges are inclusive (first, last) pairs.

Ranges = tuple[tuple[int, int], ...]


def _in(cp: int, ranges: Ranges) -> bool:
    # The tables are short; a linear scan is simpler than bisect and as fast here.
    return any(lo <= cp <= hi for lo, hi in ranges)


# DerivedCoreProperties.txt, Default_Ignorable_Code_Point: the characters a
# renderer shows as nothing. Written out so the set does not follow the Python
# version.
_DEFAULT_IGNORABLE: Final[Ranges] = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)

# Prepended_Concatenation_Mark: format characters that are drawn (Arabic
# number signs, the end-of-ayah sign), so they are writing, not invisible.
_PREPENDED_MARKS: Final = frozenset(
    (
        0x0600,
        0x0601,
        0x0602,
        0x0603,
        0x0604,
        0x0605,
        0x06DD,
        0x070F,
        0x0890,
        0x0891,
        0x08E2,
        0x110BD,
        0x110CD,
    )
)

# Line and space breaks that are whitespace to a reader: they become spaces
# and are not counted as removed.
_WHITESPACE_CONTROLS: Final = frozenset("\t\n\v\f\r\x85")
# Zs, Zl and Zp, written out (a stable set since Unicode 6.3).
_SPACES: Final = (
    " \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
_WHITESPACE: Final = frozenset(_SPACES) | _WHITESPACE_CONTROLS
_WHITESPACE_RUN: Final = re.compile("[" + re.escape("".join(sorted(_WHITESPACE))) + "]+")

_VS_EMOJI: Final = (0xFE0E, 0xFE0F)
_VS_STANDARD: Final[Ranges] = ((0xFE00, 0xFE0D),)
_VS_IDEOGRAPHIC: Final[Ranges] = ((0xE0100, 0xE01EF),)
_VS_MONGOLIAN: Final = frozenset((0x180B, 0x180C, 0x180D, 0x180F))

_ARABIC: Final[Ranges] = (
    (0x0600, 0x06FF),
    (0x0750, 0x077F),
    (0x0870, 0x089F),
    (0x08A0, 0x08FF),
    (0xFB50, 0xFDFF),
    (0xFE70, 0xFEFE),
    (0x10EC0, 0x10EFF),
    (0x1EE00, 0x1EEFF),
)
# The South Asian Brahmic blocks, each its own script: a joiner never joins
# two scripts.
_INDIC: Final[tuple[tuple[int, int, str], ...]] = (
    (0x0900, 0x097F, "deva"),
    (0xA8E0, 0xA8FF, "deva"),
    (0x1CD0, 0x1CFF, "deva"),
    (0x0980, 0x09FF, "beng"),
    (0x0A00, 0x0A7F, "guru"),
    (0x0A80, 0x0AFF, "gujr"),
    (0x0B00, 0x0B7F, "orya"),
    (0x0B80, 0x0BFF, "taml"),
    (0x0C00, 0x0C7F, "telu"),
    (0x0C80, 0x0CFF, "knda"),
    (0x0D00, 0x0D7F, "mlym"),
    (0x0D80, 0x0DFF, "sinh"),
)
_HAN: Final[Ranges] = (
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xF900, 0xFAFF),
    (0x20000, 0x3FFFF),
)
_MONGOLIAN: Final[Ranges] = ((0x1800, 0x18AF), (0x11660, 0x1167F))

# An approximation of Extended_Pictographic, generous on purpose: it only
# decides where a ZWJ or an emoji variation selector may stay.
_PICTOGRAPHIC: Final[Ranges] = (
    (0x00A9, 0x00A9),
    (0x00AE, 0x00AE),
    (0x203C, 0x203C),
    (0x2049, 0x2049),
    (0x2122, 0x2122),
    (0x2139, 0x2139),
    (0x2194, 0x21AA),
    (0x231A, 0x23FF),
    (0x24C2, 0x24C2),
    (0x25AA, 0x25FE),
    (0x2600, 0x27BF),
    (0x2934, 0x2935),
    (0x2B05, 0x2B55),
    (0x3030, 0x3030),
    (0x303D, 0x303D),
    (0x3297, 0x3297),
    (0x3299, 0x3299),
    (0x1F000, 0x1F3FA),
    (0x1F400, 0x1FAFF),
    (0x1FC00, 0x1FFFD),
)
_EMOJI_MODIFIERS: Final[Ranges] = ((0x1F3FB, 0x1F3FF),)
_REGIONAL_INDICATORS: Final[Ranges] = ((0x1F1E6, 0x1F1FF),)
_TAGS: Final[Ranges] = ((0xE0020, 0xE007F),)
_KEYCAP_BASES: Final = frozenset("#*0123456789")


# The predicates below run once per character of every text; a character
# repeats, so their answers are cached (pure functions: the cache changes
# nothing but time).
_per_character: Final = lru_cache(maxsize=4096)


def _is_noncharacter(cp: int) -> bool:
    return 0xFDD0 <= cp <= 0xFDEF or (cp & 0xFFFE) == 0xFFFE


@_per_character
def _is_variation_selector(cp: int) -> bool:
    return (
        cp in _VS_EMOJI or _in(cp, _VS_STANDARD) or _in(cp, _VS_IDEOGRAPHIC) or cp in _VS_MONGOLIAN
    )


def _is_letter_or_mark(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "LM"


@_per_character
def _indic_script(ch: str) -> str | None:
    cp = ord(ch)
    for lo, hi, name in _INDIC:
        if lo <= cp <= hi:
            return name if _is_letter_or_mark(ch) else None
    return None


@_per_character
def _joining_script(ch: str) -> str | None:
    """The script a ZWNJ may join within: Arabic or one Indic script."""
    if _in(ord(ch), _ARABIC):
        return "arab" if _is_letter_or_mark(ch) else None
    return _indic_script(ch)


@_per_character
def _is_virama(ch: str) -> bool:
    # Canonical combining class 9 is the virama class.
    return unicodedata.combining(ch) == 9 and _indic_script(ch) is not None


@_per_character
def _is_pictographic(ch: str) -> bool:
    return _in(ord(ch), _PICTOGRAPHIC)


@_per_character
def _is_emoji_extender(ch: str) -> bool:
    """What may sit between an emoji and the ZWJ that follows it."""
    cp = ord(ch)
    return cp in _VS_EMOJI or cp == 0x20E3 or _in(cp, _EMOJI_MODIFIERS) or _in(cp, _TAGS)


@_per_character
def is_invisible(ch: str) -> bool:
    """Whether `ch` is invisible or a control: the one rule of the package.

    Controls (the whitespace ones too: callers that keep them test them first),
    lone surrogates, noncharacters, format characters other than the drawn
    prepended marks, and every default-ignorable code point, assigned or not
    (an unassigned one is reserved to be shown as nothing). The cleaner then keeps
    a joiner or a selector where it carries writing; the secret check has no
    such exceptions.
    """
    cp = ord(ch)
    category = unicodedata.category(ch)
    if category in ("Cc", "Cs"):
        return True
    if category == "Cf":
        return cp not in _PREPENDED_MARKS
    return _in(cp, _DEFAULT_IGNORABLE) or _is_noncharacter(cp)


def _selector_fits(selector: str, base: str) -> bool:
    cp, base_cp = ord(selector), ord(base)
    if cp in _VS_EMOJI:
        return base in _KEYCAP_BASES or _is_pictographic(base)
    if _in(cp, _VS_STANDARD):
        return unicodedata.category(base)[0] in "LMNPS"
    if _in(cp, _VS_IDEOGRAPHIC):
        return _in(base_cp, _HAN)
    return _in(base_cp, _MONGOLIAN)  # the Mongolian free variation selectors


def _joiner_fits(joiner: str, seq: list[str], before: int, after: int) -> bool:
    """Whether `joiner` carries writing between seq[before] and seq[after]."""
    prev, nxt = seq[before], seq[after]
    if joiner == ZWNJ:
        script = _joining_script(prev)
        return script is not None and script == _joining_script(nxt)
    script = _indic_script(prev)
    if (
        script is not None
        and script == _indic_script(nxt)
        and (_is_virama(prev) or _is_virama(nxt))
    ):
        return True
    k = before
    while k >= 0 and _is_emoji_extender(seq[k]):
        k -= 1
    return k >= 0 and _is_pictographic(seq[k]) and _is_pictographic(nxt)


# --------------------------------------------------------------------------
# Invisible and control characters (REQ-SEC-015)


def _suspicious(ch: str) -> bool:
    return ch in _JOINERS or _is_variation_selector(ord(ch)) or is_invisible(ch)


class _CharMemo(dict[str, bool]):
    """A per-character answer, remembered: a hit is a dict lookup in C (`map` over a
    text's characters calls no Python code), much cheaper than the lru_cache wrappers.
    Bounded, so text made of ever new characters cannot grow it without end."""

    __slots__ = ()

    def __missing__(self, ch: str) -> bool:
        answer = _suspicious(ch)
        if len(self) < _MEMO_MAX:
            self[ch] = answer
        return answer


_MEMO_MAX: Final = 8192
_SUSPICIOUS: Final = _CharMemo()

# The suspicious characters that str.isprintable() accepts: the default-ignorable and
# selector code points outside the C and Z categories (CGJ, Hangul fillers, Khmer inherent
# vowels, Mongolian and other variation selectors). Every other suspicious character is
# Cc, Cs, Cf or a noncharacter (Cn), all of which isprintable() refuses.
_PRINTABLE_SUSPICIOUS: Final[Ranges] = (
    *_DEFAULT_IGNORABLE,
    *((cp, cp) for cp in _VS_EMOJI),
    *_VS_STANDARD,
    *_VS_IDEOGRAPHIC,
    *((cp, cp) for cp in sorted(_VS_MONGOLIAN)),
)
# Those of the BMP, or any character beyond it: a class of BMP characters alone is a
# table lookup per character in the regex engine, where astral ranges are a scan of
# the ranges; an astral character found is then judged exactly.
_BMP_SUSPICIOUS_OR_ASTRAL: Final = re.compile(
    "["
    + "".join(
        f"{re.escape(chr(lo))}-{re.escape(chr(min(hi, 0xFFFF)))}"
        for lo, hi in _PRINTABLE_SUSPICIOUS
        if lo <= 0xFFFF
    )
    + "]|[\U00010000-\U0010ffff]"
)


def _has_suspicious(text: str) -> bool:
    """Whether any character of `text` is a joiner, a selector or invisible."""
    if text.isprintable():
        # The common case, decided in C: no C or Z character but the space.
        if text.isascii():
            return False
        found = _BMP_SUSPICIOUS_OR_ASTRAL.search(text)
        if found is None:
            return False
        if found.group() <= "\uffff":
            return True
    return any(map(_SUSPICIOUS.__getitem__, set(text)))


_ISLAND_MARGIN: Final = 32
_WHITESPACE_CONTROL_RUN: Final = re.compile(
    "[" + re.escape("".join(sorted(_WHITESPACE_CONTROLS))) + "]"
)


def _visible(text: str) -> bool:
    """No joiner, selector or invisible character in `text` (whitespace controls aside):
    then `_remove_invisible` only turns whitespace controls into spaces."""
    return (text.isascii() and text.isprintable()) or not _has_suspicious(text)


def _spaced(text: str) -> str:
    """`text` with its whitespace controls as spaces (printable text holds none)."""
    return text if text.isprintable() else _WHITESPACE_CONTROL_RUN.sub(" ", text)


def _remove_invisible(text: str) -> tuple[str, int]:
    if text.isascii() and text.isprintable():
        return text, 0  # the common case: nothing to look at
    if not _has_suspicious(text):
        # Only visible characters and whitespace: the whitespace controls become
        # spaces, exactly as the passes below would make them. Printable text holds none.
        return _spaced(text), 0
    if len(text) <= 8 * _ISLAND_MARGIN:
        return _remove_invisible_passes(text)
    # Long text (a fetched page): the passes run only on islands around the
    # suspicious characters, wide enough to hold every neighbour they look at, so
    # the cost follows the suspicious characters, not the length of the text.
    # Emoji extenders (skin tones, the keycap mark) join the islands too: a joiner's
    # verdict looks back over any run of them.
    chars = set(text)
    anchors = {ch for ch in chars if _SUSPICIOUS[ch] or _is_emoji_extender(ch)}
    pattern = re.compile("[" + re.escape("".join(sorted(anchors))) + "]")
    spans: list[list[int]] = []
    for match in pattern.finditer(text):
        start = max(0, match.start() - _ISLAND_MARGIN)
        end = min(len(text), match.end() + _ISLAND_MARGIN)
        if spans and start <= spans[-1][1]:
            spans[-1][1] = end
        else:
            spans.append([start, end])
    out: list[str] = []
    removed = 0
    position = 0
    for start, end in spans:
        out.append(_WHITESPACE_CONTROL_RUN.sub(" ", text[position:start]))
        cleaned, count = _remove_invisible_passes(text[start:end])
        out.append(cleaned)
        removed += count
        position = end
    out.append(_WHITESPACE_CONTROL_RUN.sub(" ", text[position:]))
    return "".join(out), removed


def _remove_invisible_passes(text: str) -> tuple[str, int]:
    removed = 0
    # Pass 1: everything but the joiners and the selectors, which are judged
    # against the neighbours that remain.
    first: list[str] = []
    for ch in text:
        if ch in _WHITESPACE_CONTROLS:
            first.append(" ")
        elif ch in _JOINERS or _is_variation_selector(ord(ch)):
            first.append(ch)
        elif is_invisible(ch):
            removed += 1
        else:
            first.append(ch)
    # Pass 2: a selector stays only right after a base it can select.
    second: list[str] = []
    for ch in first:
        if _is_variation_selector(ord(ch)):
            base = second[-1] if second else None
            if (
                base is None
                or base in _JOINERS
                or _is_variation_selector(ord(base))
                or not _selector_fits(ch, base)
            ):
                removed += 1
                continue
        second.append(ch)
    # Pass 3: of a run of joiners, at most one stays, and only between the
    # characters that surround the run.
    out: list[str] = []
    i, n = 0, len(second)
    while i < n:
        if second[i] not in _JOINERS:
            out.append(second[i])
            i += 1
            continue
        j = i
        while j < n and second[j] in _JOINERS:
            j += 1
        kept = None
        if i > 0 and j < n:
            kept = next((c for c in second[i:j] if _joiner_fits(c, second, i - 1, j)), None)
        if kept is not None:
            out.append(kept)
        removed += (j - i) - (kept is not None)
        i = j
    return "".join(out), removed


def _collapse_whitespace(text: str) -> str:
    if text.isprintable() and "  " not in text and text[:1] != " " and text[-1:] != " ":
        return text  # its only whitespace is single inner spaces (Z* and C* are unprintable)
    # str.split() splits on _WHITESPACE and on U+001C..U+001F, which are no whitespace
    # here: only text without those may take the faster split and join.
    if "\x1c" in text or "\x1d" in text or "\x1e" in text or "\x1f" in text:
        return _WHITESPACE_RUN.sub(" ", text).strip(" ")
    return " ".join(text.split())
