"""How web_fetch answers a page that is not content (issue 20; the rule in docs/tools.md,
"Pages that are not content"): a bot challenge is `unavailable` with reason `blocked` and
is never kept for the next part; a soft 404, a log-in wall and a consent wall are `ok`
with the notice `not_content` naming the kind, on every part; a page with real content
is answered as it is. The pages are the hand-written fixtures of fixtures/noncontent/,
served by a local HTTPS site; noncontent.py's own rules are in test_noncontent.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.fetching import fetch, make, refused
from tests.support.paths import FIXTURES
from tests.support.site import Page, site

PAGES = FIXTURES / "noncontent"


def _page(name: str) -> Page:
    return Page(body=(PAGES / name).read_bytes())


def _robots_free(requests: list[tuple[str, dict[str, str]]]) -> list[str]:
    return [path for path, _ in requests if path != "/robots.txt"]


@pytest.mark.parametrize(
    "name",
    ["challenge-cloudflare.html", "challenge-captcha.html", "challenge-press-and-hold.html"],
)
def test_issue_20_a_challenge_is_unavailable_blocked_and_never_kept(
    tmp_path: Path, name: str
) -> None:
    with site({"/p": _page(name)}) as s:
        core = make(tmp_path)
        first = refused(core, url=s.url("/p"))
        again = refused(core, url=s.url("/p"), start_char=10)
    assert first.kind == again.kind == "unavailable"
    assert first.detail == {"reason": "blocked"}
    assert "challenge" in first.message and "retry later" in first.message
    # Not served from memory: each call asked the site.
    assert _robots_free(s.requests) == ["/p", "/p"]


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("soft404-wordpress.html", "soft_404"),
        ("soft404-de.html", "soft_404"),
        ("login-sign-in-to-continue.html", "login_wall"),
        ("consent-before-you-continue.html", "consent_wall"),
    ],
)
def test_issue_20_a_soft_404_or_a_wall_is_ok_with_a_not_content_notice(
    tmp_path: Path, name: str, kind: str
) -> None:
    with site({"/p": _page(name)}) as s:
        core = make(tmp_path, '[egress]\nallow = ["127.0.0.1"]\n[fetch]\nmax_chars = 500\n')
        first = fetch(core, url=s.url("/p"))
        assert first["outcome"] == "ok" and first["content"]
        assert {"code": "not_content", "reason": kind} in first["notices"]
        if first["truncated"]:  # the next part, from memory, says it too
            second = fetch(core, url=s.url("/p"), start_char=first["next_start_char"])
            assert {"code": "not_content", "reason": kind} in second["notices"]
    assert _robots_free(s.requests) == ["/p"]


@pytest.mark.parametrize(
    "name",
    [
        "content-article-about-captchas.html",
        "content-article-with-cookie-banner.html",
        "content-docs-http-404.html",
        "content-login-tutorial.html",
        "content-product-notice-with-banner.html",
    ],
)
def test_issue_20_content_wins_and_gets_no_notice(tmp_path: Path, name: str) -> None:
    with site({"/p": _page(name)}) as s:
        answer = fetch(make(tmp_path), url=s.url("/p"))
    assert answer["outcome"] == "ok"
    assert all(n["code"] != "not_content" for n in answer["notices"]), answer["notices"]
