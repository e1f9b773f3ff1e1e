"""Properties of the one Retry-After reader (net/retryafter.py) against the readers it replaced.

Before issue 32 the engines read delay-seconds or an HTTP-date (engines/base.py) and
web_fetch read whole seconds only (fetch/errors.py). A frozen copy of each is kept below
as the oracle. The engines' answer is the old one but for delay-seconds written in
another script's digits, which ``\\d`` took and which are no delay-seconds; web_fetch's is
the old one for every value. A date is the moment email.utils reads in it.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import re
import time

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from rypsok.core.fetch import errors
from rypsok.core.net import retryafter

PROPERTY = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])

PIECES = st.sampled_from(
    [
        "1",
        "0",
        "120",
        "9999999999",
        "12345678901",
        ",",
        ", ",
        " ",
        "\t",
        "\u0661",
        "\u00b9",
        "-1",
        "1.5",
        "Thu, ",
        "01 Jan 2026 ",
        "00:00:00 ",
        "GMT",
        "+0200",
        "EST",
        "Jan",
        "2026",
    ]
)
VALUES = st.one_of(st.none(), st.lists(PIECES, max_size=8).map("".join), st.text(max_size=30))
NOW = st.floats(0, 2**34)


# -- the oracles: the old readers, frozen ------------------------------------------------------


def old_engine_delay(value: str | None, now: float) -> float | None:
    if value is None:
        return None
    first = value.split(",", 1)[0].strip()
    if re.fullmatch(r"\d{1,10}", first):
        return float(first)
    try:
        when = email.utils.parsedate_to_datetime(value.strip())
        if when.tzinfo is None:
            when = when.replace(tzinfo=dt.UTC)
        return max(0.0, when.timestamp() - now)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def old_fetch_seconds(value: str | None) -> int | None:
    text = (value or "").strip()
    if not (text.isascii() and text.isdigit()) or len(text) > 10:
        return None
    seconds = int(text)
    return seconds if seconds <= 3600 else None


# -- the properties ------------------------------------------------------------------------------


@PROPERTY
@given(VALUES, NOW)
@example("\u0661\u0662", 0.0)
@example("0 JAN 0:0 2200000000", 0.0)
def test_the_engines_read_as_before_but_for_other_scripts_digits(
    value: str | None, now: float
) -> None:
    new, old = retryafter.delay_seconds(value, now), old_engine_delay(value, now)
    if new != old:
        first = (value or "").split(",", 1)[0].strip()
        assert new is None and not first.isascii() and re.fullmatch(r"\d{1,10}", first)


@PROPERTY
@given(VALUES, st.sampled_from([408, 429, 503, 500]))
@example("\u00b99", 503)
@example("Thu, 01 Jan 2026 00:00:00 GMT", 503)
def test_web_fetch_reads_as_before(value: str | None, status: int) -> None:
    seconds = old_fetch_seconds(value)
    detail = errors.http_status(status, value).detail
    assert detail.get("retry_after_ms") == (None if seconds is None else seconds * 1000)


@PROPERTY
@given(st.datetimes(min_value=dt.datetime(1970, 1, 2), max_value=dt.datetime(9999, 12, 30)))
def test_an_http_date_is_the_moment_the_standard_library_reads(when: dt.datetime) -> None:
    moment = when.replace(tzinfo=dt.UTC, microsecond=0)
    for written in (
        email.utils.format_datetime(moment, usegmt=True),  # IMF-fixdate
        time.strftime("%a %b %e %H:%M:%S %Y", moment.timetuple()),  # asctime
    ):
        parsed = retryafter.parse(written)
        assert parsed is not None and parsed.seconds is None
        assert parsed.date == email.utils.parsedate_to_datetime(written).replace(tzinfo=dt.UTC)
        assert parsed.date == moment
