"""Markup removal and character references for provider text (REQ-CTX-004).

The scanner never evaluates anything: it skips tags, comments, CDATA sections,
doctypes and processing instructions and keeps the text between. References are
then decoded once; decoded text is never parsed again, so ``&lt;b&gt;`` comes
back as the literal text ``<b>``.

Decisions where the book is silent:

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
  open at the end of the text (a provider cut mid-tag) is removed to the end.
"""

from __future__ import annotations

import re
from html.entities import html5 as _HTML5_ENTITIES
from typing import Final

from rypsok.core.html.vocabulary import HIDDEN_IN_SNIPPETS, SNIPPET_WORD_BREAKS

# The end tag of each element whose content the scanner skips (the set and why
# it is that set: html/vocabulary.py).
_HIDDEN_END: Final = {
    name: re.compile(r"</" + name + r"(?=[\s/>]|\Z)", re.IGNORECASE | re.ASCII)
    for name in HIDDEN_IN_SNIPPETS
}
_COMMENT_END: Final = re.compile(r"--!?>")


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


# A start or end tag as the scanner below reads it (`_tag_end`): the name runs to
# whitespace, '/' or '>'; then any character but '>' and '=', or '=' with the whitespace
# after it and a quoted value, to the '>'. A quote opened after '=' and never closed
# makes no match (the scanner would remove the rest of the text). All possessive: no
# backtracking.
_PLAIN_TAG: Final = re.compile(
    r"<(/?)([A-Za-z][^\t\n\r\f />]*+)"
    r"(?:[^>=]++|=[ \t\n\r\f]*+(?:\"[^\"]*+\"|'[^']*+'|(?![\"'])))*+>"
)


# The inline elements provider highlights use, written in lower case: none is a word
# break or a hidden element, so such a tag is simply removed (the scanner's reading, as
# the name ends where the scanner ends it). One pass, no Python call per tag; any other
# tag stays, and its '<' sends the text to the pass above.
_INLINE_NAMES: Final = (
    "a", "abbr", "b", "bdi", "bdo", "cite", "code", "data", "del", "dfn", "em", "font",
    "i", "ins", "kbd", "mark", "q", "s", "samp", "small", "span", "strong", "sub", "sup",
    "time", "u", "var", "wbr",
)  # fmt: skip
if set(_INLINE_NAMES) & (SNIPPET_WORD_BREAKS | HIDDEN_IN_SNIPPETS):
    raise RuntimeError("an inline name is a word break or hidden")  # vocabulary drifted
_INLINE_TAG: Final = re.compile(
    "</?(?:"
    + "|".join(sorted(_INLINE_NAMES, key=lambda n: (-len(n), n)))
    + r")(?=[\t\n\r\f />])"
    + _PLAIN_TAG.pattern[_PLAIN_TAG.pattern.index(")(?:") + 1 :]
)


class _NotPlain(Exception):
    """A hidden element's start tag: only the scanner knows where its content ends."""


def _plain_tag(match: re.Match[str]) -> str:
    name = match.group(2).lower()
    if name in SNIPPET_WORD_BREAKS:
        return " "
    if not match.group(1) and name in HIDDEN_IN_SNIPPETS:
        raise _NotPlain
    return ""


def _strip_markup(raw: str) -> str:
    """Remove tags, comments, CDATA and declarations; keep the text between."""
    if "<" not in raw:
        return raw
    # The usual provider text (a few highlight tags, no quotes, no comments) in one pass
    # in C. It gives the scanner's result whenever no '<' is left: each tag matched is one
    # the scanner removes the same way, and any other '<' (a comment, a declaration, a
    # quoted attribute, an unclosed tag, a '<' of text) stays and sends the text to the
    # scanner.
    text = _INLINE_TAG.sub("", raw)
    if "<" not in text:
        return text
    try:
        text = _PLAIN_TAG.sub(_plain_tag, raw)
    except _NotPlain:
        return _scan_markup(raw)
    return _scan_markup(raw) if "<" in text else text


def _scan_markup(raw: str) -> str:
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
                if raw[lt + 2 : j].lower() in SNIPPET_WORD_BREAKS:
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
            if name in SNIPPET_WORD_BREAKS:
                out.append(" ")
            elif name in HIDDEN_IN_SNIPPETS:
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


# The decoding of each reference text seen (a pure function of it; a handful of them
# recur in every answer), bounded so that ever new references cannot grow it for good.
_REFS: Final[dict[str, str]] = {}
_REFS_MAX: Final = 4096


def _decoded(match: re.Match[str]) -> str:
    value = _REFS.get(match[0])
    if value is None:
        value = _decode_ref(match)
        if len(_REFS) < _REFS_MAX:
            _REFS[match[0]] = value
    return value


def _decode_entities(text: str) -> str:
    # One pass: '&amp;lt;' becomes '&lt;', never '<'.
    return _CHAR_REF.sub(_decoded, text) if "&" in text else text
