"""The parser's own main loop and tree-builder methods against html5lib's.

tree.py replaces html5lib's main loop and its builder's ``insertText`` and
``elementInScope`` with leaner versions of the same steps. Each test parses a
page twice, once with html5lib's versions put back, and wants the same tree,
node count and partial flag: on foreign content (SVG, MathML, integration
points), table fostering, misnested formatting elements, and generated pages.
"""

from __future__ import annotations

from typing import Any

import pytest
from html5lib.html5parser import HTMLParser
from html5lib.treebuilders import base as html5lib_base
from hypothesis import HealthCheck, given, settings

from rypsok.core.html import tree
from tests.support.html_shapes import page, shape


class StockLoopParser(tree._Parser):
    mainLoop = HTMLParser.mainLoop


class StockBuilder(tree._Builder):
    insertText = html5lib_base.TreeBuilder.insertText
    elementInScope = html5lib_base.TreeBuilder.elementInScope


def parsed(document: str, *, stock: bool, **bounds: Any) -> tuple[Any, ...]:
    with pytest.MonkeyPatch.context() as patch:
        if stock:
            patch.setattr(tree, "_Parser", StockLoopParser)
            patch.setattr(tree, "_Builder", StockBuilder)
        doc = tree.parse_html(document, **bounds)
    return shape(doc.root), doc.nodes, doc.partial


def assert_as_html5lib(document: str, **bounds: Any) -> None:
    assert parsed(document, stock=False, **bounds) == parsed(document, stock=True, **bounds)


PAGES = [
    # Foreign content and the integration points that switch back to HTML rules.
    "<p>a<svg viewBox='0 0 1 1'><g><path d='M0'/><text>t<b>x</b></text></g></svg>b</p>",
    "<svg><foreignObject><p>html <i>inside</i></p></foreignObject><rect/></svg>",
    "<svg><desc>d<span>s</span></desc><title>t</title></svg><p>after",
    "<math><mi>x</mi><mo>+</mo><mn>1</mn><mtext>t<b>b</b><mglyph/><malignmark/></mtext></math>",
    "<math><annotation-xml encoding='text/html'><p>p</p></annotation-xml></math>",
    "<math><annotation-xml><svg><circle/></svg></annotation-xml></math>",
    "<math><annotation-xml encoding='TEXT/HTML'><div>d</div></annotation-xml></math>",
    "<svg><p>breaks out</p><circle/></svg><div>x</div>",
    "<svg><![CDATA[<p>]]></svg><svg><font color=red>f</font></svg>",
    "<math><mi><svg><title><b>deep</b></title></svg></mi></math>",
    # Tables: fostered text and elements, captions, stray cells.
    "<table>x<tr>y<td>1</td>z</tr> <b>bold</b><td>2</table>after",
    "<table><tbody> <tr> <td>a</td> </tr> </tbody>text</table>",
    "<table><caption>c<p>p</table><table><colgroup><col></colgroup>t</table>",
    "<div><table><tr><td><table>inner<tr><td>x</td></tr></table></td></tr></table></div>",
    "<table><tr><td>a<select><option>o</select>b</td></tr></table>",
    # Formatting elements: the adoption agency and reconstruction.
    "<p><b><i>a</b>b</i>c</p><b>1<p>2</b>3</p>",
    "<a href=x><div>block</a>more</div>",
    "<b><b><b><b>four</b></b></b></b><i>x<p>y</i>z",
    "<p>1<b>2<i>3<u>4<p>5</u>6</i>7</b>8",
    "<ul><li>a<li>b<ol><li>c</ol></ul><dl><dt>t<dd>d</dl>",
    "<button><p>in button</button><p>x<button>y</p>",
    "<pre>\nkept</pre><textarea>\nt</textarea><listing>\nl</listing>",
    "<select><option>a<optgroup><option>b</select><p>after",
    "<frameset><frame></frameset>",
    "<html><head><title>t</title><body><p>x</p></html><!-- after --><p>late",
    "<template><p>dropped</p></template><p>kept<script>var a = '<b>';</script></p>",
]


@pytest.mark.parametrize("document", PAGES)
def test_req_page_006_parser_loop_and_builder_give_html5lib_trees(document: str) -> None:
    assert_as_html5lib(document)


@pytest.mark.parametrize("document", PAGES)
def test_req_page_006_lim_f10_lim_f11_bounds_cut_as_with_html5lib_loop(document: str) -> None:
    # Tight bounds stop the parse in the middle of every kind of step.
    for max_nodes in (3, 7, 12):
        assert_as_html5lib(document, max_nodes=max_nodes)
    for max_depth in (2, 3, 5):
        assert_as_html5lib(document, max_depth=max_depth)


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(page())
def test_req_page_006_generated_pages_give_html5lib_trees(document: str) -> None:
    assert_as_html5lib(document)
    assert_as_html5lib(document, max_depth=4)
