"""XHTML mode of the parser (parse_html(..., xhtml=True), for a page served as
application/xhtml+xml): a self-closing tag of a non-void element is an empty
element, raw-text and RCDATA elements included, and a CDATA section is text; the
bounds and the cancel flag hold as in HTML mode (REQ-FETCH-008, REQ-PAGE-006)."""

from __future__ import annotations

import threading

import pytest

from rypsok.core.fetch.extraction.extract import extract
from rypsok.core.html.tree import Element, ParseCancelled, Text, parse_html
from tests.support.html_shapes import shape

BASE = "https://example.org/doc"
TEXT = "A paragraph long enough to be read as the main content of the page, with words."


def body_of(html: str, *, xhtml: bool = True) -> Element:
    root = parse_html(html, xhtml=xhtml).root
    found = [e for e in root.iter_elements() if e.name == "body"]
    assert len(found) == 1
    return found[0]


def outline(node: Element) -> list[object]:
    """Children as nested lists: an element is [name, *children], text is itself."""
    out: list[object] = []
    for child in node.children:
        if isinstance(child, Text):
            out.append(child.data)
        else:
            out.append([child.name, *outline(child)])
    return out


@pytest.mark.parametrize("name", ["div", "p", "span", "a", "section", "h2", "ul", "b"])
def test_req_fetch_008_a_self_closing_element_is_empty_in_xhtml(name: str) -> None:
    page = f"<html><body><{name}/><p>after</p></body></html>"
    assert outline(body_of(page)) == [[name], ["p", "after"]]


def test_req_fetch_008_an_empty_table_cell_is_one_cell() -> None:
    body = body_of("<body><table><tr><td/><td>x</td></tr></table></body>")
    assert outline(body) == [["table", ["tbody", ["tr", ["td"], ["td", "x"]]]]]


def test_req_fetch_008_the_same_tags_nest_in_html_mode() -> None:
    # What html5lib does with text/html, and what XHTML mode must not do.
    assert outline(body_of("<body><div/><p>after</p>", xhtml=False)) == [["div", ["p", "after"]]]


def test_req_fetch_008_an_anchor_target_does_not_swallow_the_text_after_it() -> None:
    body = body_of(f'<body><a name="top"/><p>{TEXT}</p><a id="x"/>tail</body>')
    assert outline(body) == [["a"], ["p", TEXT], ["a"], "tail"]


@pytest.mark.parametrize(
    "tag",
    [
        '<script src="/app.js"/>',
        '<script type="text/javascript" src="/app.js" />',
        "<style/>",
        "<textarea/>",
        '<iframe src="/frame"/>',
        "<noembed/>",
        "<noframes/>",
        "<xmp/>",
        "<plaintext/>",
    ],
)
def test_req_fetch_008_a_raw_text_element_closed_by_its_slash_ends_there(tag: str) -> None:
    page = f"<html><head><title>T</title></head><body>{tag}<p>{TEXT}</p></body></html>"
    body = body_of(page)
    assert ["p", TEXT] in outline(body)
    assert extract(parse_html(page, xhtml=True), BASE).markdown == TEXT


def test_req_fetch_008_an_empty_title_and_a_head_script_leave_the_body_alone() -> None:
    page = (
        '<html><head><title/><script src="/a.js"/><style type="text/css"/>'
        f'<link rel="stylesheet" href="/s.css"/></head><body><p>{TEXT}</p></body></html>'
    )
    result = extract(parse_html(page, xhtml=True), BASE)
    assert result.markdown == TEXT
    assert result.title is None  # the empty <title/>; no h1 either
    title = [e for e in parse_html(page, xhtml=True).root.iter_elements() if e.name == "title"]
    assert [t.children for t in title] == [[]]


def test_req_fetch_008_html_mode_reads_the_same_script_as_browsers_do() -> None:
    page = f'<html><head><script src="/a.js"/></head><body><p>{TEXT}</p></body></html>'
    assert extract(parse_html(page), BASE).markdown == ""


