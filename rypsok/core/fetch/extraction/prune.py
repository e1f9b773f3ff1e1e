"""What is not content: removed before scoring, or cut from inside the article.

:func:`classify` is step 2 of docs/extraction.md, "Finding the main content":
it marks what a browser would not show or that is not content (removed), and
the chrome and comment boxes that count against a region. :func:`cuts` is the
list after step 4: what the renderer leaves out of an article (never of a
listing, where these are the content).
"""

from __future__ import annotations

import re

from rypsok.core.fetch.extraction.attributes import attr, class_tokens, is_main_marker, links_away
from rypsok.core.fetch.extraction.score import (
    ARTICLE_BONUS,
    MAIN_BONUS,
    TOKEN_BONUS,
    Analysis,
    is_link_list,
)
from rypsok.core.html.tree import Element, Text
from rypsok.core.html.vocabulary import (
    AUTHOR_STEMS,
    BIO_TOKENS,
    BLOCK,
    CHROME_ELEMENTS,
    CHROME_ROLES,
    CHROME_STEMS,
    CHROME_TOKENS,
    COMMENT_TOKENS,
    HARD_TOKENS,
    HEADING_LEVELS,
    HIDING_CLASSES,
    LIST_ITEMS,
    MAIN_TOKENS,
    MEDIA_STEMS,
    MEDIA_TOKENS,
    META_PROPS,
    META_STEMS,
    META_TOKENS,
    NOT_CONTENT,
    RELATED_HEADINGS,
    RELATED_PREFIXES,
    SCRIPT_FALLBACK,
    SEO_COPY_PREFIX,
    SKIP_STEM,
    STRONG,
    TABLE_PARTS,
    WRITER_STEMS,
)

__all__ = ["classify", "cuts", "listing_cuts"]

_HIDDEN_STYLE = re.compile(
    r"(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*(?:hidden|collapse))\s*(?:!important\s*)?(?:;|$)",
    re.I,
)

# Tuning of the cuts, in characters of text; the values and what they catch
# are the list "Inside an article" of docs/extraction.md.
_META_LEN = 160  # metadata is short: a byline, a date, a row of tags
_PROMO_LEN = 160  # a promotional line is short: one headline and a label
_LABEL = 20  # "Related:", "Read more:"
_LONE_LINK_LEN = 2 * _PROMO_LEN  # a paragraph that is one link: a headline and its blurb at most
# A hidden box is the page a script reveals when it holds more than 2/3 of the
# page's text (a box of options or a comparison table hidden on a product
# page can hold half of it).
_REVEAL_SHARE = 3
_TOOL_LINE = 40  # an "edit this page" link is short
# Regions beside the content, whose <article> elements are widgets.
_SIDE_REGIONS = frozenset({"footer", "aside"})
# An <input> of these types asks for the reader's own address or account: a
# plain "text" box may be a quantity in a shop's form, so it does not count.
_TEXT_INPUTS = frozenset({"email", "password"})
# A listing's item, or its title, even when a class names a picture.
_LISTING_ITEMS = frozenset({"figure", "figcaption", "a"})
# A box's kind, to find a run of like boxes: its tag and its class.
_Kind = tuple[str, str | None]
_TEASER_LEN = 480  # text per linked heading in a box of teasers, at most (a headline and a blurb)
_HARD_PROSE = 600  # unlinked characters: more than any banner, popup or newsletter box says
_CLASS_WORD_PARTS = re.compile(r"[^a-z0-9]+")
# Chrome words that make a content word furniture ("article-copyright"). A
# post's signature in a thread (its writer, its date) comes with each post: it
# is part of the thread's structure, not a box to leave out.
_FURNITURE = CHROME_TOKENS - {"signature", "postprofile"}


# --------------------------------------------------------------------------- step 2: classify


def _aria_hidden(el: Element) -> bool:
    aria = el.attributes.get("aria-hidden")
    return isinstance(aria, str) and aria.strip().lower() == "true"


def _is_hidden(el: Element) -> bool:
    attrs = el.attributes
    if "hidden" in attrs:
        return True
    if _aria_hidden(el):
        return True
    style = attrs.get("style")
    if isinstance(style, str) and _HIDDEN_STYLE.search(style):
        return True
    cls = attrs.get("class")
    if isinstance(cls, str) and cls and not HIDING_CLASSES.isdisjoint(cls.lower().split()):
        return True
    return el.name == "dialog" and "open" not in attrs


def _is_skip_link(el: Element) -> bool:
    href = attr(el, "href") or ""
    return el.name == "a" and href.startswith("#") and SKIP_STEM in class_tokens(el)[1]


