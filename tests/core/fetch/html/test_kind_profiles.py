"""Issue 35: extraction by the page's kind. A page whose content is spread over
sections (a service page, documentation, a listing, a collection, a product) and
whose first read took one section, leaving out as much long prose again, is read
from the element around the sections (score.widen); an article or a thread is not."""

from __future__ import annotations

import pytest

from rypsok.core.fetch.extraction import score
from rypsok.core.fetch.extraction.attributes import READ_ATTRIBUTES
from rypsok.core.fetch.extraction.prune import classify
from rypsok.core.html.tree import Element, parse_html

HEATING = (
    "Our team repairs heating systems across the city, with engineers on call every day "
    "of the week and a fixed price agreed before any work starts on your boiler. "
)
BATHS = (
    "Bathrooms are planned with you from the first sketch to the last tile, and one site "
    "manager stays with the job so that you always know who to call with a question. "
)
LEAKS = (
    "Emergency leaks are answered within the hour: the van carries the common parts, so "
    "most repairs are finished on the first visit without a second appointment. "
)


def section(heading: str, prose: str) -> str:
    return f"<div class='blk'><h2>{heading}</h2><p>{prose}</p><p>{prose}</p></div>"


# A service page: a hero of prose, a block of links, then the other services.
SERVICE = (
    "<html><head><title>Plumbing</title></head><body><header><nav><a href='/'>Home</a>"
    "<a href='/c'>Contact</a></nav></header><div class='wrap'><div class='hero'>"
    f"<h1>Plumbing and heating</h1><p>{HEATING * 3}</p><p>{HEATING * 2}</p></div>"
    "<div class='links'>"
    + "".join(f"<a href='/area/{i}'>Service area {i}</a> " for i in range(25))
    + "</div><div class='services'>"
    + section("Bathrooms", BATHS)
    + section("Emergencies", LEAKS)
    + "</div></div><footer>Firm</footer></body></html>"
)


def first_read(html: str) -> tuple[score.Analysis, Element]:
    doc = parse_html(html, keep_attributes=READ_ATTRIBUTES)
    html_el = next(c for c in doc.root.children if isinstance(c, Element))
    body = next(c for c in html_el.children if isinstance(c, Element) and c.name == "body")
    an = score.measure(body)
    classify(an)
    score.score_blocks(an)
    node, _article = score.choose(an)
    score.margin(an, node)
    return an, node


def text(el: Element) -> str:
    return " ".join(el.text_content().split())


def test_issue_35_a_spread_page_read_as_one_section_is_widened() -> None:
    an, node = first_read(SERVICE)
    assert BATHS.split()[0] not in text(node)  # the first read: the hero alone
    for kind in sorted(score.SPREAD_KINDS):
        wider = score.widen(an, node, kind)
        assert wider is not None, kind
        element, article = wider
        assert article
        assert all(p.split(":")[0].strip() in text(element) for p in (HEATING, BATHS, LEAKS))
        assert "Home Contact" not in text(element)  # the page's chrome stays out


@pytest.mark.parametrize("kind", ["article", "forum", "other"])
def test_issue_35_an_article_or_a_thread_is_not_widened(kind: str) -> None:
    an, node = first_read(SERVICE)
    assert score.widen(an, node, kind) is None


def test_issue_35_prose_in_chrome_or_comments_does_not_widen() -> None:
    boxed = SERVICE.replace("<div class='services'>", "<div class='services comments'>")
    an, node = first_read(boxed)
    assert score.widen(an, node, "service") is None


def test_issue_35_a_read_that_left_out_little_stands() -> None:
    small = SERVICE.replace(section("Emergencies", LEAKS), "").replace(
        f"<p>{BATHS}</p><p>{BATHS}</p>", f"<p>{BATHS}</p>"
    )
    an, node = first_read(small)
    assert score.widen(an, node, "service") is None
