"""Escaping a paragraph's text for Markdown (docs/extraction.md, "Escaping"): the part
of the Markdown writer that text without markup needs too (a PDF's, fetch/pdf/layout.py).

Page text cannot forge structure, and costs no backslash where it could not: a
character is escaped only where a CommonMark reader would take it for syntax. Standard
library only, so the PDF reader's process loads no HTML parser.
"""

from __future__ import annotations

import re
import unicodedata
from html.entities import html5

# While a paragraph is put together, the writer's own syntax travels in the same
# string as the page's text, marked with noncharacters (never text: taken out of
# it), so that the paragraph is escaped once, whole, each character of the page
# seen beside its real neighbours and never confused with the writer's marks.
_SYNTAX = "\ufdd0"  # the next character is the writer's syntax: written as it is
_LITERAL = "\ufdd1"  # the next character is the page's, escaped wherever it stands
_VERBATIM = "\ufdd2"  # from here to _END, written as it is: a code span, a link's "](url)"
_END = "\ufdd3"
# A backslash that only the start of a line needs ("1\. x", "\# x"): written as one
# where the block's lines start lines, dropped where its text is inline (a heading's,
# a table cell's), so one rendering serves both.
_LINE_ESCAPE = "\ufdd4"
_BR = "\x00"
_NOT_TEXT = re.compile("[\x00\ufdd0-\ufdd4]")

_ASCII_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_BRACKET = re.compile(r"[\[\]]")


def _text(data: str, in_link: bool) -> str:
    """A text node's characters for an inline run. In a link's text every bracket
    is escaped: an unpaired one would end the link or take its opening bracket,
    and the readers that pick links out of Markdown by a pattern take the text to
    end at the first "]", so paired ones are escaped there too."""
    data = _NOT_TEXT.sub("", data)
    if in_link:
        data = _BRACKET.sub(_LITERAL + r"\g<0>", data)
    return data


# One token of a paragraph for the escaper: a verbatim span, a marked character,
# or a character of the page's text that Markdown may read as syntax (a run of
# them for emphasis delimiters and backticks, which act as runs). Every branch
# starts with one literal character, so that the engine skips to the next one of
# them at the speed of a character set instead of trying each branch everywhere.
_TOKEN = re.compile(
    f"{_VERBATIM}[^{_END}]*{_END}|{_SYNTAX}.|{_LITERAL}." + r"|\*\**|__*|``*|\\|\]|!|<|&",
    re.S,
)
# After "<": a tag, comment, declaration or processing instruction (inline HTML, or
# an HTML block at the start of a line), a URI autolink, or an e-mail autolink.
_OPENS_HTML = re.compile(r"[A-Za-z/!?]|[^\s<>]*@")
# After "&": a character reference, or an entity reference if the name is one of
# HTML5's (CommonMark reads no other: "AT&T;" is text).
_REFERENCE = re.compile(r"#[xX][0-9A-Fa-f]{1,6};|#[0-9]{1,7};|([A-Za-z][A-Za-z0-9]{0,31};)")
_SPACE, _PUNCTUATION, _OTHER = 0, 1, 2


def _before(para: str, start: int) -> str:
    """The character written just before ``para[start]`` ("" at the start)."""
    if not start:
        return ""
    c = para[start - 1]
    return para[start - 2] if c == _END else c  # a verbatim span ends in a real character


def _after(para: str, end: int) -> str:
    """The character written at ``para[end]`` ("" at the end)."""
    if end >= len(para):
        return ""
    c = para[end]
    if c == _LITERAL:
        return "\\"
    return para[end + 1] if c in (_SYNTAX, _VERBATIM) else c


def _kind(c: str) -> int:
    """Whitespace, punctuation or other, as emphasis delimiters see a neighbour."""
    if not c or c in " \n":  # whitespace is collapsed to these before escaping
        return _SPACE
    if c in _ASCII_PUNCTUATION:
        return _PUNCTUATION
    if c < "\x80":
        return _OTHER
    # CommonMark 0.31 counts symbols (S*) as punctuation, earlier versions only P*:
    # taking both escapes for either reader.
    return _PUNCTUATION if unicodedata.category(c)[0] in "PS" else _OTHER