def _is_author_box(el: Element) -> bool:
    """A box about the author (a photo, a short biography, links to their
    pages), longer than a byline: not the article, in any language."""
    if not (el.attributes.get("class") or el.attributes.get("id")):
        return False
    tokens, joined = class_tokens(el)
    if any(s in joined for s in AUTHOR_STEMS):
        return True
    # "contributor-bio__text", "byline-author__bio": a biography of a writer.
    return not tokens.isdisjoint(BIO_TOKENS) and any(s in joined for s in WRITER_STEMS)


def _is_page_tool(el: Element, an: Analysis) -> bool:
    """A short link to edit the page's source (a wiki's action=edit, a
    repository's /edit/ path): a tool, whatever its words."""
    if el.name != "a" or an.kept_len[el] > _TOOL_LINE:
        return False
    href = (attr(el, "href") or "").lower()
    path = href.split("?", 1)[0]
    return "/edit/" in path or path.endswith("/edit") or "action=edit" in href


def _asks_for_text(form: Element) -> bool:
    """A form to write in (a comment, a newsletter sign-up, a log-in): its labels
    and notes are for writing, not reading. A form of choices (a product's
    options and quantity, a post rendered inside a form) is read."""
    for el in form.iter_elements():
        if el.name == "textarea":
            return True
        if el.name == "input" and (attr(el, "type") or "").strip().lower() in _TEXT_INPUTS:
            return True
    return False


def _revealed(an: Analysis, el: Element, total: int) -> bool:
    """A hidden box holding nearly all of the page's text is the page itself, kept
    hidden until a script shows it (a preloader's wrapper, a streamed part
    moved into place): a browser shows it, and without it there is nothing.
    aria-hidden is not a script's doing: it always hides."""
    if an.text_len[el] * _REVEAL_SHARE <= total * (_REVEAL_SHARE - 1):
        return False
    return not _aria_hidden(el)


def classify(an: Analysis) -> None:
    """Pre-order: which elements are removed, chrome or comments."""
    total = max(an.text_len[an.body], 1)
    prose = max(an.unlinked[an.body], 1)
    stack: list[tuple[Element, bool]] = [(an.body, False)]
    while stack:
        el, in_article = stack.pop()
        name = el.name
        if el is not an.body:
            if el.namespace is not None and name != "math":
                an.removed.add(el)
                continue
            if name in SCRIPT_FALLBACK and an.shell:
                pass
            elif (
                name in NOT_CONTENT
                or (_is_hidden(el) and not _revealed(an, el, total))
                or (name == "a" and _is_skip_link(el))
            ):
                an.removed.add(el)
                continue
            # A box holding the article, or most of the page, is never chrome.
            holds_main = an.has_main[el]
            most = an.text_len[el] * 2 > total
            big = holds_main or most
            role = (attr(el, "role") or "").strip().lower()
            # An <article> inside a footer or an aside is a widget ("About us",
            # "Upcoming events"), not the page's article: those regions are
            # kept for it only when they also hold most of the page.
            shielded = holds_main and (name not in _SIDE_REGIONS or most)
            if not shielded and (
                (name in CHROME_ELEMENTS and not (name == "header" and in_article))
                or role in CHROME_ROLES
                or (name == "form" and not big and _asks_for_text(el))
            ):
                an.removed.add(el)
                continue
            if an.unlinked[el] * 2 > prose and _names_content(el):
                # The box of most of the page's prose says it is the content: a
                # chrome word on a box around it ("socialicons-sticky") is wrong.
                up = el.parent
                while up is not None:
                    an.chrome.discard(up)
                    up = up.parent
            if not big and (el.attributes.get("class") or el.attributes.get("id")):
                tokens, joined = class_tokens(el)
                hard = not tokens.isdisjoint(HARD_TOKENS) or "cookie" in joined
                # "article modal-enabled": an article that opens a picture in a modal,
                # not a modal; a banner or a popup is never this much prose.
                named_content = not tokens.isdisjoint(MAIN_TOKENS)
                if hard and not (named_content and an.unlinked[el] >= _HARD_PROSE):
                    an.removed.add(el)
                    continue
                if _names_comments(tokens, joined):
                    an.comments.add(el)
                elif named_content and not (
                    an.unlinked[el] < _HARD_PROSE and _chrome_of_content(joined)
                ):
                    an.bonus[el] = TOKEN_BONUS
                elif _is_seo_copy(an, el, tokens):
                    pass  # a category's description, never chrome (issue 35)
                elif name not in HEADING_LEVELS and (
                    not tokens.isdisjoint(CHROME_TOKENS)
                    or any(s in joined for s in CHROME_STEMS)
                    or _is_author_box(el)
                ):
                    # A heading's class styles it ("anchorWithStickyNavbar"); a
                    # heading over chrome goes with its section (markdown).
                    an.chrome.add(el)
            if is_main_marker(el):
                an.mains.append(el)
                an.bonus[el] = ARTICLE_BONUS if name == "article" else MAIN_BONUS
                in_article = True
        stack.extend((c, in_article) for c in el.children if isinstance(c, Element))


