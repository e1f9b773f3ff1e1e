"""Scoring the blocks of a page and choosing its main content.

The measuring pass, the scoring pass and the choice of docs/extraction.md,
"Finding the main content", steps 1, 3 and 4 (step 2, which marks what is
removed, chrome or comments, is :func:`rypsok.core.fetch.extraction.prune.classify`).
All the measures live in one :class:`Analysis`, keyed by element identity.
"""

from __future__ import annotations

from dataclasses import dataclass

from rypsok.core.fetch.extraction.attributes import attr, is_main_marker, links_away
from rypsok.core.html.tree import Element, Text
from rypsok.core.html.vocabulary import (
    BLOCK,
    CANDIDATES,
    HEADING_LEVELS,
    INLINE_CODE,
    MAIN_ELEMENTS,
    RICH,
    SCRIPT_FALLBACK,
    TEXT_LEAVES,
)

__all__ = [
    "ARTICLE_BONUS",
    "MAIN_BONUS",
    "MISSED_PROSE",
    "TOKEN_BONUS",
    "Analysis",
    "choose",
    "elements_postorder",
    "is_link_list",
    "margin",
    "measure",
    "readable_region",
    "score_blocks",
]

# Tuning, in characters of text unless said otherwise. The values were set on
# the extraction benchmark and the tests' pages together (docs/extraction.md,
# "Measuring"); what each does is step 3 ("Score") and step 4 ("Not an
# article?") of "Finding the main content".
_SHORT = 40  # a block with less unlinked text than this is a label, not prose
_LINK_COST = 2.0  # each character of link text costs this much: menus lose to prose
_READ_MORE = 20  # a "read more" link's text, at most
_READ_MORE_BOX = 600  # a teaser card's text, at most
_MIN_ARTICLE = 120  # a best region scoring below this (one short paragraph) is not an article
_IMAGE_LINK = 10  # link characters a linked image counts for: a picture menu is still a menu
_CLIMB_SLACK = 30  # an enclosing element may cost this much and still be taken (a title)
# A box with under 1/_PROSE_LINKS of its text in links is prose (step 4).
_PROSE_LINKS = 5
# A best region with under a sixth of the readable part's plain text, and a
# score under twice _MIN_ARTICLE, is one item of a listing (step 4).
_LISTING_SHARE = 6
# A page whose <noscript> elements of at least _SHELL_TEXT characters hold
# more than 1/_SHELL_SHARE of its text is a shell: they are its content
# (step 1). Elsewhere a <noscript> is removed (REQ-CTX-005).
_SHELL_TEXT = 160
_SHELL_SHARE = 2
# The single <main> is the readable part when it holds a third of the text (step 4).
_MAIN_SHARE = 3
# A best region inside the single <main> with under 1/_MAIN_PART of its
# unlinked text gives way to the main (step 4).
_MAIN_PART = 2
# Multipliers of a region's score when the page names it as its content
# (step 3): <main> or role=main most, <article> less (a page may hold several),
# a content class/id token least (the most often wrong). Enough to win over a
# neighbour of about the same size, never over a much bigger one.
MAIN_BONUS = 1.3
ARTICLE_BONUS = 1.15
TOKEN_BONUS = 1.1


class Analysis:
    """Everything measured on the tree, keyed by element identity."""

    def __init__(self, body: Element) -> None:
        self.body = body
        self.text_len: dict[Element, int] = {}
        self.has_main: dict[Element, bool] = {}
        self.unlinked: dict[Element, int] = {}  # text length outside links to other pages
        self.removed: set[Element] = set()  # not content at all (hidden, chrome, controls)
        self.chrome: set[Element] = set()  # chrome by class/id: cut from an article
        self.comments: set[Element] = set()  # comment sections
        self.score: dict[Element, float] = {}  # sum of block weights in the subtree
        self.positive: dict[Element, float] = {}  # sum of the positive weights
        self.clean: dict[Element, float] = {}  # the score without comment boxes
        self.links: dict[Element, int] = {}  # link text length in the subtree
        self.kept_len: dict[Element, int] = {}  # text length in the subtree, after removal
        self.plain_len: dict[Element, int] = {}  # the same, outside chrome and comments
        self.bonus: dict[Element, float] = {}
        self.mains: list[Element] = []
        self.rich: set[Element] = set()  # holds code, a table or a quote
        self.cards: dict[Element, int] = {}  # headings that link elsewhere, in the subtree
        self.heads: dict[Element, int] = {}  # headings in the subtree
        # The page is a shell a script fills, and its <noscript> holds what a
        # reader without scripts sees: the only readable copy (step 1).
        self.shell = False
        self.unchromed: dict[Element, float] = {}  # the score without chrome boxes
        # For the page's kind (kind.py), counted by the measuring pass: elements
        # by tag name, and class/id/itemtype words by the kind they hint at.
        self.tags: dict[str, int] = {}
        # Class and itemtype values by how often they occur: kind.py reads their words
        # once a distinct value, not once an element.
        self.classes: dict[str, int] = {}
        # How close the choice was (:func:`margin`), set once the node is chosen.
        self.rival = 0.0
        self.missed = 0
        self.title = ""  # the page's title, for the confidence: is it in what was read?


