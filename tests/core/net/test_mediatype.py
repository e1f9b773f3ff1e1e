"""The one reader of media types (net/mediatype.py), by example.

Its callers: the fetch pipeline and the DuckDuckGo driver (a page's type and charset),
the SearXNG driver (is the answer JSON) and the listener's gate (Content-Type, Accept).
"""

from __future__ import annotations

import pytest

from rypsok.core.net import mediatype
from rypsok.core.net.mediatype import MediaType, Parameter


@pytest.mark.parametrize(
    ("value", "charset"),
    [
        ("text/html; charset=utf-8", "utf-8"),
        ("TEXT/HTML;CHARSET=UTF-8", "UTF-8"),
        ('text/html; charset="utf-8"', "utf-8"),
        ("text/html; charset = utf-8 ", "utf-8"),  # space around "=": servers send it
        ("text/html; charset='utf-8'", "'utf-8'"),  # single quotes quote nothing
        ("text/html; charset=utf-8; charset=koi8-r", "utf-8"),  # the first counts
        ("text/html; charset=; charset=koi8-r", None),  # the first is empty: nothing
        ("text/html; charset", None),
        ('text/html; charset=""', None),
        ("text/html", None),
        (None, None),
        # a quoted-string: ";" inside separates nothing, "\" escapes, an unclosed one runs on
        ('text/html; foo="a;charset=koi8-r"; charset=utf-8', "utf-8"),
        ('text/html; charset="utf\\-8"', "utf-8"),
        ('text/html; charset="utf-8"junk; x=1', "utf-8"),
        ('text/html; charset="utf-8; x=1', "utf-8; x=1"),
        ('text/html; charset="utf-8\\', "utf-8\\"),
    ],
)
def test_the_charset_of_a_content_type(value: str | None, charset: str | None) -> None:
    assert mediatype.charset(value) == charset


@pytest.mark.parametrize(
    ("value", "essence"),
    [
        ("text/html", "text/html"),
        (" Text/HTML ; charset=utf-8", "text/html"),
        ("text/html garbage", "text/html garbage"),  # named as written in a refusal
        ("; charset=utf-8", None),
        ("", None),
        (None, None),
    ],
)
def test_the_essence_of_a_content_type(value: str | None, essence: str | None) -> None:
    assert mediatype.essence(value) == essence
    if value:
        assert mediatype.parse(value).essence == (essence or "")


def test_parameters_keep_their_order_and_whether_they_were_quoted() -> None:
    assert mediatype.parse('a/b; Q="1"; x=2 ;;y') == MediaType(
        "a/b", (Parameter("q", "1", True), Parameter("x", "2", False), Parameter("y", "", False))
    )


def test_a_list_splits_on_commas_outside_quoted_strings() -> None:
    ranges = mediatype.parse_list('application/json;x="a, b", , text/event-stream;q=0.5,')
    assert [m.essence for m in ranges] == ["application/json", "text/event-stream"]
    assert ranges[0].parameters == (Parameter("x", "a, b", True),)
    assert mediatype.parse_list("") == []


def test_a_head_of_many_parameters_is_read_whole() -> None:
    assert mediatype.charset("text/html" + ";" * 60_000 + "charset=utf-8") == "utf-8"
    assert mediatype.charset("text/html" + "; a=b" * 10_000 + "; charset=x") == "x"
    assert len(mediatype.parse_list("a/b;" * 10_000 + "," * 10_000)) == 1
