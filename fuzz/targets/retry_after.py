"""Fuzz target: a Retry-After value, as the engines and web_fetch each read it.

One reader, rypsok.core.net.retryafter: delay_seconds reads an engine's answer
(delta-seconds or an HTTP-date); rypsok.core.fetch.errors.http_status takes a
fetched site's (whole seconds up to an hour) into the detail of its
``unavailable`` answer.

Input: one byte choosing the status of the site's answer, then the header
value's bytes, read as Latin-1 the way the HTTP client decodes header values.
Documented failures: none; each answer is seconds or nothing "when the value
says nothing usable". Checked besides: seconds are finite and never negative,
and the site's delay stays within the hour.
"""

from __future__ import annotations

import math

from fuzz.harness import Input, instrumented, main

with instrumented(__name__, ("email.utils", "email._parseaddr")):
    from rypsok.core.fetch import errors
    from rypsok.core.net.retryafter import delay_seconds

_NOW = 1_700_000_000.0  # a fixed clock, so a crash replays
_STATUSES = (429, 503, 500, 404, 408)


def TestOneInput(data: bytes) -> None:
    source = Input(data)
    status = source.pick(_STATUSES)
    value = source.rest().decode("latin-1")

    delay = delay_seconds(value, now=_NOW)
    if delay is not None:
        assert math.isfinite(delay) and delay >= 0
    delay_seconds(value)  # the real clock

    answer = errors.http_status(status, value)
    delay_ms = answer.detail.get("retry_after_ms")
    if delay_ms is not None:
        assert 0 <= delay_ms <= errors.RETRY_AFTER_MAX_S * 1000


if __name__ == "__main__":
    main(TestOneInput)
