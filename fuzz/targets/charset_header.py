"""Fuzz target: a Content-Type header value, as the one media type reader reads it.

rypsok.core.net.mediatype reads the essence and the charset parameter for the fetch
pipeline and the DuckDuckGo driver (and, as a list, an Accept value for the listener);
the fetch pipeline's readable-kind check then takes the essence, and the label goes to
charset.resolve. Input: one byte choosing the body sniffed with it, then the header
value's bytes, read as Latin-1 as the HTTP client decodes them. Documented failures:
ToolError (unsupported_content, the media type) from the kind check only. Checked
besides: a label is never empty, the short readers agree with the full parse, and
the label resolves to a codec.
"""

from __future__ import annotations

from fuzz.harness import Input, instrumented, main

with instrumented(__name__):
    from rypsok.core.fetch import pipeline
    from rypsok.core.html import charset
    from rypsok.core.model import ToolError
    from rypsok.core.net import mediatype
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

    declared = mediatype.charset(value)
    assert declared is None or declared
    parsed = mediatype.parse(value)
    assert declared == parsed.charset, "the short reader and the full parse disagree"
    assert (mediatype.essence(value) or "") == parsed.essence
    mediatype.parse_list(value)
    try:
        pipeline._media_kind(response, pdf=True)
    except ToolError as error:
        assert error.kind == "unsupported_content"
    codec, skip = charset.resolve(body, declared)
    assert codec and skip >= 0


if __name__ == "__main__":
    main(TestOneInput)
