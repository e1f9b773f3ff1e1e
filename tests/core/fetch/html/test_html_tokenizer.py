"""The fast paths of rypsok.core.fetch.html.tokenizer against html5lib's own tokenizer.

Both tokenizers run under the same parser and tree builder; the tokens the
parser receives (parse errors aside, adjacent text of one kind joined) and the
trees must be the same, on pages built to reach every branch of the fast paths
and of their fallbacks, with tags, references and text runs placed across
html5lib's 10240-character chunk boundaries.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from html5lib._tokenizer import HTMLTokenizer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rypsok.core.fetch.html import tree
from rypsok.core.fetch.html.tokenizer import FastTokenizer, numeric_reference

CHUNK = 10240
TEXT_KINDS = (1, 2)  # Characters, SpaceCharacters
PARSE_ERROR = 7

Snapshot = tuple[Any, ...]


def snapshot(token: dict[str, Any]) -> Snapshot:
    kind = token["type"]
    if kind in (3, 4, 5):  # tags: taken before the parser adjusts them
        data = token["data"]
        items = tuple(data.items()) if isinstance(data, dict) else tuple(map(tuple, data))
        return (kind, token["name"], items, token["selfClosing"])
    if kind == 0:
        return (
            kind,
            token.get("name"),
            token.get("publicId"),
            token.get("systemId"),
            token.get("correct"),
        )
    return (kind, token.get("data"))


def joined(tokens: list[Snapshot]) -> list[Snapshot]:
    out: list[Snapshot] = []
    for token in tokens:
        if out and token[0] in TEXT_KINDS and out[-1][0] == token[0]:
            out[-1] = (token[0], out[-1][1] + token[1])
        else:
            out.append(token)
    return out


def shape(node: tree.Element) -> list[Snapshot]:
    out: list[Snapshot] = []
    stack: list[tree.Element | tree.Text] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, tree.Text):
            out.append(("text", current.data))
        else:
            out.append(
                (
                    current.name,
                    current.namespace,
                    tuple(current.attributes.items()),
                    len(current.children),
                )
            )
            stack.extend(reversed(current.children))
    return out


def run(page: str, base: type[HTMLTokenizer]) -> tuple[list[Snapshot], list[Snapshot], bool]:
    seen: list[Snapshot] = []

    class Recording(base):  # type: ignore[misc, valid-type]
        def __iter__(self) -> Iterator[dict[str, Any]]:
            for token in super().__iter__():
                if token["type"] != PARSE_ERROR:
                    seen.append(snapshot(token))
                yield token

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tree, "FastTokenizer", Recording)
        doc = tree.parse_html(page, max_nodes=10**9, max_depth=10**9)
    return joined(seen), shape(doc.root), doc.partial


class Stock(HTMLTokenizer):  # type: ignore[misc]
    """html5lib's tokenizer, with only our numeric references: its own raises
    on a reference of over 4300 digits (tested below)."""

    consumeNumberEntity = FastTokenizer.consumeNumberEntity


def assert_same(page: str) -> None:
    fast_tokens, fast_tree, fast_partial = run(page, FastTokenizer)
    slow_tokens, slow_tree, slow_partial = run(page, Stock)
    assert fast_tokens == slow_tokens
    assert fast_tree == slow_tree
    assert fast_partial == slow_partial


NAMES = [
    "p",
    "P",
    "div",
    "a",
    "A",
    "img",
    "br",
    "input",
    "table",
    "td",
    "tr",
    "li",
    "b",
    "script",
    "style",
    "title",
    "textarea",
    "svg",
    "math",
    "select",
    "option",
    "template",
    "noscript",
    "plaintext",
    "xmp",
    "iframe",
    "x-y",
    "h1",
    "pre",
    "font",
    "İ",
    "xİ",
    "a<b",
    "frameset",
    "body",
    "html",
    "head",
]
ATTRIBUTE_NAMES = [
    "href",
    "HREF",
    "class",
    "id",
    "alt",
    "data-x",
    "x:y",
    "é",
    "a'b",
    "xlink:href",
    "definitionurl",
    "İd",
    "dİ",
    "viewbox",
    "hidden",
    "style",
    "=x",
    '"q',
]
VALUES = [
    "",
    "x",
    "a b",
    "a&amp;b",
    "a&ampb",
    "&copy=1",
    "&copy;",
    "&notit",
    "&notin;",
    "&#65;",
    "&#x41;",
    "&#X41;",
    "&#;",
    "&#x;",
    "&#0;",
    "&#128;",
    "&#xD800;",
    "&#1114112;",
    "&#" + "9" * 30 + ";",
    "&lang=en",
    "&amp",
    "&",
    "&&",
    "a\x00b",
    "x/",
    "'",
    '"',
    "&#65",
    "&ampx",
    "q=1&r=2",
    "&AMP;",
    "&Eacute",
    "&gt",
    "&zwnj;",
]
SPACES = ["", " ", "  ", "\n", "\t", "\f", "\r\n", "\r"]
TEXTS = [
    "x",
    "hello world",
    " ",
    "\n\n",
    "&amp;",
    "&amp",
    "&copy",
    "&notit;",
    "&notin;",
    "&#38;",
    "&#x26;",
    "&#X26;",
    "&#65x",
    "&#x41 ",
    "&#10;",
    "&#32;",
    "&#13;",
    "&#",
    "&#x",
    "&#xZ",
    "&",
    "& ",
    "&<",
    "&&",
    "a\x00b",
    "\x00",
    "&#" + "1" * 5000 + ";",
    "&" + "a" * 40,
    "&Aacute",
    "&aacute;x",
    "&;",
    "<",
    "< p>",
    "<>",
    "</>",
    "</ p>",
    "<?pi?>",
    "<!x>",
    "<!--c-->",
    "<!---->",
    "<!-->",
    "<!-- a -- b -->",
    "<!-- --!>",
    "<!DOCTYPE html>",
    '<!doctype html public "-//W3C//DTD HTML 4.01//EN">',
    "<![CDATA[x]]>",
    "</script >",
    "</script x>",
    "<!--<script>",
    "-->",
    "</p/>",
    "</p x=1>",
    "<p/>",
    "<p / >",
    "<a/b>",
    '<a b="x"c="y">',
    "<a b='x'c>",
    '<a b="x"/c>',
    "\ufeff",
    "\u00a0",
    "€",
]


@st.composite
def tag(draw: st.DrawFn) -> str:
    name = draw(st.sampled_from(NAMES))
    if draw(st.booleans()):
        return "</" + name + draw(st.sampled_from([*SPACES[:4], " x", "/", " x=1"])) + ">"
    out = ["<", name]
    for _ in range(draw(st.integers(0, 4))):
        out.append(draw(st.sampled_from([*SPACES[1:], ""])))
        out.append(draw(st.sampled_from(ATTRIBUTE_NAMES)))
        form = draw(st.integers(0, 3))
        if form == 0:
            continue
        value = draw(st.sampled_from(VALUES))
        around = draw(st.sampled_from(["", " ", "\n"]))
        out.append(around + "=" + around)
        if form == 1:
            out.append('"' + value.replace('"', "") + '"')
        elif form == 2:
            out.append("'" + value.replace("'", "") + "'")
        else:
            out.append(value)
    out.append(draw(st.sampled_from(["", " ", "/", " /", "/ ", "\n"])))
    out.append(draw(st.sampled_from([">", ">", ">", ""])))
    return "".join(out)


@st.composite
def page(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.one_of(tag(), st.sampled_from(TEXTS)), max_size=40))
    body = "".join(parts)
    # Now and then, put a random point of the page on a chunk boundary.
    if body and draw(st.booleans()):
        cut = draw(st.integers(0, len(body)))
        body = "y" * (CHUNK - cut % CHUNK) + body
    return body


@settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(page())
def test_req_page_006_fast_tokenizer_gives_html5lib_tokens_and_tree(document: str) -> None:
    assert_same(document)


@pytest.mark.parametrize("value", VALUES)
@pytest.mark.parametrize("form", ['"{}"', "'{}'", "{}", " = {} "])
def test_req_page_006_fast_tokenizer_reads_every_attribute_value_as_html5lib(
    value: str, form: str
) -> None:
    quote = form.strip(" ={}")
    assert_same(
        "<a href="
        + form.format(value.replace(quote, "") if quote else value)
        + "><b ALT=x title="
        + form.format("y")
        + " hidden>t</b></a>"
    )


@pytest.mark.parametrize("text", TEXTS)
def test_req_page_006_fast_tokenizer_reads_every_text_piece_as_html5lib(text: str) -> None:
    assert_same("<p>" + text + "</p>" + text)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("attribute", ATTRIBUTE_NAMES)
def test_req_page_006_fast_tokenizer_reads_every_tag_and_attribute_name_as_html5lib(
    name: str, attribute: str
) -> None:
    assert_same(f"<{name} {attribute}=v {attribute.upper()}>x</{name}> <{name}/>")


@pytest.mark.parametrize(
    "piece",
    [
        "<a href=\"https://example.org/?a=1&amp;b=2&c=3\" title='x'>",
        "<img src=x alt=y/>",
        "<input disabled/>",
        '<p class = "x" id=y data-z>',
        "&notin; &notit; &copy=1",
        "<svg><![CDATA[<p>]]></svg>",
        "<script>if (a<b) { x = '</scr' + 'ipt>'; }</script>",
        "<textarea><b>&amp;</b></textarea>",
        "<table>x<td> </td></table>",
    ],
)
@pytest.mark.parametrize("offset", range(-12, 3))
def test_req_page_006_fast_tokenizer_across_a_chunk_boundary(piece: str, offset: int) -> None:
    # The piece starts a few characters before the boundary, at it, or after.
    assert_same("z" * (CHUNK + offset) + piece + " tail")


@pytest.mark.parametrize("before", ["&gt;", "<b>", "</i>", "<table>"])
@pytest.mark.parametrize("after", [" x", "  \n x", " ", "  <i>"])
def test_req_page_006_a_one_character_text_run_at_a_chunk_end_reads_on_as_html5lib_does(
    before: str, after: str
) -> None:
    # A token ends just before the chunk's last character, which starts a text
    # run: html5lib reads on into the next chunk, white space included, as one
    # text token (a space token there differs in a table: foster parenting).
    # Found by the property test above.
    page = "y" * (CHUNK - 1 - len(before)) + before + '"' + after
    assert page[CHUNK - 1] == '"'
    assert_same(page)
    assert_same(page + "<p>" + "z" * CHUNK + "</p>")


@pytest.mark.parametrize("where", ["<p>{}</p>", '<a title="{}">t</a>', "<a title={}>t</a>"])
@pytest.mark.parametrize("lead", [0, CHUNK - 7])
def test_req_page_006_numeric_reference_of_5000_digits_is_one_replacement_character(
    where: str, lead: int
) -> None:
    # html5lib hands every digit to int(), which refuses over 4300 of them:
    # the page would have failed to parse. Both paths (the fast one, and the
    # fallback when the digits cross a chunk boundary) now decode it.
    page = "x" * lead + where.format("&#" + "9" * 5000 + ";")
    doc = tree.parse_html(page)
    texts = doc.root.text_content() + "".join(
        v for e in doc.root.iter_elements() for v in e.attributes.values()
    )
    assert "\ufffd" in texts
    assert "9999" not in texts


@pytest.mark.parametrize(
    ("number", "radix", "expected"),
    [
        ("65", 10, "A"),
        ("41", 16, "A"),
        ("0", 10, "\ufffd"),
        ("128", 10, "\u20ac"),
        ("D800", 16, "\ufffd"),
        ("110000", 16, "\ufffd"),
        ("10FFFF", 16, "\U0010ffff"),
        ("000000000000065", 10, "A"),
        ("9" * 5000, 10, "\ufffd"),
        ("13", 10, "\r"),
    ],
)
def test_numeric_reference_follows_html5lib(number: str, radix: int, expected: str) -> None:
    assert numeric_reference(number, radix) == expected
