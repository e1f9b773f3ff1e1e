"""Issue 35: extraction by the page's kind. A page whose content is spread over
sections (a service page, documentation, a listing, a collection, a product) and
whose first read took one section, leaving out as much long prose again, is read
from the element around the sections (profiles.widen); an article or a thread is not.
A short, doubted article read of such a page is read whole (profiles.small_read)."""

from __future__ import annotations

import time

import pytest

from rypsok.core.fetch.extraction import profiles, score
from rypsok.core.fetch.extraction.attributes import READ_ATTRIBUTES
from rypsok.core.fetch.extraction.extract import extract_blocks
from rypsok.core.fetch.extraction.prune import classify, cuts
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
    wider = profiles.widen(an, node, "service")
    assert wider is not None
    assert all(p[:20] in text(wider[0]) for p in prose)


def test_issue_35_a_spread_page_read_as_one_section_is_widened() -> None:
    an, node = first_read(SERVICE)
    assert BATHS.split()[0] not in text(node)  # the first read: the hero alone
    for kind in sorted(profiles.SPREAD_KINDS):
        wider = profiles.widen(an, node, kind)
        assert wider is not None, kind
        element, article = wider
        assert article
        assert all(p.split(":")[0].strip() in text(element) for p in (HEATING, BATHS, LEAKS))
        assert "Home Contact" not in text(element)  # the page's chrome stays out


@pytest.mark.parametrize("kind", ["article", "forum", "other"])
def test_issue_35_an_article_or_a_thread_is_not_widened(kind: str) -> None:
    an, node = first_read(SERVICE)
    assert profiles.widen(an, node, kind) is None


def test_issue_35_prose_in_chrome_or_comments_does_not_widen() -> None:
    boxed = SERVICE.replace("<div class='services'>", "<div class='services comments'>")
    an, node = first_read(boxed)
    assert profiles.widen(an, node, "service") is None


def test_issue_35_a_read_that_left_out_little_stands() -> None:
    small = SERVICE.replace(section("Emergencies", LEAKS), "").replace(
        f"<p>{BATHS}</p><p>{BATHS}</p>", f"<p>{BATHS}</p>"
    )
    an, node = first_read(small)
    assert profiles.widen(an, node, "service") is None


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
    an, node = first_read(NEXT_STEPS)
    return [text(el) for el in cuts(an, node, described)]


def test_issue_35_a_list_of_described_links_is_content_on_a_spread_page() -> None:
    kept = " ".join(_cut_texts(described=True))
    assert "Quickstart" not in kept and "Pricing of storage" not in kept
    assert "Alpha" in kept and "Delta" in kept  # a bare list of links still goes


def test_issue_35_an_article_still_cuts_a_list_of_described_links() -> None:
    assert any("Quickstart" in t for t in _cut_texts(described=False))


# A shop's category page: a short intro above a grid of cards, none of which says
# much. The first read takes the intro; doubted, it gives way to the page whole.
SHOP = "https://shop.example/clogs"
NEWS = "https://news.example/radwege"
INTRO = "Comfortable clogs for the whole family, in every colour of the season and every size. "


def _card(i: int) -> str:
    return (
        f"<div class='card'><a href='/p/{i}'><img alt=''></a><h3><a href='/p/{i}'>"
        f"Classic clog model {i}</a></h3><span class='price'>$49.99</span>"
        f"<span>Rated 4.{i % 10} by 120 buyers</span></div>"
    )


WHOLE = 10**6  # characters written: the cuts left the read whole


def category_page(intro: str = INTRO * 2) -> str:
    return (
        "<html><head><title>Clogs</title></head><body><header><nav><a href='/'>Home</a>"
        f"<a href='/c'>Cart</a></nav></header><main><div class='intro'><h1>Classic clogs</h1>"
        f"<p>{intro}</p><p>{intro}</p></div><div class='grid'>"
        + "".join(_card(i) for i in range(24))
        + "</div></main><footer>Shop</footer></body></html>"
    )


def test_issue_35_a_small_doubted_read_of_a_spread_page_gives_way_to_the_page() -> None:
    an, node = first_read(category_page())
    assert "model 7" not in text(node)  # the first read: the intro alone
    region = profiles.small_read(an, node, "listing", 0.5, WHOLE)
    assert region is not None
    assert "Classic clog model 7" in text(region) and INTRO[:30] in text(region)


