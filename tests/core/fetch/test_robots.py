"""robots.txt (REQ-CMP-005, RFC 9309): parsing, matching, the status table and the cache."""

from __future__ import annotations

import re
import threading
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rypsok.core import limits
from rypsok.core.fetch.robots import (
    ALLOW_ALL,
    DISALLOW_ALL,
    MAX_PATTERN_LITERAL,
    MAX_RULES,
    RobotsRules,
    parse_robots,
    parse_robots_prefix,
    rules_for_status,
)
from rypsok.core.store.local.robots import RobotsCache
from tests.support.clock import FakeClock


def rules(text: str) -> RobotsRules:
    return parse_robots(text.encode("utf-8"))


# --- group selection ---------------------------------------------------------------------


def test_req_cmp_005_the_rypsok_group_wins_over_the_star_group() -> None:
    r = rules("User-agent: *\nDisallow: /\n\nUser-agent: rypsok\nDisallow: /private\n")
    assert r.allows("/public")
    assert not r.allows("/private/x")


def test_req_cmp_005_the_rypsok_group_wins_whatever_the_order_of_groups() -> None:
    r = rules("User-agent: rypsok\nDisallow: /private\n\nUser-agent: *\nDisallow: /\n")
    assert r.allows("/public")
    assert not r.allows("/private")


@pytest.mark.parametrize("agent", ["RypSok", "RYPSOK", "rypsok/2.1", "Rypsok/1.0 (+https://x)"])
def test_req_cmp_005_the_product_token_matches_case_insensitively(agent: str) -> None:
    r = rules(f"User-agent: *\nDisallow: /\n\nUser-agent: {agent}\nDisallow: /only\n")
    assert r.allows("/other")
    assert not r.allows("/only")


def test_req_cmp_005_the_product_argument_is_case_insensitive_too() -> None:
    r = parse_robots(b"User-agent: rypsok\nDisallow: /x\n", product="RypSok")
    assert not r.allows("/x")


@pytest.mark.parametrize("agent", ["rypsokbot", "rypso", "xrypsok", "rypsok_2"])
def test_req_cmp_005_a_longer_or_shorter_token_is_another_agent(agent: str) -> None:
    r = rules(f"User-agent: {agent}\nDisallow: /\n\nUser-agent: *\nDisallow: /star\n")
    assert r.allows("/a")
    assert not r.allows("/star")


def test_req_cmp_005_a_group_listing_several_user_agents_applies_to_each() -> None:
    text = "User-agent: googlebot\nUser-agent: rypsok\nUser-agent: bingbot\nDisallow: /g\n"
    text += "User-agent: *\nDisallow: /\n"
    r = rules(text)
    assert not r.allows("/g/1")
    assert r.allows("/h")


def test_req_cmp_005_blank_lines_and_unknown_lines_do_not_split_the_user_agent_lines() -> None:
    r = rules("User-agent: rypsok\n\nCrawl-delay: 5\nUser-agent: other\nDisallow: /x\n")
    assert not r.allows("/x")


def test_req_cmp_005_several_rypsok_groups_are_merged() -> None:
    text = (
        "User-agent: rypsok\nDisallow: /a\n\n"
        "User-agent: *\nDisallow: /\n\n"
        "User-agent: RYPSOK\nDisallow: /b\nAllow: /b/ok\n"
    )
    r = rules(text)
    assert not r.allows("/a")
    assert not r.allows("/b")
    assert r.allows("/b/ok")
    assert r.allows("/c")


def test_req_cmp_005_several_star_groups_are_merged() -> None:
    r = rules(
        "User-agent: *\nDisallow: /a\n\nUser-agent: other\nDisallow: /\n\n"
        "User-agent: *\nDisallow: /b\n"
    )
    assert not r.allows("/a")
    assert not r.allows("/b")
    assert r.allows("/c")


