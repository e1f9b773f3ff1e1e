"""The second reads of a page by its kind (issue 35; docs/extraction.md, "Per
kind, and the two halves"). The first read (score.choose, prune.cuts) is judged
(kind.judge); a page of some kinds, or a read that looks wrong for its kind, is
read again from a wider element or with other cuts. Each rule keeps the first
read when its own comes out empty."""

from __future__ import annotations

from rypsok.core.fetch.extraction.kind import Read, judge
from rypsok.core.fetch.extraction.markdown import markdown_blocks
from rypsok.core.fetch.extraction.prune import cuts, listing_cuts
from rypsok.core.fetch.extraction.score import (
    MISSED_PROSE,
    Analysis,
    elements_postorder,
    margin,
    readable_region,
)
from rypsok.core.html.tree import Element

__all__ = ["SMALL_DOUBT", "SPREAD_KINDS", "reread", "small_read", "widen"]


def reread(
    an: Analysis,
    node: Element,
    article: bool,
    cut: set[Element],
    blocks: list[str],
    read: Read,
    base: str,
    base_url: str,
) -> tuple[list[str], Read]:
    """The blocks and the judgement of the page after its kind's second reads, or
    the first ones when none applies."""
    # A page of a kind spread over sections, read as one of them (widen).
    wider = widen(an, node, read.kind) if article else None
    # On such a page a list of links that each say something is content (prune.cuts).
    described = article and read.kind in SPREAD_KINDS
    # A product's reviews are its comments, however long (prune.cuts).
    reviews = read.kind == "product"
    if wider is not None or described:
        to, as_article = wider or (node, article)
        again = cuts(an, to, described, reviews) if as_article else listing_cuts(an, to)
        # The same node and the same cuts write the same blocks: no second read.
        if to is not node or again != cut:
            second = _read_again(an, node, to, as_article, again, base, base_url)
            if second is not None:
                (blocks, read), node, article = second, to, as_article
    # A short read of a page that is no article, doubted, may be its intro alone,
    # and a read the cuts all but emptied was a page of teasers: the page is read
    # whole (small_read).
    written = sum(len(b) for b in blocks)
    region = small_read(an, node, read.kind, read.confidence, written) if article else None
    if region is not None:
        whole = _read_again(an, node, region, False, listing_cuts(an, region), base, base_url)
        if whole is not None:
            blocks, read = whole
    return blocks, read


def _read_again(
    an: Analysis,
    first: Element,
    node: Element,
    article: bool,
    cut: set[Element],
    base: str,
    base_url: str,
) -> tuple[list[str], Read] | None:
    """The blocks and judgement of a second read from ``node``; None when the cuts
    leave it empty, and the first read (from ``first``) stands."""
    blocks = markdown_blocks(node, an.removed, cut, base, article)
    if not blocks:
        return None
    if node is not first:
        margin(an, node)  # the margin of the new choice, for its confidence
    return blocks, judge(an, node, article, blocks, base_url)


# ----------------------------------------------------------------- a read of one section, widened

# Kinds whose content is spread over sections of the page (docs/extraction.md, "Per
# kind"): an article or a thread is one region; these are not.
SPREAD_KINDS = frozenset({"documentation", "listing", "collection", "service", "product"})
_WIDEN_SHARE = 0.25  # long prose left out, as a share of the read's own text, that widens it
_WIDEN_COVER = 0.7  # share of that prose the wider element must hold


def _left_out(an: Analysis, node: Element) -> dict[Element, int]:
    """Long paragraphs outside ``node`` and outside any removed, chrome or comment
    box, with their lengths: one pre-order walk carrying whether a box is above."""
    out: dict[Element, int] = {}
    stack: list[tuple[Element, bool]] = [(an.body, False)]
    while stack:
        el, boxed = stack.pop()
        if el is node:
            continue
        boxed = boxed or el in an.removed or el in an.chrome or el in an.comments
        if boxed:
            continue
        if el.name == "p":
            n = an.plain_len.get(el, 0)
            if n >= MISSED_PROSE:
                out[el] = n
            continue
        stack.extend((c, False) for c in el.children if isinstance(c, Element))
    return out


def widen(an: Analysis, node: Element, kind: str) -> tuple[Element, bool] | None:
    """A page of a spread kind read as one section, leaving out long prose of at
    least a quarter of what it read, is read from the nearest element around the
    section that holds most of that prose (the whole region, failing one); None
    when the read stands. Linear: one walk down, one sum up the tree."""
    if kind not in SPREAD_KINDS or an.missed < _WIDEN_SHARE * max(an.kept_len.get(node, 0), 1):
        return None
    left = _left_out(an, node)
    total = sum(left.values())
    if not total:
        return None
    held: dict[Element, int] = {}
    for el in elements_postorder(an.body):
        n = left.get(el, 0) + sum(held.get(c, 0) for c in el.children if isinstance(c, Element))
        if n:
            held[el] = n
    cur = node.parent
    while cur is not None and cur is not an.body:
        if held.get(cur, 0) >= _WIDEN_COVER * total:
            return cur, True
        cur = cur.parent
    return readable_region(an), False


# ----------------------------------------------------------------- a small read, doubted

_SMALL_READ = 1500  # characters: an article read shorter than this may be a page's intro alone
_SMALL_SHARE = 2  # ... when the readable region holds this many times its text or more
SMALL_DOUBT = 0.7  # ... and the confidence in the read is under this
_EMPTIED = 20  # an article read whose cuts left under 1/_EMPTIED of its text
_RIVAL_CLOSE = 0.5  # a rival candidate of this share of the read's value or more
_ARTICLE_PART = 10 / 3  # ... beside an article of under 30 % of the region


def small_read(
    an: Analysis, node: Element, kind: str, confidence: float, written: int
) -> Element | None:
    """The readable region, to be read whole, in place of an article read that is
    likely one part of a page made of many; None when the read stands. Three cases:
    the cuts left almost nothing of the read (``written``: the characters written),
    of any kind: a page of teasers, each cut as one; an article with a rival of half
    its value or more, holding under 30 % of the region: two parts of one page; and
    a short, doubted read of a page that is not an article, a small part of the
    region: the intro above a grid of cards or a list of offers."""
    read = an.plain_len.get(node, 0)
    region = readable_region(an)
    if written * _EMPTIED < read:
        return region
    if region is node:
        return None
    region_len = an.plain_len.get(region, 0)
    if kind == "article":
        split = an.rival >= _RIVAL_CLOSE and read * _ARTICLE_PART < region_len
        return region if split else None
    if confidence >= SMALL_DOUBT or read >= _SMALL_READ:
        return None
    return region if read * _SMALL_SHARE < region_len else None
