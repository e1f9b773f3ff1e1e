"""The content boundary for short external text: titles and snippets.

Everything here is a pure function of its arguments: no I/O, no clock, no
randomness, no configuration read behind the caller's back. Same input, same
output, byte for byte (for one Unicode version of the running Python; see
"Unicode data" below).

Theory of operation (REQ-CTX-004, REQ-SEC-015, REQ-CTX-006, REQ-SEC-003):

1. ``clean_text`` turns raw provider text into plain text. When the provider
   sends HTML (``markup=True``) the markup is removed by a small scanner that
   never evaluates anything, then character references are decoded, once.
   Decoded text is never parsed again: ``&lt;b&gt;`` comes back as the literal
   text ``<b>``, which is data like any other.
2. Invisible and control characters are removed and counted; that count feeds
   the ``characters_removed`` notice. Tab, newline and the other line breaks
   become spaces and are not counted. Two joiners and the variation selectors
   survive only where they carry writing (rules below).
3. Whitespace runs collapse to one space and the ends are trimmed. The book
   orders "whitespace collapsed" before "invisible characters removed"; we
   collapse after removal instead, which gives the book's result plus the one
   extra collapse a removed character between two spaces needs.
4. ``bound`` cuts to a number of Unicode scalar values (LIM-U1) at a character
   boundary and, when it can, at a grapheme boundary.
5. ``looks_like_instruction`` flags text that addresses a model. The text is
   never rewritten for it (REQ-SEC-003): the caller adds a notice or drops the
   result.

Removal rules (REQ-SEC-015):

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
  the 66 noncharacters, which are never assigned;
- the prepended concatenation marks (U+0600..U+0605, U+06DD, U+070F, U+0890,
  U+0891, U+08E2, U+110BD, U+110CD) are Cf but visible signs, so they stay;
- named character references need their semicolon (``&copy=2`` in a URL
  stays as written); numeric ones may omit it. ``&#0;``, surrogates and values
  above U+10FFFF are invalid and stay as text; 0x80..0x9F map as HTML does
  (windows-1252), and the ones windows-1252 leaves undefined become C1
  controls, which the control rule then removes and counts;
- the content of script, style, template, noscript, iframe, noembed and
  noframes elements is removed with its tags: a browser does not render it.
  Block-level tags and ``<br>`` become a space, inline tags nothing, so
  ``<b>Rust</b>acean`` stays one word. Comments, CDATA sections, doctypes and
  processing instructions are removed with their content; a construct still
  open at the end of the text (a provider cut mid-tag) is removed to the end;
- a cut adds no ellipsis (the notice says the text was cut, and rypsok does not
  add words to external text) and drops the whitespace and any joiner left at
  the end of the cut.

Unicode data: the categories come from the running Python's ``unicodedata``
(Unicode 14.0 on 3.11); the ranges below are written out. Two Python versions
can differ only on code points assigned after Unicode 14.0.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from html.entities import html5 as _HTML5_ENTITIES
from typing import Final

from rypsok.core.limits import TABLE

TITLE_MAX_CHARS: Final[int] = TABLE["LIM-S10"].default
SNIPPET_MAX_CHARS: Final[int] = TABLE["LIM-S9"].default

ZWNJ: Final = "\u200c"
ZWJ: Final = "\u200d"
_JOINERS: Final = frozenset((ZWNJ, ZWJ))


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
def _is_removable(ch: str) -> bool:
    """Invisible or control, before the joiner and selector exceptions."""
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
    return ch in _JOINERS or _is_variation_selector(ord(ch)) or _is_removable(ch)


_ISLAND_MARGIN: Final = 32
_WHITESPACE_CONTROL_RUN: Final = re.compile(
    "[" + re.escape("".join(sorted(_WHITESPACE_CONTROLS))) + "]"
)


def _remove_invisible(text: str) -> tuple[str, int]:
    if text.isascii() and text.isprintable():
        return text, 0  # the common case: nothing to look at
    suspicious = {ch for ch in set(text) if _suspicious(ch)}
    if not suspicious:
        # Only visible characters and whitespace: the whitespace controls become
        # spaces, exactly as the passes below would make them.
        return _WHITESPACE_CONTROL_RUN.sub(" ", text), 0
    if len(text) <= 8 * _ISLAND_MARGIN:
        return _remove_invisible_passes(text)
    # Long text (a fetched page): the passes run only on islands around the
    # suspicious characters, wide enough to hold every neighbour they look at, so
    # the cost follows the suspicious characters, not the length of the text.
    # Emoji extenders (skin tones, the keycap mark) join the islands too: a joiner's
    # verdict looks back over any run of them.
    anchors = suspicious | {ch for ch in set(text) if _is_emoji_extender(ch)}
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
        elif _is_removable(ch):
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
    return _WHITESPACE_RUN.sub(" ", text).strip(" ")


# --------------------------------------------------------------------------
# Markup (REQ-CTX-004)

# Elements whose content a browser does not show as text.
_HIDDEN_CONTENT: Final = frozenset(
    ("script", "style", "template", "noscript", "iframe", "noembed", "noframes")
)
_HIDDEN_END: Final = {
    name: re.compile(r"</" + name + r"(?=[\s/>]|\Z)", re.IGNORECASE | re.ASCII)
    for name in _HIDDEN_CONTENT
}
_COMMENT_END: Final = re.compile(r"--!?>")
# Tags that separate words when rendered; every other tag joins its neighbours.
_BLOCK_TAGS: Final = frozenset(
    (
        "address",
        "article",
        "aside",
        "blockquote",
        "br",
        "caption",
        "center",
        "dd",
        "details",
        "dialog",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hr",
        "li",
        "main",
        "nav",
        "ol",
        "option",
        "p",
        "pre",
        "section",
        "summary",
        "table",
        "tbody",
        "td",
        "tfoot",
        "th",
        "thead",
        "tr",
        "ul",
    )
)


def _is_ascii_letter(ch: str) -> bool:
    return ch.isascii() and ch.isalpha()


def _tag_end(raw: str, start: int) -> int:
    """Index after the '>' that closes the tag whose name ends at `start`.

    A quoted attribute value may contain '>'. A tag still open at the end of
    the text runs to the end.
    """
    n = len(raw)
    j = start
    while j < n:
        ch = raw[j]
        if ch == ">":
            return j + 1
        if ch == "=":
            j += 1
            while j < n and raw[j] in " \t\n\r\f":
                j += 1
            if j < n and raw[j] in "\"'":
                close = raw.find(raw[j], j + 1)
                if close < 0:
                    return n
                j = close + 1
                continue
            continue
        j += 1
    return n


def _strip_markup(raw: str) -> str:
    """Remove tags, comments, CDATA and declarations; keep the text between."""
    out: list[str] = []
    n = len(raw)
    i = 0
    while i < n:
        lt = raw.find("<", i)
        if lt < 0:
            out.append(raw[i:])
            break
        out.append(raw[i:lt])
        nxt = raw[lt + 1] if lt + 1 < n else ""
        if raw.startswith("<!--", lt):
            if raw.startswith("<!-->", lt) or raw.startswith("<!--->", lt):
                i = raw.index(">", lt + 4) + 1  # an empty comment closes at once
                continue
            m = _COMMENT_END.search(raw, lt + 4)
            if m is None:
                break  # an unclosed comment hides the rest
            i = m.end()
        elif raw[lt : lt + 9].upper() == "<![CDATA[":
            e = raw.find("]]>", lt + 9)
            if e < 0:
                break
            i = e + 3
        elif nxt in ("!", "?"):
            e = raw.find(">", lt + 2)
            if e < 0:
                break
            i = e + 1
        elif nxt == "/":
            after = raw[lt + 2] if lt + 2 < n else ""
            if _is_ascii_letter(after):
                j = lt + 2
                while j < n and raw[j] not in " \t\n\r\f/>":
                    j += 1
                if raw[lt + 2 : j].lower() in _BLOCK_TAGS:
                    out.append(" ")
                i = _tag_end(raw, j)
            else:
                e = raw.find(">", lt + 2)  # '</>' and '</ x>' are not rendered
                if e < 0:
                    break
                i = e + 1
        elif _is_ascii_letter(nxt):
            j = lt + 1
            while j < n and raw[j] not in " \t\n\r\f/>":
                j += 1
            name = raw[lt + 1 : j].lower()
            i = _tag_end(raw, j)
            if name in _BLOCK_TAGS:
                out.append(" ")
            elif name in _HIDDEN_CONTENT:
                # A browser ignores the slash of <script/>: what follows is hidden.
                m = _HIDDEN_END[name].search(raw, i)
                if m is None:
                    break
                i = _tag_end(raw, m.end())
        else:
            out.append("<")  # '<' not followed by a tag name is text: "a < b", "<3"
            i = lt + 1
    return "".join(out)


_CHAR_REF: Final = re.compile(
    r"&(?:#[xX]([0-9A-Fa-f]+);?|#([0-9]+);?|([A-Za-z][A-Za-z0-9]{0,40});)"
)


def _numeric_ref(digits: str, base: int) -> str | None:
    digits = digits.lstrip("0") or "0"
    if len(digits) > 8:
        return None  # far beyond U+10FFFF; also keeps int() away from huge strings
    cp = int(digits, base)
    if cp == 0 or 0xD800 <= cp <= 0xDFFF or cp > 0x10FFFF:
        return None
    if 0x80 <= cp <= 0x9F:
        # HTML reads these as windows-1252; the five holes stay C1 controls.
        try:
            return bytes((cp,)).decode("cp1252")
        except UnicodeDecodeError:
            return chr(cp)
    return chr(cp)


def _decode_ref(match: re.Match[str]) -> str:
    hexa, dec, name = match.groups()
    if hexa is not None:
        value = _numeric_ref(hexa, 16)
    elif dec is not None:
        value = _numeric_ref(dec, 10)
    else:
        value = _HTML5_ENTITIES.get(name + ";")
    return match.group(0) if value is None else value


def _decode_entities(text: str) -> str:
    # One pass: '&amp;lt;' becomes '&lt;', never '<'.
    return _CHAR_REF.sub(_decode_ref, text) if "&" in text else text


# --------------------------------------------------------------------------
# Public cleaning API


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


def clean_field(raw: str, *, markup: bool, limit: int) -> CleanedField:
    """Clean, bound and check one external field (a title or a snippet).

    The instruction check reads the text that is returned, after the cut: the
    notice speaks of what the caller receives.
    """
    cleaned = clean_text(raw, markup=markup)
    text, truncated = bound(cleaned.text, limit)
    return CleanedField(text, cleaned.removed, truncated, looks_like_instruction(text))


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
    t = clean_field(title, markup=title_markup, limit=title_max_chars)
    s = clean_field(snippet, markup=snippet_markup, limit=snippet_max_chars)
    return CleanedResult(
        title=t.text,
        snippet=s.text,
        characters_removed=t.removed + s.removed,
        title_truncated=t.truncated,
        snippet_truncated=s.truncated,
        instruction_like=t.instruction_like or s.instruction_like,
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
# Instruction-like content (REQ-SEC-003)
#
# Precision over recall: a flag costs a notice, or the whole result when the
# operator drops flagged results, so ordinary prose must pass ("the
# instructions for assembling a desk", "ignore the noise", Wikipedia's "Ignore
# all rules", "You are now leaving our site", "System: Windows 11"). A pattern
# therefore needs a phrase that addresses a model, a chat-template marker, or a
# marker that pretends to close a block of data. Bare "system prompt" and a
# bare "disregard the above" (a forum edit) are not enough on their own.

# Cyrillic and Greek letters that look like Latin ones, for the Latin patterns
# only; the Russian patterns read the text unfolded.
_LATIN_LOOKALIKES: Final = str.maketrans(
    {
        "а": "a",
        "е": "e",
        "ё": "e",
        "о": "o",
        "р": "p",
        "с": "c",
        "у": "y",
        "х": "x",
        "ѕ": "s",
        "і": "i",
        "ї": "i",
        "ј": "j",
        "һ": "h",
        "ԁ": "d",
        "ԛ": "q",
        "ԝ": "w",
        "ӏ": "l",
        "к": "k",
        "ɡ": "g",
        "ɩ": "i",
        "ı": "i",
        "α": "a",
        "ε": "e",
        "ι": "i",
        "κ": "k",
        "ν": "v",
        "ο": "o",
        "ρ": "p",
        "υ": "u",
        "χ": "x",
        "γ": "y",
        "\u0307": "",
    }
)

_SEP = r"[\W_]+"
# "previous instructions", "the above prompt": a scope that points back at
# what came before, and a noun only a model is given.
_BACK = (
    r"(?:previous|prior|above|earlier|preceding|foregoing|aforementioned|former|original"
    r"|initial)"
)
_AI_NOUN = r"(?:instructions?|prompts?|directives?|guardrails?|programming|context)"
_OVERRIDE = r"(?:ignore|disregard|forget|override|discard|abandon|neglect)"
_FILLER = r"(?:all|any|of|the|your|my|these|those|this|that|every|everything)"
_AI = (
    r"(?:ai|a\.i\.|llms?|gpt|chatgpt|chatbots?|language models?|large language models?)"
    r"(?: (?:agents?|assistants?|models?|systems?|crawlers?|bots?))?"
)
# A phrase that stands alone, as a marker does: at the start or after
# punctuation, and followed by punctuation or the end.
_MARK_BEFORE = r"(?:^|[-=#*\[<(|>:.!]\s*)"
_MARK_AFTER = r"(?=\s*(?:[-=#*\]>)|.:!]|$))"

_LATIN_PATTERNS: Final = tuple(
    re.compile(p)
    for p in (
        # "ignore all previous instructions", "disregard the above prompt"
        rf"\b{_OVERRIDE}{_SEP}(?:{_FILLER}{_SEP}){{0,4}}?{_BACK}{_SEP}(?:{_BACK}{_SEP})?{_AI_NOUN}\b",
        # "ignore all instructions", "forget your instructions", "ignore the system prompt"
        rf"\b{_OVERRIDE}{_SEP}(?:of{_SEP})?(?:all|any|every|your|these|those|the){_SEP}"
        rf"(?:(?:current|existing|system|developer|safety){_SEP})?"
        rf"(?:instructions|prompts?|directives|guardrails|programming)\b",
        # "ignore everything above and ...", "disregard all of the above:"
        rf"\b{_OVERRIDE}{_SEP}(?:(?:all|everything|of|the){_SEP}){{1,3}}(?:above|before)"
        rf"(?:{_SEP}(?:and|then|instead)\b|\s*[:;])",
        # "you are now DAN", "you are now an unrestricted AI", "you are no longer bound"
        r"\byou(?: are|'re|re) (?:now (?:dan\b|jailbroken|in (?:dan|jailbreak|unrestricted) mode"
        r"|an? (?:(?:unrestricted|unfiltered|uncensored|jailbroken|evil|rogue|free) )?"
        r"(?:ai\b|ai assistant|chatbot|language model|llm)|unrestricted\b|unfiltered\b"
        r"|uncensored\b)|(?:now )?no longer (?:bound by|restricted by|an? (?:ai|language model)\b"
        r"|chatgpt\b))",
        # "from now on you will act as", "from now on, you must only respond"
        r"\bfrom now on,? you (?:will|must|shall|should|are to|have to) (?:only )?(?:act|respond"
        r"|answer|reply|behave|pretend|roleplay|role-play|ignore|obey|output)\b",
        # "Note to AI:", "Instructions for AI agents:", "Attention LLMs!"
        rf"\b(?:attention|note|notice|message|instructions?|reminder|important|warning)"
        rf"{_SEP}(?:(?:to|for){_SEP})?(?:(?:all|any|the){_SEP})?{_AI}\s*[:!]",
        rf"\bdear {_AI}\s*[,:!]",
        # "If you are an AI reading this", "if you are a large language model,"
        r"\bif you(?: are|'re) an? (?:ai|llm|large language model|language model|chatbot"
        r"|ai (?:assistant|agent|model|system))(?:\s*[,.:;!]|\s*$| (?:reading|processing"
        r"|summari[sz]ing|parsing|crawling|scraping|tasked|who|that)\b)",
        rf"\b{_AI} (?:reading|processing|summari[sz]ing|parsing|scraping) this\b",
        # "new instructions:", "updated system instructions:"
        r"\b(?:new|real|actual|true|secret|hidden|override|updated system) (?:system )?"
        r"instructions?\s*:",
        # "reveal your system prompt", "print your initial instructions"
        r"\b(?:reveal|print|show|output|repeat|display|leak|disclose|tell me|write out|dump|share)"
        r"(?: me)? your (?:\w+ )?(?:system prompt|system message|instructions|initial prompt"
        r"|hidden prompt)\b",
        # Chat-template special tokens and role markers.
        r"<\|\s*[a-z][a-z0-9_]{1,30}\s*\|>",
        r"\[/?inst\]",
        r"<</?sys>>",
        r"<(?:start|end)_of_turn>",
        r"###\s*instruction\b",
        r"###\s*(?:system|human|assistant|user|response|input)\s*:",
        r"^(?:system|assistant|developer)\s*:\s*(?:you\b|ignore\b|disregard\b|forget\b"
        r"|from now on\b|new instructions\b)",
        r"^(?:new )?system prompt\s*:",
        # Markers that pretend to close the data and start something else.
        r"</\s*(?:search_?results?|results?|documents?|context|tool_?(?:results?|outputs?|response)"
        r"|function_?results?|untrusted[a-z_]*|external[a-z_]*|system|instructions?"
        r"|user_?(?:input|query|message)|web_?(?:search|content|page)[a-z_]*|snippets?)\s*>",
        rf"{_MARK_BEFORE}end of (?:the )?(?:search|tool|web|untrusted|external|function) "
        rf"(?:results?|output|data|content|context){_MARK_AFTER}",
        rf"{_MARK_BEFORE}(?:begin|start|end)(?: of)? (?:the )?(?:system prompt|untrusted "
        rf"(?:content|data|input)|external (?:content|data)|results?|search results|data)"
        rf"{_MARK_AFTER}",
    )
)

_OTHER_PATTERNS: Final = tuple(
    re.compile(p)
    for p in (
        # German: "ignoriere alle vorherigen Anweisungen"
        r"\b(?:ignoriere|ignorier|ignorieren sie|vergiss|vergessen sie|missachte|missachten sie)"
        r"\s+(?:\w+\s+){0,3}?(?:vorherigen|vorigen|bisherigen|obigen|vorangegangenen|früheren"
        r"|vorherige|bisherige|obige|frühere)\s+(?:anweisungen|anweisung|instruktionen|befehle"
        r"|vorgaben)\b",
        r"\bneue anweisungen\s*:",
        # French: "ignore toutes les instructions précédentes"
        r"\b(?:ignore[rz]?|oublie[rz]?)\s+(?:\w+\s+){0,3}?(?:instructions?|consignes?|directives?)"
        r"\s+(?:pr[ée]c[ée]dentes?|ant[ée]rieures?|ci-dessus|initiales?)",
        r"\bnouvelles (?:instructions|consignes)\s*:",
        # Spanish: "ignora todas las instrucciones anteriores"
        r"\b(?:ignora|ignore|ignorad|olvida|olvide|omite|descarta)\s+(?:\w+\s+){0,3}?"
        r"(?:instrucciones|indicaciones|[óo]rdenes)\s+(?:anteriores|previas|de arriba)",
        r"\bnuevas instrucciones\s*:",
        # Portuguese: "ignore todas as instruções anteriores"
        r"\b(?:ignore|ignora|esque[çc]a|desconsidere)\s+(?:\w+\s+){0,3}?(?:instru[çc][õo]es"
        r"|orienta[çc][õo]es)\s+(?:anteriores|pr[ée]vias|acima)",
        # Italian: "ignora tutte le istruzioni precedenti"
        r"\b(?:ignora|ignorate|dimentica|dimenticate)\s+(?:\w+\s+){0,3}?(?:istruzioni|indicazioni)"
        r"\s+(?:precedenti|sopra)",
        # Russian: "игнорируй все предыдущие инструкции"
        r"(?:игнорируй|игнорируйте|проигнорируй|проигнорируйте|забудь|забудьте)\s+(?:\w+\s+){0,2}?"
        r"(?:предыдущие|прошлые|прежние|вышеуказанные|вышеприв[её]денные)\s+"
        r"(?:инструкции|указания|команды)",
        # Chinese: "忽略之前的所有指令", "忽略所有之前的指令"
        r"(?:忽略|无视|無視|忽视|忽視|忘记|忘記|忘掉|不要理会|不要理會)(?:掉)?(?:你)?"
        r"(?:(?:之前|以前|先前|上面|上述|前面|以上|原来|原來|原有)(?:的)?(?:所有|全部|一切)?(?:的)?"
        r"(?:指令|指示|提示词|提示詞|提示|命令|设定|設定)"
        r"|(?:所有|全部|一切)(?:的)?(?:之前|以前|先前|上面|上述|前面|以上)?(?:的)?"
        r"(?:指令|指示|提示词|提示詞))",
        # Japanese: "これまでの指示をすべて無視して"
        r"(?:これまで|今まで|以前|前|上記|上|先)の(?:すべての|全ての)?(?:指示|命令|指令|プロンプト"
        r"|設定)を(?:すべて|全て)?(?:無視|忘れ)",
        # Korean: "이전의 모든 지시를 무시하고"
        r"(?:이전|앞의|위의|기존)\s*(?:의\s*)?(?:모든\s*)?(?:지시|지침|명령|프롬프트|지시사항)"
        r"(?:을|를|은|는)?\s*(?:모두\s*)?(?:무시|잊어)",
    )
)

# Every match of a pattern contains one of its anchors, so a plain substring test
# (fast, in C) decides whether the pattern needs to run at all: ordinary text
# carries none of most anchors and costs a few microseconds. In pattern order.
_OVERRIDES: Final = ("ignore", "disregard", "forget", "override", "discard", "abandon", "neglect")
_LATIN_ANCHORS: Final[tuple[tuple[str, ...], ...]] = (
    _OVERRIDES,
    _OVERRIDES,
    _OVERRIDES,
    ("you",),
    ("from now on",),
    (":", "!"),
    ("dear",),
    ("if you",),
    ("this",),
    ("instruction",),
    ("your",),
    ("<|",),
    ("inst]",),
    ("sys>>",),
    ("_of_turn>",),
    ("###",),
    ("###",),
    (":",),
    ("system prompt",),
    ("</",),
    ("end of",),
    ("begin", "start", "end"),
)
_OTHER_ANCHORS: Final[tuple[tuple[str, ...], ...]] = (
    ("ignor", "vergiss", "vergessen", "missacht"),
    ("neue anweisungen",),
    ("ignor", "oubli"),
    ("nouvelles",),
    ("ignor", "olvid", "omite", "descarta"),
    ("nuevas instrucciones",),
    ("ignor", "esque", "desconsidere"),
    ("ignor", "dimentic"),
    ("игнор", "забуд"),
    ("忽略", "无视", "無視", "忽视", "忽視", "忘", "不要理"),
    ("を",),
    ("무시", "잊어"),
)
_LATIN_CHECKS: Final = tuple(zip(_LATIN_ANCHORS, _LATIN_PATTERNS, strict=True))
_OTHER_CHECKS: Final = tuple(zip(_OTHER_ANCHORS, _OTHER_PATTERNS, strict=True))


Check = tuple[tuple[str, ...], re.Pattern[str]]


def _anchor_index(
    checks: tuple[Check, ...],
) -> tuple[tuple[str, ...], tuple[str, ...], dict[str, tuple[int, ...]]]:
    """Every anchor (and the ASCII ones alone, for ASCII text), each mapped to the checks
    it opens. Substring tests run in C: cheaper here than one scanning expression."""
    anchors = tuple(sorted({a for names, _ in checks for a in names}))
    index = {a: tuple(i for i, (names, _) in enumerate(checks) if a in names) for a in anchors}
    return anchors, tuple(a for a in anchors if a.isascii()), index


def _any_match(text: str, checks: tuple[Check, ...]) -> bool:
    anchors, ascii_anchors, index = _LATIN_INDEX if checks is _LATIN_CHECKS else _OTHER_INDEX
    present = [a for a in (ascii_anchors if text.isascii() else anchors) if a in text]
    if not present:
        return False
    candidates = sorted({i for a in present for i in index[a]})
    return any(checks[i][1].search(text) is not None for i in candidates)


_LATIN_INDEX: Final = _anchor_index(_LATIN_CHECKS)
_OTHER_INDEX: Final = _anchor_index(_OTHER_CHECKS)


_ROLE_LABEL: Final = re.compile(r"\b(?:human|user)\s*:")
_ASSISTANT_LABEL: Final = re.compile(r"\bassistant\s*:")


def _normal_form(text: str) -> str:
    """NFKC, no invisible characters, case-folded, whitespace collapsed."""
    if not text.isascii():  # NFKC leaves ASCII as it is
        text = unicodedata.normalize("NFKC", text)
    # ASCII has invisible characters too (controls): only printable ASCII skips the filter.
    if not (text.isascii() and text.isprintable()) and any(map(_suspicious, set(text))):
        text = "".join(
            ch
            for ch in text
            if ch in _JOINERS or ch in _WHITESPACE_CONTROLS or not _is_removable(ch)
        )
        text = text.replace(ZWNJ, "").replace(ZWJ, "")
    return _collapse_whitespace(text.casefold())


def looks_like_instruction(text: str) -> bool:
    """Whether `text` carries a phrase or marker addressed to a model.

    Reads a normal form (NFKC, invisible characters dropped, case-folded,
    Cyrillic and Greek look-alikes read as Latin), so full-width letters,
    mathematical letters and a zero-width space inside a word do not hide a
    phrase. The text itself is never changed.
    """
    plain = _normal_form(text)
    if not plain:
        return False
    # The look-alikes are all non-ASCII: ASCII text needs no translation.
    latin = plain if plain.isascii() else plain.translate(_LATIN_LOOKALIKES)
    if _any_match(latin, _LATIN_CHECKS) or _any_match(plain, _OTHER_CHECKS):
        return True
    # A fake dialogue: a user's turn followed by an assistant's turn. Two
    # searches rather than one '.*' pattern, so the cost stays linear.
    role = _ROLE_LABEL.search(latin)
    return role is not None and _ASSISTANT_LABEL.search(latin, role.end()) is not None


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


def count_instruction_like(text: str) -> int:
    """How many paragraphs of fetched text look like an instruction to a model."""
    return sum(1 for block in text.split("\n\n") if block.strip() and looks_like_instruction(block))
