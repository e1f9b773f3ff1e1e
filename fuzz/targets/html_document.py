"""Fuzz target: the HTML document pipeline of web_fetch, as the pipeline runs it.

charset.decode -> tree.parse_html (bounded) -> extract.extract -> the content
cleaner and the title's field cleaner (rypsok.core.html, rypsok.core.fetch.extraction,
rypsok.core.boundary).

Input: one knob byte (bits 0-1 the node and depth bounds: the defaults or small
ones, so the cut paths are reached; bit 2 hands html5lib bytes instead of text;
bits 3-5 the declared charset), then the page. Documented failures: none;
``parse_html`` raises only ParseCancelled, and no cancel flag is set here.
Checked besides: the node count and the nesting depth stay within the bounds,
and what the caller would receive can be written as UTF-8 JSON.
"""

from __future__ import annotations

import json

from fuzz.harness import Input, instrumented, main

with instrumented(__name__, ("html5lib",)):
    from rypsok.core import boundary, limits
    from rypsok.core.fetch.extraction.extract import extract
    from rypsok.core.html import charset
    from rypsok.core.html.tree import Element, parse_html

_BOUNDS = (
    (limits.default("LIM-F10"), limits.default("LIM-F11")),
    (64, limits.default("LIM-F11")),
    (limits.default("LIM-F10"), 6),
    (12, 3),
)
_LABELS = (None, "utf-8", "windows-1252", "utf-16le", "shift_jis", "koi8-r", "gb18030", "nonsense")
_BASE = "https://example.org/dir/page.html"


def _depth(root: Element) -> int:
    deepest = 0
    stack: list[tuple[Element, int]] = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((c, depth + 1) for c in node.children if isinstance(c, Element))
    return deepest


def TestOneInput(data: bytes) -> None:
    source = Input(data)
    knob = source.byte()
    max_nodes, max_depth = _BOUNDS[knob & 3]
    declared = _LABELS[(knob >> 3) % len(_LABELS)]
    body = source.rest()

    if knob & 4:
        doc = parse_html(body, encoding=declared, max_nodes=max_nodes, max_depth=max_depth)
    else:
        doc = parse_html(charset.decode(body, declared), max_nodes=max_nodes, max_depth=max_depth)
    assert doc.nodes <= max_nodes
    # The document node is level 0 and <html> level 1 (LIM-F11 counts from <html>).
    assert _depth(doc.root) <= max_depth, "nesting beyond the depth bound"

    extracted = extract(doc, _BASE)
    content, removed = boundary.clean_content(extracted.markdown)
    title = boundary.clean_field(extracted.title or "", markup=False, limit=200)
    assert removed >= 0
    json.dumps([title.text, content], ensure_ascii=False).encode("utf-8")
    boundary.count_instruction_like(content)


if __name__ == "__main__":
    main(TestOneInput)
