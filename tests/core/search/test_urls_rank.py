"""Result URLs, deduplication and ranking (REQ-RANK-001..007, REQ-ARCH-004, REQ-TEST-013)."""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rypsok.core.search import rank as rank_module
from rypsok.core.search.rank import (
    RRF_K,
    SCORE_SCALE,
    EngineAnswer,
    Observation,
    RankedResult,
    Ranking,
    Seen,
    fusion_score,
    rank,
)
from rypsok.core.search.urls import (
    TRACKING_PARAMETERS,
    URL_MAX_CHARS,
    DroppedUrl,
    NormalUrl,
    is_tracking_parameter,
    normalize,
    refuses_host,
)


def shown(url: str) -> str:
    result = normalize(url)
    assert isinstance(result, NormalUrl), (url, result)
    return result.url


def key(url: str) -> str:
    result = normalize(url)
    assert isinstance(result, NormalUrl), (url, result)
    return result.key


def obs(url: str, title: str = "", snippet: str = "", date: str | None = None) -> Observation:
    return Observation(url=url, title=title or url, snippet=snippet or "s " + url, date=date)


def answer(engine: str, preference: int, *urls: str) -> EngineAnswer:
    return EngineAnswer(engine, preference, tuple(obs(u) for u in urls))


def urls_of(ranking: Ranking) -> list[str]:
    return [r.url for r in ranking.results]


# -- REQ-RANK-003: the returned URL -----------------------------------------------

RETURNED_URL_TABLE = [
    # No tracking parameter: byte for byte, however odd.
    ("https://example.org/page", "https://example.org/page"),
    ("https://a.example/?a=1&b", "https://a.example/?a=1&b"),
    ("https://a.example/p?b=2&a=1&a=3", "https://a.example/p?b=2&a=1&a=3"),
    ("https://a.example/p?q=%7e%7E+x;y=%zz&&", "https://a.example/p?q=%7e%7E+x;y=%zz&&"),
    ("https://a.example/p?", "https://a.example/p?"),
    ("https://a.example/p?=&=x&a==b", "https://a.example/p?=&=x&a==b"),
    ("https://a.example/a%2fb/./c/../d//e", "https://a.example/a%2fb/./c/../d//e"),
    ("HTTPS://Example.ORG/Path#Frag", "HTTPS://Example.ORG/Path#Frag"),
    ("https://en.wikipedia.org/wiki/Rust_%26_Bone", "https://en.wikipedia.org/wiki/Rust_%26_Bone"),
    (
        "https://en.wikipedia.org/wiki/Rust_(programming_language)",
        "https://en.wikipedia.org/wiki/Rust_(programming_language)",
    ),
    ("https://de.wikipedia.org/wiki/Köln", "https://de.wikipedia.org/wiki/Köln"),
    ("https://a.example:/x", "https://a.example:/x"),
    ("https://a.example.:08443/x", "https://a.example.:08443/x"),
    ("http://[2001:4860:4860::8888]:8080/x?y", "http://[2001:4860:4860::8888]:8080/x?y"),
    ("https://a.example/?a=1;utm_source=x", "https://a.example/?a=1;utm_source=x"),
    ("https://a.example/?UTM_SOURCE=x", "https://a.example/?UTM_SOURCE=x"),
    ("https://a.example/?xutm_source=1&fbclidx=2", "https://a.example/?xutm_source=1&fbclidx=2"),
    ("https://a.example/#?utm_source=x", "https://a.example/#?utm_source=x"),
    # Tracking parameters removed; the rest keeps its text and order.
    ("https://a.example/?utm_source=x&a=1&b", "https://a.example/?a=1&b"),
    ("https://a.example/p?a=%7e&utm_medium=m&b=c+d#frag", "https://a.example/p?a=%7e&b=c+d#frag"),
    ("https://a.example/p?utm_source=x", "https://a.example/p"),
    ("https://a.example?utm_source=x", "https://a.example"),
    ("https://a.example/p?fbclid=1#top", "https://a.example/p#top"),
    ("https://a.example/p?utm%5Fsource=x&k=v", "https://a.example/p?k=v"),
    ("https://a.example/?a=1&&utm_source=x&b", "https://a.example/?a=1&b"),
    ("https://a.example/?z=%ZZ&gclid=1&y=%e2%82%ac", "https://a.example/?z=%ZZ&y=%e2%82%ac"),
    (
        "https://a.example/p?gclid=a&msclkid=b&mc_cid=c&mc_eid=d&yclid=e&_hsenc=f&_hsmi=g"
        "&igshid=h&keep=1&utm_campaign=i&utm_content&utm_term=",
        "https://a.example/p?keep=1",
    ),
    # Host in ASCII (IDNA) form; ASCII labels, port, path and fragment untouched.
    ("https://bücher.example/straße?x=1", "https://xn--bcher-kva.example/straße?x=1"),
    ("https://Bücher.EXAMPLE.:8443/a#b", "https://xn--bcher-kva.EXAMPLE.:8443/a#b"),
    ("http://пример.испытание/", "http://xn--e1afmkfd.xn--80akhbyknj4f/"),
    # Global addresses in any notation are kept as written.
    ("http://8.8.8.8/a", "http://8.8.8.8/a"),
    ("http://134744072/", "http://134744072/"),
    ("http://[::ffff:8.8.8.8]/", "http://[::ffff:8.8.8.8]/"),
]


