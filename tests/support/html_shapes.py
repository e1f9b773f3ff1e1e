"""HTML pages built to reach every branch of the tokenizer's fast paths and of their
fallbacks (a hypothesis strategy, with tags, references and text runs placed across
html5lib's 10240-character chunk boundaries), and a tree's shape to compare parses by."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from rypsok.core.html import tree

CHUNK = 10240
Snapshot = tuple[Any, ...]


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
