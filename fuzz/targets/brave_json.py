"""Fuzz target: a Brave Search API JSON answer, BraveDriver.parse (web and news).

Input: one byte choosing the status, one choosing the endpoint and the
Retry-After / X-RateLimit-Reset values, then the body. Documented failures:
EngineFailure with one of the six error classes (REQ-ENG-006). Checked besides:
every result has a URL, and its date (when any) is YYYY-MM-DD.
"""

from __future__ import annotations

import re

from fuzz.harness import Input, instrumented, main

with instrumented(__name__):
    from rypsok.core.config.admission import Endpoint
    from rypsok.core.config.secrets import Secret
    from rypsok.core.config.settings import EngineSettings
    from rypsok.core.engines import brave
    from rypsok.core.engines.base import ERROR_CLASSES, EngineFailure, header_lookup

_STATUSES = (200, 200, 200, 401, 403, 422, 422, 429, 500, 503, 301)
_DELAYS = (None, "1", "1, 3600", "Sun, 06 Nov 1994 08:49:37 GMT", "x", "0")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")  # ASCII, as the response promises


def _driver(endpoint: Endpoint) -> brave.BraveDriver:
    return brave.BraveDriver(
        EngineSettings(
            id="brave",
            admission=brave.ADMISSION,
            enabled=True,
            categories=("general",),
            preference=0,
            api_key_env="BRAVE_API_KEY",
            api_key_file_set=False,
            endpoint=endpoint,
            base_url=None,
            credential=Secret("fuzz-token"),
            credential_problem=None,
        )
    )


_DRIVERS = (_driver("web"), _driver("news"))


def TestOneInput(data: bytes) -> None:
    source = Input(data)
    status = source.pick(_STATUSES)
    knob = source.byte()
    driver = _DRIVERS[knob & 1]
    fields: list[tuple[str, str]] = []
    retry_after = _DELAYS[(knob >> 1) % len(_DELAYS)]
    reset = _DELAYS[(knob >> 4) % len(_DELAYS)]
    if retry_after is not None:
        fields.append(("Retry-After", retry_after))
    if reset is not None:
        fields.append(("X-RateLimit-Reset", reset))
    body = source.rest()
    try:
        results = driver.parse(status, header_lookup(fields), body)
    except EngineFailure as failure:
        assert failure.error_class in ERROR_CLASSES
        if failure.retry_after_s is not None:
            assert failure.retry_after_s >= 0
        return
    for result in results:
        assert result.url
        assert result.date is None or _DATE.fullmatch(result.date)
        result.url.encode("utf-8")
        result.title.encode("utf-8")
        result.snippet.encode("utf-8")


if __name__ == "__main__":
    main(TestOneInput)
