"""Fuzz target: the data a script-rendered page carries (rypsok.core.fetch.extraction
.embedded, with the script data tree.py keeps).

Input: one byte choosing how the data is carried (JSON-LD, Next.js's JSON, Nuxt 3's
devalue JSON, an inline script of Nuxt 2, Remix or the Next app router), then the
data. Documented failures: none ("never raises, bounded by LIM-F24 to LIM-F26").
Checked besides: the blocks are strings, and no block is empty.
"""

from __future__ import annotations

from fuzz.harness import Input, instrumented, main

with instrumented(__name__):
    from rypsok.core.fetch.extraction.attributes import READ_ATTRIBUTES
    from rypsok.core.fetch.extraction.embedded import embedded_blocks, is_shell
    from rypsok.core.html.tree import parse_html

_CARRIERS = (
    '<script type="application/ld+json">{}</script>',
    '<script id="__NEXT_DATA__" type="application/json">{}</script>',
    '<script type="application/json" id="__NUXT_DATA__">{}</script>',
    "<script>window.__NUXT__={}</script>",
    "<script>window.__remixContext = {};</script>",
    "<script>self.__next_f.push({})</script>",
)


def TestOneInput(data: bytes) -> None:
    source = Input(data)
    carrier = source.pick(_CARRIERS)
    text = source.rest().decode("utf-8", "surrogateescape")
    page = f'<!doctype html><html><body><div id="__next"></div>{carrier.format(text)}</body></html>'
    doc = parse_html(page, keep_attributes=READ_ATTRIBUTES)
    blocks = embedded_blocks(doc, "https://example.org/post")
    assert all(isinstance(b, str) and b for b in blocks)
    is_shell(doc)


if __name__ == "__main__":
    main(TestOneInput)
