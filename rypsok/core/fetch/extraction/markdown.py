"""The Markdown writer: one walk over the chosen element (docs/extraction.md, "Markdown").

The page's text is escaped by escape.py, once a paragraph is put together.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import quote, urljoin, urlsplit

from rypsok.core.fetch.extraction.attributes import attr
from rypsok.core.fetch.extraction.escape import (
    _BR,
    _END,
    _LINE_ESCAPE,
    _NOT_TEXT,
    _SYNTAX,
    _VERBATIM,
    _inline,
    _paragraph,
    _text,
)
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
