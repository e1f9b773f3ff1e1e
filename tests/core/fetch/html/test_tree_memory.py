"""What a parse costs (LIM-M2, LIM-M3): a tree that keeps only the attributes the
extraction reads, a page read from a TextSource without a whole decoded copy, and a
parse whose garbage goes with its last reference, not whenever the cycle collector
runs. Each saves memory only: the extraction must read exactly what it read before."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator

import pytest
from html5lib.constants import formattingElements

from rypsok.core.fetch.extraction.attributes import READ_ATTRIBUTES
from rypsok.core.fetch.extraction.extract import extract
from rypsok.core.html import charset
from rypsok.core.html.tree import NO_ATTRIBUTES, Element, Text, parse_html, release
from tests.support.paths import FIXTURES

# html5lib reopens these, comparing their attributes; it adds to <html>'s and <body>'s.
WHOLE = {name for _namespace, name in formattingElements} | {"html", "body"}
PAGES = sorted((FIXTURES / "pages").glob("*.html"))
BASE = "https://example.org/a/b"
# Attributes of every kind a page carries: read ones, unread ones, on formatting
# elements (whose attributes html5lib compares when it reopens them), on <html>
# and <body> (to which a second tag adds), foreign ones.
MIXED = (
    '<html lang="en" data-theme="dark"><head><title>T</title></head>'
    '<body class="page" onload="x()"><html data-late="1"><body id="late">'
    '<div id="main" data-track="123" class="content" role="main" aria-label="x">'
    '<p style="color:red" data-x="1">One <b data-x="1">b1 <b data-x="1">b2 <b data-x="1">'
    'b3 <b data-x="1">b4 <b data-x="2">b5</p><p>Reopened here, the Noah\'s Ark way.</p>'
    '<img src="/a.png" srcset="/a.png 2x" alt="A picture of a lake" width="640" '
    'height="480" loading="lazy"><a href="/next" title="Next" rel="next">next</a>'
    '<table><tr><td colspan="2" data-sort="3">cell</td></tr></table>'
    '<svg viewBox="0 0 1 1"><a xlink:href="#x">svg</a></svg>'
    '<details open data-y="2"><summary>s</summary>shown</details></div></body></html>'
)


def elements(root: Element) -> Iterator[Element]:
    return root.iter_elements()


def shape(root: Element) -> list[object]:
    """The tree as a list: names, namespaces and texts in document order."""
    out: list[object] = []
    stack: list[Element | Text] = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, Text):
            out.append(node.data)
        else:
            out.append((node.name, node.namespace, len(node.children)))
            stack.extend(reversed(node.children))
    return out


def test_lim_m2_a_parse_keeps_only_the_attributes_it_is_asked_for() -> None:
    whole = parse_html(MIXED).root
    kept = parse_html(MIXED, keep_attributes=READ_ATTRIBUTES).root
    assert shape(kept) == shape(whole)  # the same tree, reopened <b> elements included
    for full, lean in zip(elements(whole), elements(kept), strict=True):
        if lean.namespace is None and lean.name not in WHOLE:
            assert dict(lean.attributes) == {
                k: v for k, v in full.attributes.items() if k in READ_ATTRIBUTES
            }
        else:  # what html5lib compares or adds to, and foreign elements: whole
            assert dict(lean.attributes) == dict(full.attributes)
    body = next(e for e in elements(kept) if e.name == "body")
    assert body.attributes == {"class": "page", "onload": "x()", "id": "late"}
    # Most elements have no attribute left: they share one empty mapping.
    bare = [e for e in elements(kept) if e.name in ("p", "tr", "summary", "head")]
    assert bare and all(e.attributes is NO_ATTRIBUTES for e in bare if not e.attributes)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_lim_m2_the_extraction_reads_nothing_but_the_kept_attributes(page: object) -> None:
    html = page.read_text(encoding="utf-8")  # type: ignore[attr-defined]
    whole = extract(parse_html(html), BASE)
    lean = extract(parse_html(html, keep_attributes=READ_ATTRIBUTES), BASE)
    assert lean == whole


def test_lim_m2_the_extraction_of_mixed_attributes_is_the_same_with_the_kept_ones() -> None:
    whole = extract(parse_html(MIXED), BASE)
    assert (
        "A picture of a lake" in whole.markdown and "(https://example.org/next)" in whole.markdown
    )
    assert extract(parse_html(MIXED, keep_attributes=READ_ATTRIBUTES), BASE) == whole


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_lim_m3_a_page_read_from_a_text_source_is_the_same_tree(page: object) -> None:
    body = page.read_bytes()  # type: ignore[attr-defined]
    source = charset.open_text(body, "utf-8")
    assert isinstance(source, charset.DecodedText)
    streamed = parse_html(source)
    whole = parse_html(charset.decode(body, "utf-8"))
    assert shape(streamed.root) == shape(whole.root)
    assert (streamed.nodes, streamed.partial) == (whole.nodes, whole.partial)


def unreachable_after(make: object) -> int:
    """How many objects the cycle collector finds once what ``make`` built is dropped."""
    gc.collect()
    gc.disable()
    try:
        make()  # type: ignore[operator]
        return gc.collect()
    finally:
        gc.enable()


def test_lim_m2_a_parsed_and_released_page_needs_no_cycle_collector() -> None:
    page = "<ul>" + "<li><a href='/x'>item</a> text <b>bold</b></li>" * 500 + "</ul>"

    def released() -> None:
        doc = parse_html(page, keep_attributes=READ_ATTRIBUTES)
        extract(doc, BASE)
        release(doc.root)

    def kept() -> None:
        extract(parse_html(page), BASE)

    # Without release a child and its parent keep each other: thousands of objects
    # wait for the collector (the test shows the check can fail).
    assert unreachable_after(kept) > 1000
    # The parser's own cycles (its phases, its tokenizer, the stream) are broken by
    # parse_html, the tree's by release: nothing is left for the collector.
    assert unreachable_after(released) < 50


def test_lim_m2_a_released_tree_still_reads() -> None:
    doc = parse_html("<p>one <b>two</b></p>")
    release(doc.root)
    assert doc.root.text_content() == "one two"
    assert all(c.parent is None for e in elements(doc.root) for c in e.children)


def only_text(doc_root: Element) -> Text:
    (p,) = [e for e in elements(doc_root) if e.name == "p"]
    (text,) = p.children
    assert isinstance(text, Text)
    return text


@pytest.mark.parametrize("lead", ["", " "], ids=["one piece", "joined pieces"])
def test_lim_m3_a_long_run_of_4_byte_characters_is_kept_as_utf8(lead: str) -> None:
    # One emoji makes CPython store the whole run at 4 bytes a character; the tree keeps
    # it as UTF-8 (Cyrillic at 2 bytes, the emoji at 4) and reads it back the same.
    run = lead + "слово ещё 😀 " * 40
    text = only_text(parse_html(f"<p>{run}</p>").root)
    assert text.data == run and text.data == run  # read twice: decoded each time
    assert isinstance(text._chunks, bytes)
    assert len(text._chunks) < sys.getsizeof(run) / 2


def test_lim_m3_narrow_or_short_text_is_kept_as_it_is() -> None:
    for run in ("plain ascii " * 40, "слово " * 40, "短い 😀"):  # 1 or 2 bytes, or short
        text = only_text(parse_html(f"<p>{run}</p>").root)
        assert text.data == run
        assert type(text._chunks) is str


def test_lim_m3_text_kept_as_utf8_round_trips_lone_surrogates_and_takes_appends() -> None:
    run = "\ud800 lone 😀 " * 20  # a str page may carry what no UTF-8 page can
    text = only_text(parse_html(f"<p>{run}</p>").root)
    assert text.data == run and isinstance(text._chunks, bytes)
    text.append("more")  # html5lib appends to the last text node
    assert text.data == run + "more"
