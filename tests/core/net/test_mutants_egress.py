"""The egress policy, its rules and the fetch intake: cases mutation testing found unguarded
(REQ-SEC-005, -006, -009, -017, REQ-TEST-005, REQ-FETCH-001; tools/mutants.py).

Each test pins a behaviour that a surviving mutant changed while every other test
passed; the comment says which change it notices.
"""

from __future__ import annotations

import ipaddress

import pytest

from rypsok.core.fetch.intake import FetchTarget, parse_fetch_url
from rypsok.core.limits import DEFAULT_FETCH_PORTS
from rypsok.core.model import ToolError
from rypsok.core.net.egress import (
    EgressPolicy,
    EngineEndpoint,
    EngineProfile,
    Verdict,
    ends_in_number,
    parse_ipv4,
)
from rypsok.core.net.rules import Rule, RuleError, parse_rule

POLICY = EgressPolicy(allow=(), deny=(), ports=DEFAULT_FETCH_PORTS)


def _parse(url: str) -> FetchTarget:
    return parse_fetch_url(url, allow_http=False, secret_mode="refuse")


def _error(url: str) -> ToolError:
    with pytest.raises(ToolError) as caught:
        _parse(url)
    return caught.value


# -- the IPv4 host parser ---------------------------------------------------------------------


def test_req_test_005_one_number_with_a_root_dot_is_still_an_address() -> None:
    # The root dot is dropped whatever the number of parts (a bound of "more than two
    # labels" read 2130706433. as a name).
    assert parse_ipv4("2130706433.") == ipaddress.IPv4Address("127.0.0.1")
    assert ends_in_number("0x7f000001.")
    assert _parse("https://2130706433./").address == ipaddress.IPv4Address("127.0.0.1")


def test_req_test_005_the_ipv4_parser_never_raises_on_an_empty_host() -> None:
    assert parse_ipv4("") is None
    assert parse_ipv4(".") is None
    assert not ends_in_number("")


def test_req_test_005_a_last_label_of_digits_makes_the_host_an_address_or_no_url() -> None:
    # "09" is not octal, but it is all digits: the URL Standard makes the host an IPv4
    # address, which fails, so no browser reads it as the name it looks like.
    assert ends_in_number("qzx.09")
    assert parse_ipv4("qzx.09") is None
    assert _error("https://qzx.09/").kind == "invalid_request"


def test_req_test_005_more_than_four_parts_is_no_address() -> None:
    assert parse_ipv4("1.2.3.4.0") is None
    assert parse_ipv4("1.2.3.4.5") is None
    assert _error("https://1.2.3.4.0/").kind == "invalid_request"


def test_req_test_005_a_part_is_read_up_to_40_characters_and_no_further() -> None:
    forty = "0x" + "0" * 30 + "7f000001"
    assert len(forty) == 40
    assert parse_ipv4(forty) == ipaddress.IPv4Address("127.0.0.1")
    forty_one = "0x" + "0" * 31 + "7f000001"
    assert parse_ipv4(forty_one) is None  # refused, not converted
    assert parse_ipv4("1." + forty_one) is None


# -- the policy's reading of a host --------------------------------------------------------------


@pytest.mark.parametrize(
    "host",
    ["[2606:4700::6810:84e5%eth0]", "2606:4700::6810:84e5%eth0", "[2606:4700::6810:84e5%251]"],
)
def test_req_sec_006_an_address_with_a_zone_identifier_is_malformed(host: str) -> None:
    # ipaddress accepts a scope; the policy must not (it would admit a public address
    # bound to an interface the operator never named).
    assert POLICY.judge_host(host, 443) == Verdict(False, "malformed")
    address = ipaddress.IPv6Address("2606:4700::6810:84e5")
    assert POLICY.judge_address(address, host, 443) == Verdict(False, "malformed")


def test_req_sec_017_an_unreadable_engine_host_is_malformed_on_either_side() -> None:
    judge = EgressPolicy.judge_engine
    api, bad = EngineEndpoint("api.example.org", 443), EngineEndpoint("bad host!", 443)
    assert judge(api, "api.example.org", 443) == Verdict(True, "allowed")
    assert judge(api, "bad host!", 443) == Verdict(False, "malformed")
    assert judge(bad, "api.example.org", 443) == Verdict(False, "malformed")
    assert judge(api, "www.example.org", 443) == Verdict(False, "engine_host")
    assert POLICY.judge_engine_address(
        api, "bad host!", ipaddress.IPv4Address("8.8.8.8")
    ) == Verdict(False, "malformed")


