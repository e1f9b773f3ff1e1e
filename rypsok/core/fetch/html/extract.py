"""Main content of a parsed page, as Markdown (REQ-FETCH-002, -004, REQ-CTX-005).

Works on the bounded tree of :mod:`rypsok.core.fetch.html.tree`; see
docs/extraction.md for the algorithm. Every walk is iterative, and each pass
visits a node a bounded number of times, so time is linear in the tree and no
Python recursion grows with the page's nesting.

What the caller gets: ``title`` raw (the caller cleans and bounds it),
``markdown`` possibly empty (nothing readable: the caller answers
``unsupported_content`` / ``extraction_failed``), ``partial`` copied from the
parse (``extraction_partial``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote, urljoin, urlsplit

from rypsok.core.fetch.html.tree import Element, ParsedDocument, Text

__all__ = ["Extracted", "extract", "extract_text"]


@dataclass(frozen=True, slots=True)
class Extracted:
    title: str | None
    markdown: str
    partial: bool


# --------------------------------------------------------------------------- element classes

# Never rendered, or not content: dropped with everything inside.
_NOT_CONTENT = frozenset(
    {
        "head",
        "title",
        "meta",
        "link",
        "base",
        "script",
        "style",
        "template",
        "noscript",
        "iframe",
        "object",
        "embed",
        "canvas",
        "audio",
        "video",
        "source",
        "track",
        "map",
        "area",
        "input",
        "button",
        "select",
        "textarea",
        "option",
        "optgroup",
        "datalist",
        "output",
        "progress",
        "meter",
        "frameset",
        "frame",
        "param",
        "picture-source",
    }
)
# Site chrome by element: navigation, page header and footer, sidebars.
_CHROME_ELEMENTS = frozenset({"nav", "aside", "footer", "header", "menu"})
_CHROME_ROLES = frozenset(
    {
        "navigation",
        "banner",
        "contentinfo",
        "complementary",
        "search",
        "dialog",
        "alertdialog",
        "menu",
        "menubar",
        "toolbar",
        "tablist",
    }
)
_MAIN_ROLES = frozenset({"main", "article"})
# Class names that hide an element by convention (matched as whole class names).
_HIDING_CLASSES = frozenset(
    {
        "hidden",
        "hide",
        "d-none",
        "is-hidden",
        "invisible",
        "sr-only",
        "visually-hidden",
        "visuallyhidden",
        "screen-reader-text",
        "screenreader",
        "element-invisible",
        "offscreen",
        "u-hidden",
        "hidden-xs",
        "skip-link",
        "skiplink",
        "show-for-sr",
    }
)
# Class/id tokens of boxes no reader wants, whatever else the page is.
_HARD_TOKENS = frozenset(
    {
        "cookie",
        "cookies",
        "consent",
        "gdpr",
        "cookiebanner",
        "newsletter",
        "paywall",
        "modal",
        "popup",
        "overlay",
        "breadcrumb",
        "breadcrumbs",
    }
)
# Class/id tokens of chrome: they count against a region when choosing the
# main content and are cut from inside it.
_CHROME_TOKENS = frozenset(
    {
        "nav",
        "navbar",
        "navigation",
        "menu",
        "menubar",
        "topnav",
        "sidenav",
        "subnav",
        "mainnav",
        "footer",
        "sidebar",
        "share",
        "sharing",
        "social",
        "sharebar",
        "related",
        "recommended",
        "recommendations",
        "promo",
        "promoted",
        "ad",
        "ads",
        "advert",
        "advertisement",
        "advertising",
        "adsense",
        "sponsor",
        "sponsored",
        "subscribe",
        "subscription",
        "signup",
        "outbrain",
        "taboola",
        "trending",
        "popular",
        "mostread",
        "pagination",
        "pager",
        "tagcloud",
    }
)
_CHROME_STEMS = (
    "sidebar",
    "footer",
    "navbar",
    "navigation",
    "advert",
    "sponsor",
    "social",
    "sharing",
    "subscribe",
    "related",
    "outbrain",
    "taboola",
)
# Comment sections: against the article when there is one; kept on a page that is a thread.
_COMMENT_TOKENS = frozenset({"comment", "comments", "disqus", "respond", "replies", "discussion"})
_MAIN_TOKENS = frozenset(
    {
        "content",
        "article",
        "post",
        "entry",
        "main",
        "body",
        "text",
        "story",
        "blog",
        "prose",
        "markdown",
        "docs",
        "documentation",
        "articlebody",
        "postbody",
        "thread",
        "message",
    }
)

_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_BLOCKS = frozenset(
    {
        "html",
        "body",
        "address",
        "article",
        "aside",
        "blockquote",
        "center",
        "details",
        "dialog",
        "dd",
        "dir",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "header",
        "hgroup",
        "hr",
        "li",
        "main",
        "menu",
        "nav",
        "ol",
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
        "caption",
        "legend",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "listing",
        "xmp",
        "plaintext",
    }
)
# Where a main content can be: containers, not single paragraphs or list parts.
_CANDIDATES = _BLOCKS - frozenset(
    {
        "p",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "li",
        "dt",
        "dd",
        "pre",
        "blockquote",
        "figcaption",
        "caption",
        "th",
        "tr",
        "summary",
        "legend",
        "address",
        "ul",
        "ol",
        "dl",
        "tbody",
        "thead",
        "tfoot",
        "table",
        "hr",
        "listing",
        "xmp",
        "plaintext",
        "menu",
        "dir",
        "hgroup",
        "figure",
        "html",
    }
)
# Text blocks never cut from inside an article on their links alone.
_LEAVES = frozenset({"p", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "dd", "dt"})
_EMPHASIS = {"em": "*", "i": "*", "strong": "**", "b": "**"}
_PRE = frozenset({"pre", "listing", "xmp", "plaintext"})
# Content a figure can hold that is not a picture: it keeps the figure.
_RICH = frozenset({"pre", "listing", "xmp", "plaintext", "table", "blockquote", "math"})
# Class/id tokens of pictures' furniture: captions, credits, galleries.
_MEDIA_TOKENS = frozenset(
    {
        "credit",
        "credits",
        "photocredit",
        "figure",
        "figcaption",
        "image",
        "img",
        "photo",
        "picture",
        "video",
        "player",
    }
)
_MEDIA_STEMS = ("caption", "gallery", "slideshow", "carousel", "lightbox")
# Class/id tokens of an article's metadata: bylines, dates, tags.
_META_TOKENS = frozenset(
    {
        "byline",
        "byl",
        "author",
        "authors",
        "dateline",
        "date",
        "dates",
        "datestamp",
        "timestamp",
        "time",
        "pubdate",
        "published",
        "updated",
        "posted",
        "meta",
        "postmeta",
        "entrymeta",
        "tags",
        "tag",
        "categories",
        "category",
        "share",
        "sharing",
    }
)
_META_STEMS = (
    "byline",
    "dateline",
    "timestamp",
    "datestamp",
    "pubdate",
    "postedon",
    "posted-on",
    "author",
)
_META_PROPS = ("author", "datepublished", "datemodified", "datecreated")

_HIDDEN_STYLE = re.compile(
    r"(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*(?:hidden|collapse))\s*(?:!important\s*)?(?:;|$)",
    re.I,
)
_TOKEN_SPLIT = re.compile(r"[^a-z0-9]+")
_LANG = re.compile(r"(?:^|\s)(?:language|lang)-([A-Za-z0-9_+#.-]{1,30})(?:\s|$)")

# Scoring constants: characters of text, see docs/extraction.md.
_SHORT = 40  # a block with less unlinked text than this is a label, not prose
_LINK_COST = 2.0  # each character of link text costs this much
_MIN_ARTICLE = 120  # a best region scoring below this is not an article
_IMAGE_LINK = 10  # link characters a linked image counts for
_CLIMB_SLACK = 30  # an enclosing element may cost this much and still be taken
_MAIN_BONUS = 1.3
_ARTICLE_BONUS = 1.15
_TOKEN_BONUS = 1.1


# --------------------------------------------------------------------------- attributes


def _attr(el: Element, name: str) -> str | None:
    value = el.attributes.get(name)
    return value if isinstance(value, str) else None


def _tokens(el: Element) -> tuple[set[str], str]:
    cls = _attr(el, "class") or ""
    ident = _attr(el, "id") or ""
    joined = f"{cls} {ident}".lower()
    return set(_TOKEN_SPLIT.split(joined)), joined


def _is_hidden(el: Element) -> bool:
    attrs = el.attributes
    if "hidden" in attrs:
        return True
    aria = attrs.get("aria-hidden")
    if isinstance(aria, str) and aria.strip().lower() == "true":
        return True
    style = attrs.get("style")
    if isinstance(style, str) and _HIDDEN_STYLE.search(style):
        return True
    cls = attrs.get("class")
    if isinstance(cls, str) and cls and not _HIDING_CLASSES.isdisjoint(cls.lower().split()):
        return True
    return el.name == "dialog" and "open" not in attrs


def _is_main_marker(el: Element) -> bool:
    if el.name in ("main", "article"):
        return True
    role = _attr(el, "role")
    if role and role.strip().lower() in _MAIN_ROLES:
        return True
    prop = _attr(el, "itemprop")
    return prop is not None and "articlebody" in prop.lower()


# --------------------------------------------------------------------------- pass 1: sizes


def _elements_postorder(root: Element) -> list[Element]:
    """Elements under ``root`` (inclusive), children before parents."""
    order: list[Element] = []
    stack = [root]
    while stack:
        node = stack.pop()
        order.append(node)
        stack.extend(c for c in node.children if isinstance(c, Element))
    order.reverse()
    return order


class _Analysis:
    """Everything measured on the tree, keyed by element identity."""

    def __init__(self, body: Element) -> None:
        self.body = body
        self.text_len: dict[Element, int] = {}
        self.has_main: dict[Element, bool] = {}
        self.removed: set[Element] = set()  # not content at all (hidden, chrome, controls)
        self.chrome: set[Element] = set()  # chrome by class/id: cut from an article
        self.comments: set[Element] = set()  # comment sections
        self.score: dict[Element, float] = {}  # sum of block weights in the subtree
        self.positive: dict[Element, float] = {}  # sum of the positive weights
        self.links: dict[Element, int] = {}  # link text length in the subtree
        self.kept_len: dict[Element, int] = {}  # text length in the subtree, after removal
        self.plain_len: dict[Element, int] = {}  # the same, outside chrome and comments
        self.bonus: dict[Element, float] = {}
        self.mains: list[Element] = []
        self.rich: set[Element] = set()  # holds code, a table or a quote
        self.cards: dict[Element, int] = {}  # headings that link elsewhere, in the subtree
        self.heads: dict[Element, int] = {}  # headings in the subtree


def _measure(body: Element) -> _Analysis:
    an = _Analysis(body)
    text_len = an.text_len
    has_main = an.has_main
    rich = an.rich
    for el in _elements_postorder(body):
        n = 0
        main = _is_main_marker(el)
        is_rich = el.name in _RICH
        for c in el.children:
            if isinstance(c, Text):
                n += len(c.data.strip())
            else:
                n += text_len[c]
                main = main or has_main[c]
                is_rich = is_rich or c in rich
        text_len[el] = n
        has_main[el] = main
        if is_rich:
            rich.add(el)
    return an


def _classify(an: _Analysis) -> None:
    """Pre-order: which elements are removed, chrome or comments."""
    total = max(an.text_len[an.body], 1)
    stack: list[tuple[Element, bool]] = [(an.body, False)]
    while stack:
        el, in_article = stack.pop()
        name = el.name
        if el is not an.body:
            if el.namespace is not None and name != "math":
                an.removed.add(el)
                continue
            if name in _NOT_CONTENT or _is_hidden(el):
                an.removed.add(el)
                continue
            # A box holding the article, or most of the page, is never chrome.
            holds_main = an.has_main[el]
            big = holds_main or an.text_len[el] * 2 > total
            role = (_attr(el, "role") or "").strip().lower()
            if not holds_main and (
                (name in _CHROME_ELEMENTS and not (name == "header" and in_article))
                or role in _CHROME_ROLES
            ):
                an.removed.add(el)
                continue
            if not big and (el.attributes.get("class") or el.attributes.get("id")):
                tokens, joined = _tokens(el)
                if not tokens.isdisjoint(_HARD_TOKENS) or "cookie" in joined:
                    an.removed.add(el)
                    continue
                if not tokens.isdisjoint(_COMMENT_TOKENS) or "comment" in joined:
                    an.comments.add(el)
                elif not tokens.isdisjoint(_MAIN_TOKENS):
                    an.bonus[el] = _TOKEN_BONUS
                elif not tokens.isdisjoint(_CHROME_TOKENS) or any(
                    s in joined for s in _CHROME_STEMS
                ):
                    an.chrome.add(el)
            if _is_main_marker(el):
                an.mains.append(el)
                an.bonus[el] = _ARTICLE_BONUS if name == "article" else _MAIN_BONUS
                in_article = True
        stack.extend((c, in_article) for c in el.children if isinstance(c, Element))


# --------------------------------------------------------------------------- pass 2: scores


def _weight(length: int, linked: int, negative: bool) -> float:
    """The weight of one block's own text: prose counts for, links against."""
    if length == 0:
        return 0.0
    plain = length - linked
    if plain < _SHORT:
        w = -_LINK_COST * linked - (1.0 if linked == 0 else 3.0)
    else:
        w = plain - _SHORT - _LINK_COST * linked
    if negative:
        w = -abs(w) - 1.0
    return w


