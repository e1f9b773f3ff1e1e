"""Properties of robots.txt parsing and matching (REQ-CMP-005, REQ-SEC-023), beside
test_robots.py.

parse_robots answers DISALLOW_ALL should its reader ever raise, so a test of parse_robots
alone could not see a defect: the reader behind it is called here directly. A path and a
percent-encoded spelling of it (RFC 3986: an unreserved character or a non-ASCII one may be
escaped, hex digits in either case) get the same verdict, and so do rules written either
way. The body is read only up to LIM-F13.
"""

from __future__ import annotations

import random

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from rypsok.core import limits
from rypsok.core.fetch import robots
from rypsok.core.fetch.robots import MAX_RULES, RobotsRules, parse_robots

_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_HEX = frozenset("0123456789abcdefABCDEF")

LINES = st.one_of(
    st.binary(max_size=30),
    st.tuples(
        st.sampled_from(
            [
                b"User-agent",
                b"user-AGENT",
                b"Allow",
                b"disallow",
                b"Sitemap",
                b"Crawl-delay",
                b"\xef\xbb\xbfUser-agent",
                b"",
            ]
        ),
        st.sampled_from([b":", b" :", b""]),
        st.sampled_from(
            [
                b" *",
                b" rypsok",
                b" RypSok/2.0",
                b" other",
                b" /",
                b" /a*",
                b" *$",
                b" /%2F",
                b" /\xc3\xa9",
                b" /\xff",
                b" #x",
                b"",
            ]
        ),
        st.binary(max_size=12),
    ).map(b"".join),
)
BODIES = st.tuples(st.lists(LINES, max_size=25), st.sampled_from([b"\n", b"\r\n", b"\r"])).map(
    lambda t: t[1].join(t[0])
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(BODIES, st.text(max_size=40))
@example(b"User-agent: *\nDisallow: /\xed\xa0\x80", "/\ud800")
def test_req_cmp_005_the_reader_itself_never_raises(body: bytes, target: str) -> None:
    rules = robots._parse(body, "rypsok")  # not parse_robots: its fallback would hide a defect
    assert isinstance(rules, RobotsRules)
    assert len(rules.rules) <= MAX_RULES
    assert isinstance(rules.allows(target), bool)
    assert rules.allows("/robots.txt")


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(
        [
            b"",
            b"\xef\xbb\xbf",
            b"\n\n",
            b"# nothing here\n",
            b"Sitemap: /s.xml",
            b"User-agent: *\n",
            b"User-agent: *\nDisallow:\n",
            b"Disallow: /\n",
        ]
    ),
    st.text(max_size=30),
)
def test_req_cmp_005_a_file_without_rules_for_anyone_allows_everything(
    body: bytes, path: str
) -> None:
    # The last body has a rule, but before any user-agent line: it belongs to no group.
    assert parse_robots(body).allows("/" + path)


# -- percent-encoded spellings --------------------------------------------------------------

CHARACTERS = st.sampled_from(
    [
        *"ab~.-_/?=&;:@!$'()+,",
        "é",
        "日",
        " ",
        '"',
        "<",
        "%2F",
        "%2f",
        "%41",
        "%7e",
        "%20",
        "%25",
        "%zz",
        "%",
        "\t",
        "ü",
    ]
)
PATTERN_PARTS = st.one_of(CHARACTERS, st.sampled_from(["*", "$"]))


def _respell(text: str, rng: random.Random) -> str:
    """`text` with some characters written as escapes and some escapes' hex re-cased: what
    RFC 3986 calls equivalent. Reserved characters and "%" stay as they are."""
    out: list[str] = []
    i = 0
    while i < len(text):
        if text[i] == "%" and i + 2 < len(text) and text[i + 1] in _HEX and text[i + 2] in _HEX:
            escape = text[i : i + 3]
            out.append(escape.upper() if rng.random() < 0.5 else escape.lower())
            i += 3
            continue
        ch = text[i]
        if (ch in _UNRESERVED or not ch.isascii() or ch in ' "<>') and rng.random() < 0.6:
            pattern = "%{:02X}" if rng.random() < 0.5 else "%{:02x}"
            out.append("".join(pattern.format(b) for b in ch.encode("utf-8")))
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def _body(rules: list[tuple[bool, str]]) -> bytes:
    lines = [f"{'Allow' if allow else 'Disallow'}: {pattern}" for allow, pattern in rules]
    return ("User-agent: *\n" + "\n".join(lines) + "\n").encode("utf-8")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.booleans(),
            st.lists(PATTERN_PARTS, max_size=6).map(lambda p: "".join(p).strip(" \t")),
        ),
        max_size=5,
    ),
    st.lists(CHARACTERS, max_size=8).map(lambda p: "/" + "".join(p)),
    st.integers(0, 2**32),
)
@example([(False, "/é")], "/%C3%A9", 0)
@example([(False, "/~a")], "/%7Ea", 0)
def test_req_cmp_005_a_path_and_its_encoded_spelling_get_one_verdict(
    rules: list[tuple[bool, str]], path: str, seed: int
) -> None:
    rng = random.Random(seed)
    plain = parse_robots(_body(rules))
    assert plain.allows(path) == plain.allows(_respell(path, rng))
    respelled = parse_robots(_body([(allow, _respell(p, rng)) for allow, p in rules]))
    assert respelled.allows(path) == plain.allows(path)


# -- bounds ------------------------------------------------------------------------------------


@settings(max_examples=8, deadline=None)
@given(st.integers(0, 64), st.sampled_from([b"#", b" ", b"Sitemap: /x\n"]))
def test_req_cmp_005_bytes_past_the_size_bound_are_never_read(slack: int, filler: bytes) -> None:
    bound = limits.default("LIM-F13")
    head = b"User-agent: *\n"
    body = head + filler * ((bound - len(head)) // len(filler) + slack) + b"\nDisallow: /\n"
    assert len(body) > bound
    assert parse_robots(body).allows("/private")  # the rule lies past LIM-F13
    assert not parse_robots(head + b"Disallow: /\n").allows("/private")


def test_req_cmp_005_rules_beyond_the_rule_bound_are_ignored() -> None:
    lines = b"".join(b"Disallow: /d%d/\n" % i for i in range(MAX_RULES + 10))
    rules = parse_robots(b"User-agent: *\n" + lines)
    assert len(rules.rules) == MAX_RULES
    assert not rules.allows(f"/d{MAX_RULES - 1}/")
    assert rules.allows(f"/d{MAX_RULES + 5}/")  # the first MAX_RULES are kept, in file order
