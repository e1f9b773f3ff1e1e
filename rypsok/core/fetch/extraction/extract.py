"""Main content of a parsed page, as Markdown (REQ-FETCH-002, -004, REQ-CTX-005).

Works on the bounded tree of :mod:`rypsok.core.html.tree`; see
docs/extraction.md for the algorithm. Every walk is iterative, and each pass
visits a node a bounded number of times, so time is linear in the tree and no
Python recursion grows with the page's nesting.

What the caller gets: ``title`` raw (the caller cleans and bounds it),
``markdown`` possibly empty (nothing readable: the caller answers
``unsupported_content`` / ``extraction_failed``), ``partial`` copied from the
parse (``extraction_partial``).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from rypsok.core.fetch.extraction.attributes import attr
from rypsok.core.fetch.extraction.embedded import (
    embedded_blocks,
    gatsby_page_data_path,
    is_shell,
)
from rypsok.core.fetch.extraction.kind import Read, judge
from rypsok.core.fetch.extraction.markdown import markdown_blocks
from rypsok.core.fetch.extraction.profiles import reread
from rypsok.core.fetch.extraction.prune import classify, cuts, listing_cuts
from rypsok.core.fetch.extraction.score import choose, margin, measure, score_blocks
from rypsok.core.html.tree import Element, ParsedDocument

__all__ = ["Extracted", "ExtractedBlocks", "extract", "extract_blocks", "extract_text"]


@dataclass(frozen=True, slots=True)
class Extracted:
    title: str | None
    markdown: str
    partial: bool


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
    href = attr(base, "href") if base is not None else None
    if href:
        try:
            joined = urljoin(base_url, href.strip())
            if urlsplit(joined).scheme.lower() in ("http", "https"):
                return joined
        except ValueError:
            pass
    return base_url


@dataclass(frozen=True, slots=True)
class ExtractedBlocks:
    """What :func:`extract` answers, the Markdown left as its blocks: joined with a
    blank line they are ``extract``'s ``markdown``. Each is in NFC already."""

    title: str | None
    blocks: list[str]
    partial: bool
    # The page's kind (kind.PAGE_KINDS) and the confidence in the read, 0..1 (issue 34).
    kind: str = "other"
    confidence: float = 0.0
    # The page is a shell that scripts fill (embedded.is_shell): its text, when any, was
    # read from the data it carries; with no blocks, it needs scripts to be read.
    shell: bool = False
    # A shell with no text whose data is a file of its own (a Gatsby page): that file's
    # path on the page's origin, for the fetch pipeline to ask for once; else None.
    page_data: str | None = None


# The confidence of a text read from a page's embedded data: the model is fitted on
# rendered pages only, so it says nothing of these; a middle value that tells a caller
# the read is plausible but not proven (docs/tools.md, "Pages that scripts render").
DATA_CONFIDENCE = 0.5


def extract(doc: ParsedDocument, base_url: str) -> Extracted:
    """The page's title and main content as Markdown."""
    parts = extract_blocks(doc, base_url)
    return Extracted(title=parts.title, markdown="\n\n".join(parts.blocks), partial=parts.partial)


def extract_blocks(doc: ParsedDocument, base_url: str) -> ExtractedBlocks:
    """:func:`extract`, without joining the blocks: the fetch path joins them once
    the tree is let go of. One spelling for each character (NFC): a page may write
    "ড়" as one code point or as two, and a reader searching the text must find
    either. A blank line composes with no character, so NFC block by block is NFC
    of the whole."""
    title, blocks, read = _content(doc, base_url)
    confidence = read.confidence
    shell = is_shell(doc, "\n\n".join(blocks))
    if shell:
        # What a script would render is in the page's data: read it there. A page
        # whose own text is not thin gives that, never the data's copy of it too.
        blocks = embedded_blocks(doc, base_url)
        confidence = DATA_CONFIDENCE if blocks else 0.0
    page_data = gatsby_page_data_path(doc, base_url) if shell and not blocks else None
    for i, block in enumerate(blocks):
        blocks[i] = unicodedata.normalize("NFC", block)
    return ExtractedBlocks(
        title=title,
        blocks=blocks,
        partial=doc.partial,
        kind=read.kind,
        confidence=confidence,
        shell=shell,
        page_data=page_data,
    )


_NOTHING = Read(kind="other", confidence=0.0)


def _content(doc: ParsedDocument, base_url: str) -> tuple[str | None, list[str], Read]:
    """The title, the blocks of the main content's Markdown, and the page's kind
    and the confidence in the read."""
    html = _child(doc.root, "html")
    body = _child(html, "body") or _child(html, "frameset") or html
    if body is None:
        return None, [], _NOTHING
    title = _title(doc.root, body)
    an = measure(body)
    classify(an)
    score_blocks(an)
    node, article = choose(an)
    # On a page read whole (a listing) link lists, teasers and comments are the
    # content: only chrome, captions, author boxes and metadata lines go.
    base = _base(doc.root, base_url)
    cut = cuts(an, node) if article else listing_cuts(an, node)
    blocks = markdown_blocks(node, an.removed, cut, base, article)
    margin(an, node)
    an.title = title or ""
    read = judge(an, node, article, blocks, base_url)
    blocks, read = reread(an, node, article, cut, blocks, read, base, base_url)
    return title, blocks, read


def extract_text(text: str) -> Extracted:
    """A text/plain or text/markdown document as it was sent (REQ-FETCH-004): CRLF
    and CR become LF, a leading BOM and the empty lines at both ends go; blank-line
    runs, indentation and trailing spaces (a Markdown hard break) stay."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    return Extracted(title=None, markdown=text.strip("\n"), partial=False)