def _score(an: _Analysis) -> None:
    """Post-order with an explicit stack: block weights summed up the tree."""
    score, positive, links, kept_len = an.score, an.positive, an.links, an.kept_len
    cards, heads = an.cards, an.heads
    plain_len = an.plain_len
    removed = an.removed
    # Frames: [element, own_len, own_links, in_link, negative, child index]
    stack: list[list[object]] = []
    own: dict[Element, list[int]] = {}

    def push(el: Element, in_link: bool, negative: bool) -> None:
        stack.append([el, in_link, negative, 0])
        own[el] = [0, 0]

    push(an.body, False, False)
    # The nearest block element of each open element, for its text.
    block_of: dict[Element, Element] = {an.body: an.body}
    while stack:
        frame = stack[-1]
        el = frame[0]
        assert isinstance(el, Element)
        i = frame[3]
        assert isinstance(i, int)
        children = el.children
        if i < len(children):
            frame[3] = i + 1
            c = children[i]
            in_link = bool(frame[1])
            if isinstance(c, Text):
                n = len(c.data.strip())
                if n:
                    counts = own[block_of[el]]
                    counts[0] += n
                    if in_link:
                        counts[1] += n
                continue
            if c.name == "img" and in_link:  # a linked picture: a link with no words
                own[block_of[el]][1] += _IMAGE_LINK
            if c in removed:
                continue
            negative = bool(frame[2]) or c in an.chrome or c in an.comments
            href = _attr(c, "href") or "#" if c.name == "a" else "#"
            child_link = in_link or not href.startswith("#")
            block_of[c] = c if c.name in _BLOCKS else block_of[el]
            push(c, child_link, negative)
            continue
        stack.pop()
        s = 0.0
        p = 0.0
        lk = 0
        ln = 0
        pl = 0
        nc = 0
        nh = 0
        counts = own.pop(el)
        if block_of[el] is el:
            ln, lk = counts[0], counts[1]
            pl = 0 if frame[2] else ln
            if el.name in _HEADINGS:  # a title counts for nothing, a linked one against
                w = -_LINK_COST * lk if lk else 0.0
                s += w
                nh = 1
                if lk * 2 >= ln > 0:
                    nc = 1
            else:
                w = _weight(ln, lk, bool(frame[2]))
                s += w
                if w > 0:
                    p += w
        for c in children:
            if isinstance(c, Element) and c not in removed:
                s += score[c]
                p += positive[c]
                lk += links[c]
                ln += kept_len[c]
                pl += plain_len[c]
                nc += cards[c]
                nh += heads[c]
        score[el], positive[el], links[el], kept_len[el] = s, p, lk, ln
        plain_len[el] = pl
        cards[el] = nc
        heads[el] = nh


