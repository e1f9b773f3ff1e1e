"""The fast paths of rypsok.core.html.tokenizer against html5lib's own tokenizer.

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

from rypsok.core.html import tree
from rypsok.core.html.tokenizer import FastTokenizer, numeric_reference
from tests.support.html_shapes import (
    ATTRIBUTE_NAMES,
    CHUNK,
    NAMES,
    TEXTS,
    VALUES,
    Snapshot,
    page,
    shape,
)

TEXT_KINDS = (1, 2)  # Characters, SpaceCharacters
PARSE_ERROR = 7


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
