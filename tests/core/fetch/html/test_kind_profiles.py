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


# The same rule in Cyrillic and in Chinese: it reads structure and lengths, no words.
PROSE_RU = (
    "Наша бригада чинит отопление по всему городу, мастера выезжают каждый день недели, "
    "а цена работы согласуется с вами заранее, до того как мы тронем котёл. ",
    "Ванные комнаты мы планируем вместе с вами от первого эскиза до последней плитки, и "
    "один прораб ведёт объект, чтобы вы всегда знали, кому позвонить с вопросом. ",
    "На протечки мы выезжаем в течение часа: в машине есть ходовые детали, поэтому почти "
    "всё чиним за один визит, без второй встречи и без лишних ожиданий для вас. ",
)
PROSE_ZH = (
    "我们的团队在全市维修供暖系统，工程师每天都可以上门，开工之前先和您确定固定的价格。" * 4,
    "浴室从第一张草图到最后一块瓷砖都和您一起规划，一位现场经理全程负责，有问题随时找他。" * 4,
    "漏水紧急情况一小时内响应，车上带着常用零件，所以大多数维修第一次上门就能完成。" * 4,
)


def service_page(heating: str, baths: str, leaks: str) -> str:
    return SERVICE.replace(HEATING, heating).replace(BATHS, baths).replace(LEAKS, leaks)


@pytest.mark.parametrize(
    "prose", [(HEATING, BATHS, LEAKS), PROSE_RU, PROSE_ZH], ids=["latin", "cyrillic", "cjk"]
)
def test_issue_35_widening_works_in_three_scripts(prose: tuple[str, str, str]) -> None:
    an, node = first_read(service_page(*prose))
    assert prose[1][:20] not in text(node)
    wider = score.widen(an, node, "service")
    assert wider is not None
    assert all(p[:20] in text(wider[0]) for p in prose)


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


# Documentation: a "next steps" list whose items say something beside their link,
# and a bare list of links (a table of contents) after it.
NEXT_STEPS = (
    "<html><head><title>Overview</title></head><body><main><article><h1>Overview</h1>"
    f"<p>{HEATING * 3}</p><p>{BATHS * 3}</p><h2>Next steps</h2><ul>"
    "<li><a href='/q'>Quickstart for the web console</a>: a first request in minutes.</li>"
    "<li><a href='/d'>Datasets, tables and their views</a> say who may read what.</li>"
    "<li><a href='/p'>Pricing of storage and of queries</a> for each month you run.</li>"
    "</ul><ul class='toc'><li><a href='/a'>Alpha</a></li><li><a href='/b'>Beta</a></li>"
    "<li><a href='/c'>Gamma</a></li><li><a href='/e'>Delta</a></li></ul>"
    "</article></main></body></html>"
)


def _cut_texts(described: bool) -> list[str]:
    from rypsok.core.fetch.extraction.prune import cuts

    an, node = first_read(NEXT_STEPS)
    return [text(el) for el in cuts(an, node, described)]


def test_issue_35_a_list_of_described_links_is_content_on_a_spread_page() -> None:
    kept = " ".join(_cut_texts(described=True))
    assert "Quickstart" not in kept and "Pricing of storage" not in kept
    assert "Alpha" in kept and "Delta" in kept  # a bare list of links still goes


def test_issue_35_an_article_still_cuts_a_list_of_described_links() -> None:
    assert any("Quickstart" in t for t in _cut_texts(described=False))