def _choose(an: _Analysis) -> tuple[Element, bool]:
    """The element holding the main content, and whether it is an article
    (True) or the page's whole readable part (False)."""
    body = an.body
    best: Element | None = None
    best_value = 0.0
    for el, s in an.score.items():
        if s <= 0 or el.name not in _CANDIDATES:
            continue
        value = s * an.bonus.get(el, 1.0)
        if value > best_value:
            best, best_value = el, value
    region = _region(an)
    if best is None or an.score[best] < _MIN_ARTICLE:
        return region, False
    # Take enclosing elements that add content (a title, a second part of
    # the article) at little cost.
    floor = an.score[best] - _CLIMB_SLACK
    node = best
    cur = best.parent
    while cur is not None and cur is not body and cur in an.score:
        if an.score[cur] >= floor:
            node = cur
            floor = max(floor, an.score[cur] - _CLIMB_SLACK)
        cur = cur.parent
    # A listing: the best article is a small part of a page of links.
    if an.plain_len[node] * 6 < an.plain_len[region] and an.score[node] < 2 * _MIN_ARTICLE:
        return region, False
    return node, True


def _region(an: _Analysis) -> Element:
    """The page's readable part: its single main element, else the body."""
    mains = [m for m in an.mains if m.name == "main" or (_attr(m, "role") or "") == "main"]
    if len(mains) == 1 and an.kept_len.get(mains[0], 0) * 3 >= an.kept_len[an.body]:
        return mains[0]
    return an.body


