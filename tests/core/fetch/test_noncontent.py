"""Pages that are not content: challenges, soft 404s, login and consent walls (issue 20,
part 5; rypsok/core/fetch/noncontent.py).

Every page in fixtures/noncontent/ is parsed by the real extractor, and the detector reads
the title and Markdown it keeps, as web_fetch would hand them over. The tests on the
thresholds build that Markdown by hand, to put a page exactly on either side of one.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from rypsok.core.fetch.extraction.extract import Extracted, extract
from rypsok.core.fetch.noncontent import (
    NEEDED,
    OWN_PROSE_FLOOR,
    OWN_PROSE_WINS,
    PROSE_WINS,
    SCAN_CHARS,
    NonContent,
    classify,
    read_signs,
)
from rypsok.core.html.tree import parse_html
from tests.support.fetching import fetch, make
from tests.support.paths import FIXTURES
from tests.support.site import Page, site

PAGES = FIXTURES / "noncontent"
BASE = "https://example.org/"


def extracted(name: str) -> Extracted:
    html = (PAGES / f"{name}.html").read_text(encoding="utf-8")
    page = extract(parse_html(html), BASE)
    # A page the extractor keeps nothing of is answered extraction_failed before any
    # detector sees it: every fixture here keeps something.
    assert page.markdown.strip(), name
    return page


def kind_of(name: str, status: int = 200) -> NonContent | None:
    page = extracted(name)
    return classify(page.title, page.markdown, status=status)


def points(name: str, kind: NonContent) -> int:
    page = extracted(name)
    return read_signs(page.title, page.markdown).points[kind]


# What each fixture is; a fixture added without a line here fails the first test.
EXPECTED: dict[str, NonContent | None] = {
    "challenge-cloudflare": "challenge",
    "challenge-cloudflare-blocked": "challenge",
    "challenge-captcha": "challenge",
    "challenge-press-and-hold": "challenge",
    "challenge-unusual-traffic": "challenge",
    "challenge-nl": "challenge",
    "challenge-ja": "challenge",
    "soft404-wordpress": "soft_404",
    "soft404-drupal": "soft_404",
    "soft404-ghost": "soft_404",
    "soft404-shop": "soft_404",
    "soft404-de": "soft_404",
    "soft404-fr": "soft_404",
    "soft404-ja": "soft_404",
    "soft404-es": "soft_404",
    "soft404-zh": "soft_404",
    "login-sign-in-to-continue": "login_wall",
    "login-log-in-to-view": "login_wall",
    "login-please-log-in": "login_wall",
    "login-pt": "login_wall",
    "login-ru": "login_wall",
    "consent-before-you-continue": "consent_wall",
    "consent-gdpr-wall": "consent_wall",
    "consent-de-zustimmung": "consent_wall",
    "consent-it": "consent_wall",
    "consent-fr": "consent_wall",
    "content-article-about-captchas": None,
    "content-article-with-cookie-banner": None,
    "content-docs-http-404": None,
    "content-login-tutorial": None,
    "content-product-notice": None,
    "content-product-notice-with-banner": None,
}


def test_issue_20_every_fixture_is_classified_as_expected() -> None:
    assert {p.stem for p in PAGES.glob("*.html")} == set(EXPECTED)
    assert {name: kind_of(name) for name in EXPECTED} == EXPECTED


# -- challenges -------------------------------------------------------------------------------


def test_issue_20_a_cloudflare_interstitial_is_a_challenge() -> None:
    page = extracted("challenge-cloudflare")
    # What the extractor keeps: the title and the "Verifying" heading; the <noscript>
    # line, the widget and the Ray ID footer go.
    assert page.title == "Just a moment..."
    assert "Verifying you are human" in page.markdown
    assert "Enable JavaScript" not in page.markdown and "Ray ID" not in page.markdown
    assert classify(page.title, page.markdown) == "challenge"
    # The page says it without its title, and the title says it without the page.
    assert classify(None, page.markdown) == "challenge"
    assert classify(page.title, "") == "challenge"


def test_issue_20_a_block_page_that_explains_itself_is_a_challenge_by_its_title() -> None:
    signs = read_signs(*_parts("challenge-cloudflare-blocked"))
    assert "challenge" in signs.titled  # "Attention Required! | Cloudflare"
    assert kind_of("challenge-cloudflare-blocked") == "challenge"


@pytest.mark.parametrize(
    ("name", "phrase"),
    [
        ("challenge-captcha", "verify you are a human"),
        ("challenge-press-and-hold", "Press & Hold"),
        ("challenge-unusual-traffic", "unusual traffic"),
    ],
)
def test_issue_20_captcha_press_and_hold_and_unusual_traffic_pages_are_challenges(
    name: str, phrase: str
) -> None:
    page = extracted(name)
    assert phrase in page.markdown
    assert classify(page.title, page.markdown) == "challenge"
    assert classify(None, page.markdown) == "challenge"  # by what the page says alone


@pytest.mark.parametrize("name", ["challenge-nl", "challenge-ja"])
def test_issue_20_challenges_are_known_in_dutch_and_japanese(name: str) -> None:
    page = extracted(name)
    assert classify(page.title, page.markdown) == "challenge"
    assert classify(None, page.markdown) == "challenge"


# -- soft 404s --------------------------------------------------------------------------------


def test_issue_20_a_wordpress_404_served_as_200_is_a_soft_404() -> None:
    page = extracted("soft404-wordpress")
    # The widgets' link lists are kept; links are not the page's prose.
    assert "Dividing hostas before the leaves open" in page.markdown
    assert "Oops! That page can’t be found." in page.markdown  # a curly apostrophe
    assert classify(page.title, page.markdown) == "soft_404"
    assert classify(None, page.markdown) == "soft_404"


@pytest.mark.parametrize(
    "name", ["soft404-drupal", "soft404-ghost", "soft404-shop", "soft404-es", "soft404-zh"]
)
def test_issue_20_cms_and_shop_404_templates_served_as_200_are_soft_404s(name: str) -> None:
    page = extracted(name)
    assert classify(page.title, page.markdown) == "soft_404"
    assert classify(None, page.markdown) == "soft_404"  # "404" or the name on a line


@pytest.mark.parametrize(
    ("name", "heading"),
    [
        ("soft404-de", "Seite nicht gefunden"),
        ("soft404-fr", "Page introuvable"),
        ("soft404-ja", "お探しのページは見つかりませんでした"),
    ],
)
def test_issue_20_a_404_in_german_french_or_japanese_is_a_soft_404(name: str, heading: str) -> None:
    page = extracted(name)
    assert heading in page.markdown
    assert classify(page.title, page.markdown) == "soft_404"


def test_issue_20_a_soft_404_is_only_a_page_served_as_found() -> None:
    # With a 404 status the page is a plain not-found answer: the status says it.
    assert kind_of("soft404-drupal", status=200) == "soft_404"
    assert kind_of("soft404-drupal", status=203) == "soft_404"
    assert kind_of("soft404-drupal", status=404) is None


# -- login walls ------------------------------------------------------------------------------


def test_issue_20_sign_in_to_continue_is_a_login_wall() -> None:
    page = extracted("login-sign-in-to-continue")
    assert "Email address" not in page.markdown  # the form went with its labels
    assert classify(page.title, page.markdown) == "login_wall"


def test_issue_20_log_in_to_view_this_page_is_a_login_wall_by_its_words_and_labels() -> None:
    page = extracted("login-log-in-to-view")
    assert page.title == "Fieldcraft Forum - Information"  # the title names nothing
    # A form without <form> leaves its labels on lines of their own: a sign too.
    assert "Username:" in page.markdown and "Password:" in page.markdown
    signs = read_signs(page.title, page.markdown)
    assert not signs.titled and signs.own_prose == 0
    assert classify(page.title, page.markdown) == "login_wall"


def test_issue_20_please_log_in_on_a_page_titled_for_its_content_is_a_login_wall() -> None:
    assert kind_of("login-please-log-in") == "login_wall"


@pytest.mark.parametrize("name", ["login-pt", "login-ru"])
def test_issue_20_login_walls_are_known_in_portuguese_and_russian(name: str) -> None:
    page = extracted(name)
    assert classify(page.title, page.markdown) == "login_wall"
    assert classify(None, page.markdown) == "login_wall"


# -- consent walls ----------------------------------------------------------------------------


def test_issue_20_before_you_continue_is_a_consent_wall_with_its_list_of_purposes() -> None:
    page = extracted("consent-before-you-continue")
    assert "- Track outages and protect against spam, fraud and abuse" in page.markdown
    signs = read_signs(page.title, page.markdown)
    # The lists that "We use cookies and data to:" leads in are the wall's, not the page's.
    assert signs.own_prose == 0
    assert classify(page.title, page.markdown) == "consent_wall"


def test_issue_20_a_privacy_wall_over_an_article_is_a_consent_wall() -> None:
    page = extracted("consent-gdpr-wall")
    # The article's headline and standfirst are there; its text is not.
    assert "Harbour dredging to start in June" in page.markdown
    signs = read_signs(page.title, page.markdown)
    assert not signs.titled and 0 < signs.own_prose < OWN_PROSE_FLOOR
    assert classify(page.title, page.markdown) == "consent_wall"


@pytest.mark.parametrize("name", ["consent-de-zustimmung", "consent-it", "consent-fr"])
def test_issue_20_consent_walls_are_known_in_german_italian_and_french(name: str) -> None:
    page = extracted(name)
    assert classify(page.title, page.markdown) == "consent_wall"
    assert classify(None, page.markdown) == "consent_wall"


# -- content wins -----------------------------------------------------------------------------


def test_issue_20_content_wins_over_a_cookie_banner() -> None:
    page = extracted("content-article-with-cookie-banner")
    assert '"Accept all"' in page.markdown  # the banner is in what the detector reads
    assert points("content-article-with-cookie-banner", "consent_wall") >= NEEDED
    assert classify(page.title, page.markdown) is None


def test_issue_20_content_wins_over_a_banner_on_a_short_real_page() -> None:
    page = extracted("content-product-notice-with-banner")
    assert "This website uses cookies" in page.markdown
    signs = read_signs(page.title, page.markdown)
    assert signs.points["consent_wall"] >= NEEDED
    assert OWN_PROSE_FLOOR <= signs.own_prose < OWN_PROSE_WINS  # the floor decides
    assert classify(page.title, page.markdown) is None


def test_issue_20_a_banner_with_almost_nothing_else_is_a_consent_wall() -> None:
    # The same banner over a headline and one line is a wall: the floor is not met.
    page = extracted("content-article-with-cookie-banner")
    lines = page.markdown.split("\n\n")
    assert lines[2] == "# How to overwinter dahlias"
    assert classify(None, "\n\n".join(lines[:3])) == "consent_wall"
    assert classify(None, "\n\n".join(lines[:4])) is None  # and its first paragraph wins


def test_issue_20_content_wins_in_a_long_article_about_captchas() -> None:
    page = extracted("content-article-about-captchas")
    assert "I'm not a robot" in page.markdown and "Just a moment..." in page.markdown
    assert points("content-article-about-captchas", "challenge") >= NEEDED
    assert classify(page.title, page.markdown) is None


def test_issue_20_content_wins_in_docs_about_http_404_titled_404() -> None:
    page = extracted("content-docs-http-404")
    signs = read_signs(page.title, page.markdown)
    assert "soft_404" in signs.titled  # "404 Not Found - HTTP | Webref Docs"
    assert page.markdown.startswith("# 404 Not Found")
    assert classify(page.title, page.markdown) is None


def test_issue_20_content_wins_in_a_login_tutorial_titled_login() -> None:
    page = extracted("content-login-tutorial")
    assert page.title == "Login"
    assert "login_wall" in read_signs(page.title, page.markdown).titled
    assert classify(page.title, page.markdown) is None


def test_issue_20_a_short_real_page_is_content() -> None:
    page = extracted("content-product-notice")
    assert len(page.markdown) < 400
    assert read_signs(page.title, page.markdown).points == dict.fromkeys(
        ("challenge", "soft_404", "login_wall", "consent_wall"), 0
    )
    assert classify(page.title, page.markdown) is None


# -- the thresholds ---------------------------------------------------------------------------


def _letters(n: int) -> str:
    """A paragraph of exactly n prose characters, words of five letters."""
    words, rest = divmod(n, 5)
    return " ".join(["abcde"] * words + (["x" * rest] if rest else []))


def test_issue_20_own_prose_wins_at_its_threshold_even_under_a_wall_title() -> None:
    head = "# Page not found\n\n"
    assert classify("Page not found", head + _letters(OWN_PROSE_WINS - 1)) == "soft_404"
    assert classify("Page not found", head + _letters(OWN_PROSE_WINS)) is None


def test_issue_20_the_floor_holds_only_when_the_title_does_not_name_the_wall() -> None:
    wall = "Accept all cookies or reject all cookies.\n\n"  # 33 prose characters
    assert classify(None, wall + _letters(OWN_PROSE_FLOOR - 1)) == "consent_wall"
    assert classify(None, wall + _letters(OWN_PROSE_FLOOR)) is None
    assert classify("Cookie settings", wall + _letters(OWN_PROSE_FLOOR)) == "consent_wall"
    # More than the wall's own lines, too: a long wall keeps a short paragraph.
    long_wall = wall * 8
    assert classify(None, long_wall + _letters(OWN_PROSE_FLOOR)) == "consent_wall"


def test_issue_20_a_page_that_is_all_phrases_is_content_past_prose_wins() -> None:
    line = "We value your privacy. "  # 18 prose characters
    walls = line * ((PROSE_WINS - 1) // 18)
    below = walls + "\n\n" + _letters(PROSE_WINS - 1 - len(walls) // len(line) * 18)
    signs = read_signs(None, below)
    assert (
        signs.own_prose < OWN_PROSE_FLOOR and signs.own_prose + signs.wall_prose == PROSE_WINS - 1
    )
    assert classify(None, below) == "consent_wall"
    assert classify(None, below + "x") is None


def test_issue_20_prose_is_letters_outside_links_and_markup_and_cjk_counts_two() -> None:
    signs = read_signs(
        None,
        "[Home](https://example.org/) · [About us](https://example.org/about)\n\n"
        "**Bold** `code` ~~gone~~\n\n"
        "![a picture](https://example.org/p.png)\n\n"
        "青石",
    )
    assert signs.own_prose == len("Boldcodegone") + 4 and signs.wall_prose == 0


def test_issue_20_a_long_title_is_read_by_its_parts() -> None:
    title = "Page not found | " + "A Very Long Name For A Small Local Bakery " * 6
    assert classify(title, "") == "soft_404"
    # A whole sentence is not a name, though it holds one.
    assert classify("How we fixed every page not found error on our shop", "") is None


def test_issue_20_phrases_are_whole_words() -> None:
    assert classify(None, "Please sign in to continue.") == "login_wall"
    assert classify(None, "We design in to continue the line.") is None
    assert classify(None, "Our array id: 42") is None and classify(None, "Ray ID: 42", status=503)


def test_issue_20_case_and_spelling_are_folded() -> None:
    assert classify("JUST A MOMENT…", "") == "challenge"  # one ellipsis character
    assert classify("Ｊｕｓｔ ａ ｍｏｍｅｎｔ", "") == "challenge"  # full width
    assert classify(None, "# SEITE NICHT GEFUNDEN") == "soft_404"
    assert classify(None, "Sorry, that page can’t be found.") == "soft_404"
    assert classify("Доступ запрещён", "") == "challenge"  # ё written as е in the table
    assert classify(None, "Verify\u200b you are\u00ad human") == "challenge"  # invisible
    assert classify(None, "\u202eSign in to continue\u202c") == "login_wall"


def test_issue_20_a_status_that_says_the_same_adds_a_point() -> None:
    # One weak sign is not enough; the status that goes with it makes two.
    assert classify(None, "Ray ID: 8a3f0c2d9e1b4a77") is None
    assert classify(None, "Ray ID: 8a3f0c2d9e1b4a77", status=503) == "challenge"
    assert classify(None, "Ray ID: 8a3f0c2d9e1b4a77", status=429) == "challenge"
    assert classify(None, "[Forgot your password?](https://example.org/reset)") is None
    forgot = "[Forgot your password?](https://example.org/reset)"
    assert classify(None, forgot, status=401) == "login_wall"
    # A status alone says nothing of the page.
    assert classify(None, "Opening hours: nine to five.", status=503) is None


def test_issue_20_a_tie_goes_to_the_challenge() -> None:
    assert classify(None, "Verify you are human\n\nPage not found") == "challenge"


# -- hostile input ----------------------------------------------------------------------------

MIB2 = 2 * 1024 * 1024
# Ten times the slowest measured on the development machine (about 25 ms): a detector
# that read the whole 2 MB, or a pattern that went quadratic in its window, takes longer.
BOUND_S = 0.25
HOSTILE = {
    "repeated phrase": "Just a moment... Verify you are human. " * (MIB2 // 38),
    "repeated lines": "Accept all\n" * (MIB2 // 11),
    "line breaks": "\n" * MIB2,
    "short lines": "a\n" * (MIB2 // 2),
    "open brackets": "[" * MIB2,
    "unclosed links": "[a](" * (MIB2 // 4),
    "backslashes": "\\" * MIB2,
    "one long word": "a" * MIB2,
    "cjk": "登录" * (MIB2 // 2),
    "names": "# 404\n" * (MIB2 // 6),
    "labels": "Password:\n" * (MIB2 // 10),
    "combining marks": "e\u0301\u0308" * (MIB2 // 3),
    "lone surrogates": "\ud800x\udfff" * (MIB2 // 3),
    "nfkc expansion": "\ufdfa" * MIB2,  # 18 characters each under NFKC
    "controls": "\x00\x07\x1b" * (MIB2 // 3),
    "line separators": "Sign in\r\n\u2028\x85\x0b\x0c\x1e" * (MIB2 // 13),
    "lists": ("We use cookies to:\n" + "- x\n" * 2000) * 200,
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_issue_20_hostile_input_is_read_in_bounded_time(name: str) -> None:
    text = HOSTILE[name]
    started = time.perf_counter()
    kind = classify(text, text)
    took = time.perf_counter() - started
    assert took < BOUND_S, f"{name}: {took:.3f} s"
    assert kind is None or kind in ("challenge", "soft_404", "login_wall", "consent_wall")


def test_issue_20_two_megabytes_of_a_phrase_are_content_and_a_wall_stays_a_wall() -> None:
    # The window holds thousands of characters of phrases: more than a wall says.
    assert classify(None, HOSTILE["repeated phrase"]) is None
    # A wall with two megabytes of blank after it is read in its window, and is a wall.
    padded = "Verify you are human.\n" + " \n" * (MIB2 // 2)
    started = time.perf_counter()
    assert classify("Just a moment...", padded) == "challenge"
    assert time.perf_counter() - started < BOUND_S
    # What lies past the window is not read at all.
    late = "a" * SCAN_CHARS + "\n\nPlease sign in to continue."
    assert classify(None, late) is None


# -- through web_fetch ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "soft404-wordpress",
        "login-sign-in-to-continue",
        "consent-gdpr-wall",
        "content-article-with-cookie-banner",
    ],
)
def test_issue_20_the_detector_reads_web_fetch_answers(tmp_path: Path, name: str) -> None:
    body = (PAGES / f"{name}.html").read_bytes()
    with site({"/p": Page(body=body)}) as s:
        answer: dict[str, Any] = fetch(make(tmp_path), url=s.url("/p"))
    assert answer["outcome"] == "ok"
    assert classify(answer["title"], answer["content"]) == EXPECTED[name]


def _parts(name: str) -> tuple[str | None, str]:
    page = extracted(name)
    return page.title, page.markdown