def test_req_sec_005_the_engine_profile_of_one_engine_asks_the_policy_with_its_endpoint() -> None:
    policy = EgressPolicy(allow=(parse_rule("10.0.0.0/8"),), deny=(), ports=DEFAULT_FETCH_PORTS)
    profile = EngineProfile(policy, EngineEndpoint("wiki.corp.example", 8443))
    assert profile.target("wiki.corp.example", 8443) == Verdict(True, "allowed")
    assert profile.target("wiki.corp.example", 443) == Verdict(False, "engine_host")
    assert profile.target("other.example", 8443) == Verdict(False, "engine_host")
    address = ipaddress.ip_address
    assert profile.address("wiki.corp.example", address("10.1.2.3")) == Verdict(True, "allow_rule")
    assert profile.address("wiki.corp.example", address("192.168.1.1")) == Verdict(
        False, "builtin_address"
    )
    assert profile.address("wiki.corp.example", address("8.8.8.8")) == Verdict(True, "allowed")
    # The same endpoint as the operator wrote it (a base_url): configured, not by default.
    assert EngineEndpoint("wiki.corp.example", 8443).configured is False
    written = EngineProfile(policy, EngineEndpoint("wiki.corp.example", 8443, configured=True))
    assert written.target("wiki.corp.example", 8443) == Verdict(True, "allowed")
    assert written.address("wiki.corp.example", address("10.1.2.3")) == Verdict(True, "allow_rule")
    assert written.address("wiki.corp.example", address("192.168.1.1")) == Verdict(
        True, "engine_endpoint"
    )
    assert written.address("wiki.corp.example", address("169.254.169.254")) == Verdict(
        False, "builtin_address"
    )


@pytest.mark.parametrize(
    ("host", "address", "verdict"),
    [
        # A name reaching the metadata service is refused; a literal written so is admitted.
        ("wiki.corp.example", "169.254.169.254", Verdict(False, "builtin_address")),
        ("169.254.169.254", "169.254.169.254", Verdict(True, "engine_endpoint")),
        ("[fd00:ec2::254]", "fd00:ec2::254", Verdict(True, "engine_endpoint")),
        # Any other address of a name, or a literal, is the operator's.
        ("wiki.corp.example", "10.1.2.3", Verdict(True, "engine_endpoint")),
        ("10.1.2.3", "10.1.2.3", Verdict(True, "engine_endpoint")),
    ],
)
def test_req_sec_017_a_written_endpoint_refuses_the_metadata_service_only_by_a_name(
    host: str, address: str, verdict: Verdict
) -> None:
    # "name is not None and address in _METADATA": either half alone, or "or", fails a row.
    endpoint = EngineEndpoint(host.strip("[]"), 443, configured=True)
    assert POLICY.judge_engine_address(endpoint, host, ipaddress.ip_address(address)) == verdict


def test_req_sec_017_an_engine_endpoint_with_editions_admits_one_label_below_it() -> None:
    judge = EgressPolicy.judge_engine
    wiki = EngineEndpoint("wikipedia.org", 443, editions=True)
    assert judge(wiki, "en.wikipedia.org", 443) == Verdict(True, "allowed")
    assert judge(wiki, "zh-min-nan.wikipedia.org", 443) == Verdict(True, "allowed")
    for host in (
        "wikipedia.org",
        "a.b.wikipedia.org",
        "enwikipedia.org",
        "en.wikipedia.org.evil.example",
    ):
        assert judge(wiki, host, 443) == Verdict(False, "engine_host"), host
    assert judge(wiki, "en.wikipedia.org", 8443) == Verdict(False, "engine_host")
    # Without editions, the host alone.
    plain = EngineEndpoint("wikipedia.org", 443)
    assert judge(plain, "en.wikipedia.org", 443) == Verdict(False, "engine_host")
    # An address endpoint has no subdomains.
    literal = EngineEndpoint("127.0.0.1", 443, editions=True)
    assert judge(literal, "x.127.0.0.1", 443) == Verdict(False, "malformed")
    assert judge(EngineEndpoint("wikipedia.org", 443, editions=True), "127.0.0.1", 443) == (
        Verdict(False, "engine_host")
    )


@pytest.mark.parametrize(
    ("host", "deny", "verdict"),
    [
        # An ordinary IPv6 address carries no IPv4 address, whatever its last 32 bits.
        ("[2606:4700::cb00:7107]", "203.0.113.7", Verdict(True, "allowed")),
        ("[2606:4700::cb00:7107]", "0.0.0.0/1", Verdict(True, "allowed")),
        # ::2 is IPv4-compatible (0.0.0.2); ::1 is loopback, not 0.0.0.1.
        ("[::2]", "0.0.0.2", Verdict(False, "deny_rule")),
        ("[::1]", "0.0.0.1", Verdict(False, "builtin_address")),
    ],
)
def test_req_sec_006_a_deny_rule_reads_only_the_ipv4_address_a_notation_carries(
    host: str, deny: str, verdict: Verdict
) -> None:
    policy = EgressPolicy(allow=(), deny=(parse_rule(deny),), ports=DEFAULT_FETCH_PORTS)
    assert policy.judge_host(host, 443) == verdict


# -- rules -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "mapped", "matches"),
    [
        ("10.0.0.0/8", "::ffff:10.1.2.3", True),
        ("10.0.0.0/8", "::ffff:11.1.2.3", False),
        ("203.0.113.7", "::ffff:203.0.113.7", True),
        ("203.0.113.7", "::ffff:203.0.113.8", False),
        ("2001:db8::/32", "::ffff:10.1.2.3", False),
    ],
)
def test_req_sec_006_an_ipv4_rule_matches_the_ipv4_mapped_form_of_its_addresses(
    rule: str, mapped: str, matches: bool
) -> None:
    assert parse_rule(rule).matches_address(ipaddress.IPv6Address(mapped)) is matches