def test_req_cmp_005_the_star_group_applies_only_when_no_group_names_rypsok() -> None:
    star_only = rules("User-agent: otherbot\nDisallow: /\n\nUser-agent: *\nDisallow: /s\n")
    assert not star_only.allows("/s")
    assert star_only.allows("/t")
    with_ours = rules("User-agent: rypsok\nDisallow: /r\n\nUser-agent: *\nDisallow: /s\n")
    assert with_ours.allows("/s")
    assert not with_ours.allows("/r")


def test_req_cmp_005_a_rypsok_group_that_allows_all_overrides_a_star_disallow() -> None:
    r = rules("User-agent: *\nDisallow: /\n\nUser-agent: rypsok\nDisallow:\n")
    assert r.allows("/anything")


def test_req_cmp_005_no_applicable_group_allows_everything() -> None:
    r = rules("User-agent: otherbot\nDisallow: /\n")
    assert r.allows("/a")
    assert r == ALLOW_ALL


def test_req_cmp_005_rules_before_any_user_agent_line_are_ignored() -> None:
    r = rules("Disallow: /\nUser-agent: *\nDisallow: /x\n")
    assert r.allows("/y")
    assert not r.allows("/x")


def test_req_cmp_005_a_user_agent_line_after_a_rule_starts_a_new_group() -> None:
    r = rules("User-agent: rypsok\nDisallow: /a\nUser-agent: other\nDisallow: /b\n")
    assert not r.allows("/a")
    assert r.allows("/b")


# --- rules and matching ------------------------------------------------------------------


def test_req_cmp_005_the_longest_match_wins() -> None:
    r = rules("User-agent: *\nDisallow: /a\nAllow: /a/b\nDisallow: /a/b/c\n")
    assert not r.allows("/a")
    assert r.allows("/a/b")
    assert not r.allows("/a/b/c/d")
    assert not r.allows("/a/x")


def test_req_cmp_005_the_longest_match_wins_whatever_the_order_of_lines() -> None:
    r = rules("User-agent: *\nAllow: /a/b\nDisallow: /a\n")
    assert r.allows("/a/b/1")
    assert not r.allows("/a/c")


def test_req_cmp_005_allow_wins_a_tie() -> None:
    assert rules("User-agent: *\nDisallow: /p\nAllow: /p\n").allows("/p/1")
    assert rules("User-agent: *\nAllow: /p\nDisallow: /p\n").allows("/p/1")
    # Equal length, different patterns, both matching.
    assert rules("User-agent: *\nDisallow: /x/\nAllow: /x*\n").allows("/x/1")


def test_req_cmp_005_the_star_matches_any_run_of_characters() -> None:
    r = rules("User-agent: *\nDisallow: /*/private/\nDisallow: *.gif\n")
    assert not r.allows("/users/private/1")
    assert not r.allows("/a/b/private/")
    assert r.allows("/private/")
    assert not r.allows("/img/x.gif")
    assert not r.allows("/img/x.gif?size=2")


def test_req_cmp_005_the_dollar_anchors_the_end() -> None:
    r = rules("User-agent: *\nDisallow: /*.php$\nDisallow: /exact$\n")
    assert not r.allows("/index.php")
    assert not r.allows("/a/b.php")
    assert r.allows("/index.php?x=1")
    assert r.allows("/index.phps")
    assert not r.allows("/exact")
    assert r.allows("/exact/")
    assert r.allows("/exactly")


def test_req_cmp_005_a_dollar_inside_a_pattern_is_literal() -> None:
    r = rules("User-agent: *\nDisallow: /a$b\n")
    assert not r.allows("/a$b/c")
    assert r.allows("/a")


def test_req_cmp_005_a_rule_matches_the_query_as_requested() -> None:
    r = rules("User-agent: *\nDisallow: /search?q=\nDisallow: /*?sessionid\n")
    assert not r.allows("/search?q=x")
    assert r.allows("/search")
    assert not r.allows("/page?sessionid=1")


def test_req_cmp_005_paths_are_case_sensitive() -> None:
    r = rules("User-agent: *\nDisallow: /Private\n")
    assert not r.allows("/Private")
    assert r.allows("/private")


def test_req_cmp_005_the_fragment_is_not_part_of_the_target() -> None:
    r = rules("User-agent: *\nDisallow: /a$\n")
    assert not r.allows("/a#section")