def _escape_token(m: re.Match[str]) -> str:
    token = m.group()
    first = token[0]
    if first == _VERBATIM:
        return token[1:-1]
    if first == _SYNTAX:
        return token[1]
    if first == _LITERAL:
        return "\\" + token[1]
    para, start, end = m.string, m.start(), m.end()
    if first in "*_":
        # A run that is neither left- nor right-flanking can neither open nor close
        # emphasis: "*" between two spaces; "_" also inside a word (snake_case).
        # Any other run might pair, with the page's text or with the writer's marks.
        left, right = _kind(_before(para, start)), _kind(_after(para, end))
        if left == right == _SPACE or (first == "_" and left == right == _OTHER):
            return token
        return "\\" + "\\".join(token)
    if first == "`":
        # The partner of a backtick can be anywhere in the paragraph, or in another
        # one that a heading or a table row puts on the same line; they are rare in
        # text, so every one is escaped.
        return "\\" + "\\".join(token)
    if first == "\\":
        # Before punctuation it would escape it; at the end of a line it would be a
        # hard break, and at the end of the paragraph a link's "](" may follow.
        after = _after(para, end)
        return "\\\\" if not after or after == "\n" or after in _ASCII_PUNCTUATION else token
    if first == "]":
        # "[text](" is a link (an image with "!"). "[a][b]", "[a][]" and "[a]" would be
        # references, but no definition can exist: one would start a paragraph, and
        # a paragraph starting "[...]:" is escaped (_escape_inline).
        return "\\]" if para.startswith("(", end) else token
    if first == "!":
        return "\\!" if para.startswith(_SYNTAX + "[", end) else token  # "!" + a link: an image
    if first == "<":
        return "\\<" if _OPENS_HTML.match(para, end) else token
    ref = _REFERENCE.match(para, end)
    return "\\&" if ref and (not ref.group(1) or ref.group(1) in html5) else token


# What opens a block at the start of a line (whitespace is collapsed first, so a
# line never starts with spaces: no indented code). The page's backticks are
# always escaped (no ``` fence); "<" that opens an HTML block is escaped as inline
# HTML is.
_ORDERED = re.compile(r"(\d{1,9})[.)](?: |$)")
_THEMATIC = re.compile(r"([-*_])(?: ?\1){2,}$")
_BLOCK_MARKER = re.compile(r"(?:#{1,6}|[-+*])(?: |$)|>|~{3,}|=+$|-+$")
_DELIMITER_ROW = re.compile(r"[|: ]*-[-|: ]*$")  # with a "|": a table under the line before
_LINE_STARTERS = frozenset("#>-+*=~_|:0123456789")


def _block_start(line: str) -> str:
    if line[0] not in _LINE_STARTERS:
        return line
    ordered = _ORDERED.match(line)
    if ordered:
        return f"{ordered.group(1)}{_LINE_ESCAPE}{line[ordered.end(1) :]}"
    if _THEMATIC.match(line):
        mark = line[0]
        # Every * or _: one left bare would still be a delimiter run.
        return _LINE_ESCAPE + line if mark == "-" else line.replace(mark, _LINE_ESCAPE + mark)
    if _BLOCK_MARKER.match(line):
        return _LINE_ESCAPE + line
    if "|" in line and _DELIMITER_ROW.match(line):
        dash = line.index("-")
        return f"{line[:dash]}{_LINE_ESCAPE}{line[dash:]}"
    return line


def _escape_inline(para: str) -> str:
    """A paragraph put together (the writer's syntax marked) as Markdown: a backslash
    before each character of the page's text that a reader would take for syntax.
    What would open a block at the start of a line gets a _LINE_ESCAPE instead."""
    if not para:
        return para
    # A paragraph that starts "[label]:" (the label may run over lines) would be a
    # link reference definition, which also makes every "[label]" in the page a link.
    definition = para[0] == "[" and "]:" in para
    para = _TOKEN.sub(_escape_token, para)
    if definition:
        para = _LINE_ESCAPE + para
    if "\n" not in para:
        return _block_start(para)
    return "\n".join(_block_start(line) for line in para.split("\n"))


def _inline(text: str) -> str:
    """Rendered text put where nothing starts a line: its line-start escapes go."""
    return text.replace(_LINE_ESCAPE, "") if _LINE_ESCAPE in text else text


def plain_block(text: str) -> str:
    """Text that is not markup (a PDF's) as one Markdown block at the start of a line:
    white space collapsed, each character a reader would take for syntax escaped."""
    return _paragraph([_text(text, False)]).replace(_LINE_ESCAPE, "\\")


def plain_inline(text: str) -> str:
    """The same for text that follows syntax on its line (a heading, a list item)."""
    return _inline(_paragraph([_text(text, False)]))


def _paragraph(parts: list[str]) -> str:
    """Inline fragments to one paragraph: whitespace collapsed, <br> kept."""
    text = "".join(parts)
    if _BR in text:
        lines = (" ".join(line.split()) for line in text.split(_BR))
        text = "\n".join(line for line in lines if line)
    else:
        text = " ".join(text.split())
    return _escape_inline(text)
