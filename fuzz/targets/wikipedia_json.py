"""Fuzz target: a Wikipedia (MediaWiki Action API) JSON answer, WikipediaDriver.parse.

Input: one byte choosing the status, one choosing the driver (an edition, or a
private wiki's base_url) and the Retry-After value, then the body. Documented
failures: EngineFailure with one of the six error classes (REQ-ENG-006).
Checked besides: every result URL is under the article root, has a title, and
its date (when any) is YYYY-MM-DD.
"""

from __future__ import annotations

import re

from fuzz.harness import Input, instrumented, main

with instrumented(__name__):
    from rypsok.core.config.settings import EngineSettings
    from rypsok.core.engines import wikipedia
    from rypsok.core.engines.base import ERROR_CLASSES, EngineFailure, header_lookup

_STATUSES = (200, 200, 200, 204, 403, 429, 500, 503, 301, 404)
_RETRY_AFTER = (None, "120", "Fri, 31 Dec 1999 23:59:59 GMT", "1, 60", "later", "99999999999")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")  # ASCII, as the response promises


def _driver(base_url: str | None) -> wikipedia.WikipediaDriver:
    return wikipedia.WikipediaDriver(
        EngineSettings(
            id="wikipedia",
            admission=wikipedia.ADMISSION,
            enabled=True,
            categories=("general",),
            preference=0,
            api_key_env=None,
            api_key_file_set=False,
            endpoint=None,
            base_url=base_url,
            credential=None,
            credential_problem=None,
        )
    )


_DRIVERS = (
    (_driver(None), "https://"),
    (_driver("https://wiki.example/w"), "https://wiki.example/wiki/"),
)


def TestOneInput(data: bytes) -> None:
    source = Input(data)
    status = source.pick(_STATUSES)
    knob = source.byte()
    driver, root = _DRIVERS[knob & 1]
    retry_after = _RETRY_AFTER[(knob >> 1) % len(_RETRY_AFTER)]
    fields = [] if retry_after is None else [("Retry-After", retry_after)]
    body = source.rest()
    try:
        results = driver.parse(status, header_lookup(fields), body)
    except EngineFailure as failure:
        assert failure.error_class in ERROR_CLASSES
        if failure.retry_after_s is not None:
            assert failure.retry_after_s >= 0
        return
    for result in results:
        assert result.title and result.url.startswith(root)
        assert result.date is None or _DATE.fullmatch(result.date)
        result.url.encode("utf-8")
        result.snippet.encode("utf-8")


if __name__ == "__main__":
    main(TestOneInput)