def test_req_cmp_005_a_pattern_without_a_leading_slash_is_read_with_one() -> None:
    r = rules("User-agent: *\nDisallow: private/\n")
    assert not r.allows("/private/x")
    assert r.allows("/public")


def test_req_cmp_005_a_target_without_a_leading_slash_is_read_with_one() -> None:
    r = rules("User-agent: *\nDisallow: /$\n")
    assert not r.allows("")
    assert r.allows("/a")


@pytest.mark.parametrize(
    ("pattern", "target"),
    [
        ("/a%3Cd", "/a<d"),
        ("/a<d", "/a%3Cd"),
        ("/a%3cd", "/a%3Cd"),
        ("/a%3Cd", "/a%3cd"),
        ("/%7Euser", "/~user"),
        ("/~user", "/%7Euser"),
        ("/%7euser", "/~user"),
        ("/%41bc", "/Abc"),
        ("/foo/bar/ツ", "/foo/bar/%E3%83%84"),
        ("/foo/bar/%E3%83%84", "/foo/bar/ツ"),
        ("/a b", "/a%20b"),
        ("/100%", "/100%25"),
    ],
)
def test_req_cmp_005_percent_encoding_is_compared_normalised(pattern: str, target: str) -> None:
    r = rules(f"User-agent: *\nDisallow: {pattern}$\n")
    assert not r.allows(target)


@pytest.mark.parametrize(
    ("pattern", "target"),
    [("/a%2Fb", "/a/b"), ("/a/b", "/a%2Fb"), ("/a%3Fb", "/a?b"), ("/%2A", "/*")],
)
def test_req_cmp_005_an_encoded_reserved_character_is_not_the_character(
    pattern: str, target: str
) -> None:
    r = rules(f"User-agent: *\nDisallow: {pattern}$\n")
    assert r.allows(target)


def test_req_cmp_005_normalisation_gives_equivalent_patterns_equal_specificity() -> None:
    # /%7Ea is three octets longer as written, but the same pattern as /~a: the tie goes to allow.
    r = rules("User-agent: *\nDisallow: /%7Ea\nAllow: /~a\n")
    assert r.allows("/~a")


def test_req_cmp_005_an_empty_disallow_allows_everything() -> None:
    r = rules("User-agent: *\nDisallow:\n")
    assert r.allows("/")
    assert r.allows("/any/path?x=1")
    assert rules("User-agent: *\nDisallow:   # nothing\n").allows("/x")


def test_req_cmp_005_an_empty_allow_changes_nothing() -> None:
    r = rules("User-agent: *\nDisallow: /\nAllow:\n")
    assert not r.allows("/x")


@pytest.mark.parametrize("target", ["/robots.txt", "/robots.txt?x=1"])
def test_req_cmp_005_robots_txt_itself_is_always_allowed(target: str) -> None:
    assert rules("User-agent: *\nDisallow: /\nDisallow: /robots.txt$\n").allows(target)
    assert DISALLOW_ALL.allows(target)


def test_req_cmp_005_only_robots_txt_itself_is_exempt() -> None:
    r = rules("User-agent: *\nDisallow: /\n")
    assert not r.allows("/robots.txt.bak")
    assert not r.allows("/robots.txt/x")
    assert not r.allows("/a/robots.txt")


def test_req_cmp_005_comments_unknown_lines_and_garbage_are_tolerated() -> None:
    body = (
        b"# a comment\n"
        b"garbage without a colon\n"
        b"\x00\xff\xfe: \x80\x81\n"
        b"User-agent: * # everyone\n"
        b"Crawl-delay: 10\n"
        b"Sitemap: https://example.org/sitemap.xml\n"
        b"Host: example.org\n"
        b"Noindex: /n\n"
        b"Disallow: /private # not for robots\n"
        b"DISALLOW : /upper\n"
        b"   allow:/private/ok\n"
        b"Disallow /no-colon\n"
    )
    r = parse_robots(body)
    assert not r.allows("/private/x")
    assert r.allows("/private/ok")
    assert not r.allows("/upper")
    assert r.allows("/no-colon")
    assert r.allows("/n")
    assert r.allows("/sitemap.xml")


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
def test_req_cmp_005_bom_and_every_line_end_are_read(newline: bytes, bom: bytes) -> None:
    body = bom + newline.join(
        [
            b"User-agent: rypsok",
            b"Disallow: /a",
            b"Allow: /a/b",
            b"",
            b"User-agent: *",
            b"Disallow: /",
        ]
    )
    r = parse_robots(body)
    assert not r.allows("/a")
    assert r.allows("/a/b")
    assert r.allows("/c")