def _is_seo_copy(an: Analysis, el: Element, tokens: set[str]) -> bool:
    """A box of prose its class or id names as copy for search engines: a shop's
    category description, often in the page's footer zone and named so
    ("field-seofootercopy"). Mostly unlinked text: a box of links so named (a
    footer's farm of category links) is still chrome."""
    if not any(t.startswith(SEO_COPY_PREFIX) for t in tokens):
        return False
    return an.unlinked[el] * 2 >= an.text_len[el] > 0


def _names_comments(tokens: set[str], joined: str) -> bool:
    """Class/id words that name comments or reviews (:func:`class_tokens`)."""
    return not tokens.isdisjoint(COMMENT_TOKENS) or "comment" in joined


def _says_reviews(el: Element) -> bool:
    """A box whose class or id names comments or reviews, whatever it holds (each
    review an <article> keeps a box of them from being marked by :func:`classify`)."""
    if not (el.attributes.get("class") or el.attributes.get("id")):
        return False
    return _names_comments(*class_tokens(el))


def _chrome_of_content(joined: str) -> bool:
    """Every class word that names the content does so in a compound with a
    chrome word ("article-copyright", "entry-related"): the content's furniture.
    Checked on small boxes only: a layout's "sidebar-content" column that holds
    the prose is the content."""
    seen = False
    for word in joined.split():
        parts = set(_CLASS_WORD_PARTS.split(word))
        if parts.isdisjoint(MAIN_TOKENS):
            continue
        if parts.isdisjoint(_FURNITURE):
            return False
        seen = True
    return seen


def _names_content(el: Element) -> bool:
    if not (el.attributes.get("class") or el.attributes.get("id")):
        return False
    tokens, _ = class_tokens(el)
    return not tokens.isdisjoint(MAIN_TOKENS)


# --------------------------------------------------------------------------- cuts inside an article


def _is_media(el: Element, an: Analysis, total: float) -> bool:
    """A picture's furniture: a figure without code, table or quote, its
    caption, a caption, credit or gallery box holding little prose."""
    if el.name == "figcaption":  # kept with the code or table it captions
        figure = el.parent
        return figure is None or figure.name != "figure" or figure not in an.rich
    if el in an.rich or an.heads[el] or el.name in TABLE_PARTS:
        # A table's row or cell is data, whatever its class says ("player-4351").
        return False
    if el.name == "figure":
        return True
    if not (el.attributes.get("class") or el.attributes.get("id")):
        return False
    if an.positive[el] * 4 >= total:  # a quarter of the article: prose, not a caption
        return False
    tokens, joined = class_tokens(el)
    return not tokens.isdisjoint(MEDIA_TOKENS) or any(s in joined for s in MEDIA_STEMS)


def _is_meta(el: Element, an: Analysis) -> bool:
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
    if isinstance(prop, str) and any(p in prop.lower() for p in META_PROPS):
        return True
    if not (attrs.get("class") or attrs.get("id")):
        return False
    tokens, joined = class_tokens(el)
    return not tokens.isdisjoint(META_TOKENS) or any(s in joined for s in META_STEMS)


def cuts(
    an: Analysis, node: Element, described: bool = False, reviews: bool = False
) -> set[Element]:
    """Inside an article: chrome, comments, link lists, pictures' captions,
    metadata lines and teaser cards to leave out. ``described``: a list whose items
    say something beyond their link is content (documentation's "see also" and
    "next steps" lists, issue 35), not a link list. ``reviews``: comment boxes go
    whatever their size (a product's reviews outweigh its description, issue 35)."""
    cut: set[Element] = set()
    total = an.positive.get(node, 0.0)
    titled = _around_titles(an, node)
    runs: dict[Element, dict[_Kind, float]] = {}
    cut.update(_after_named_body(an, node))
    cut.update(_related_sections(an, node, total))
    # Frames: element, text length of its nearest block (a metadata line is
    # cut only when it is a line of its own, never from inside a sentence).
    stack = [(c, an.kept_len.get(c, 0)) for c in node.children if isinstance(c, Element)]
    while stack:
        el, line = stack.pop()
        if el in an.removed or el not in an.score:
            continue
        if el.name in BLOCK:
            line = an.kept_len[el]
        minor = an.positive[el] * 2 < total
        boxed = el in an.chrome or el in an.comments
        hinted = (boxed and minor) or (reviews and _says_reviews(el))
        link_list = (
            is_link_list(an, el) and el not in titled and not (described and _described(el, an))
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
            or (minor and _is_author_box(el))
            or _is_page_tool(el, an)
            or (minor and _is_teasers(el, an) and not _one_of_the_run(el, an, total, runs))
            or _is_lone_link(el, an)
        ):
            cut.add(el)
            continue
        stack.extend((c, line) for c in el.children if isinstance(c, Element))
    return cut