# --------------------------------------------------------------------------- rendering


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

_ESCAPE = re.compile(r"([\\`*\[\]])")
_LINE_START = re.compile(r"^(#|>|[-+*](?=\s|$)|~~~|\|)")
_ORDERED = re.compile(r"^(\d+)[.)](?=\s|$)")
_RULE_LINE = re.compile(r"^[-=_*\s\\]+$")
_BR = "\x00"


def _escape(text: str) -> str:
    if "\x00" in text:
        text = text.replace("\x00", "")
    return _ESCAPE.sub(r"\\\1", text)


def _escape_line(line: str) -> str:
    if _RULE_LINE.match(line) and len(line) > 1:
        return "\\" + line
    ordered = _ORDERED.match(line)
    if ordered:
        return f"{ordered.group(1)}\\{line[ordered.end(1) :]}"
    return _LINE_START.sub(r"\\\1", line, count=1)


def _paragraph(parts: list[str]) -> str:
    """Inline fragments to one paragraph: whitespace collapsed, <br> kept."""
    text = "".join(parts)
    if _BR in text:
        lines = (" ".join(line.split()) for line in text.split(_BR))
        return "\n".join(_escape_line(line) for line in lines if line)
    return _escape_line(" ".join(text.split()))


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
                line = " | ".join(" ".join(c.blocks) for c in item.cells if c.blocks)
                if line:
                    out.append(line)
    if run:
        para = _paragraph(run)
        if para:
            out.append(para)
    return out


