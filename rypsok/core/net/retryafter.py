"""Retry-After (RFC 9110 10.2.3): delay-seconds or an HTTP-date, one reader.

    Retry-After = HTTP-date / delay-seconds

Its callers apply their own bounds: the engines honour both forms, up to the
circuit's longest cooldown (LIM-B4); web_fetch passes on delay-seconds of at
most an hour and ignores a date (the book, REQ-FETCH-011). This module reads
and never bounds.

* delay-seconds are ASCII digits only (``str.isdigit`` and ``\\d`` take other
  scripts' digits), at most ten of them: more than three centuries, and a
  bound on what ``int()`` is handed.
* An HTTP-date is read by the standard library (`email.utils`), which takes
  the three forms RFC 9110 names and RFC 5322's zones; a date without a zone
  is GMT, as every HTTP-date is.
* Surrounding space is dropped. A comma list ("1, 1419704"), which no RFC
  allows here but rate-limit headers send one number per window in, gives
  its first number only when the caller asks (`first_of_list`).
"""

from __future__ import annotations

import datetime as _dt
import email.utils
import re
import time
from typing import Final, NamedTuple

_SECONDS: Final = re.compile(r"[0-9]{1,10}")


class RetryAfter(NamedTuple):
    """One of the two forms: delay-seconds as sent, or the moment an HTTP-date names."""

    seconds: int | None
    date: _dt.datetime | None  # aware

    def delay(self, now: float) -> float:
        """Seconds to wait from *now* (a POSIX time); a date in the past is 0."""
        if self.seconds is not None:
            return float(self.seconds)
        assert self.date is not None
        return max(0.0, self.date.timestamp() - now)


def parse(value: str | None, *, first_of_list: bool = False) -> RetryAfter | None:
    """The value's form, or None when it says nothing usable."""
    if value is None:
        return None
    text = value.strip()
    number = text.split(",", 1)[0].strip() if first_of_list else text
    if _SECONDS.fullmatch(number):
        return RetryAfter(int(number), None)
    when = _http_date(text)
    return None if when is None else RetryAfter(None, when)


def delay_seconds(value: str | None, now: float | None = None) -> float | None:
    """Seconds an engine's answer asks to wait: either form, the first number of a list;
    None when the value says nothing usable. *now* defaults to the clock."""
    found = parse(value, first_of_list=True)
    if found is None:
        return None
    try:
        return found.delay(time.time() if now is None else now)
    except (OverflowError, ValueError):  # a date at the edge of what datetime holds
        return None


def _http_date(text: str) -> _dt.datetime | None:
    try:
        when = email.utils.parsedate_to_datetime(text)
        if when.tzinfo is None:  # an HTTP-date is always GMT
            when = when.replace(tzinfo=_dt.UTC)
        when.timestamp()  # a date datetime holds but cannot place on the clock fails here
    # OverflowError: a year of ten digits passes the date parser and overflows datetime;
    # uncaught, it turned a 429 into a driver defect (parse_failure) instead of rate_limited.
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return when