@pytest.mark.parametrize(("given_url", "expected"), RETURNED_URL_TABLE)
def test_req_rank_003_returned_url_table(given_url: str, expected: str) -> None:
    assert shown(given_url) == expected


def test_req_rank_003_every_listed_tracking_parameter_is_removed() -> None:
    for name in [*sorted(TRACKING_PARAMETERS), "utm_source", "utm_anything"]:
        assert is_tracking_parameter(name)
        assert shown(f"https://a.example/?k=1&{name}=v") == "https://a.example/?k=1", name
    for name in ("ref", "id", "q", "utm", "Gclid", "page"):
        assert not is_tracking_parameter(name)


def test_req_rank_003_a_host_web_fetch_would_refuse_is_invalid() -> None:
    for url in (
        "https://.example/",
        "https://a..example/",
        "https://a.example../",
        "https://localhost/",
        "https://LOCALHOST./",
        "https://example/",
        "https://intranet./",
        "https://printer.local/",
        "https://db.internal/",
        "https://1.0.0.127.in-addr.arpa/",
        "https://app.localhost/",
        "https://-a.example/",
        "https://a%2eexample/",
        "https://a!b.example/",
        "https://xn--a.example\u3002evil/",
        "http://10.0.0.1/",
        "http://127.0.0.1/",
        "http://0.0.0.0/",
        "http://169.254.169.254/",
        "http://100.64.0.1/",
        "http://192.168.1.1/",
        "http://224.0.0.1/",
        "http://240.0.0.1/",
        "http://255.255.255.255/",
        "http://2130706433/",
        "http://0x7f.1/",
        "http://0177.0.0.1/",
        "http://127.1/",
        "http://010.8.8.8/",
        "http://1.2.3.999/",
        "http://foo.0x1f/",
        "http://1.2.3.4.5/",
        "http://[::1]/",
        "http://[::]/",
        "http://[::ffff:10.0.0.1]/",
        "http://[::ffff:7f00:1]/",
        "http://[fe80::1]/",
        "http://[fe80::1%25eth0]/",
        "http://[fc00::1]/",
        "http://[fec0::1]/",
        "http://[ff0e::1]/",
        "http://[2001:db8::1]/",
        "http://[64:ff9b::808:808]/",
        "http://[::8.8.8.8]/",
        "http://[2002:a00:1::1]/",
        "http://[v1.x]/",
        "http://[2001:4860::1/",
        "http://[2001:4860::1]x/",
        "http://\uff11\uff12\uff17.\uff10.\uff10.\uff11/",
        "http://127.0.0.\uff11/",
    ):
        assert normalize(url) == DroppedUrl("url_invalid"), url