def _flat(items: list[_Item]) -> str:
    return " ".join(" ".join(b.split()) for b in _blocks(items))


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
    code = re.sub(r"\n{3,}", "\n\n", code.strip("\n"))
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
            line = " | ".join(" ".join(c.blocks) for c in r.cells if c.blocks)
            if line:
                out.append(_Blk(line))
        return out
    lines = []
    for i, r in enumerate(rows):
        cells = [" ".join(c.blocks).replace("|", "\\|").replace("\n", " ") for c in r.cells]
        lines.append("| " + " | ".join(cells) + " |")
        if i == 0:
            lines.append("|" + " --- |" * width)
    out.append("\n".join(lines))
    return out


# An alt that is a file name or a slug, not a description.
_FILE_NAME = re.compile(
    r"^(?:\S*_\S*|\S*-\S*-\S*|\S+\.(?:jpe?g|png|gif|webp|svg|avif|bmp|tiff?))$", re.I
)
_TINY = 32  # an image no larger than this both ways is an icon or a pixel


def _tiny(el: Element) -> bool:
    sizes = []
    for name in ("width", "height"):
        value = (_attr(el, name) or "").strip().removesuffix("px")
        # ASCII digits only: isdigit() also takes "²", which int() refuses, and int()
        # refuses over 4300 digits; a number of ten digits is not tiny anyway.
        if not (value.isascii() and value.isdigit()) or len(value) > 9:
            return False
        sizes.append(int(value))
    return max(sizes) <= _TINY