# --------------------------------------------------------------------------- pass 1: sizes


def elements_postorder(root: Element) -> list[Element]:
    """Elements under ``root`` (inclusive), children before parents."""
    order: list[Element] = []
    stack = [root]
    while stack:
        node = stack.pop()
        order.append(node)
        stack.extend(c for c in node.children if isinstance(c, Element))
    order.reverse()
    return order


def measure(body: Element) -> Analysis:
    """Step 1: every subtree's text length, whether it holds a main marker or rich content."""
    an = Analysis(body)
    text_len = an.text_len
    has_main = an.has_main
    rich = an.rich
    fallback = 0
    unlinked = an.unlinked
    tags = an.tags
    classes = an.classes
    for el in elements_postorder(body):
        n = 0
        u = 0
        name = el.name
        tags[name] = tags.get(name, 0) + 1
        attrs = el.attributes
        if attrs:
            for value in (attrs.get("class"), attrs.get("itemtype")):
                if value and isinstance(value, str):
                    classes[value] = classes.get(value, 0) + 1
        # Only <main>, <article> and elements with attributes can be markers.
        main = is_main_marker(el) if el.attributes or name in MAIN_ELEMENTS else False
        is_rich = name in RICH
        for c in el.children:
            if isinstance(c, Text):
                t = len(c.data.strip())
                n += t
                u += t
            else:
                n += text_len[c]
                u += unlinked[c]
                main = main or has_main[c]
                is_rich = is_rich or c in rich
        text_len[el] = n
        unlinked[el] = 0 if name == "a" and links_away(el) else u
        has_main[el] = main
        if is_rich:
            rich.add(el)
        if name in SCRIPT_FALLBACK and n >= _SHELL_TEXT:
            fallback += n
    an.shell = fallback * _SHELL_SHARE > text_len[body]
    return an


# --------------------------------------------------------------------------- pass 3: scores


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


@dataclass(slots=True)
class _Frame:
    """An open element of the scoring walk."""

    element: Element
    in_link: bool  # inside a link to another page
    negative: bool  # inside chrome or comments: every weight counts against
    # Inside code: a linked identifier is a cross-reference of documentation,
    # not navigation, so its text counts as prose.
    in_code: bool = False
    next_child: int = 0


def score_blocks(an: Analysis) -> None:
    """Step 3, post-order with an explicit stack: block weights summed up the tree."""
    score, positive, links, kept_len = an.score, an.positive, an.links, an.kept_len
    cards, heads = an.cards, an.heads
    plain_len = an.plain_len
    removed = an.removed
    clean = an.clean
    unchromed = an.unchromed
    chrome = an.chrome
    boxes = an.comments
    stack: list[_Frame] = []
    # A block's own text: [length, linked length].
    own: dict[Element, list[int]] = {}

    def push(el: Element, in_link: bool, negative: bool, in_code: bool) -> None:
        stack.append(_Frame(el, in_link, negative, in_code))
        own[el] = [0, 0]

    push(an.body, False, False, False)
    # The nearest block element of each open element, for its text.
    block_of: dict[Element, Element] = {an.body: an.body}
    while stack:
        frame = stack[-1]
        el = frame.element
        i = frame.next_child
        children = el.children
        if i < len(children):
            frame.next_child = i + 1
            c = children[i]
            in_link = frame.in_link
            if isinstance(c, Text):
                n = len(c.data.strip())
                if n:
                    counts = own[block_of[el]]
                    counts[0] += n
                    if in_link and not frame.in_code:
                        counts[1] += n
                continue
            if c.name == "img" and in_link:  # a linked picture: a link with no words
                own[block_of[el]][1] += _IMAGE_LINK
            if c in removed:
                continue
            negative = frame.negative or c in an.chrome or c in an.comments
            child_link = in_link or (c.name == "a" and links_away(c))
            block_of[c] = c if c.name in BLOCK else block_of[el]
            push(c, child_link, negative, frame.in_code or c.name in INLINE_CODE)
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
            pl = 0 if frame.negative else ln
            if el.name in HEADING_LEVELS:  # a title counts for nothing, a linked one against
                w = -_LINK_COST * lk if lk else 0.0
                s += w
                nh = 1
                if lk * 2 >= ln > 0:
                    nc = 1
            else:
                w = _weight(ln, lk, frame.negative)
                s += w
                if w > 0:
                    p += w
        own_score = s
        own_unchromed = s
        for c in children:
            if isinstance(c, Element) and c not in removed:
                s += score[c]
                own_unchromed += 0.0 if c in chrome else unchromed[c]
                # A comment box is cut from an article: it does not keep its
                # container from being taken (choose).
                own_score += 0.0 if c in boxes else clean[c]
                p += positive[c]
                lk += links[c]
                ln += kept_len[c]
                pl += plain_len[c]
                nc += cards[c]
                nh += heads[c]
        if not nc and nh and ln <= _READ_MORE_BOX and _leads_on(el, an):
            nc = 1
        score[el], positive[el], links[el], kept_len[el] = s, p, lk, ln
        clean[el] = own_score
        # The same sum with the chrome boxes left out, as an article's cuts will.
        unchromed[el] = own_unchromed
        plain_len[el] = pl
        cards[el] = nc
        heads[el] = nh


