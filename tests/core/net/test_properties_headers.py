"""Properties of the header values rypsok reads from strangers (REQ-RES-002, REQ-PAGE-007,
REQ-SEC-023): Retry-After as the engines read it (net.retryafter.delay_seconds) and the
charset parameter of a Content-Type (net.mediatype.charset), which web_fetch and the
DuckDuckGo driver both read.

Header values arrive as latin-1 text of any bytes. Whatever they hold, reading them never
raises; a delay is None or a finite number of seconds, never negative; a charset is None
or a non-empty label (a piece of the header unless a quoted-string escaped a character),
and decoding a page with it never raises.
"""

from __future__ import annotations

import email.utils
import math
from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from rypsok.core.html import charset
from rypsok.core.net import mediatype
from rypsok.core.net.retryafter import delay_seconds

LATIN1 = st.binary(max_size=60).map(lambda b: b.decode("latin-1"))  # as the client decodes
DATE_PIECES = st.sampled_from(
    [
        "Mon, ",
        "Sun,",
        "01 ",
        "31 ",
        "Jan ",
        "FEB ",
        "9999 ",
        "0000 ",
        "2200000000 ",
        "1 ",
        "23:59:60 ",
        "0:0 ",
        "99:99:99 ",
        "GMT",
        "UTC",
        "+2359",
        "-9999",
        "EST",
        ", ",
        " ",
        "\t",
        "1",
        "-1",
        "²",
        "1e9",
        "inf",
        "nan",
        "0x10",
        "1.5",
    ]
)
RETRY_VALUES = st.one_of(
    LATIN1,
    st.text(max_size=30),
    st.lists(DATE_PIECES, max_size=9).map("".join),
    st.integers(-(10**15), 10**15).map(str),
    st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)).map(
        lambda d: email.utils.format_datetime(d.replace(tzinfo=UTC), usegmt=True)
    ),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(RETRY_VALUES, st.floats(0, 2**34))
@example("0 JAN 0:0 2200000000", 0.0)  # a ten-digit year overflowed datetime
@example("Fri, 31 Dec 9999 23:59:59 -2359", 0.0)
def test_req_res_002_retry_after_is_read_without_raising_into_a_bounded_delay(
    value: str, now: float
) -> None:
    delay = delay_seconds(value, now)
    assert delay is None or (math.isfinite(delay) and delay >= 0)
    # Delta-seconds have at most ten digits; the latest date is 9999-12-31 23:59:59 -2359.
    assert delay is None or delay <= max(10**10, 253402387139 - now)


@settings(max_examples=100, deadline=None)
@given(
    st.integers(0, 10**10 - 1),
    st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(9000, 1, 1)),
)
def test_req_res_002_retry_after_reads_both_forms_exactly(seconds: int, when: datetime) -> None:
    assert delay_seconds(str(seconds)) == seconds
    assert delay_seconds(f" {seconds}, 99") == seconds
    moment = when.replace(tzinfo=UTC, microsecond=0)
    now = (moment - timedelta(seconds=seconds % 86400)).timestamp()
    written = email.utils.format_datetime(moment, usegmt=True)
    assert delay_seconds(written, now) == seconds % 86400


CONTENT_TYPES = st.one_of(
    LATIN1,
    st.lists(
        st.sampled_from(
            [
                "text/html",
                "; ",
                ";",
                "charset",
                "CharSet",
                "=",
                '"',
                "'",
                "utf-8",
                "shift_jis",
                "x-garbage",
                " ",
                "\x00",
                "é",
                "==",
                "boundary=x",
            ]
        ),
        max_size=10,
    ).map("".join),
)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(CONTENT_TYPES, st.binary(max_size=80))
@example('text/html; charset="', b"\xff")
@example("text/html; charset=\x00", b"abc")
def test_req_page_007_any_content_type_gives_a_charset_that_decodes(
    content_type: str, body: bytes
) -> None:
    found = mediatype.charset(content_type)
    assert found is None or found
    if found is not None and "\\" not in content_type:
        assert found in content_type
    text = charset.decode(body, found)
    text.encode("utf-8")
