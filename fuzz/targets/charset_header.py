"""Fuzz target: the charset of a Content-Type header value.

Two readers take the parameter: the fetch pipeline's (rypsok.core.fetch.pipeline,
with the media type and the readable-kind check) and the DuckDuckGo driver's;
the label then goes to charset.resolve. Input: one byte choosing the body
sniffed with it, then the header value's bytes, read as Latin-1 as the HTTP
client decodes them. Documented failures: ToolError (unsupported_content, the
media type) from the kind check only. Checked besides: a label is never empty,
and both readers' labels resolve to the same codec.
"""

from __future__ import annotations

from fuzz.harness import Input, instrumented, main

with instrumented(__name__):
    from rypsok.core.engines import duckduckgo
    from rypsok.core.fetch import charset, pipeline
    from rypsok.core.model import ToolError
    from rypsok.core.net.client import Response

_BODIES = (
    b"<!doctype html><p>x",
    b"plain text",
    b"\xef\xbb\xbf<p>bom",
    b"\xff\xfeh\x00i\x00",
    b"\x00\x01\x02\x03\x04",
    b"",
)


def TestOneInput(data: bytes) -> None:
    source = Input(data)
    body = source.pick(_BODIES)
    value = source.rest().decode("latin-1")
    response = Response(200, (("content-type", value),), body)

    declared = pipeline._declared_charset(response)
    assert declared is None or declared
    other = duckduckgo._declared_charset(value)
    assert other is None or other
    pipeline._media_type(response)
    try:
        pipeline._media_kind(response)
    except ToolError as error:
        assert error.kind == "unsupported_content"
    assert charset.resolve(body, other) == charset.resolve(body, declared), (
        "the two readers disagree"
    )


if __name__ == "__main__":
    main(TestOneInput)
