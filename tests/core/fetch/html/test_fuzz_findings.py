"""Regression tests for what fuzzing the parsers found (REQ-SEC-023).

One test per finding of docs/security/findings.md, named after the requirement
and the parser. Each fails on the code as it was before its fix.
"""

from __future__ import annotations

from rypsok.core.fetch import errors
from rypsok.core.fetch.extraction.extract import extract
from rypsok.core.html.tree import parse_html
from rypsok.core.model import ToolError

PROSE = "<p>A paragraph long enough to be the main content of this small test page.</p>"


def _markdown(page: str) -> str:
    return extract(parse_html(page), "https://example.org/").markdown


def test_req_sec_023_html_extraction_reads_image_sizes_in_ascii_digits_only() -> None:
    # "²" and "¹9" pass str.isdigit() but not int(); 5000 digits pass isdigit() and
    # exceed int()'s 4300-digit bound. Each ended the whole extraction with ValueError,
    # so a page with one such <img> was answered extraction_failed.
    for width in ("²", "¹9", "٣", "9" * 5000, "1" + "0" * 9):
        page = f'<body>{PROSE}<img width="{width}" height="1" alt="a harbour at dusk"></body>'
        markdown = _markdown(page)
        assert "A paragraph long enough" in markdown
        assert "a harbour at dusk" in markdown  # not a number we can read: not an icon


def test_fuzz_finding_fix_keeps_dropping_tiny_images() -> None:
    # The fix keeps the rule it guards: an image of at most 32 px both ways is an icon.
    page = f'<body>{PROSE}<img width="16px" height=" 16 " alt="share this"></body>'
    assert "share this" not in _markdown(page)
    page = f'<body>{PROSE}<img width="640" height="16" alt="a wide banner"></body>'
    assert "a wide banner" in _markdown(page)


def test_req_sec_023_site_retry_after_reads_ascii_seconds_only() -> None:
    # A site's Retry-After went through str.isdigit() then int(): "¹9" (found by the
    # retry_after target) and a 5000-digit value raised ValueError out of web_fetch
    # instead of the unavailable answer.
    for value in ("¹9", "²", "9" * 5000, "٣٠"):
        answer = errors.http_status(429, value)
        assert isinstance(answer, ToolError) and answer.kind == "unavailable"
        assert "retry_after_ms" not in answer.detail
    assert errors.http_status(429, " 30 ").detail["retry_after_ms"] == 30_000
    assert errors.http_status(503, "3600").detail["retry_after_ms"] == 3_600_000
    assert "retry_after_ms" not in errors.http_status(503, "3601").detail
