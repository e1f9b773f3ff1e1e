"""Reading an element's attributes the way every extraction pass does."""

from __future__ import annotations

import re

from rypsok.core.html.tree import Element
from rypsok.core.html.vocabulary import MAIN_ELEMENTS, MAIN_ROLES

__all__ = ["READ_ATTRIBUTES", "attr", "class_tokens", "is_main_marker", "links_away"]

# Every attribute the extraction reads (attributes.py, score.py, prune.py,
# markdown.py, extract.py): a page parsed for extraction keeps only these
# (parse_html's keep_attributes), since a srcset, a data-* blob or an inline
# handler would only take memory. A pass that reads another must add it here;
# tests/core/fetch/html/test_html_tree.py parses pages with and without the
# filter and compares the extraction.
READ_ATTRIBUTES: frozenset[str] = frozenset(
    {
        "alt",
        "aria-hidden",
        "class",
        "colspan",
        "height",
        "hidden",
        "href",
        "id",
        "itemprop",
        "itemtype",
        "open",
        "rel",
        "role",
        "rowspan",
        "start",
        "style",
        "type",
        "width",
    }
)

_TOKEN_SPLIT = re.compile(r"[^a-z0-9]+")


def attr(el: Element, name: str) -> str | None:
    """An attribute's value, None when it is absent."""
    value = el.attributes.get(name)
    return value if isinstance(value, str) else None


def class_tokens(el: Element) -> tuple[set[str], str]:
    """The words of the class and id, lower-cased, and the two joined (for stems)."""
    cls = attr(el, "class") or ""
    ident = attr(el, "id") or ""
    joined = f"{cls} {ident}".lower()
    if ":" in joined:
        # A utility class with a variant ("print:hidden", "md:flex") says how
        # the box looks in some state, not what it is.
        joined = " ".join(w for w in joined.split() if ":" not in w)
    return set(_TOKEN_SPLIT.split(joined)), joined


def is_main_marker(el: Element) -> bool:
    """The page says this element is its main content or an article."""
    if el.name in MAIN_ELEMENTS:
        return True
    role = attr(el, "role")
    if role and role.strip().lower() in MAIN_ROLES:
        return True
    prop = attr(el, "itemprop")
    return prop is not None and "articlebody" in prop.lower()


def links_away(el: Element) -> bool:
    """An ``<a>`` that leads to another page (or runs a script). A link to a
    place on this page (a table of contents, a footnote, a "#" button) is
    read as text."""
    if el.name != "a":
        return False
    href = attr(el, "href")
    if href is None:
        return False
    href = href.strip()
    return not href.startswith("#")