def test_req_rank_003_the_host_predicate_matches_the_rules() -> None:
    for host in (
        "a.example",
        "A.Example.",
        "bücher.example",
        "8.8.8.8",
        "[2001:4860::1]",
        "0x8.0x8.0x8.0x8",
        "a_b.example",
    ):
        assert not refuses_host(host), host
    for host in (
        "",
        ".",
        "localhost",
        "single",
        "x.local",
        "x.arpa",
        "10.1.2.3",
        "[::1]",
        "2130706433",
        "a..b",
        "[2001:4860::1",
    ):
        assert refuses_host(host), host


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "data:text/html,<b>x</b>",
        "ftp://a.example/",
        "file:///etc/passwd",
        "mailto:a@a.example",
        "ws://a.example/",
        "https:a.example/x",
        "//a.example/x",
        "a.example/x",
        "",
        "https://",
        "https:///x",
        "http://:80/",
        "https://user:pw@a.example/",
        "https://@a.example/",
        "https://a.example:0/",
        "https://a.example:65536/",
        "https://a.example:8o/",
        "https://a.example:123456/",
        "https://a.example/ x",
        " https://a.example/",
        "https://a.example/\tx",
        "https://a.example/x\n",
        "https://a.example/\u200bx",
        "https://a.example/\u202ex",
        "https://a.example/\x00",
        "https://exa mple.com/",
        "https://a.example/\ud800",
        "https://a.example\\@b.example/",
    ],
)
def test_results_dropped_url_invalid(url: str) -> None:
    assert normalize(url) == DroppedUrl("url_invalid")


def test_req_ctx_006_a_url_longer_than_lim_f9_is_url_too_long() -> None:
    assert URL_MAX_CHARS == 2048
    head = "https://a.example/"
    at_bound = head + "x" * (2048 - len(head))
    assert shown(at_bound) == at_bound
    assert normalize(at_bound + "x") == DroppedUrl("url_too_long")
    assert normalize("javascript:" + "x" * 2049) == DroppedUrl("url_too_long")
    # Removing a tracking parameter never rescues a URL the engine sent too long.
    assert normalize(at_bound + "?utm_source=1") == DroppedUrl("url_too_long")
    # The IDNA form counts too: within the bound as written, beyond it as returned.
    idna_head = "https://bücher.example/"
    assert len(shown(idna_head)) > len(idna_head)
    grows = idna_head + "x" * (2048 - len(idna_head))
    assert len(grows) == 2048
    assert normalize(grows) == DroppedUrl("url_too_long")


# -- REQ-RANK-002: the comparison key ---------------------------------------------

SAME_RESOURCE = [
    ("http://a.example/x", "https://a.example/x"),
    ("https://A.Example/x", "https://a.example/x"),
    ("HTTPS://a.example/x", "https://a.example/x"),
    ("https://a.example:443/x", "https://a.example/x"),
    ("http://a.example:80/x", "https://a.example/x"),
    ("https://a.example:/x", "https://a.example/x"),
    ("https://a.example:0443/x", "https://a.example/x"),
    ("https://a.example/x#one", "https://a.example/x#two"),
    ("https://a.example/x?utm_source=s", "https://a.example/x"),
    ("https://a.example/x?a=1&fbclid=z", "https://a.example/x?a=1"),
    ("https://a.example/%7Euser", "https://a.example/~user"),
    ("https://a.example/%41%62", "https://a.example/Ab"),
    ("https://a.example/a%2fb", "https://a.example/a%2Fb"),
    ("https://a.example/?q=%c3%a9", "https://a.example/?q=é"),
    ("https://a.example", "https://a.example/"),
    ("https://bücher.example/", "https://xn--bcher-kva.example/"),
    ("https://de.wikipedia.org/wiki/Köln", "https://de.wikipedia.org/wiki/K%c3%b6ln"),
    ("https://a.example./x", "https://a.example/x"),
    ("http://134744072/", "http://8.8.8.8/"),
    ("http://[2001:4860:0:0::1]/", "http://[2001:4860::1]/"),
]

DIFFERENT_RESOURCES = [
    ("https://a.example/x", "https://a.example/x/"),
    ("https://www.a.example/x", "https://a.example/x"),
    ("https://a.example/X", "https://a.example/x"),
    ("https://a.example/a%2Fb", "https://a.example/a/b"),
    ("https://a.example/a/./b", "https://a.example/a/b"),
    ("https://a.example/?a=1&b=2", "https://a.example/?b=2&a=1"),
    ("https://a.example/?q=a+b", "https://a.example/?q=a%20b"),
    ("https://a.example/x?", "https://a.example/x"),
    ("https://a.example/x?a=1", "https://a.example/x?A=1"),
    ("https://a.example/?ref=x", "https://a.example/"),
    ("http://a.example:443/", "https://a.example/"),
    ("https://a.example:80/", "http://a.example/"),
    ("https://a.example:8443/", "https://a.example/"),
    ("https://a.example/%25zz", "https://a.example/%zz"),
    ("https://a.example/%2B", "https://a.example/+"),
    ("https://a.example/(", "https://a.example/%28"),
]


