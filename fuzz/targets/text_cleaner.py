"""Fuzz target: the text cleaner for titles and snippets (rypsok.core.boundary).

Input: one knob byte (bit 0 markup, bit 1 wide text, bits 2-7 the field bound),
one byte for the title's share, then the text. Documented failures: none; the
cleaner "never raises on any string". Checked besides: its own output is a
fixed point, the bound gives a prefix within the limit, and the cleaned text
can be written as UTF-8 JSON.
"""

from __future__ import annotations

import json

from fuzz.harness import Input, as_text, instrumented, main

with instrumented(__name__):
    from rypsok.core import boundary

_LIMITS = (0, 1, 2, 5, 16, 80, 300, 1000)


def TestOneInput(data: bytes) -> None:
    source = Input(data)
    knob = source.byte()
    markup, wide = bool(knob & 1), bool(knob & 2)
    limit = _LIMITS[(knob >> 2) % len(_LIMITS)]
    share = source.byte()
    raw = as_text(source.rest(), wide)
    title, snippet = raw[:share], raw[share:]

    cleaned = boundary.clean_text(raw, markup=markup)
    assert boundary.clean_text(cleaned.text, markup=False) == boundary.Cleaned(cleaned.text, 0)
    head, cut = boundary.bound(cleaned.text, limit)
    assert len(head) <= limit and cleaned.text.startswith(head)
    assert cut == (len(cleaned.text) > limit)
    json.dumps(cleaned.text, ensure_ascii=False).encode("utf-8")

    result = boundary.clean_result(
        title,
        snippet,
        title_markup=markup,
        snippet_markup=not markup,
        title_max_chars=max(limit, 1),
        snippet_max_chars=limit,
    )
    assert len(result.title) <= max(limit, 1) and len(result.snippet) <= limit
    json.dumps([result.title, result.snippet], ensure_ascii=False).encode("utf-8")
    boundary.tally([result])
    boundary.looks_like_instruction(raw)


if __name__ == "__main__":
    main(TestOneInput)