@pytest.mark.parametrize(
    ("section", "text"),
    [
        ("<![CDATA[x < y && y > z]]>", "x < y && y > z"),
        ("<![CDATA[a]b]]c>d]]>", "a]b]]c>d"),
        ("<![CDATA[]]>", ""),
        ("<![CDATA[<p>not a tag</p> &amp;]]>", "<p>not a tag</p> &amp;"),
    ],
)
def test_req_fetch_008_a_cdata_section_is_text_in_xhtml(section: str, text: str) -> None:
    body = body_of(f"<body><p>one {section} two</p></body>")
    assert body.text_content() == f"one {text} two"


def test_req_fetch_008_a_cdata_section_is_a_dropped_comment_in_html_mode() -> None:
    assert body_of("<body><p>one <![CDATA[x]]> two</p>", xhtml=False).text_content() == "one  two"


def test_req_fetch_008_an_unterminated_cdata_section_runs_to_the_end() -> None:
    assert body_of("<body><p>one <![CDATA[rest of it").text_content() == "one rest of it"


@pytest.mark.parametrize("cut", range(1, 10))
def test_req_fetch_008_a_cdata_section_across_a_chunk_boundary(cut: int) -> None:
    # html5lib reads 10240 characters at a time; the "<![CDATA[" opener is split at
    # every one of its positions, and a near miss ("<![CDATX[") stays a comment.
    lead = "<body><p>" + "x" * (10240 - len("<body><p>") - cut)
    assert body_of(lead + "<![CDATA[in]]>end").text_content() == "x" * len(lead[9:]) + "inend"
    assert body_of(lead + "<![CDATX[in]]>end").text_content() == "x" * len(lead[9:]) + "end"


PAGES_WITHOUT_XML_CONSTRUCTS = [
    "<!doctype html><html><head><meta charset='utf-8'/><title>T</title>"
    "<link rel='icon' href='/i'/></head><body><p>a<br/>b<img src='/x.png' alt='x'/></p>"
    "<hr/><table><tr><td>1</td><td><input type='hidden' name='n'/></td></tr>"
    "<input type='hidden' name='m'/><col/></table><p>c<wbr/>d</p></body></html>",
    "<body><svg viewBox='0 0 1 1'><circle r='1'/><path d='M0 0'/><foreignObject>"
    "<p>inside</p></foreignObject></svg><math><mi>x</mi><mspace/></math><p>after</p>",
    "<body><ul><li>one<li>two</ul><p>un<b>closed<i>nest</b>ing</i></p><table><td>cell",
    "<body><![CDATX[no]]><!-- comment --><p>text &amp; more</p><script>a<b</script>z",
    # Start tags the parser ignores: the end tag made for their slash is ignored too.
    "<body><select><br/><option>a</option></select><p>a<image src='x'/>b</p>",
    "<body><p>a</p><body/><p>b</p><table><tr><td>1</td></tr><br/></table>",
    "<frameset><frame/><frameset/></frameset>",
]


@pytest.mark.parametrize("page", PAGES_WITHOUT_XML_CONSTRUCTS)
def test_req_fetch_008_xhtml_mode_changes_nothing_else(page: str) -> None:
    # Void and foreign self-closing tags are empty in HTML already: no end tag is made.
    assert shape(parse_html(page, xhtml=True).root) == shape(parse_html(page).root)


def test_req_page_006_node_bound_holds_in_xhtml_mode() -> None:
    doc = parse_html("<body>" + "<div/>" * 5000, xhtml=True, max_nodes=1000)
    assert doc.partial and doc.nodes == 1000


def test_req_page_006_depth_bound_holds_in_xhtml_mode() -> None:
    doc = parse_html("<body>" + "<div>" * 1000 + "<p/>deep", xhtml=True, max_depth=64)
    assert doc.partial
    depth, stack = 0, [(doc.root, 0)]
    while stack:
        node, level = stack.pop()
        depth = max(depth, level)
        stack.extend((c, level + 1) for c in node.children if isinstance(c, Element))
    assert depth == 64


def test_req_page_006_self_closed_elements_do_not_nest_toward_the_depth_bound() -> None:
    doc = parse_html("<body>" + "<div/><span/>" * 20_000, xhtml=True)
    assert not doc.partial
    assert outline(body_of("<body>" + "<div/><span/>" * 3, xhtml=True)) == [["div"], ["span"]] * 3


def test_req_page_006_cancel_flag_holds_in_xhtml_mode() -> None:
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(ParseCancelled):
        parse_html("<body>" + "<p/>" * 100, xhtml=True, cancel=cancel)
