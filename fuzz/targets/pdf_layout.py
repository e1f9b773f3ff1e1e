"""Fuzz target: a PDF's layout (rypsok.core.fetch.pdf.layout), on spans made of the input.

PDFium gives the layout spans of text with a place, a size and a weight; here the input
gives them, so the fuzzer reaches orders and shapes no generated file has. Input: one
byte of pages, then spans of seven bytes each (page, left, width, baseline, size and
flags, text length) followed by their text. Documented failures: none ("never raises").
Checked besides: the Markdown blocks are strings, and none is empty.
"""

from __future__ import annotations

from fuzz.harness import Input, as_text, instrumented, main

with instrumented(__name__):
    from rypsok.core.fetch.pdf import layout

MAX_SPANS = 2000


def TestOneInput(data: bytes) -> None:
    source = Input(data)
    pages = [layout.PageSpans(612.0, 792.0, []) for _ in range(source.byte() % 4 + 1)]
    for _ in range(MAX_SPANS):
        head = source.take(7)
        if len(head) < 7:
            break
        page, left, width, baseline, size, flags, length = head
        text = layout.normalise(as_text(source.take(length), wide=bool(flags & 1)))
        x0, y = left * 2.4, baseline * 3.1
        span = layout.Span(x0, x0 + width * 2.4, y, size / 8 + 0.1, bool(flags & 2), text)
        pages[page % len(pages)].spans.append(span)
    blocks, _heading = layout.to_markdown([layout.page_pieces(p) for p in pages])
    assert all(isinstance(b, str) and b for b in blocks)


if __name__ == "__main__":
    main(TestOneInput)