@pytest.mark.parametrize(("one", "other"), SAME_RESOURCE)
def test_req_rank_002_comparison_key_merges_one_resource(one: str, other: str) -> None:
    assert key(one) == key(other)


@pytest.mark.parametrize(("one", "other"), DIFFERENT_RESOURCES)
def test_req_rank_002_comparison_key_keeps_different_resources_apart(one: str, other: str) -> None:
    assert key(one) != key(other)


def test_req_rank_002_comparison_key_form() -> None:
    assert key("HTTPS://Bücher.Example.:443/a%7eb/%c3%a9?x=%2f&utm_source=1#f") == (
        "//xn--bcher-kva.example/a~b/%C3%A9?x=%2F"
    )
    assert key("http://A.example:8080") == "//a.example:8080/"
    assert key("http://0x8.8.8.8:80/") == "//8.8.8.8/"
    # The key is not a URL anyone could be given: it has no scheme.
    assert not key("https://a.example/").startswith(("http:", "https:"))


# -- REQ-RANK-004 and REQ-RANK-001: merging ------------------------------------------


def test_req_rank_004_duplicates_across_engines_merge() -> None:
    a = EngineAnswer(
        "alpha",
        10,
        (
            obs("https://one.example/x?utm_source=a", "A one", "a snippet one"),
            obs("https://two.example/", "A two", "a snippet two"),
        ),
    )
    b = EngineAnswer(
        "beta",
        20,
        (
            obs("https://ONE.example:443/x#frag", "B one", "b snippet one"),
            obs("https://three.example/", "B three", "b snippet three"),
        ),
    )
    ranking = rank([a, b], 10)
    merged = [r for r in ranking.results if r.key == "//one.example/x"]
    assert len(merged) == 1
    one = merged[0]
    # Both at rank 1: preference breaks the tie, so alpha's title, snippet and URL.
    assert (one.title, one.snippet, one.url) == ("A one", "a snippet one", "https://one.example/x")
    assert one.observations == (Seen("alpha", 1), Seen("beta", 1))
    assert one.engines == ("alpha", "beta")
    assert len(ranking.results) == 3


def test_req_rank_004_title_and_snippet_come_from_the_best_rank() -> None:
    a = EngineAnswer("alpha", 10, (obs("https://z.example/"), obs("https://s.example/", "A")))
    b = EngineAnswer("beta", 20, (obs("https://s.example/", "B", "from beta"),))
    merged = next(r for r in rank([a, b], 5).results if r.key == "//s.example/")
    assert (merged.title, merged.snippet) == ("B", "from beta")
    assert merged.observations == (Seen("beta", 1), Seen("alpha", 2))
    # Engines are listed by preference, whatever the ranks.
    assert merged.engines == ("alpha", "beta")


def test_req_rank_004_the_https_url_is_shown_when_the_best_is_http() -> None:
    a = answer("alpha", 10, "http://s.example/p")
    b = answer("beta", 20, "https://x.example/", "https://x2.example/", "https://s.example/p#b")
    c = answer("gamma", 30, "https://y.example/", "https://S.example/p#c")
    merged = next(r for r in rank([a, b, c], 10).results if r.key == "//s.example/p")
    assert merged.title == "http://s.example/p"  # the lead is still the best-ranked one
    assert merged.url == "https://S.example/p#c"  # the best-ranked https observation
    assert [r.url for r in rank([a], 10).results] == ["http://s.example/p"]
    # An https lead is shown as it is, whatever http observation follows.
    d = answer("delta", 5, "https://s.example/p#d")
    merged = next(r for r in rank([a, d], 10).results if r.key == "//s.example/p")
    assert merged.url == "https://s.example/p#d"


def test_req_rank_004_one_engine_listing_a_page_twice_counts_once() -> None:
    a = answer("alpha", 10, "http://s.example/", "https://o.example/", "https://s.example/")
    merged = next(r for r in rank([a], 10).results if r.key == "//s.example/")
    assert merged.observations == (Seen("alpha", 1),)
    assert merged.score == fusion_score([1])
    assert merged.url == "https://s.example/"


