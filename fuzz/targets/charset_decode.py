"""Fuzz target: charset decoding of a fetched body (rypsok.core.html.charset).

Input: one knob byte choosing the declared Content-Type charset (none, a known
label, a nonsense label, or a label read from the input up to the first NUL),
then the body. Documented failures: none; ``decode`` "never raises for any
input". Checked besides: the BOM skip ``resolve`` gives lies within the body.
(The codec it names need not be one Python knows: x-user-defined is a web-only
label, and ``decode`` falls back to UTF-8 for it.)
"""

from __future__ import annotations

from fuzz.harness import Input, instrumented, main

with instrumented(__name__, ("charset_normalizer", "html5lib._inputstream")):
    from rypsok.core.html import charset

_LABELS = (
    None,
    "utf-8",
    "UTF-16",
    "iso-8859-1",
    "windows-1251",
    "shift_jis",
    "euc-kr",
    "iso-2022-jp",
    "gb18030",
    "x-user-defined",
    "replacement",
    "utf-7",
    "bogus",
    "",
)


def TestOneInput(data: bytes) -> None:
    source = Input(data)
    knob = source.byte()
    body = source.rest()
    declared: str | None
    if knob == 0xFF:  # the label is the input's own, up to the first NUL
        label, _, body = body.partition(b"\0")
        declared = label.decode("latin-1")
    else:
        declared = _LABELS[knob % len(_LABELS)]

    _codec, skip = charset.resolve(body, declared)
    assert 0 <= skip <= len(body)
    text = charset.decode(body, declared)
    assert isinstance(text, str)


if __name__ == "__main__":
    main(TestOneInput)