# Unlinked characters an item says beside its link: a description ("Create views
# to share your analysis"), not a label.
_DESCRIBED = 20
_DESCRIBED_SHARE = 0.7  # of a list's items


def _described(el: Element, an: Analysis) -> bool:
    """An item of a list that says something beside its link, or a list of links
    most of whose items do (``_DESCRIBED`` characters or more outside links)."""
    if el.name in LIST_ITEMS:
        return an.kept_len[el] - an.links.get(el, 0) >= _DESCRIBED
    if el.name not in ("ul", "ol", "dl"):
        return False
    items = [c for c in el.children if isinstance(c, Element) and an.kept_len.get(c, 0)]
    if len(items) < 2:
        return False
    told = sum(1 for c in items if an.kept_len[c] - an.links.get(c, 0) >= _DESCRIBED)
    return told >= _DESCRIBED_SHARE * len(items)


def _is_lone_link(el: Element, an: Analysis) -> bool:
    """A paragraph that is one link and nothing else: a pointer to another page
    ("Back to all news", a headline of another story), not a part of this one.
    An address written out as the link's text is a reference the writer gave."""
    if el.name != "p" or not 0 < an.links[el] == an.kept_len[el] <= _LONE_LINK_LEN:
        return False
    links = [e for e in el.iter_elements() if e.name == "a" and links_away(e)]
    if len(links) != 1:
        return False
    text = links[0].text_content().strip().lower()
    return not text.startswith(("http://", "https://", "www."))


def _after_named_body(an: Analysis, node: Element) -> list[Element]:
    """The page names the box of its content ("articleBody", "entry-content",
    an <article>) inside the chosen region: the smallest such box holding most
    of the region's prose. The boxes after it, on its way up to the region,
    that hold little prose are the article's furniture (a licence, a
    disclaimer, a contact line, a line about the writer). One after it with a
    heading is kept unless it is a stub: a section of the page goes on."""
    named: Element | None = None
    for el in node.iter_elements():
        if el is node or el not in an.score or el in an.removed:
            continue
        if an.unlinked[el] * 2 <= an.unlinked[node]:
            continue
        if (named is None or an.unlinked[el] <= an.unlinked[named]) and (
            is_main_marker(el) or _names_content(el)
        ):
            named = el
    if named is None:
        return []
    after: list[Element] = []
    prev = named
    cur = named.parent
    while cur is not None and prev is not node:
        behind = False
        for c in cur.children:
            if c is prev:
                behind = True
            elif behind and isinstance(c, Element) and c in an.score:
                limit = _LONE_LINK_LEN if an.heads[c] else _HARD_PROSE
                if an.unlinked[c] < limit:
                    after.append(c)
        prev = cur
        cur = cur.parent
    return after


_RELATED_HEADING_LEN = 60  # characters: a heading over teasers is a few words
_RELATED_END = re.compile(r"[\s:.!?…»>›→|\-–—]+$")


def _says_related(el: Element) -> bool:
    """A heading whose words say what follows is other pages ("Related articles",
    "Lesen Sie auch", "関連記事"; vocabulary.RELATED_HEADINGS)."""
    words = " ".join(el.text_content().split()).lower()
    if not words or len(words) > _RELATED_HEADING_LEN:
        return False
    words = _RELATED_END.sub("", words)
    return words in RELATED_HEADINGS or words.startswith(RELATED_PREFIXES)


def _heading_level(el: Element) -> int:
    """The level of ``el`` when it is a heading or a box that starts with one, else 0."""
    cur: Element | None = el
    while cur is not None:
        if cur.name in HEADING_LEVELS:
            return int(cur.name[1])
        cur = next((c for c in cur.children if isinstance(c, Element)), None)
    return 0


