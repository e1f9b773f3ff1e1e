"""Properties of the one media type reader (net/mediatype.py) against the readers it replaced.

Before issue 32 the charset of a Content-Type was read twice (the fetch pipeline and the
DuckDuckGo driver, which stripped quotes differently and split on every ";"), the essence
three times (the pipeline, the SearXNG driver, the gate) and Accept once (the gate). A
frozen copy of each is kept below as the oracle. Where no quoted-string or backslash is
involved the new reader gives the same answers; with them it reads RFC 9110's
quoted-string, and the label still resolves to the codec the old readers gave whenever
the quotes only wrap the value. A well-formed Content-Type gives the charset
email.message.Message gives.
"""

from __future__ import annotations

import email.message

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from rypsok.core.html import charset as charsets
from rypsok.core.net import mediatype
from rypsok.protocol.http.gate import _media_ranges, is_json_media_type

PROPERTY = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])

PIECES = st.sampled_from(
    [
        "text/html",
        "application/json",
        "text/event-stream",
        "*/*",
        "application/ld+json",
        ";",
        "; ",
        ",",
        "=",
        "charset",
        "CharSet",
        "q",
        "0.5",
        "1",
        "0",
        "utf-8",
        "koi8-r",
        "'",
        '"',
        "\\",
        " ",
        "\t",
        "\xa0",
        "\x85",
        "x-garbage",
        "\u00e9",
        "boundary",
    ]
)
VALUES = st.one_of(st.lists(PIECES, max_size=12).map("".join), st.text(max_size=30))
UNQUOTED = VALUES.filter(lambda v: '"' not in v and "\\" not in v)


# -- the oracles: the old readers, frozen ------------------------------------------------------


def old_pipeline_charset(value: str | None) -> str | None:
    for part in (value or "").split(";")[1:]:
        name, _, raw = part.strip().partition("=")
        if name.strip().lower() == "charset":
            return raw.strip().strip('"').strip("'") or None
    return None


def old_duckduckgo_charset(value: str | None) -> str | None:
    for part in (value or "").split(";")[1:]:
        name, _, raw = part.strip().partition("=")
        if name.strip().lower() == "charset":
            return raw.strip().strip("\"'") or None
    return None


def old_essence(value: str | None) -> str | None:
    if value is None:
        return None
    return value.split(";", 1)[0].strip().lower() or None


def old_searxng_is_json(value: str | None) -> bool:
    if value is None:
        return True
    media = value.split(";", 1)[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


def old_media_ranges(value: str) -> dict[str, float]:
    ranges: dict[str, float] = {}
    for item in value.split(","):
        kind, *params = item.split(";")
        kind = kind.strip().lower()
        if not kind:
            continue
        q = 1.0
        for param in params:
            key, _, raw = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(raw.strip())
                except ValueError:
                    q = 0.0
                if not 0.0 <= q <= 1.0:
                    q = 0.0
        ranges[kind] = max(q, ranges.get(kind, 0.0))
    return ranges


def _codec(label: str | None) -> tuple[str, int]:
    return charsets.resolve(b"<p>x", label)


# -- the properties ------------------------------------------------------------------------------


@PROPERTY
@given(VALUES)
def test_the_essence_is_read_as_every_old_reader_read_it(value: str) -> None:
    assert mediatype.essence(value) == old_essence(value)
    assert mediatype.parse(value).essence == (old_essence(value) or "")
    json = mediatype.essence(value) or ""
    assert (json == "application/json" or json.endswith("+json")) == old_searxng_is_json(value)
    assert is_json_media_type([value.encode("latin-1", "replace")]) == (
        old_essence(value.encode("latin-1", "replace").decode("latin-1")) == "application/json"
    )


@PROPERTY
@given(UNQUOTED)
@example("text/html; charset='utf-8'")
@example("text/html; charset=''")
def test_without_quoted_strings_the_charset_is_the_old_one(value: str) -> None:
    new = mediatype.charset(value)
    old = old_pipeline_charset(value)
    assert old == old_duckduckgo_charset(value)  # without '"' the two old readers agreed
    # Single quotes quote nothing now; the label reader strips them as before.
    assert (None if new is None else new.strip("'") or None) == old
    assert _codec(new) == _codec(old)


TOKEN = st.from_regex(r"[A-Za-z0-9!#$%&'*+.^_`|~-]{1,12}", fullmatch=True)
NAME = TOKEN.filter(lambda t: "*" not in t)  # "name*" is RFC 2231's, which HTTP does not use
QDTEXT = st.text(
    alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E, exclude_characters='";'),
    max_size=12,
)


@PROPERTY
@given(
    st.lists(
        st.tuples(st.sampled_from(["charset", "CHARSET", "q", "x"]), QDTEXT, st.booleans()),
        max_size=4,
    )
)
def test_quotes_around_the_whole_value_give_the_old_codec(
    params: list[tuple[str, str, bool]],
) -> None:
    value = "text/html" + "".join(
        f'; {name}="{text}"' if quoted else f"; {name}={text}"
        for name, text, quoted in params
        if not (quoted and "\\" in text)
    )
    new = mediatype.charset(value)
    assert _codec(new) == _codec(old_pipeline_charset(value))
    assert _codec(new) == _codec(old_duckduckgo_charset(value))


QUOTED = st.lists(
    st.one_of(
        st.characters(min_codepoint=0x20, max_codepoint=0x7E, exclude_characters='"\\'),
        # The one quoted-pair email reads right: it undoes no other, and it takes the
        # quote after an escaped backslash for an escaped one; mediatype undoes every one.
        st.just('\\"'),
    ),
    max_size=10,
).map(lambda chars: '"' + "".join(chars) + '"')


@PROPERTY
@given(
    TOKEN,
    TOKEN,
    st.lists(st.tuples(st.one_of(NAME, st.just("charset")), st.one_of(TOKEN, QUOTED)), max_size=4),
)
def test_a_well_formed_content_type_gives_the_charset_email_gives(
    kind: str, subtype: str, params: list[tuple[str, str]]
) -> None:
    value = f"{kind}/{subtype}" + "".join(f"; {name}={text}" for name, text in params)
    message = email.message.Message()
    message["content-type"] = value
    expected = message.get_content_charset()
    new = mediatype.charset(value)
    assert (new or "").lower() == (expected or "")


@PROPERTY
@given(UNQUOTED)
@example("application/json;q, text/event-stream;q=0;q=1")
def test_without_quoted_strings_accept_is_read_as_before(value: str) -> None:
    encoded = value.encode("latin-1", "replace")
    assert _media_ranges([encoded]) == old_media_ranges(encoded.decode("latin-1"))