def _leads_on(el: Element, an: Analysis) -> bool:
    """A box with an unlinked title whose last child is a short link away
    ("Read more..."): a teaser card, like one with a linked title."""
    kept = [c for c in el.children if isinstance(c, Element) and c not in an.removed]
    if any(isinstance(c, Text) and c.data.strip() for c in el.children) or len(kept) < 2:
        return False
    last = kept[-1]
    if last.name != "a" or not links_away(last) or not 0 < an.text_len[last] <= _READ_MORE:
        return False
    # Cut short: the excerpt or the link trails off ("...", "…").
    return any(_last_text(c).endswith(_TRAILING) for c in kept[-2:])


_TRAILING = ("...", "\u2026", "[\u2026]")


def _last_text(el: Element) -> str:
    node: Element | Text = el
    while isinstance(node, Element):
        filled = [c for c in node.children if not isinstance(c, Text) or c.data.strip()]
        if not filled:
            return ""
        node = filled[-1]
    return node.data.strip()


# --------------------------------------------------------------------------- pass 4: the choice


def choose(an: Analysis) -> tuple[Element, bool]:
    """The element holding the main content, and whether it is an article
    (True) or the page's whole readable part (False)."""
    body = an.body
    region = readable_region(an)
    best = _best(an, None)
    # The page says where its content is: a candidate outside its single <main>
    # (a consent banner, a box of text after the footer) gives way to an
    # article inside it, or to the main itself. The main as the best starts
    # from the article inside it too; the climb below takes the main back when
    # what else it holds is worth it.
    if best is not None and region is not body and not _inside(best, region):
        inner = _best(an, region)
        if inner is not None and an.score[inner] >= _MIN_ARTICLE:
            best = inner
        elif an.score.get(region, 0.0) >= _MIN_ARTICLE:
            best = region
    # A best region sunk by the chrome inside it scores below the threshold
    # too: the page is read whole, its chrome boxes left out.
    if best is None or an.score[best] < _MIN_ARTICLE:
        return region, False
    # Take enclosing elements that add content (a title, a second part of
    # the article) at little cost.
    # An enclosing element's value: what the path up adds to the best
    # region, comment boxes beside the path left out (cut from an article,
    # they must not keep its container from being taken). Chrome boxes still
    # count: leaving them out took in teaser lists beside news articles.
    clean = an.clean
    boxes = an.comments
    value = an.score[best]
    floor = value - _CLIMB_SLACK
    # The same value with the link lists beside the path left out, as the
    # article's cuts will leave them. A container is also taken when, so
    # counted, it gains a paragraph and the prose beside the path is at least
    # the best region's own (paragraphs loose in a <main> between and after
    # boxes of "read also" links, the lead alone in its header).
    loose = value
    loose_floor = value + _MIN_ARTICLE
    enough_prose = max(value, _MIN_ARTICLE)
    node = best
    prev = best
    cur = best.parent
    while cur is not None and cur is not body and cur in an.score:
        step = clean[cur] - (0.0 if prev in boxes else clean[prev])
        value += step
        prose, lists, items = _beside(an, cur, prev)
        loose += step - lists
        if value >= floor or (not items and loose >= loose_floor and prose >= enough_prose):
            node = cur
            floor = max(floor, value - _CLIMB_SLACK)
            loose_floor = max(loose_floor, loose + _MIN_ARTICLE)
        prev = cur
        cur = cur.parent
    # The page's single <main> holds the content; a best region with under
    # half of its prose is one section of it (a landing page, a product page
    # with its specifications beside the description): take the main.
    if (
        region is not body
        and node is not region
        and _inside(node, region)
        and an.unlinked[node] * _MAIN_PART < an.unlinked[region]
        and an.clean[region] > 0
    ):
        node = region
    # A listing: the best article is a small part of a page of links.
    if (
        an.plain_len[node] * _LISTING_SHARE < an.plain_len[region]
        and an.score[node] < 2 * _MIN_ARTICLE
    ):
        return region, False
    return node, True