def _related_sections(an: Analysis, node: Element, total: float) -> list[Element]:
    """Inside an article, a heading that says other pages follow, with what
    follows it up to the next heading of its level or above: a box of teasers in
    any language. The heading alone in a box takes the box; a section that would
    take half of the read or more is not one of these and stays."""
    out: list[Element] = []
    places: dict[Element, dict[Element | Text, int]] = {}
    for el in node.iter_elements():
        if el.name not in HEADING_LEVELS or el in an.removed or not _says_related(el):
            continue
        level = int(el.name[1])
        start = el
        while (
            start.parent is not None
            and start.parent is not node
            and an.kept_len.get(start.parent, 0) <= an.kept_len.get(start, 0)
        ):
            start = start.parent
        parent = start.parent
        if parent is None:
            continue
        # Each parent's children are indexed once: many such headings under one
        # parent must not each walk it from the start.
        at = places.get(parent)
        if at is None:
            at = places[parent] = {c: i for i, c in enumerate(parent.children)}
        section = [start]
        siblings = parent.children
        for i in range(at[start] + 1, len(siblings)):
            c = siblings[i]
            if isinstance(c, Element) and c not in an.removed:
                head = _heading_level(c)
                # Teasers are links, or cards under a linked title; the first box of
                # prose is the article again.
                links = an.links.get(c, 0)
                prose = links * 2 < an.kept_len.get(c, 0) and not an.cards.get(c)
                if (head and head <= level) or not links or prose:
                    break
                section.append(c)
        teasers = any(an.links.get(c, 0) for c in section[1:])
        if teasers and sum(an.positive.get(c, 0.0) for c in section) * 2 < total:
            out.extend(section)
    return out


def _one_of_the_run(
    el: Element, an: Analysis, total: float, runs: dict[Element, dict[_Kind, float]]
) -> bool:
    """``el`` is one of a run of like boxes (same tag and class) beside it that
    together hold most of the article's prose: a thread's posts, the content
    itself, not teasers set into it. ``runs`` keeps each parent's sums, so a
    parent of many children is summed once."""
    parent = el.parent
    if parent is None:
        return False
    sums = runs.get(parent)
    if sums is None:
        sums = {}
        for c in parent.children:
            if isinstance(c, Element):
                kind = (c.name, attr(c, "class"))
                sums[kind] = sums.get(kind, 0.0) + an.positive.get(c, 0.0)
        runs[parent] = sums
    return sums[(el.name, attr(el, "class"))] * 2 >= total


def _around_titles(an: Analysis, node: Element) -> set[Element]:
    """The elements between ``node`` and an ``h1`` inside it: a header that
    holds the article's title and a few links (a date, categories) is not a
    link list."""
    around: set[Element] = set()
    for el in an.text_len:
        if el.name != "h1" or el.namespace is not None:
            continue
        cur = el.parent
        path: list[Element] = []
        while cur is not None and cur is not node:
            path.append(cur)
            cur = cur.parent
        if cur is node:
            around.update(path)
    return around


def _is_promo(el: Element, an: Analysis) -> bool:
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
        in_bold = in_bold or node.name in STRONG
        if links_away(node):
            in_link = True
        stack.extend((c, in_link, in_bold) for c in reversed(node.children))
    if not bold_linked == linked > 0:
        return False
    label = "".join(plain).strip()
    return not label.strip("|-–—:*>» ") or (label.endswith(":") and len(label) <= _LABEL)


def _is_teasers(el: Element, an: Analysis) -> bool:
    """Cards that lead elsewhere: most headings link out, little text each."""
    cards = an.cards[el]
    if not cards or el.name in HEADING_LEVELS:
        return False
    if cards < 2 and el.name != "article":
        return False
    return cards * 2 >= an.heads[el] and an.kept_len[el] <= _TEASER_LEN * cards


def listing_cuts(an: Analysis, node: Element) -> set[Element]:
    """On a page read whole (a listing, a short post below the article
    threshold): the chrome boxes, a picture's caption or credit box, a box
    about the author and a line of metadata of its own (a byline, a row of
    tags). Link lists, teasers and comments stay: there they are the content.
    A figure or a link is an item of the listing (a gallery's picture, a
    card), never its furniture."""
    cut: set[Element] = {e for e in an.chrome if e is not node}
    total = an.positive.get(node, 0.0)
    stack = [c for c in node.children if isinstance(c, Element)]
    while stack:
        el = stack.pop()
        if el in an.removed or el not in an.score or el in cut:
            continue
        if (
            (el.name not in _LISTING_ITEMS and _is_media(el, an, total))
            or _is_author_box(el)
            or (el.name in BLOCK and an.kept_len[el] <= _META_LEN and _is_meta(el, an))
        ):
            cut.add(el)
            continue
        stack.extend(c for c in el.children if isinstance(c, Element))
    return cut