class _Renderer:
    def __init__(self, an: _Analysis, base: str, cut: set[Element]) -> None:
        self.an = an
        self.base = base
        self.cut = cut
        self.alts: set[str] = set()

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
        skip = self.an.removed
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
        skip = self.an.removed
        cut = self.cut
        # Frames: element, child index, collected items.
        stack: list[tuple[Element, list[int], list[_Item]]] = [(root, [0], [])]
        result: list[_Item] = []
        while stack:
            el, index, items = stack[-1]
            children = el.children
            i = index[0]
            if i < len(children):
                index[0] = i + 1
                c = children[i]
                if isinstance(c, Text):
                    items.append(_escape(c.data))
                    continue
                if c in skip or c in cut:
                    continue
                leaf = self.leaf(c)
                if leaf is not None:
                    items.extend(leaf)
                    continue
                stack.append((c, [0], []))
                continue
            stack.pop()
            done = self.close(el, items)
            if stack:
                stack[-1][2].extend(done)
            else:
                result = done
        return _blocks(result)

    def leaf(self, el: Element) -> list[_Item] | None:
        """Elements rendered without their children; None for the others."""
        name = el.name
        if name == "br":
            return [_BR]
        if name == "hr":
            return [_Blk("---")]
        if name == "img":
            alt = self.alt(el)
            return [f" {_escape(alt)} "] if alt else []
        if name in _PRE:
            code = self.raw_text(el)
            if not code.strip():
                return []
            lang = None
            for holder in (el, *[c for c in el.children if isinstance(c, Element)][:1]):
                m = _LANG.search(_attr(holder, "class") or "")
                if m:
                    lang = m.group(1)
                    break
            return [_Blk(_fence(code, lang))]
        if name in ("code", "kbd", "samp", "tt"):
            code = _inline_code(self.raw_text(el))
            return [code] if code else []
        return None

    def alt(self, el: Element) -> str:
        """An image's alternative text, when it is text for a reader: not a
        decorative image's, not a file name, not one given already."""
        alt = " ".join((_attr(el, "alt") or "").split())
        if not alt or alt in self.alts or _FILE_NAME.match(alt):
            return ""
        role = (_attr(el, "role") or "").strip().lower()
        if role in ("presentation", "none") or _tiny(el):
            return ""
        self.alts.add(alt)
        return alt

    def close(self, el: Element, items: list[_Item]) -> list[_Item]:
        name = el.name
        level = _HEADINGS.get(name)
        if level is not None:
            text = _flat(items)
            return [_Blk("#" * level + " " + text)] if text else []
        if name == "a":
            return self.link(el, items)
        mark = _EMPHASIS.get(name)
        if mark is not None:
            if all(isinstance(x, str) and not isinstance(x, _Blk) for x in items):
                text = "".join(x for x in items if isinstance(x, str))
                m = re.match(r"(\s*)(.*?)(\s*)$", text, re.S)
                if m and m.group(2).strip(_BR + " "):
                    return [m.group(1) + mark + m.group(2) + mark + m.group(3)]
            return items
        if name in ("ul", "ol", "menu", "dir"):
            lis = [x if isinstance(x, _Li) else _Li(_blocks([x])) for x in items]
            start: int | None = None
            if name == "ol":
                try:
                    start = int((_attr(el, "start") or "1").strip())
                except ValueError:
                    start = 1
            text = _list(lis, start)
            return [_Blk(text)] if text else []
        if name == "li":
            return [_Li(_blocks(items))]
        if name in ("td", "th"):
            spans = any(
                (_attr(el, a) or "1").strip() not in ("", "1") for a in ("colspan", "rowspan")
            )
            return [_Cell(_blocks(items), name == "th", spans)]
        if name == "tr":
            cells = [
                x if isinstance(x, _Cell) else _Cell(_blocks([x]), False, False) for x in items
            ]
            return [_Row(cells)]
        if name in ("thead", "tbody", "tfoot"):
            return items
        if name == "table":
            rows = [x for x in items if isinstance(x, _Row)]
            caption = _blocks([x for x in items if not isinstance(x, _Row)])
            return [_Blk(b) for b in _table(rows, caption)]
        if name == "blockquote":
            blocks = _blocks(items)
            return [_Blk(_quote(blocks))] if blocks else []
        if name in _BLOCKS:
            return [_Blk(b) for b in _blocks(items)]
        return items

    def link(self, el: Element, items: list[_Item]) -> list[_Item]:
        url = self.url(_attr(el, "href"))
        if url is None:
            return items
        if all(isinstance(x, str) and not isinstance(x, _Blk) for x in items):
            text = "".join(x for x in items if isinstance(x, str))
            m = re.match(r"(\s*)(.*?)(\s*)$", text, re.S)
            if not m or not m.group(2).replace(_BR, "").strip():
                return [text] if text.strip() else []
            inner = " ".join(m.group(2).replace(_BR, " ").split())
            return [f"{m.group(1)}[{inner}]({url}){m.group(3)}"]
        # A link around blocks (a card): the first heading or paragraph links.
        out = list(items)
        for k, x in enumerate(out):
            if isinstance(x, _Blk) and x and "\n" not in x:
                hashes = re.match(r"(#{1,6} )?(.*)$", x)
                if hashes and hashes.group(2):
                    out[k] = _Blk(f"{hashes.group(1) or ''}[{hashes.group(2)}]({url})")
                break
        return out


