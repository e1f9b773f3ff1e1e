"""The Markdown writer: one walk over the chosen element (docs/extraction.md, "Markdown").

Page text cannot forge structure, and costs no backslash where it could not: a
character is escaped only where a CommonMark reader would take it for syntax
(docs/extraction.md, "Escaping").
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from html.entities import html5
from urllib.parse import quote, urljoin, urlsplit

from rypsok.core.fetch.extraction.attributes import attr
from rypsok.core.html.tree import Element, Text
from rypsok.core.html.vocabulary import (
    BLOCK,
    EMPHASIS,
    HEADING_LEVELS,
    INLINE_CODE,
    LISTS,
    PREFORMATTED,
    PRESENTATION_ROLES,
    STRONG,
    TABLE_CELLS,
    TABLE_ROW_GROUPS,
)

__all__ = ["markdown_blocks", "write_markdown"]

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

# Markdown's mark for each emphasis element.
_EMPHASIS = {**dict.fromkeys(EMPHASIS, _SYNTAX + "*"), **dict.fromkeys(STRONG, 2 * (_SYNTAX + "*"))}
# The language of a code block, from a class such as "language-python".
_LANG = re.compile(r"(?:^|\s)(?:language|lang)-([A-Za-z0-9_+#.-]{1,30})(?:\s|$)")


class _Blk(str):
    """A rendered block (a paragraph, a heading, a list, ...)."""

    __slots__ = ()


class _Li:
    __slots__ = ("blocks",)

    def __init__(self, blocks: list[str]) -> None:
        self.blocks = blocks


class _Cell:
    __slots__ = ("blocks", "header", "span")

    def __init__(self, blocks: list[str], header: bool, span: bool) -> None:
        self.blocks = blocks
        self.header = header
        self.span = span


class _Row:
    __slots__ = ("cells",)

    def __init__(self, cells: list[_Cell]) -> None:
        self.cells = cells


_Item = str | _Li | _Cell | _Row

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


def _paragraph(parts: list[str]) -> str:
    """Inline fragments to one paragraph: whitespace collapsed, <br> kept."""
    text = "".join(parts)
    if _BR in text:
        lines = (" ".join(line.split()) for line in text.split(_BR))
        text = "\n".join(line for line in lines if line)
    else:
        text = " ".join(text.split())
    return _escape_inline(text)


def _blocks(items: list[_Item]) -> list[str]:
    """Items to blocks: runs of inline text become paragraphs."""
    out: list[str] = []
    run: list[str] = []
    for item in items:
        if isinstance(item, _Blk):
            if run:
                para = _paragraph(run)
                if para:
                    out.append(para)
                run = []
            out.append(item)
        elif isinstance(item, str):
            run.append(item)
        else:
            if run:
                para = _paragraph(run)
                if para:
                    out.append(para)
                run = []
            if isinstance(item, _Li):
                out.append(_list([item], None))
            elif isinstance(item, _Cell):
                out.extend(item.blocks)
            else:
                line = _row_line(item.cells)
                if line:
                    out.append(line)
    if run:
        para = _paragraph(run)
        if para:
            out.append(para)
    return out


def _flat(items: list[_Item]) -> str:
    """Items as one line of inline text (a heading's)."""
    return _inline(" ".join(" ".join(b.split()) for b in _blocks(items)))


def _row_line(cells: list[_Cell]) -> str:
    """A row as one line, "a | b": only its first cell starts the line."""
    texts = [" ".join(c.blocks) for c in cells if c.blocks]
    return " | ".join([*texts[:1], *(_inline(t) for t in texts[1:])])


def _list(items: list[_Li], start: int | None) -> str:
    lines: list[str] = []
    n = start
    for li in items:
        if not li.blocks:
            continue
        marker = "- " if n is None else f"{n}. "
        if n is not None:
            n += 1
        pad = " " * len(marker)
        first = True
        for block in li.blocks:
            for line in block.split("\n"):
                if first:
                    lines.append(marker + line)
                    first = False
                else:
                    lines.append(pad + line if line else "")
    return "\n".join(lines)


def _quote(blocks: list[str]) -> str:
    text = "\n\n".join(blocks)
    return "\n".join("> " + line if line else ">" for line in text.split("\n"))


def _fence(code: str, lang: str | None) -> str:
    longest = max((len(m) for m in re.findall(r"`+", code)), default=0)
    fence = "`" * max(3, longest + 1)
    # The text keeps every line, blank runs included; only the empty lines that
    # touch the fence go.
    code = code.strip("\n")
    return f"{fence}{lang or ''}\n{code}\n{fence}"


def _inline_code(code: str) -> str:
    code = " ".join(code.split())
    if not code:
        return ""
    longest = max((len(m) for m in re.findall(r"`+", code)), default=0)
    fence = "`" * (longest + 1)
    if code.startswith("`") or code.endswith("`"):
        code = f" {code} "
    return f"{fence}{code}{fence}"


def _table(rows: list[_Row], caption: list[str]) -> list[str]:
    out = list(caption)
    rows = [r for r in rows if any(c.blocks for c in r.cells)]
    if not rows:
        return out
    layout = any(
        len(c.blocks) > 1 or any("\n" in b for b in c.blocks) for r in rows for c in r.cells
    )
    if layout:  # a table used for layout: its cells are sections of the page
        for r in rows:
            for c in r.cells:
                out.extend(c.blocks)
        return out
    width = max(len(r.cells) for r in rows)
    spans = any(c.span for r in rows for c in r.cells)
    if width < 2:
        out.extend(b for r in rows for c in r.cells for b in c.blocks)
        return out
    if spans or any(len(r.cells) != width for r in rows):  # complex: one line per row
        for r in rows:
            line = _row_line(r.cells)
            if line:
                out.append(_Blk(line))
        return out
    lines = []
    for i, r in enumerate(rows):
        # A cell's text is inline, its own or a <p>'s in it: nothing in it starts a line.
        cells = [
            _inline(" ".join(c.blocks)).replace("|", "\\|").replace("\n", " ") for c in r.cells
        ]
        lines.append("| " + " | ".join(cells) + " |")
        if i == 0:
            lines.append("|" + " --- |" * width)
    out.append("\n".join(lines))
    return out


# An alt that is a file name or a slug, not a description.
_FILE_NAME = re.compile(
    r"^(?:\S*_\S*|\S*-\S*-\S*|\S+\.(?:jpe?g|png|gif|webp|svg|avif|bmp|tiff?))$", re.I
)
# An image no larger than this both ways, in pixels, is an icon or a tracking
# pixel: its alt is not for a reader (docs/extraction.md, "Markdown").
_TINY = 32


def _tiny(el: Element) -> bool:
    sizes = []
    for name in ("width", "height"):
        value = (attr(el, name) or "").strip().removesuffix("px")
        # ASCII digits only: isdigit() also takes "²", which int() refuses, and int()
        # refuses over 4300 digits; a number of ten digits is not tiny anyway.
        if not (value.isascii() and value.isdigit()) or len(value) > 9:
            return False
        sizes.append(int(value))
    return max(sizes) <= _TINY


@dataclass(slots=True)
class _Open:
    """An element of the rendering walk whose children are being rendered."""

    element: Element
    next_child: int = 0
    items: list[_Item] = field(default_factory=list)
    url: str | None = None  # an <a>'s target, when it has one kept


class _Renderer:
    """One rendering of one page: ``removed`` and ``cut`` elements are left out
    with everything inside; ``alts`` remembers the alt texts given already."""

    def __init__(self, removed: set[Element], base: str, cut: set[Element]) -> None:
        self.removed = removed
        self.base = base
        self.cut = cut
        self.alts: set[str] = set()
        self.links = 0  # <a> elements with a target open around the walk's position

    def url(self, href: str | None) -> str | None:
        if not href:
            return None
        href = href.strip()
        if not href:
            return None
        try:
            absolute = urljoin(self.base, href)
            scheme = urlsplit(absolute).scheme.lower()
        except ValueError:
            return None
        if scheme not in ("http", "https"):
            return None
        return quote(absolute, safe="/:?#[]@!$&'*+,;=%~-._")

    def raw_text(self, el: Element) -> str:
        parts: list[str] = []
        stack: list[Element | Text] = [el]
        skip = self.removed
        while stack:
            node = stack.pop()
            if isinstance(node, Text):
                parts.append(node.data)
            elif node is el or node not in skip:
                if node.name == "br":
                    parts.append("\n")
                stack.extend(reversed(node.children))
        return "".join(parts)

    def render(self, root: Element) -> list[str]:
        skip = self.removed
        cut = self.cut
        stack: list[_Open] = [self.open(root)]
        result: list[_Item] = []
        while stack:
            frame = stack[-1]
            el, items = frame.element, frame.items
            children = el.children
            i = frame.next_child
            if i < len(children):
                frame.next_child = i + 1
                c = children[i]
                if isinstance(c, Text):
                    items.append(_text(c.data, self.links > 0))
                    continue
                if c in skip or c in cut:
                    continue
                leaf = self.leaf(c)
                if leaf is not None:
                    items.extend(leaf)
                    continue
                stack.append(self.open(c) if c.name == "a" else _Open(c))
                continue
            stack.pop()
            self.links -= frame.url is not None
            done = self.close(el, items, frame.url)
            if stack:
                stack[-1].items.extend(done)
            else:
                result = done
        blocks = _blocks(result)
        # Each block now stands at the start of a line: its line-start escapes are written.
        for i, b in enumerate(blocks):
            if _LINE_ESCAPE in b:
                blocks[i] = b.replace(_LINE_ESCAPE, "\\")
        return blocks

    def open(self, el: Element) -> _Open:
        """The frame of ``el``, whose children are rendered next (of an <a>: with
        its target, and counted while open)."""
        if el.name != "a":
            return _Open(el)
        url = self.url(attr(el, "href"))
        self.links += url is not None
        return _Open(el, url=url)

    def leaf(self, el: Element) -> list[_Item] | None:
        """Elements rendered without their children; None for the others."""
        name = el.name
        if name == "br":
            return [_BR]
        if name == "hr":
            return [_Blk(_RULE)]
        if name == "img":
            alt = self.alt(el)
            return [f" {_text(alt, self.links > 0)} "] if alt else []
        if name in PREFORMATTED:
            # Written as it is, but for the one mark render() turns into a backslash.
            code = self.raw_text(el).replace(_LINE_ESCAPE, "")
            if not code.strip():
                return []
            lang = None
            for holder in (el, *[c for c in el.children if isinstance(c, Element)][:1]):
                m = _LANG.search(attr(holder, "class") or "")
                if m:
                    lang = m.group(1)
                    break
            return [_Blk(_fence(code, lang))]
        if name in INLINE_CODE:
            code = _inline_code(_NOT_TEXT.sub("", self.raw_text(el)))
            return [f"{_VERBATIM}{code}{_END}"] if code else []
        return None

    def alt(self, el: Element) -> str:
        """An image's alternative text, when it is text for a reader: not a
        decorative image's, not a file name, not one given already."""
        alt = " ".join((attr(el, "alt") or "").split())
        if not alt or alt in self.alts or _FILE_NAME.match(alt):
            return ""
        role = (attr(el, "role") or "").strip().lower()
        if role in PRESENTATION_ROLES or _tiny(el):
            return ""
        self.alts.add(alt)
        return alt

    def close(self, el: Element, items: list[_Item], url: str | None) -> list[_Item]:
        """``el``'s rendering from its children's; ``url``: an <a>'s target."""
        name = el.name
        level = HEADING_LEVELS.get(name)
        if level is not None:
            text = _flat(items)
            if text.endswith("#"):  # "# C #": a closing sequence, which a reader drops
                text = _CLOSING_HASHES.sub(r"\1\\\2", text)
            return [_Blk("#" * level + " " + text)] if text else []
        if name == "a":
            return self.link(url, items)
        mark = _EMPHASIS.get(name)
        if mark is not None:
            if all(isinstance(x, str) and not isinstance(x, _Blk) for x in items):
                text = "".join(x for x in items if isinstance(x, str))
                m = re.match(r"(\s*)(.*?)(\s*)$", text, re.S)
                if m and m.group(2).strip(_BR + " "):
                    return [m.group(1) + mark + m.group(2) + mark + m.group(3)]
            return items
        if name in LISTS:
            lis = [x if isinstance(x, _Li) else _Li(_blocks([x])) for x in items]
            start: int | None = None
            if name == "ol":
                try:
                    start = int((attr(el, "start") or "1").strip())
                except ValueError:
                    start = 1
            text = _list(lis, start)
            return [_Blk(text)] if text else []
        if name == "li":
            return [_Li(_blocks(items))]
        if name in TABLE_CELLS:
            spans = any(
                (attr(el, a) or "1").strip() not in ("", "1") for a in ("colspan", "rowspan")
            )
            return [_Cell(_blocks(items), name == "th", spans)]
        if name == "tr":
            cells = [
                x if isinstance(x, _Cell) else _Cell(_blocks([x]), False, False) for x in items
            ]
            return [_Row(cells)]
        if name in TABLE_ROW_GROUPS:
            return items
        if name == "table":
            rows = [x for x in items if isinstance(x, _Row)]
            caption = _blocks([x for x in items if not isinstance(x, _Row)])
            return _as_blocks(_table(rows, caption))
        if name == "blockquote":
            blocks = _blocks(items)
            return [_Blk(_quote(blocks))] if blocks else []
        if name in BLOCK:
            return _as_blocks(_blocks(items))
        return items

    def link(self, url: str | None, items: list[_Item]) -> list[_Item]:
        if url is None:
            return items
        if all(isinstance(x, str) and not isinstance(x, _Blk) for x in items):
            text = "".join(x for x in items if isinstance(x, str))
            m = re.match(r"(\s*)(.*?)(\s*)$", text, re.S)
            if not m or not m.group(2).replace(_BR, "").strip():
                return [text] if text.strip() else []
            inner = " ".join(m.group(2).replace(_BR, " ").split())
            return [f"{m.group(1)}{_SYNTAX}[{inner}{_VERBATIM}]({url}){_END}{m.group(3)}"]
        # A link around blocks (a card): the first heading or paragraph links.
        out = list(items)
        for k, x in enumerate(out):
            if isinstance(x, _Blk) and x and "\n" not in x:
                hashes = re.match(r"(#{1,6} )?(.*)$", x)
                if hashes and hashes.group(2):
                    out[k] = _Blk(f"{hashes.group(1) or ''}[{hashes.group(2)}]({url})")
                break
        return out


def _as_blocks(texts: list[str]) -> list[_Item]:
    # A block already is one: wrapping it again would copy its text at every
    # enclosing <div>.
    return [b if type(b) is _Blk else _Blk(b) for b in texts]


def write_markdown(root: Element, removed: set[Element], cut: set[Element], base: str) -> str:
    """``root`` as Markdown, without the ``removed`` and ``cut`` elements; links
    resolved against ``base``. Blocks are separated by one blank line."""
    return "\n\n".join(markdown_blocks(root, removed, cut, base))


def markdown_blocks(
    root: Element, removed: set[Element], cut: set[Element], base: str, article: bool = True
) -> list[str]:
    """The blocks :func:`write_markdown` joins with a blank line: a caller that lets
    the tree go first joins them without the tree in memory beside the text.
    ``article`` False: the page is read whole (a listing), and a list of links
    at its end is its items, not leftovers."""
    rendered = _Renderer(removed, base, cut).render(root)
    # Each rendered block is let go of as soon as its stripped copy is made, so the
    # page's text is not held twice by this list and the one made from it.
    blocks: list[str] = []
    for i, b in enumerate(rendered):
        rendered[i] = ""
        if b.strip():
            blocks.append(b.strip("\n"))
    del rendered
    return _without_trailing_leftovers(_without_empty_sections(blocks), article)


def _level(block: str) -> int:
    """A heading block's level, 0 for any other block."""
    if _BOLD_LINE.match(block):
        return 7
    if not _HEADING.match(block):
        return 0
    return len(block) - len(block.lstrip("#"))


def _without_empty_sections(blocks: list[str]) -> list[str]:
    """A heading followed at once by one of its own level or above had its
    section cut ("Related stories" whose links went): it goes too. Walked
    from the end, so a heading over only such headings goes with them."""
    kept: list[str] = []
    next_level = 0
    prose = False  # a block that is not a heading was seen
    for block in reversed(blocks):
        level = _level(block)
        if level and next_level and next_level <= level:
            continue
        kept.append(block)
        next_level = level
        prose = prose or not level
    kept.reverse()
    # A page of headings alone (a menu of sections) keeps them.
    return kept if prose else blocks


# A heading's line: a heading longer than this is a paragraph marked up wrongly.
_HEADING = re.compile(r"#{1,6} [^\n]{1,80}$")
# A short line all in bold: a heading by its looks (level 7, below any <h6>).
_BOLD_LINE = re.compile(r"\*\*[^\n*]{1,80}\*\*$")
# A last block this short, one line and ending in a colon: a label.
_LABEL_MAX = 80
_LABELS_MAX = 2
# A heading's text ending in a run of "#" after a space, or all "#".
_CLOSING_HASHES = re.compile(r"(^| )(#+)$")
# A thematic break (<hr>) as written.
_RULE = "---"
# A list whose every item is one link and nothing else: "More on this" whose
# heading went, a box of further reading.
_LINK_LIST = re.compile(r"(?:(?:[-*+]|\d{1,3}[.)]) \[[^\n\]]{1,200}\]\([^\s)]*\)(?:\n|$))+$")
_FEW_LINKS = 5  # on a page read whole, a list of more links than this is its items
# A block that is one short link and nothing else.
_LONE_LINK = re.compile(r"\[[^\n\]]{1,60}\]\([^\s)]*\)$")


def _without_trailing_leftovers(blocks: list[str], article: bool) -> list[str]:
    """What is left at the end once the content stopped: headings over sections
    whose content was cut (a "More on this" box after its links went) and
    lone links ("Back to the list", "Next article"), and up to two labels.
    They go, unless they are all there is."""
    end = len(blocks)
    labels = 0  # labels taken: a page of short lines that end so is not all leftovers
    while end:
        last = blocks[end - 1]
        if (
            _HEADING.match(last)
            or _BOLD_LINE.match(last)
            or _LONE_LINK.match(last)
            or last == _RULE
            or (_LINK_LIST.match(last) and (article or last.count("\n") < _FEW_LINKS))
        ):
            end -= 1
        elif labels < _LABELS_MAX and _label(last):
            end -= 1
            labels += 1
        else:
            break
    return blocks[:end] or blocks


def _label(block: str) -> bool:
    """A label whose list or form was cut ("Contact:", "Share this article:")."""
    return "\n" not in block and len(block) <= _LABEL_MAX and block.rstrip().endswith(":")