@pytest.mark.parametrize(
    ("rule", "wide"),
    [
        ("10.0.0.0/15", True),
        ("10.0.0.0/16", False),
        ("10.0.0.0/24", False),
        ("2001:db8::/31", True),
        ("2001:db8::/32", False),
        ("203.0.113.7", False),
        ("wiki.corp.example", False),
        ("*.corp.example", False),
    ],
)
def test_req_cfg_005_a_rule_is_wide_below_16_bits_for_ipv4_and_32_for_ipv6(
    rule: str, wide: bool
) -> None:
    # check warns about an allow rule wider than these prefixes (config/report.py).
    assert parse_rule(rule).wider_than(16, 32) is wide


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ("[2001:db8::1]", "write an IPv6 address without brackets"),
        ("[2001:db8::1]:443", "a rule must not carry a port"),
        (" wiki.corp.example", "a rule must not have surrounding spaces"),
        ("faß.example", "a host pattern with ß, ς or a joiner must be written in its xn-- form"),
        ("wiki.corp.example\t", "a rule must not have surrounding spaces"),
    ],
)
def test_req_cfg_005_a_malformed_rule_is_refused_with_what_to_change(
    rule: str, message: str
) -> None:
    with pytest.raises(RuleError) as caught:
        parse_rule(rule)
    assert str(caught.value) == message


def test_req_sec_006_a_network_rule_with_host_bits_is_refused() -> None:
    with pytest.raises(ValueError, match="no bits set after its prefix"):
        parse_rule("10.0.0.1/8")
    assert parse_rule("10.0.0.0/8") == Rule("network", network=ipaddress.IPv4Network("10.0.0.0/8"))


# -- the fetch intake ------------------------------------------------------------------------


def test_req_fetch_001_a_dotless_i_is_not_folded_into_an_ascii_i() -> None:
    # Upper-casing before lower-casing would turn ı into i: another host.
    assert _parse("https://ıx.example/").host == "xn--x-eka.example"


def test_req_fetch_001_a_space_in_an_international_host_is_no_url() -> None:
    # Splitting labels on white space would drop the space and reach a.b.<name>.
    for url in ("https://a b.ü.example/", "https://a%20b.ü.example/"):
        assert _error(url).kind == "invalid_request"


def test_req_sec_006_an_empty_label_in_an_international_name_is_denied_by_the_policy() -> None:
    error = _error("https://ü..example/")
    assert error.kind == "denied"
    assert error.detail == {"reason": "egress"}


def test_req_sec_009_port_65536_is_no_url() -> None:
    assert _parse("https://qzx.example:65535/").port == 65535
    assert _error("https://qzx.example:65536/").kind == "invalid_request"


@pytest.mark.parametrize(
    ("url", "target"),
    [
        ("https://qzx.example/a!b", "/a!b"),  # the first character kept as it is
        ("https://qzx.example/\udfff", "/%EF%BF%BD"),  # the last lone surrogate
        ("https://qzx.example/\ue000", "/%EE%80%80"),  # the first character after them
        ("https://qzx.example/a/b/..", "/a/"),  # a last ".." leaves the folder
        ("https://qzx.example/a/b/%2E%2e", "/a/"),
        ("https://qzx.example/p#x#y", "/p"),  # the fragment starts at the first #
    ],
)
def test_req_fetch_001_the_request_target_at_the_edges(url: str, target: str) -> None:
    assert _parse(url).target == target


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("\x00\x01https://qzx.example/\x1f", "qzx.example"),  # every C0 control, not only space
        ("https://qzx.exa\rmple/", "qzx.example"),  # a carriage return inside is removed
        ("https://XqzX.example/", "xqzx.example"),  # X neither ends nor starts the authority
    ],
)
def test_req_fetch_001_controls_and_letters_as_a_browser_reads_them(url: str, host: str) -> None:
    target = _parse(url)
    assert (target.host, target.target) == (host, "/")


def test_req_sec_006_the_table_is_read_most_specific_row_first() -> None:
    """The refused and the reachable rows sorted by prefix length, longest first, and
    in their written order among equals: the first row that holds an address decides.
    (The module sorts its tables at import, before a mutant is switched on, so the
    sort is called here.)"""
    from rypsok.core.net.egress import _most_specific_first

    rows = _most_specific_first(
        (("10.0.0.0/8", "private"), ("192.0.0.0/24", "protocol"), ("192.0.2.0/24", "doc")),
        ("192.0.0.9/32",),
    )
    assert [(str(net), name) for net, name in rows] == [
        ("192.0.0.9/32", None),
        ("192.0.0.0/24", "protocol"),
        ("192.0.2.0/24", "doc"),
        ("10.0.0.0/8", "private"),
    ]
