"""Pages built to defeat the scoring (issue 16, "Bad input"): parse plus extraction stays
linear in the page, and web_fetch ends each with one outcome inside its bound
(REQ-PAGE-006, REQ-PAGE-008, REQ-SEC-014; LIM-F3, LIM-F5, LIM-F10, LIM-F11).

Linearity is judged by ratio, not by wall-clock figures: the same page at n and 4n
units may take at most SLOPE times as long, plus a constant for timer and scheduler
noise on a loaded machine. Quadratic work would take about 16 times as long.
tests/core/fetch/test_fetch_hostile.py has the wide, deep and broken pages; these
are the ones aimed at the extractor."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from rypsok.core import limits
from rypsok.core.fetch.extraction.extract import extract
from rypsok.core.html.tree import parse_html
from rypsok.core.model import ToolError
from tests.support.fetching import ALLOW_LOCAL, fetch, make
from tests.support.site import Page, site

BASE = "https://example.org/page"
SLOPE = 6.5
NOISE_S = 0.05
WORDS = "Words of a sentence that reads like content, "
FIVE_MIB = 5 * 1024 * 1024


def tiny_paragraphs(n: int) -> str:
    return "<html><body>" + "<p>abc</p>" * n + "</body></html>"


def nested_div_span(n: int) -> str:
    # Nested twenty deep, then closed, over and over: many blocks, bounded depth.
    unit = "<div><span>ab " * 20 + "</span></div>" * 20
    return "<html><body>" + unit * (n // 20) + "</body></html>"


def all_sidebar(n: int) -> str:
    block = f"<div class='sidebar widget'><p>{WORDS * 3}</p><a href='/x'>more</a></div>"
    return "<html><body>" + block * n + "</body></html>"


def all_aside(n: int) -> str:
    return "<html><body><aside>" + f"<p>{WORDS * 3}</p>" * n + "</aside></body></html>"


def one_text_node(n: int) -> str:
    return "<html><body><p>" + "a" * n + "</p></body></html>"


def one_attribute(n: int) -> str:
    value = "v" * n
    return f"<html><body><p title='{value}'>Text after one long attribute.</p></body></html>"


def links_in_one_paragraph(n: int) -> str:
    return "<html><body><p>" + "".join(f"<a href='/l{i}'>w{i}</a> " for i in range(n)) + "</p>"


CASES: dict[str, tuple[Callable[[int], str], int]] = {
    # name: (page of n units, n); 4n stays under the node bound, so both are read whole
    "tiny_paragraphs": (tiny_paragraphs, 2_000),
    "nested_div_span": (nested_div_span, 1_500),
    "all_sidebar": (all_sidebar, 1_000),
    "all_aside": (all_aside, 2_000),
    "one_text_node": (one_text_node, FIVE_MIB // 4),
    "one_attribute": (one_attribute, FIVE_MIB // 4),
    "links_in_one_paragraph": (links_in_one_paragraph, 1_500),
}


def timed(page: str) -> float:
    # The best of three runs: a pause of the machine in one of them is not the
    # page's. The cyclic collector is off while timing: its full passes walk
    # every live object, so they grow with the tree the test builds; what is
    # measured here is the parser's and extractor's own work.
    best = float("inf")
    for _ in range(3):
        gc.collect()
        gc.disable()
        try:
            start = time.perf_counter()
            doc = parse_html(page)
            extract(doc, BASE)
            best = min(best, time.perf_counter() - start)
        finally:
            gc.enable()
        assert not doc.partial  # the bound did not make the larger page cheaper
    return best


@pytest.mark.parametrize("name", sorted(CASES))
def test_req_page_006_req_sec_014_a_page_against_the_scoring_is_read_in_linear_time(
    name: str,
) -> None:
    build, n = CASES[name]
    small, large = build(n), build(4 * n)
    timed(small)  # warm: first-call costs are not the page's
    t_small, t_large = timed(small), timed(large)
    assert t_large <= SLOPE * t_small + NOISE_S, f"{name}: {t_small:.3f} s, then {t_large:.3f} s"


# -- through web_fetch, at the sizes of the issue --------------------------------------------
# (the two variants of (a) and (b) that the issue does not size are kept under the node
# bound: cut at it, they cost what /tiny costs, some 3 s each on a loaded machine)

FULL: dict[str, bytes] = {
    "/tiny": tiny_paragraphs(50_000).encode(),
    "/nested": nested_div_span(15_000).encode(),
    "/sidebar": all_sidebar(8_000).encode(),
    "/aside": all_aside(30_000).encode(),
    "/text": one_text_node(FIVE_MIB - 64).encode(),
    "/attribute": one_attribute(FIVE_MIB - 128).encode(),
    "/links": links_in_one_paragraph(100_000).encode(),
}
# Pages of more than LIM-F10 nodes (elements and text runs): read in part, and said so.
OVER_THE_NODE_BOUND = {"/tiny", "/links"}
# What each may answer: content, or the one error for a page with nothing readable. A
# page whose blocks are all chrome may be read either way; the scoring decides.
EMPTY_ALLOWED = {"/sidebar", "/aside"}


def test_req_page_008_req_page_006_each_hostile_page_ends_once_within_lim_f5(
    tmp_path: Path,
) -> None:
    assert all(len(body) <= FIVE_MIB for body in FULL.values())  # read whole, never too_large
    deadline_ms = 10_000
    bound_s = (deadline_ms + limits.default("LIM-F5")) / 1000
    pages = {path: Page(body=body) for path, body in FULL.items()}
    outcomes = []
    with site(pages) as s:
        core = make(tmp_path, ALLOW_LOCAL + f"[fetch]\ndeadline_ms = {deadline_ms}\n")
        for path in FULL:
            started = time.monotonic()
            try:
                answer = fetch(core, url=s.url(path))
            except ToolError as error:
                assert path in EMPTY_ALLOWED, (path, error.kind, error.detail)
                assert error.detail == {"reason": "extraction_failed"}
            else:
                assert answer["outcome"] == "ok" and answer["content"]
                partial = {"code": "extraction_partial"} in answer["notices"]
                assert partial == (path in OVER_THE_NODE_BOUND), path
            assert time.monotonic() - started < bound_s, path
            outcomes.append(path)
        assert outcomes == list(FULL)  # one outcome each, none raised past the checks
        assert fetch(core, url=s.url("/attribute"))["content"] == "Text after one long attribute."
        text = fetch(core, url=s.url("/text"), max_chars=1000)
        assert text["content"] == "a" * 1000 and text["truncated"] is True