# --------------------------------------------------------------------------- entry points


def _find(root: Element, name: str) -> Element | None:
    for el in root.iter_elements():
        if el.name == name and el.namespace is None:
            return el
    return None


def _child(el: Element | None, name: str) -> Element | None:
    if el is None:
        return None
    for c in el.children:
        if isinstance(c, Element) and c.name == name and c.namespace is None:
            return c
    return None


def _is_media(el: Element, an: _Analysis, total: float) -> bool:
    """A picture's furniture: a figure without code, table or quote, its
    caption, a caption, credit or gallery box holding little prose."""
    if el.name == "figcaption":  # kept with the code or table it captions
        figure = el.parent
        return figure is None or figure.name != "figure" or figure not in an.rich
    if el in an.rich or an.heads[el]:
        return False
    if el.name == "figure":
        return True
    if not (el.attributes.get("class") or el.attributes.get("id")):
        return False
    if an.positive[el] * 4 >= total:  # a quarter of the article: prose, not a caption
        return False
    tokens, joined = _tokens(el)
    return not tokens.isdisjoint(_MEDIA_TOKENS) or any(s in joined for s in _MEDIA_STEMS)


_META_LEN = 160  # metadata is short: a byline, a date, a row of tags


def _is_meta(el: Element, an: _Analysis) -> bool:
    """A short line of metadata: a byline, a date, tags, a share row."""
    if an.kept_len[el] > _META_LEN or an.heads[el]:
        return False
    if el.name == "time":
        return True
    attrs = el.attributes
    rel = attrs.get("rel")
    if isinstance(rel, str) and "author" in rel.lower().split():
        return True
    prop = attrs.get("itemprop")
    if isinstance(prop, str) and any(p in prop.lower() for p in _META_PROPS):
        return True
    if not (attrs.get("class") or attrs.get("id")):
        return False
    tokens, joined = _tokens(el)
    return not tokens.isdisjoint(_META_TOKENS) or any(s in joined for s in _META_STEMS)


def _cuts(an: _Analysis, node: Element) -> set[Element]:
    """Inside an article: chrome, comments, link lists, pictures' captions,
    metadata lines and teaser cards to leave out."""
    cut: set[Element] = set()
    total = an.positive.get(node, 0.0)
    # Frames: element, text length of its nearest block (a metadata line is
    # cut only when it is a line of its own, never from inside a sentence).
    stack = [(c, an.kept_len.get(c, 0)) for c in node.children if isinstance(c, Element)]
    while stack:
        el, line = stack.pop()
        if el in an.removed or el not in an.score:
            continue
        if el.name in _BLOCKS:
            line = an.kept_len[el]
        minor = an.positive[el] * 2 < total
        hinted = (el in an.chrome or el in an.comments) and minor
        score = an.score[el]
        link_list = (
            score < 0
            and el.name in _BLOCKS
            and el.name not in _LEAVES
            and el not in an.rich
            and an.links[el] * 4 > an.kept_len[el]
            and an.positive[el] < -score * 4
        )
        promo = (
            el.name == "p"
            and an.kept_len[el] < _PROMO_LEN
            and an.links[el] * 2 >= an.kept_len[el]
            and _is_promo(el, an)
        )
        if (
            hinted
            or link_list
            or promo
            or (minor and _is_media(el, an, total))
            or (line <= _META_LEN and _is_meta(el, an))
            or (minor and _is_teasers(el, an))
        ):
            cut.add(el)
            continue
        stack.extend((c, line) for c in el.children if isinstance(c, Element))
    return cut


