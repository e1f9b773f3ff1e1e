"""The one reader of Retry-After (net/retryafter.py), by example, and what each caller keeps.

The engines take either form and the first number of a list; web_fetch takes
delay-seconds of at most an hour and ignores a date (the book, REQ-FETCH-011).
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from rypsok.core.fetch import errors
from rypsok.core.net import retryafter
from rypsok.core.net.retryafter import RetryAfter

NOW = 1767225600.0  # 2026-01-01T00:00:00Z
NEW_YEAR = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "parsed"),
    [
        ("120", RetryAfter(120, None)),
        (" 0120 ", RetryAfter(120, None)),
        ("9999999999", RetryAfter(9999999999, None)),
        ("Thu, 01 Jan 2026 00:00:00 GMT", RetryAfter(None, NEW_YEAR)),
        ("Thursday, 01-Jan-26 00:00:00 GMT", RetryAfter(None, NEW_YEAR)),  # RFC 850
        ("Thu Jan  1 00:00:00 2026", RetryAfter(None, NEW_YEAR)),  # asctime: GMT
        ("12345678901", None),  # more than ten digits
        ("1, 2", None),  # a list only where the caller asks
        ("-5", None),
        ("1.5", None),
        ("\u0661\u0662", None),  # Arabic-Indic digits
        ("\u00b99", None),
        ("", None),
        (None, None),
        ("0 JAN 0:0 2200000000", None),  # a year datetime cannot hold
    ],
)
def test_retry_after_is_delay_seconds_or_an_http_date(
    value: str | None, parsed: RetryAfter | None
) -> None:
    assert retryafter.parse(value) == parsed


def test_a_list_gives_its_first_number_when_asked() -> None:
    assert retryafter.parse("1, 1419704", first_of_list=True) == RetryAfter(1, None)
    assert retryafter.delay_seconds("1, 1419704", NOW) == 1.0
    # a date has commas of its own: read whole when its first piece is no number
    assert retryafter.delay_seconds("Thu, 01 Jan 2026 00:02:00 GMT", NOW) == 120.0


def test_a_date_in_the_past_is_no_wait() -> None:
    assert retryafter.delay_seconds("Wed, 31 Dec 2025 23:00:00 GMT", NOW) == 0.0


@pytest.mark.parametrize(
    ("value", "detail_ms"),
    [
        ("30", 30_000),
        (" 3600 ", 3_600_000),
        ("3601", None),  # over an hour: not passed on
        ("Thu, 01 Jan 2026 00:02:00 GMT", None),  # a date is ignored (the book)
        ("1, 2", None),
        ("\u0661", None),
        (None, None),
    ],
)
def test_web_fetch_passes_on_seconds_up_to_an_hour(
    value: str | None, detail_ms: int | None
) -> None:
    answer = errors.http_status(503, value)
    assert answer.detail.get("retry_after_ms") == detail_ms