def test_req_rank_001_merged_result_holds_url_key_date_and_observations() -> None:
    a = EngineAnswer("alpha", 10, (obs("https://d.example/", "A"),))
    b = EngineAnswer(
        "beta", 20, (obs("https://n.example/"), obs("https://d.example/", "B", date="2026-07-19"))
    )
    c = EngineAnswer(
        "gamma",
        30,
        (
            obs("https://n2.example/"),
            obs("https://n3.example/"),
            obs("https://d.example/", date="2026-01-01"),
        ),
    )
    merged = next(r for r in rank([a, b, c], 10).results if r.key == "//d.example/")
    assert merged.url == "https://d.example/"
    assert merged.title == "A"
    # The lead supplied no date: the best-ranked observation that did gives it.
    assert merged.date == "2026-07-19"
    assert merged.observations == (Seen("alpha", 1), Seen("beta", 2), Seen("gamma", 3))
    no_date = rank([answer("alpha", 10, "https://d.example/")], 1).results[0]
    assert no_date.date is None


def test_req_rank_003_dropped_results_are_counted_by_reason_and_keep_their_rank() -> None:
    a = EngineAnswer(
        "alpha",
        10,
        (
            obs("javascript:alert(1)"),
            obs("https://localhost/"),
            obs("https://k.example/"),
            obs("https://a.example/" + "x" * 2100),
        ),
    )
    b = EngineAnswer("beta", 20, (obs("javascript:alert(1)"), obs("ftp://f.example/")))
    ranking = rank([a, b], 10)
    assert ranking.dropped == (("url_invalid", 3), ("url_too_long", 1))
    assert [(r.url, r.observations) for r in ranking.results] == [
        ("https://k.example/", (Seen("alpha", 3),)),
    ]
    assert rank([answer("alpha", 1, "https://k.example/")], 5).dropped == ()


# -- REQ-RANK-005: fusion ---------------------------------------------------------------


def test_req_rank_005_fusion_is_integer_reciprocal_rank() -> None:
    assert fusion_score([1]) == SCORE_SCALE // (RRF_K + 1)
    assert fusion_score([1, 3]) == SCORE_SCALE // (RRF_K + 1) + SCORE_SCALE // (RRF_K + 3)
    assert isinstance(fusion_score([2, 5]), int)
    scores = [fusion_score([r]) for r in range(1, 1001)]
    assert scores == sorted(scores, reverse=True)
    assert len(set(scores)) == len(scores)  # a better rank always scores more


def test_req_rank_005_agreement_ranks_higher() -> None:
    alone = [f"https://a{i}.example/" for i in range(1, 10)]
    a = answer("alpha", 10, *alone, "https://shared.example/")
    b = answer(
        "beta", 20, *[f"https://b{i}.example/" for i in range(1, 10)], "https://shared.example/"
    )
    ranking = rank([a, b], 20)
    # Two engines at rank 10 outrank either engine's first place.
    assert ranking.results[0].url == "https://shared.example/"
    assert ranking.results[0].observations == (Seen("alpha", 10), Seen("beta", 10))
    assert ranking.results[1].url == "https://a1.example/"
    assert ranking.results[2].url == "https://b1.example/"


# -- REQ-RANK-006: the total order ------------------------------------------------------


def test_req_rank_006_total_order_ties_break_by_preference_then_key() -> None:
    # Equal score and rank: the lower preference first, even against key order.
    a = answer("zeta", 10, "https://z.example/")
    b = answer("alpha", 20, "https://a.example/")
    assert urls_of(rank([b, a], 5)) == ["https://z.example/", "https://a.example/"]
    # Equal preference too: the comparison key decides.
    c = answer("omega", 10, "https://a.example/")
    assert urls_of(rank([a, c], 5)) == ["https://a.example/", "https://z.example/"]
    assert urls_of(rank([c, a], 5)) == ["https://a.example/", "https://z.example/"]