_PROMO_LEN = 160  # a promotional line is short
_LABEL = 20  # "Related:", "Read more:"


def _is_promo(el: Element, an: _Analysis) -> bool:
    """A paragraph that only points to another story: a bold headline link,
    alone or after a short label ending in a colon ("Read more: ...")."""
    plain: list[str] = []
    linked = bold_linked = 0
    stack: list[tuple[Element | Text, bool, bool]] = [(el, False, False)]
    while stack:
        node, in_link, in_bold = stack.pop()
        if isinstance(node, Text):
            n = len(node.data.strip())
            if in_link:
                linked += n
                bold_linked += n if in_bold else 0
            else:
                plain.append(node.data)
            continue
        if node is not el and node in an.removed:
            continue
        in_bold = in_bold or node.name in ("strong", "b")
        if node.name == "a" and not (_attr(node, "href") or "#").startswith("#"):
            in_link = True
        stack.extend((c, in_link, in_bold) for c in reversed(node.children))
    if not bold_linked == linked > 0:
        return False
    label = "".join(plain).strip()
    return not label.strip("|-–—:*>» ") or (label.endswith(":") and len(label) <= _LABEL)


_TEASER_LEN = 480  # text per linked heading in a box of teasers, at most


def _is_teasers(el: Element, an: _Analysis) -> bool:
    """Cards that lead elsewhere: most headings link out, little text each."""
    cards = an.cards[el]
    if not cards or el.name in _HEADINGS:
        return False
    if cards < 2 and el.name != "article":
        return False
    return cards * 2 >= an.heads[el] and an.kept_len[el] <= _TEASER_LEN * cards


def _title(root: Element, body: Element) -> str | None:
    head = _child(_child(root, "html"), "head")
    title = _child(head, "title")
    if title is not None:
        text = title.text_content()
        if text.strip():
            return text
    h1 = _find(body, "h1")
    if h1 is not None:
        text = h1.text_content()
        if text.strip():
            return text
    return None


def _base(root: Element, base_url: str) -> str:
    head = _child(_child(root, "html"), "head")
    base = _child(head, "base")
    href = _attr(base, "href") if base is not None else None
    if href:
        try:
            joined = urljoin(base_url, href.strip())
            if urlsplit(joined).scheme.lower() in ("http", "https"):
                return joined
        except ValueError:
            pass
    return base_url


def extract(doc: ParsedDocument, base_url: str) -> Extracted:
    """The page's title and main content as Markdown."""
    html = _child(doc.root, "html")
    body = _child(html, "body") or _child(html, "frameset") or html
    if body is None:
        return Extracted(title=None, markdown="", partial=doc.partial)
    title = _title(doc.root, body)
    an = _measure(body)
    _classify(an)
    _score(an)
    node, article = _choose(an)
    cut = _cuts(an, node) if article else {e for e in an.chrome if e is not node}
    blocks = _Renderer(an, _base(doc.root, base_url), cut).render(node)
    markdown = "\n\n".join(b.strip("\n") for b in blocks if b.strip())
    return Extracted(title=title, markdown=markdown, partial=doc.partial)


def extract_text(text: str) -> Extracted:
    """A text/plain or text/markdown document: its text, line ends unified,
    trailing spaces and runs of blank lines trimmed, nothing else changed."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff")
    lines = [line.rstrip() for line in text.split("\n")]
    out = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")
    return Extracted(title=None, markdown=out, partial=False)
