"""Fuzz target: the content cleaner for fetched Markdown (rypsok.core.boundary).

Input: one knob byte (bit 0 wide text), then the Markdown. Documented failures:
none. Checked besides: the count of removed characters is never negative, no
carriage return survives, and the result can be written as UTF-8 JSON.
"""

from __future__ import annotations

import json

from fuzz.harness import Input, as_text, instrumented, main

with instrumented(__name__):
    from rypsok.core import boundary


def TestOneInput(data: bytes) -> None:
    source = Input(data)
    wide = bool(source.byte() & 1)
    markdown = as_text(source.rest(), wide)
    content, removed = boundary.clean_content(markdown)
    assert removed >= 0 and "\r" not in content
    json.dumps(content, ensure_ascii=False).encode("utf-8")
    boundary.count_instruction_like(content)


if __name__ == "__main__":
    main(TestOneInput)