def test_req_cmp_005_the_rules_keep_their_normalised_patterns_most_specific_first() -> None:
    r = rules("User-agent: *\nDisallow: /a\nAllow: /a%7e/b\nDisallow: /a~/b\n")
    assert [(rule.allow, rule.pattern) for rule in r.rules] == [
        (True, "/a~/b"),
        (False, "/a~/b"),
        (False, "/a"),
    ]


# --- the status of the robots.txt read ---------------------------------------------------


@pytest.mark.parametrize("status", [200, 203, 204, 206, 299])
def test_req_cmp_005_a_2xx_answer_is_parsed(status: int) -> None:
    assert rules_for_status(status) is None


@pytest.mark.parametrize("status", [400, 401, 403, 404, 410, 451, 499])
def test_req_cmp_005_an_unavailable_robots_txt_allows_everything(status: int) -> None:
    assert rules_for_status(status) is ALLOW_ALL


@pytest.mark.parametrize("status", [500, 502, 503, 504, 599])
def test_req_cmp_005_an_unreachable_robots_txt_disallows_everything(status: int) -> None:
    result = rules_for_status(status)
    assert result is DISALLOW_ALL
    assert not result.allows("/")
    assert not result.allows("/any?x")


def test_req_cmp_005_too_many_requests_counts_as_unreachable() -> None:
    assert rules_for_status(429) is DISALLOW_ALL


@pytest.mark.parametrize("status", [300, 301, 302, 304, 307, 308])
def test_req_cmp_005_a_redirect_left_after_the_hops_means_unavailable(status: int) -> None:
    assert rules_for_status(status) is ALLOW_ALL


@pytest.mark.parametrize("status", [-1, 0, 100, 101, 199, 600, 999])
def test_req_cmp_005_a_nonsense_status_disallows_everything(status: int) -> None:
    assert rules_for_status(status) is DISALLOW_ALL


def test_req_cmp_005_allow_all_and_disallow_all_mean_what_they_say() -> None:
    for target in ("/", "/a", "/a?b", "/%E3%83%84", ""):
        assert ALLOW_ALL.allows(target)
        assert not DISALLOW_ALL.allows(target)


# --- bounds --------------------------------------------------------------------------------


def test_req_cmp_005_at_most_lim_f13_bytes_are_read() -> None:
    assert limits.default("LIM-F13") == 512 * 1024
    head = b"User-agent: *\nDisallow: /early\n"
    filler = b"#" * (limits.default("LIM-F13") - len(head) - 40) + b"\n"
    body = head + filler + b"Disallow: /inside\n"
    assert len(body) <= limits.default("LIM-F13")
    body += b"#" * 100 + b"\nDisallow: /beyond\n"
    r = parse_robots(body)
    assert not r.allows("/early")
    assert not r.allows("/inside")
    assert r.allows("/beyond")


BOUND = limits.default("LIM-F13")


def _up_to_the_bound(head: bytes, last: bytes, end: bytes) -> bytes:
    """``head``, a comment, then ``last`` ending exactly at the bound."""
    return head + b"#" * (BOUND - len(head) - len(end) - len(last)) + end + last


@pytest.mark.parametrize("end", [b"\n", b"\r\n", b"\r"])
def test_req_cmp_005_lim_f13_a_line_the_bound_cuts_is_dropped(end: bytes) -> None:
    head = b"User-agent: *" + end + b"Disallow: /early" + end
    body = _up_to_the_bound(head, b"Disallow: /p", end) + b"age-archive" + end
    r = parse_robots_prefix(body)
    assert not r.allows("/early")  # the lines before it stay
    assert r.allows("/page")  # not read as Disallow: /p


