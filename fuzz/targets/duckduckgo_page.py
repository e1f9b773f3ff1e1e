"""Fuzz target: the scraping reader, DuckDuckGoDriver.parse (rypsok.core.engines.duckduckgo).

Input: one byte choosing the status, one choosing the Content-Type and
Retry-After headers, then the page. Documented failures: EngineFailure with one
of the six error classes (REQ-ENG-006). Checked besides: every result links to
an absolute http(s) URL and has a title.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from fuzz.harness import Input, instrumented, main

with instrumented(__name__, ("html5lib",)):
    from rypsok.core.config.settings import EngineSettings
    from rypsok.core.engines import duckduckgo
    from rypsok.core.engines.base import ERROR_CLASSES, EngineFailure, header_lookup

_STATUSES = (200, 200, 200, 202, 403, 429, 503, 301, 302, 404, 500, 418, 199, 600)
_CONTENT_TYPES = (
    None,
    "text/html",
    "text/html; charset=utf-8",
    "text/html; charset=windows-1252",
    'text/html;charset="shift_jis"',
    "text/html; charset=",
    "application/json",
    "text/html; charset=utf-16",
)
_RETRY_AFTER = (None, "30", "Wed, 21 Oct 2015 07:28:00 GMT", "soon", "-1")

_DRIVER = duckduckgo.DuckDuckGoDriver(
    EngineSettings(
        id="duckduckgo",
        admission=duckduckgo.ADMISSION,
        enabled=True,
        categories=("general",),
        preference=0,
        api_key_env=None,
        api_key_file_set=False,
        endpoint=None,
        base_url=None,
        credential=None,
        credential_problem=None,
    )
)


def TestOneInput(data: bytes) -> None:
    source = Input(data)
    status = source.pick(_STATUSES)
    knob = source.byte()
    fields: list[tuple[str, str]] = []
    content_type = _CONTENT_TYPES[knob % len(_CONTENT_TYPES)]
    if content_type is not None:
        fields.append(("Content-Type", content_type))
    retry_after = _RETRY_AFTER[(knob >> 3) % len(_RETRY_AFTER)]
    if retry_after is not None:
        fields.append(("Retry-After", retry_after))
    body = source.rest()
    try:
        results = _DRIVER.parse(status, header_lookup(fields), body)
    except EngineFailure as failure:
        assert failure.error_class in ERROR_CLASSES
        return
    for result in results:
        assert result.title
        assert urlsplit(result.url).scheme.lower() in ("http", "https")


if __name__ == "__main__":
    main(TestOneInput)