@pytest.mark.parametrize(
    ("kind", "confidence"), [("article", 0.5), ("listing", profiles.SMALL_DOUBT)]
)
def test_issue_35_an_article_or_a_trusted_read_stays_small(kind: str, confidence: float) -> None:
    an, node = first_read(category_page())
    assert profiles.small_read(an, node, kind, confidence, WHOLE) is None


def test_issue_35_a_long_or_large_read_is_not_doubted() -> None:
    an, node = first_read(category_page(INTRO * 12))  # the intro over 1,500 characters
    assert "model 7" not in text(node)
    assert profiles.small_read(an, node, "listing", 0.1, WHOLE) is None
    few = category_page().replace("".join(_card(i) for i in range(24)), _card(1))
    an, node = first_read(few)  # the intro is most of the page
    assert profiles.small_read(an, node, "listing", 0.1, WHOLE) is None


def test_issue_35_a_read_the_cuts_emptied_gives_way_to_the_page_of_any_kind() -> None:
    an, node = first_read(category_page())
    read = an.plain_len[node]
    assert profiles.small_read(an, node, "article", 0.99, written=read // 25) is not None
    assert profiles.small_read(an, node, "article", 0.99, written=read // 10) is None


def two_stories(second: str) -> str:
    """Two candidates of close value, and an index of links that makes them a
    small part of the page."""
    index = "".join(
        f"<li><a href='/t/{i}'>Topic {i} of the archive of this site</a></li>" for i in range(60)
    )
    return (
        f"<html><body><div class='a'><h1>Heating</h1><p>{HEATING * 2}</p><p>{HEATING * 2}</p></div>"
        f"<div class='b'><h2>Baths</h2>{second}</div><div class='c'><ul>{index}</ul></div>"
        "</body></html>"
    )


def test_issue_35_an_article_with_a_close_rival_on_a_larger_page_is_read_whole() -> None:
    an, node = first_read(two_stories(f"<p>{BATHS * 2}</p><p>{BATHS}</p>"))
    assert BATHS[:30] not in text(node)  # the first read: one of the two
    region = profiles.small_read(an, node, "article", 0.9, WHOLE)
    assert region is not None and BATHS[:30] in text(region) and HEATING[:30] in text(region)


def test_issue_35_an_article_without_a_close_rival_stands() -> None:
    an, node = first_read(two_stories("<p>Baths too.</p>"))
    assert an.rival < 0.5
    assert profiles.small_read(an, node, "article", 0.9, WHOLE) is None


def test_issue_35_a_category_page_is_read_with_its_cards() -> None:
    got = extract_blocks(parse_html(category_page(), keep_attributes=READ_ATTRIBUTES), SHOP)
    read = "\n".join(got.blocks)
    assert INTRO[:30] in read
    assert all(f"Classic clog model {i}]" in read for i in range(24))
    assert "Cart" not in read  # the page's chrome stays out


def seo_page(box: str) -> str:
    """A category page whose only prose is its description, in a box its class
    names as copy for search engines, after the grid of products."""
    return (
        "<html><head><title>Clogs</title></head><body><header><nav><a href='/'>Home</a>"
        "<a href='/c'>Cart</a></nav></header><main><h1>Classic clogs</h1>"
        "<div class='grid'>" + "".join(_card(i) for i in range(6)) + "</div>"
        f"<div class='{box}'><p>{INTRO * 3}</p><p>{INTRO * 2}</p></div>"
        "<div class='seo-footer-links'>"
        + "".join(f"<a href='/c/{i}'>Clogs in size {i}</a> " for i in range(30))
        + "</div></main><footer>Shop</footer></body></html>"
    )


@pytest.mark.parametrize("box", ["field-seofootercopy", "seoText", "category-seo-text"])
def test_issue_35_a_categorys_copy_for_search_engines_is_its_text(box: str) -> None:
    got = extract_blocks(parse_html(seo_page(box), keep_attributes=READ_ATTRIBUTES), SHOP)
    read = "\n".join(got.blocks)
    assert INTRO[:30] in read  # "footer" in the class does not make it chrome
    assert "Clogs in size 7" not in read  # a box of links so named still is


def test_issue_35_only_prose_so_named_is_kept_from_the_chrome() -> None:
    an, _node = first_read(seo_page("field-seofootercopy"))
    named = {(el.attributes.get("class") or ""): el for el in an.body.iter_elements()}
    assert named["field-seofootercopy"] not in an.chrome
    assert named["seo-footer-links"] in an.chrome  # mostly links: chrome as named


# A product page: its description, then reviews that outweigh it, each an <article>.
REVIEW = (
    "Bought this for my small flat and it has been excellent so far, quiet at night and "
    "easy to clean, though the manual could explain the settings a little better. "
)
PRODUCT = (
    "<html><head><title>Heater</title></head><body><main><section class='product'>"
    f"<h1>Oil heater</h1><div class='description'><p>{HEATING * 2}</p><p>{LEAKS}</p></div>"
    "<section class='product-reviews'><h2>What buyers say</h2>"
    + "".join(
        f"<article class='review'><h3>Buyer {i}</h3><p>{REVIEW}</p></article>" for i in range(8)
    )
    + "</section></section></main></body></html>"
)


def _cut_of_product(reviews: bool) -> str:
    an, node = first_read(PRODUCT)
    assert "Buyer 3" in text(node) and HEATING[:30] in text(node)
    return " ".join(text(el) for el in cuts(an, node, True, reviews))


def test_issue_35_a_products_reviews_go_however_long() -> None:
    cut = _cut_of_product(reviews=True)
    assert "Buyer 3" in cut and REVIEW[:30] in cut
    assert HEATING[:30] not in cut  # the description stays


def test_issue_35_reviews_that_outweigh_the_read_stay_on_other_kinds() -> None:
    assert "Buyer 3" not in _cut_of_product(reviews=False)


# Boilerplate by its words, second: a heading that says other pages follow takes
# the teaser cards under it, in any of the web's main languages, up to the next
# section of the article.
NEWS_1 = (
    "Die Stadt plant für das kommende Jahr neue Radwege entlang des Flusses, und die "
    "Anwohner dürfen bei der Gestaltung der Strecken mitreden. "
)
NEWS_2 = (
    "Nach dem Ende der Bauarbeiten sollen die Wege im Sommer eröffnet werden; bis dahin "
    "bleibt die alte Brücke für Fußgänger offen. "
)
BLURB = "Ein kurzer Text über einen anderen Bericht aus der Region, mit Bildern. " * 2


def news_page(heading: str) -> str:
    cards = "".join(
        f"<div class='item'><h3><a href='/n/{i}'>Anderer Bericht Nummer {i}</a></h3>"
        f"<p>{BLURB}</p></div>"
        for i in range(3)
    )
    return (
        f"<html><body><article><h1>Radwege</h1><p>{NEWS_1 * 3}</p><p>{NEWS_1 * 2}</p>"
        f"<h2>{heading}</h2>{cards}<h2>Wie es weitergeht</h2><p>{NEWS_2 * 3}</p>"
        "</article></body></html>"
    )


def _news_read(heading: str) -> str:
    html = news_page(heading)
    got = extract_blocks(parse_html(html, keep_attributes=READ_ATTRIBUTES), NEWS)
    return "\n".join(got.blocks)


@pytest.mark.parametrize(
    "heading", ["Lesen Sie auch:", "Читайте также", "関連記事", "Related articles", "Leia também"]
)
def test_issue_35_a_heading_over_other_pages_takes_its_teasers(heading: str) -> None:
    read = _news_read(heading)
    assert "Nummer 1" not in read and heading.rstrip(":") not in read
    assert NEWS_1[:30] in read and NEWS_2[:30] in read  # the article before and after stays


def test_issue_35_a_plain_heading_keeps_its_section() -> None:
    read = _news_read("Hintergrund")
    assert "Hintergrund" in read and "Nummer 1" in read


def _time_cuts(units: int) -> tuple[float, int]:
    """The best of three timings of the cuts of an article holding ``units`` headings
    over other pages, each after a paragraph; and how many elements were cut."""
    unit = "<p>{}</p><h2>Related articles</h2><div><a href='/r{}'>another story</a></div>"
    body = "".join(unit.format(NEWS_1, i) for i in range(units))
    an, node = first_read(f"<html><body><article>{body}</article></body></html>")
    best, cut = float("inf"), set()
    for _ in range(3):
        start = time.perf_counter()
        cut = cuts(an, node)
        best = min(best, time.perf_counter() - start)
    return best, len(cut)


def test_issue_35_the_heading_rule_is_linear_in_the_headings() -> None:
    _time_cuts(500)  # warm
    small, cut_small = _time_cuts(2_000)
    large, cut_large = _time_cuts(8_000)
    assert cut_small >= 4_000 and cut_large >= 16_000  # every heading and its box went
    assert large <= 6.5 * small + 0.05, f"{small:.3f} s, then {large:.3f} s"