def test_req_cmp_005_lim_f13_a_body_of_exactly_the_bound_may_have_been_cut() -> None:
    body = _up_to_the_bound(b"User-agent: *\n", b"Disallow: /p", b"\n")
    assert len(body) == BOUND
    assert parse_robots_prefix(body).allows("/page")
    assert not parse_robots(body).allows("/page")  # what reading it whole would say


@pytest.mark.parametrize("end", [b"\n", b"\r\n", b"\r"])
def test_req_cmp_005_lim_f13_the_last_whole_line_before_the_bound_is_read_as_written(
    end: bytes,
) -> None:
    body = _up_to_the_bound(b"User-agent: *" + end, b"Disallow: /page-archive" + end, end)
    assert len(body) == BOUND
    r = parse_robots_prefix(body + b"Disallow: /" + end)
    assert not r.allows("/page-archive/2024")
    assert r.allows("/page-archiv")  # its last character was kept
    assert r.allows("/other")  # nothing past the bound


def test_req_cmp_005_lim_f13_a_body_below_the_bound_is_read_whole() -> None:
    r = parse_robots_prefix(b"User-agent: *\nDisallow: /early\nDisallow: /last")
    assert not r.allows("/early") and not r.allows("/last")


@pytest.mark.parametrize("agent", ["*", "rypsok"])
def test_req_cmp_005_the_number_of_rules_kept_is_bounded(agent: str) -> None:
    body = f"User-agent: {agent}\n" + "".join(f"Disallow: /r{i}$\n" for i in range(MAX_RULES + 5))
    r = rules(body)
    assert len(r.rules) == MAX_RULES
    assert not r.allows("/r0")
    assert not r.allows(f"/r{MAX_RULES - 1}")
    assert r.allows(f"/r{MAX_RULES}")
    assert r.allows(f"/r{MAX_RULES + 4}")


def test_req_cmp_005_a_pattern_longer_than_any_url_is_dropped() -> None:
    too_long = "/" + "a" * MAX_PATTERN_LITERAL
    just_fits = "/" + "b" * (MAX_PATTERN_LITERAL - 1)
    r = rules(f"User-agent: *\nDisallow: {too_long}\nDisallow: {just_fits}\n")
    assert [rule.pattern for rule in r.rules] == [just_fits]
    # No URL rypsok fetches (LIM-F9 characters) could have matched the dropped one.
    assert 12 * limits.default("LIM-F9") <= MAX_PATTERN_LITERAL


def test_req_cmp_005_a_pathological_wildcard_pattern_is_matched_fast() -> None:
    body = b"User-agent: *\nDisallow: /*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b\n"
    r = parse_robots(body)
    target = "/" + "a" * 200_000
    start = time.perf_counter()
    for _ in range(5):
        assert r.allows(target)
    assert time.perf_counter() - start < 2.0
    assert not r.allows(target + "b")


def test_req_cmp_005_many_wildcard_rules_against_a_long_target_stay_cheap() -> None:
    line = "Disallow: /" + "*a" * 20 + "*b$\n"
    body = "User-agent: *\n" + line * MAX_RULES
    assert len(body) <= limits.default("LIM-F13")
    r = rules(body)
    assert len(r.rules) == MAX_RULES
    target = "/" + "a" * 4096
    start = time.perf_counter()
    assert r.allows(target)
    assert time.perf_counter() - start < 5.0