def test_req_rank_006_equal_scores_order_by_best_rank_preference_and_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Force every score equal so that the explicit tie-breakers alone decide.
    monkeypatch.setattr(rank_module, "fusion_score", lambda ranks: 7)
    a = answer("alpha", 20, "https://r1a.example/", "https://r2b.example/")
    b = answer("beta", 10, "https://r2a.example/", "https://r1b.example/", "https://r3.example/")
    # Leads (rank, preference): r1a (1, 20), r2b (2, 20), r2a (1, 10), r1b (2, 10),
    # r3 (3, 10); ordered by best rank, then preference.
    expected = [
        "https://r2a.example/",
        "https://r1a.example/",
        "https://r1b.example/",
        "https://r2b.example/",
        "https://r3.example/",
    ]
    assert urls_of(rank([a, b], 10)) == expected
    assert urls_of(rank([b, a], 10)) == expected
    # Same rank and preference: the key.
    c = answer("gamma", 10, "https://m.example/")
    d = answer("delta", 10, "https://l.example/")
    assert urls_of(rank([c, d], 10)) == ["https://l.example/", "https://m.example/"]


def test_req_rank_006_score_comes_before_best_rank() -> None:
    # s: alpha@2 + beta@2 beats t: alpha@1 alone although t has the better best rank.
    a = answer("alpha", 10, "https://t.example/", "https://s.example/")
    b = answer("beta", 20, "https://u.example/", "https://s.example/")
    assert urls_of(rank([a, b], 10))[0] == "https://s.example/"


# -- REQ-RANK-007: the cut --------------------------------------------------------------


def test_req_rank_007_cut_to_max_results() -> None:
    answers = [
        answer(f"e{n}", n, *[f"https://r{(i * (n + 1)) % 17}.example/" for i in range(10)])
        for n in range(3)
    ]
    full = rank(answers, 100).results
    assert len(full) > 5
    assert rank(answers, 5).results == full[:5]
    assert rank(answers, 1).results == full[:1]
    assert rank(answers, 0).results == ()
    with pytest.raises(ValueError, match="negative"):
        rank(answers, -1)


def test_rank_refuses_an_engine_that_answers_twice() -> None:
    with pytest.raises(ValueError, match="twice"):
        rank([answer("alpha", 1, "https://a.example/"), answer("alpha", 1)], 5)


# -- REQ-ARCH-004 / REQ-TEST-011: determinism ---------------------------------------------

POOL = [
    "https://a.example/",
    "http://a.example/",
    "https://A.example/#f",
    "https://b.example/x",
    "https://b.example/x?utm_source=1",
    "https://c.example/",
    "http://d.example/",
    "https://e.example/?q=1&r",
    "javascript:void(0)",
    "https://localhost/",
    "https://bücher.example/",
    "https://xn--bcher-kva.example/",
    "http://8.8.8.8/",
]


@st.composite
def engine_answers(draw: st.DrawFn) -> list[EngineAnswer]:
    count = draw(st.integers(min_value=1, max_value=5))
    ids = draw(st.lists(st.sampled_from("abcdefgh"), min_size=count, max_size=count, unique=True))
    answers = []
    for engine in ids:
        preference = draw(st.integers(min_value=0, max_value=3))  # ties on purpose
        items = draw(
            st.lists(
                st.builds(
                    Observation,
                    st.sampled_from(POOL),
                    st.sampled_from(["t1", "t2"]),
                    st.sampled_from(["s1", "s2"]),
                    st.sampled_from([None, "2026-01-01", "2025-05-05"]),
                ),
                max_size=8,
            )
        )
        answers.append(EngineAnswer(engine, preference, tuple(items)))
    return answers


def _bytes(ranking: Ranking) -> bytes:
    return json.dumps(asdict(ranking), ensure_ascii=False, sort_keys=True).encode()


@settings(max_examples=300)
@given(engine_answers(), st.randoms(use_true_random=False), st.integers(1, 20))
def test_req_test_011_shuffled_arrival_orders_give_identical_output(
    answers: list[EngineAnswer], rnd: object, max_results: int
) -> None:
    import random

    assert isinstance(rnd, random.Random)
    expected = _bytes(rank(answers, max_results))
    for _ in range(3):
        shuffled = list(answers)
        rnd.shuffle(shuffled)
        assert _bytes(rank(shuffled, max_results)) == expected
        assert _bytes(rank(iter(shuffled), max_results)) == expected


@settings(max_examples=200)
@given(engine_answers(), st.integers(1, 20))
def test_req_arch_004_order_is_total_and_sorted_by_the_rules(
    answers: list[EngineAnswer], max_results: int
) -> None:
    preference = {a.engine: a.preference for a in answers}
    results = rank(answers, max_results).results
    assert len(results) <= max_results
    keys = [r.key for r in results]
    assert len(set(keys)) == len(keys)

    def order(r: RankedResult) -> tuple[int, int, int, str]:
        lead = min(r.observations, key=lambda s: (s.rank, preference[s.engine], s.engine))
        return (-r.score, lead.rank, preference[lead.engine], r.key)

    assert [order(r) for r in results] == sorted(order(r) for r in results)
    for r in results:
        assert r.score == fusion_score(s.rank for s in r.observations)