def _worth(an: Analysis, el: Element) -> float:
    """A region's score; one sunk by the chrome inside it (a wiki's navigation
    box among its paragraphs) is judged as it will be read, without them."""
    s = an.score[el]
    return s if s > 0 else an.unchromed[el]


def _best(an: Analysis, within: Element | None) -> Element | None:
    """The candidate of the best value (score times bonus), of those inside
    ``within`` when it is given."""
    best: Element | None = None
    best_value = 0.0
    for el in an.score:
        s = _worth(an, el)
        if s <= 0 or el.name not in CANDIDATES:
            continue
        value = s * an.bonus.get(el, 1.0)
        if value > best_value and (within is None or _inside(el, within)):
            best, best_value = el, value
    return best


def _beside(an: Analysis, parent: Element, prev: Element) -> tuple[float, float, bool]:
    """Of ``parent``'s children beside ``prev``: the score of the prose boxes,
    the score of the link lists, and whether ``prev`` is one of a run of like
    cards (same tag and class, a linked title): a listing's items, not parts
    of one article."""
    kind = (prev.name, attr(prev, "class")) if an.cards[prev] else None
    prose = lists = 0.0
    items = False
    for c in parent.children:
        if not isinstance(c, Element) or c is prev or c in an.comments or c not in an.clean:
            continue
        if kind is not None and not items:
            items = (c.name, attr(c, "class")) == kind
        score = an.clean[c]
        if score > 0 and an.links[c] * _PROSE_LINKS < an.kept_len[c]:
            prose += score
        elif is_link_list(an, c):
            lists += score
    return prose, lists, items


def is_link_list(an: Analysis, el: Element) -> bool:
    """A block of links with little prose (a menu, a box of "read also"
    links): cut from an article. Its comment boxes are judged on their own."""
    score = an.clean.get(el, 0.0)
    return (
        score < 0
        and el.name in BLOCK
        and el.name not in TEXT_LEAVES
        and el not in an.rich
        and an.links[el] * 4 > an.kept_len[el]
        and an.positive[el] < -score * 4
    )


def _inside(el: Element, container: Element) -> bool:
    cur = el.parent
    while cur is not None:
        if cur is container:
            return True
        cur = cur.parent
    return False


def readable_region(an: Analysis) -> Element:
    """The page's readable part: its single main element, else the body."""
    mains = [m for m in an.mains if m.name == "main" or (attr(m, "role") or "") == "main"]
    if len(mains) == 1 and an.kept_len.get(mains[0], 0) * _MAIN_SHARE >= an.kept_len[an.body]:
        return mains[0]
    return an.body


# ----------------------------------------------------------------- the margin of the choice


MISSED_PROSE = 150  # characters: a paragraph this long outside the read is prose it left


def margin(an: Analysis, node: Element) -> None:
    """How close the choice was, for the confidence (kind.py): ``an.rival``, the best value of a
    candidate neither inside nor around ``node``, as a share of ``node``'s own; and
    ``an.missed``, the characters of long paragraphs (outside comments and chrome) the read left
    out. One pass over what was measured; no walk of the tree beyond ``node``."""
    inside = set(node.iter_elements())
    around: set[Element] = set()
    cur = node.parent
    while cur is not None:
        around.add(cur)
        cur = cur.parent
    own = max(_worth(an, node) * an.bonus.get(node, 1.0), 1.0)
    rival = 0.0
    for el in an.score:
        if el in inside or el in around or el.name not in CANDIDATES:
            continue
        s = _worth(an, el)
        if s > 0:
            rival = max(rival, s * an.bonus.get(el, 1.0))
    missed = 0
    for el, length in an.plain_len.items():
        if length >= MISSED_PROSE and el.name == "p" and el not in inside:
            missed += length
    an.rival, an.missed = rival / own, missed