def test_req_cmp_005_a_large_file_parses_fast() -> None:
    line = b"Disallow: /some/rather/long/path/*with/%7Ewildcards$\n"
    body = b"User-agent: *\n" + line * (limits.default("LIM-F13") // len(line))
    start = time.perf_counter()
    r = parse_robots(body)
    assert time.perf_counter() - start < 5.0
    assert not r.allows("/some/rather/long/path/x/with/~wildcards")


# --- the cache -----------------------------------------------------------------------------


def test_req_cmp_005_the_cache_keeps_an_entry_for_24_hours() -> None:
    assert limits.default("LIM-F12") == 24 * 3600
    clock = FakeClock(1000.0)
    cache = RobotsCache(10, clock=clock)
    rules_a = rules("User-agent: *\nDisallow: /a\n")
    cache.put("https://example.org:443", rules_a)
    clock.now += 24 * 3600 - 1
    assert cache.get("https://example.org:443") is rules_a
    clock.now += 1
    assert cache.get("https://example.org:443") is None
    assert len(cache) == 0


def test_req_cmp_005_reading_an_entry_does_not_extend_its_life() -> None:
    clock = FakeClock(1000.0)
    cache = RobotsCache(10, clock=clock)
    cache.put("https://a:443", ALLOW_ALL)
    for _ in range(24):
        clock.now += 3600 - 1
        cache.get("https://a:443")
    clock.now += 24
    assert cache.get("https://a:443") is None


def test_req_cmp_005_putting_again_renews_an_entry() -> None:
    clock = FakeClock(1000.0)
    cache = RobotsCache(10, clock=clock)
    cache.put("https://a:443", ALLOW_ALL)
    clock.now += 20 * 3600
    cache.put("https://a:443", DISALLOW_ALL)
    clock.now += 20 * 3600
    assert cache.get("https://a:443") is DISALLOW_ALL


def test_req_cmp_005_the_cache_evicts_the_least_recently_used_origin() -> None:
    cache = RobotsCache(2, clock=FakeClock(1000.0))
    cache.put("https://a:443", ALLOW_ALL)
    cache.put("https://b:443", DISALLOW_ALL)
    assert cache.get("https://a:443") is ALLOW_ALL  # a is now the most recent
    cache.put("https://c:443", ALLOW_ALL)
    assert cache.get("https://b:443") is None
    assert cache.get("https://a:443") is ALLOW_ALL
    assert cache.get("https://c:443") is ALLOW_ALL


def test_req_cmp_005_the_cache_holds_at_most_its_entries() -> None:
    assert limits.default("LIM-F15") == 1000
    cache = RobotsCache(limits.default("LIM-F15"), clock=FakeClock(1000.0))
    for i in range(limits.default("LIM-F15") + 50):
        cache.put(f"https://h{i}:443", ALLOW_ALL)
    assert len(cache) == limits.default("LIM-F15")
    assert cache.get("https://h0:443") is None
    assert cache.get("https://h49:443") is None
    assert cache.get("https://h50:443") is ALLOW_ALL


def test_req_cmp_005_origins_are_separate_and_case_insensitive() -> None:
    cache = RobotsCache(10, clock=FakeClock(1000.0))
    cache.put("https://Example.ORG:443", DISALLOW_ALL)
    assert cache.get("https://example.org:443") is DISALLOW_ALL
    assert cache.get("HTTPS://EXAMPLE.org:443") is DISALLOW_ALL
    assert cache.get("https://example.org:8443") is None
    assert cache.get("http://example.org:443") is None


@pytest.mark.parametrize("entries", [0, -1])
def test_req_cmp_005_a_cache_without_room_is_refused(entries: int) -> None:
    with pytest.raises(ValueError, match="entries"):
        RobotsCache(entries)


def test_req_cmp_005_the_cache_stays_bounded_under_concurrent_use() -> None:
    cache = RobotsCache(16)
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(2000):
                origin = f"https://h{(n * 7 + i) % 40}:443"
                cache.put(origin, ALLOW_ALL)
                got = cache.get(origin)
                assert got is None or got is ALLOW_ALL
                assert len(cache) <= 16
        except BaseException as exc:  # reported below: a thread's failure is otherwise lost
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(cache) == 16


# --- properties ----------------------------------------------------------------------------

_LINE = st.one_of(
    st.binary(max_size=40),
    st.tuples(
        st.sampled_from([b"User-agent", b"user-AGENT", b"Allow", b"Disallow", b"Sitemap", b"x"]),
        st.sampled_from([b":", b" : ", b""]),
        st.binary(max_size=30),
    ).map(lambda t: t[0] + t[1] + t[2]),
)
_BODY = st.tuples(st.lists(_LINE, max_size=20), st.sampled_from([b"\n", b"\r\n", b"\r"])).map(
    lambda t: t[1].join(t[0])
)


@given(st.binary(max_size=2000))
@settings(max_examples=300)
def test_req_cmp_005_parsing_never_raises_on_arbitrary_bytes(body: bytes) -> None:
    assert isinstance(parse_robots(body), RobotsRules)


@given(_BODY, st.text(max_size=60))
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
def test_req_cmp_005_allows_never_raises(body: bytes, target: str) -> None:
    assert isinstance(parse_robots(body).allows(target), bool)


_PATH = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=40)