# -- REQ-TEST-013: properties of URL handling ---------------------------------------------

URL_PIECES = st.one_of(
    st.sampled_from(
        [
            "/",
            "?",
            "#",
            "&",
            "=",
            "%",
            "%2",
            "%7e",
            "%7E",
            "%C3%A9",
            "%zz",
            ":",
            "@",
            "[",
            "]",
            ".",
            "..",
            "a",
            "Z",
            "é",
            "ü",
            "+",
            ";",
            "utm_source=x",
            "fbclid=1",
            "gclid",
            "q=1",
            "\\",
            " ",
            "\u200b",
            "xn--",
            "-",
            "_",
        ]
    ),
    st.text(max_size=3),
)
HOSTS = st.sampled_from(
    [
        "a.example",
        "A.Example.",
        "bücher.example",
        "8.8.8.8",
        "2130706433",
        "[2001:4860::1]",
        "[::1]",
        "localhost",
        "a..example",
        "",
        "x.local",
        "0x8.8.8.8",
        "Пример.РФ",
        "a.example:8080",
        "a.example:",
        "a.example:99999",
        "u@a.example",
    ]
)


@st.composite
def url_like(draw: st.DrawFn) -> str:
    scheme = draw(st.sampled_from(["http", "https", "HTTPS", "ftp", "javascript", ""]))
    sep = draw(st.sampled_from(["://", ":", "//", ":///"]))
    host = draw(HOSTS)
    tail = "".join(draw(st.lists(URL_PIECES, max_size=12)))
    return f"{scheme}{sep}{host}{tail}"


ANY_URL = st.one_of(url_like(), st.text(max_size=60))


@settings(max_examples=500)
@given(ANY_URL)
def test_req_test_013_normalize_never_raises_and_bounds_the_url(url: str) -> None:
    result = normalize(url)
    assert isinstance(result, NormalUrl | DroppedUrl)
    if isinstance(result, NormalUrl):
        assert len(result.url) <= URL_MAX_CHARS
        assert result.url.lower().startswith(("http://", "https://"))
        assert result.https == result.url.lower().startswith("https://")
        assert "#" not in result.key
        host = result.url.split("//", 1)[1].split("/")[0].split("?")[0].split("#")[0]
        assert host.isascii()  # THR-24: hosts are shown in ASCII form
        assert not refuses_host(host.rsplit(":", 1)[0] if not host.endswith("]") else host)


@settings(max_examples=500)
@given(ANY_URL)
def test_req_test_013_normalization_is_idempotent(url: str) -> None:
    result = normalize(url)
    if isinstance(result, NormalUrl):
        assert normalize(result.url) == result


@settings(max_examples=500)
@given(ANY_URL)
def test_req_test_013_returned_url_is_never_longer_than_the_ascii_input(url: str) -> None:
    result = normalize(url)
    if isinstance(result, NormalUrl):
        if url.isascii():
            assert len(result.url) <= len(url)
        # Only a non-ASCII host label can make it longer, and the bound holds.
        assert len(result.url) <= URL_MAX_CHARS


@settings(max_examples=500)
@given(ANY_URL)
def test_req_test_013_no_tracking_parameter_survives(url: str) -> None:
    result = normalize(url)
    if isinstance(result, NormalUrl):
        before_fragment = result.url.split("#", 1)[0]
        if "?" in before_fragment:
            query = before_fragment.split("?", 1)[1]
            assert not any(is_tracking_parameter(p.split("=", 1)[0]) for p in query.split("&"))


@settings(max_examples=500)
@given(ANY_URL)
def test_req_rank_003_without_tracking_or_idna_the_url_comes_back_byte_for_byte(
    url: str,
) -> None:
    result = normalize(url)
    if isinstance(result, NormalUrl) and url.isascii():
        query = url.split("#", 1)[0].partition("?")[2]
        if not any(is_tracking_parameter(p.split("=", 1)[0]) for p in query.split("&")):
            assert result.url == url