@given(_PATH)
@settings(max_examples=300)
def test_req_cmp_005_disallow_root_for_star_disallows_every_path_but_robots_txt(
    path: str,
) -> None:
    r = rules("User-agent: *\nDisallow: /\n")
    target = "/" + path
    expected = target.split("#")[0].split("?")[0] == "/robots.txt"
    assert r.allows(target) is expected
    assert r.allows("/robots.txt")


_SIMPLE = st.text(alphabet="ab/.*$", max_size=8)
_TINY = st.text(alphabet="ab*", max_size=7)


def _reference(pattern: str, target: str) -> bool:
    # Backtracking regular expression: fine for these small inputs, the oracle of the matcher.
    anchored = pattern.endswith("$")
    body = pattern[:-1] if anchored else pattern
    regex = ".*".join(re.escape(part) for part in body.split("*")) + ("$" if anchored else "")
    return re.match(regex, target, flags=re.DOTALL) is not None


@given(_SIMPLE, st.text(alphabet="ab/.$*", max_size=12))
@settings(max_examples=500)
def test_req_cmp_005_wildcard_matching_agrees_with_a_reference(pattern: str, rest: str) -> None:
    pattern = "/" + pattern
    target = "/" + rest
    r = rules(f"User-agent: *\nDisallow: {pattern}\n")
    assert r.allows(target) is not _reference(pattern, target)


@given(_TINY, st.booleans(), st.text(alphabet="ab", max_size=10))
@settings(max_examples=1000)
def test_req_cmp_005_dense_wildcard_matching_agrees_with_a_reference(
    pattern: str, anchored: bool, rest: str
) -> None:
    pattern = "/" + pattern + ("$" if anchored else "")
    target = "/" + rest
    r = rules(f"User-agent: *\nDisallow: {pattern}\n")
    assert r.allows(target) is not _reference(pattern, target)


@pytest.mark.parametrize(
    ("pattern", "target", "match"),
    [
        ("/*ab*b$", "/xab", False),  # the middle segment may not overlap the anchored end
        ("/*ab*b$", "/xabb", True),
        ("/*aa*a", "/aa", False),  # segments may not overlap each other
        ("/*aa*a", "/aaa", True),
        ("/a*a$", "/a", False),  # nor the first and the last
        ("/a*a$", "/aa", True),
        ("/*b*", "/ab", True),
        ("/**a", "/xa", True),
        ("/a$", "/a", True),
        ("/a$", "/ab", False),
        ("*", "/", True),
    ],
)
def test_req_cmp_005_wildcard_segments_never_overlap(
    pattern: str, target: str, match: bool
) -> None:
    assert _reference(pattern, target) is match
    assert rules(f"User-agent: *\nDisallow: {pattern}\n").allows(target) is not match


@given(st.text(alphabet="abcXYZ019-._~", min_size=1, max_size=12))
@settings(max_examples=200)
def test_req_cmp_005_an_encoded_unreserved_character_equals_the_character(word: str) -> None:
    encoded = "".join(f"%{ord(c):02x}" for c in word)
    assert not rules(f"User-agent: *\nDisallow: /{encoded}$\n").allows(f"/{word}")
    assert not rules(f"User-agent: *\nDisallow: /{word}$\n").allows(f"/{encoded.upper()}")
