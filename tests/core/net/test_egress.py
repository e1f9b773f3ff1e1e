"""The egress policy (REQ-SEC-005 to -009, REQ-TEST-005): the production policy, no network.

The IANA special-purpose registries are read from fixtures/iana (copies, with their
provenance in its README), not from the code's table, so a block the table forgets fails
here (NET-4), and so does one it refuses that the registries mark globally reachable.
"""

from __future__ import annotations

import csv
import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rypsok.core.config.load import parse
from rypsok.core.config.validate import validate
from rypsok.core.facade import egress_policy
from rypsok.core.fetch.intake import parse_fetch_url
from rypsok.core.limits import DEFAULT_FETCH_PORTS
from rypsok.core.net.egress import (
    EgressPolicy,
    EngineEndpoint,
    Verdict,
    builtin_blocks,
    ends_in_number,
    parse_ipv4,
    reachable_blocks,
    refused_builtin,
    refused_name,
)
from rypsok.core.net.rules import parse_rule
from tests.support.paths import FIXTURES

IANA = FIXTURES / "iana"

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

POLICY = EgressPolicy(allow=(), deny=(), ports=DEFAULT_FETCH_PORTS)


def _policy(
    allow: tuple[str, ...] = (),
    deny: tuple[str, ...] = (),
    ports: tuple[int, ...] = DEFAULT_FETCH_PORTS,
) -> EgressPolicy:
    return EgressPolicy(
        allow=[parse_rule(r) for r in allow], deny=[parse_rule(r) for r in deny], ports=ports
    )


def _refused(address: Address, policy: EgressPolicy = POLICY) -> bool:
    """Refused both on the URL (literal) and at connect time, with the reason of the table."""
    literal = policy.judge_host(str(address), 443)
    connect = policy.judge_address(address, str(address), 443)
    assert literal.allowed == connect.allowed, address
    return not literal.allowed and literal.reason == "builtin_address"


def _allowed(address: Address, policy: EgressPolicy = POLICY) -> bool:
    return policy.judge_host(str(address), 443) == Verdict(
        True, "allowed"
    ) and policy.judge_address(address, "www.example.org", 443) == Verdict(True, "allowed")


def _registry(name: str) -> list[dict[str, str]]:
    path = IANA / name
    if not path.is_file():
        pytest.fail(f"the IANA registry copy fixtures/iana/{name} is missing (REQ-TEST-005)")
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


# Rows whose "Globally Reachable" is neither True nor False (blank, N/A): each decided
# here, by hand; and the one True row the book overrides. Every other row is judged as
# the registry says. A row of a newer registry with neither True nor False that is not
# listed fails the test until someone decides.
DECISIONS: dict[str, bool] = {  # True: refused; False: admitted
    "192.88.99.0/24": True,  # deprecated 6to4 relay anycast (blank column)
    "64:ff9b::/96": True,  # NAT64: REQ-SEC-006 refuses NAT64 ranges although IANA says True
    "2001::/32": True,  # Teredo (N/A): refused wholesale, it hides the IPv4 it tunnels to
    "2001:10::/28": True,  # deprecated ORCHID (blank column)
    # 2002::/16 (6to4, N/A) is judged by the IPv4 address it embeds: see its own test.
    "2002::/16": True,  # its first and last addresses embed 0.0.0.0 and 255.255.255.255
}


def _ends(network: Network) -> tuple[Address, Address]:
    return network.network_address, network.broadcast_address


def _most_specific_first(rows: list[dict[str, str]]) -> list[tuple[Network, dict[str, str]]]:
    """The registry's rows, the longest prefix first: the first row holding an address
    is the one that speaks for it."""
    parsed = [(ipaddress.ip_network(row["address_block"]), row) for row in rows]
    return sorted(parsed, key=lambda item: -item[0].prefixlen)


def _registry_refuses(address: Address, rows: list[tuple[Network, dict[str, str]]]) -> bool:
    """What the registry (with DECISIONS) says of an address: its most specific row decides."""
    for network, row in rows:
        if address in network:
            if row["address_block"] in DECISIONS:
                return DECISIONS[row["address_block"]]
            reachable = row["globally_reachable_normalized"]
            assert reachable in ("true", "false"), f"decide {row['address_block']} in DECISIONS"
            return reachable == "false"
    raise AssertionError(f"{address} is in no row")


@pytest.mark.parametrize(
    "registry", ["iana-ipv4-special-registry.csv", "iana-ipv6-special-registry.csv"]
)
def test_req_sec_006_req_test_005_every_special_purpose_block_is_judged_by_its_most_specific_row(
    registry: str,
) -> None:
    rows = _most_specific_first(_registry(registry))
    assert len(rows) > 15
    checked = 0
    for network, row in rows:
        for address in _ends(network):
            if _registry_refuses(address, rows):
                assert _refused(address), (row["name"], address)
            else:
                assert _allowed(address), (row["name"], address)
            checked += 1
    assert checked == 2 * len(rows)


# Issue 14: the registries mark these globally reachable inside a block they do not.
NESTED_REACHABLE = (
    "192.0.0.9",
    "192.0.0.10",
    "2001:1::1",
    "2001:1::2",
    "2001:1::3",
    "2001:3::",
    "2001:3:ffff:ffff:ffff:ffff:ffff:ffff",
    "2001:4:112::",
    "2001:4:112:ffff:ffff:ffff:ffff:ffff",
    "2001:20::1",
    "2001:2f:ffff:ffff:ffff:ffff:ffff:ffff",
    "2001:30::",
    "2001:3f:ffff:ffff:ffff:ffff:ffff:ffff",
)
# Their neighbours, still in the wider refused block.
NESTED_NEIGHBOURS = (
    "192.0.0.8",
    "192.0.0.11",
    "2001:1::",
    "2001:1::4",
    "2001:2:ffff::",
    "2001:4::",
    "2001:4:111:ffff::",
    "2001:4:113::",
    "2001:1f:ffff::",
    "2001:40::",
)


def test_req_sec_006_a_reachable_row_inside_a_refused_block_is_judged_by_its_own_row() -> None:
    for text in NESTED_REACHABLE:
        address = ipaddress.ip_address(text)
        assert refused_builtin(address) is None, text
        assert _allowed(address), text
        if address.version == 4:
            assert _allowed(ipaddress.IPv6Address(f"::ffff:{address}")), text
    for text in NESTED_NEIGHBOURS:
        address = ipaddress.ip_address(text)
        assert refused_builtin(address) == "IETF protocol assignments", text
        assert _refused(address), text


def test_req_sec_006_the_reachable_rows_of_the_table_are_the_registries_rows() -> None:
    # Each reachable row of the table is a row the registries mark True, and lies inside a
    # block the table refuses: no other carve-out widens what is admitted.
    marked = {
        ipaddress.ip_network(row["address_block"])
        for name in ("iana-ipv4-special-registry.csv", "iana-ipv6-special-registry.csv")
        for row in _registry(name)
        if row["globally_reachable_normalized"] == "true"
    }
    carved = reachable_blocks()
    assert carved and set(carved) <= marked
    for network in carved:
        assert any(
            network.version == block.version and network.subnet_of(block)  # type: ignore[arg-type]
            for block, _ in builtin_blocks()
        ), network


def test_req_sec_006_every_ipv4_block_is_refused_as_ipv4_mapped_too() -> None:
    rows = _most_specific_first(_registry("iana-ipv4-special-registry.csv"))
    for network, _row in rows:
        for address in _ends(network):
            mapped = ipaddress.IPv6Address(f"::ffff:{address}")
            if _registry_refuses(address, rows):
                assert _refused(mapped), mapped
            else:
                assert _allowed(mapped), mapped


REFUSED_SAMPLES = [
    # (address, the name of the refusing block, as the operator's log reads it)
    ("0.0.0.0", "this network"),
    ("0.255.255.255", "this network"),
    ("10.0.0.0", "private-use"),
    ("10.255.255.255", "private-use"),
    ("100.64.0.0", "shared address space (carrier-grade NAT)"),
    ("100.127.255.255", "shared address space (carrier-grade NAT)"),
    ("127.0.0.1", "loopback"),
    ("127.255.255.255", "loopback"),
    ("169.254.0.1", "link-local"),
    ("169.254.255.255", "link-local"),
    ("172.16.0.0", "private-use"),
    ("172.31.255.255", "private-use"),
    ("192.0.0.0", "IETF protocol assignments"),
    ("192.0.0.255", "IETF protocol assignments"),
    ("192.0.2.1", "documentation (TEST-NET-1)"),
    ("192.88.99.1", "deprecated 6to4 relay anycast"),
    ("192.168.0.0", "private-use"),
    ("192.168.255.255", "private-use"),
    ("198.18.0.0", "benchmarking"),
    ("198.19.255.255", "benchmarking"),
    ("198.51.100.7", "documentation (TEST-NET-2)"),
    ("203.0.113.255", "documentation (TEST-NET-3)"),
    ("224.0.0.1", "multicast"),
    ("239.255.255.255", "multicast"),
    ("240.0.0.0", "reserved"),
    ("255.255.255.254", "reserved"),
    ("255.255.255.255", "limited broadcast"),
    ("::", "unspecified"),
    ("::1", "loopback"),
    ("::8.8.8.8", "IPv4-compatible (deprecated)"),
    ("::ffff:ffff", "IPv4-compatible (deprecated)"),
    ("64:ff9b::808:808", "NAT64 well-known prefix"),
    ("64:ff9b::ffff:ffff", "NAT64 well-known prefix"),
    ("64:ff9b:1::", "NAT64 local-use prefix"),
    ("64:ff9b:1:ffff:ffff:ffff:ffff:ffff", "NAT64 local-use prefix"),
    ("100::", "discard-only"),
    ("100:0:0:1::1", "dummy prefix"),
    ("2001::1", "Teredo"),
    ("2001:2::1", "benchmarking"),
    ("2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", "IETF protocol assignments"),
    ("2001:db8::1", "documentation"),
    ("3fff::1", "documentation"),
    ("5f00::1", "segment routing (SRv6) SIDs"),
    ("fc00::", "unique-local"),
    ("fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "unique-local"),
    ("fe80::", "link-local"),
    ("febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "link-local"),
    ("fec0::1", "site-local (deprecated)"),
    ("feff::1", "site-local (deprecated)"),
    ("ff00::", "multicast"),
    ("ff02::1", "multicast"),
    ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "multicast"),
    ("4000::1", "reserved (outside 2000::/3)"),
    ("1::1", "reserved (outside 2000::/3)"),
    ("e000::1", "reserved (outside 2000::/3)"),
]


@pytest.mark.parametrize(("text", "name"), REFUSED_SAMPLES)
def test_req_test_005_every_refused_range_in_ipv4_and_ipv6(text: str, name: str) -> None:
    address = ipaddress.ip_address(text)
    assert refused_builtin(address) == name
    assert _refused(address)


@pytest.mark.parametrize(
    "text",
    [
        "169.254.169.254",
        "169.254.170.2",
        "169.254.0.23",
        "100.100.100.200",
        "192.0.0.192",
        "168.63.129.16",
        "fd00:ec2::254",
        "fd00:ec2::23",
    ],
)
def test_req_sec_006_cloud_metadata_addresses_are_refused(text: str) -> None:
    address = ipaddress.ip_address(text)
    name = refused_builtin(address)
    assert name is not None and name.startswith("cloud ")
    assert _refused(address)


def test_req_sec_006_ipv4_mapped_addresses_are_judged_as_ipv4() -> None:
    assert refused_builtin(ipaddress.IPv6Address("::ffff:127.0.0.1")) == "loopback"
    assert refused_builtin(ipaddress.IPv6Address("::ffff:a9fe:a9fe")) is not None
    assert _refused(ipaddress.IPv6Address("::ffff:10.1.2.3"))
    assert _allowed(ipaddress.IPv6Address("::ffff:8.8.8.8"))
    # Rules see the IPv4 address too.
    policy = _policy(deny=("8.8.8.0/24",))
    assert policy.judge_address(
        ipaddress.IPv6Address("::ffff:8.8.8.8"), "dns.example", 443
    ) == Verdict(False, "deny_rule")
    assert policy.judge_host("::ffff:8.8.8.8", 443) == Verdict(False, "deny_rule")


def test_req_sec_006_6to4_is_judged_by_the_ipv4_address_it_embeds() -> None:
    for text in (
        "2002:7f00:1::1",
        "2002:a00:1::",
        "2002:a9fe:a9fe::1",
        "2002:c0a8:101::",
        "2002:e000:1::",
    ):
        address = ipaddress.IPv6Address(text)
        name = refused_builtin(address)
        assert name is not None and name.startswith("6to4 embedding "), text
        assert _refused(address)
    assert _allowed(ipaddress.IPv6Address("2002:808:808::1"))


def test_req_sec_006_teredo_and_nat64_are_refused_whatever_they_embed() -> None:
    # Teredo with a global server and client, NAT64 of a public address.
    for text in ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "64:ff9b::8.8.8.8", "64:ff9b:1::808:808"):
        assert _refused(ipaddress.IPv6Address(text)), text


def test_req_sec_006_public_addresses_are_allowed() -> None:
    for text in (
        "8.8.8.8",
        "1.1.1.1",
        "93.184.215.14",
        "151.101.1.69",
        "192.0.1.1",
        "192.31.196.1",
        "223.255.255.255",
        "2606:4700::6810:84e5",
        "2a00:1450:4001:80b::200e",
        "2001:4860:4860::8888",
        "2620:4f:8000::1",
        "2002:808:808::",
    ):
        assert refused_builtin(ipaddress.ip_address(text)) is None, text
        assert _allowed(ipaddress.ip_address(text)), text


def test_req_sec_006_the_table_is_not_pythons_is_global() -> None:
    # Blocks where ipaddress.is_global (3.11) is wrong or silent; the table decides.
    for text in ("64:ff9b::1", "fec0::1", "100.100.100.200", "192.0.0.8"):
        assert refused_builtin(ipaddress.ip_address(text)) is not None, text
    # 3.11 calls these not global; the registries mark them globally reachable.
    for text in ("192.0.0.9", "192.0.0.10", "2001:20::1", "2001:3::1"):
        assert refused_builtin(ipaddress.ip_address(text)) is None, text


def test_req_sec_006_every_block_of_the_table_has_a_name() -> None:
    blocks = builtin_blocks()
    assert len(blocks) >= 40
    for network, name in blocks:
        assert name and name.strip() == name
        assert refused_builtin(network.network_address) is not None


# -- literal notations -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "canonical"),
    [
        ("2130706433", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"),
        ("0x7f000001", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("127.0.1", "127.0.0.1"),
        ("127.0.0.1.", "127.0.0.1"),
        ("0", "0.0.0.0"),
        ("0x", "0.0.0.0"),
        ("0xA9.0376.43518", "169.254.169.254"),
        ("012.1", "10.0.0.1"),
        ("3232235777", "192.168.1.1"),
        ("0X0A.0.0.1", "10.0.0.1"),
        ("010.8.8.8", "8.8.8.8"),
        ("8.8.8.8", "8.8.8.8"),
        ("134744072", "8.8.8.8"),
    ],
)
def test_req_test_005_ipv4_notations_parse_as_a_browser_reads_them(
    host: str, canonical: str
) -> None:
    assert ends_in_number(host)
    assert parse_ipv4(host) == ipaddress.IPv4Address(canonical)


@pytest.mark.parametrize(
    "host",
    [
        "1.2.3.999",
        "1.2.3.4.5",
        "0x1g",
        "09.1.1.1",
        "256.1",
        "1.16777216",
        "4294967296",
        "1..1",
        "a.0x1fz",
    ],
)
def test_req_test_005_invalid_ipv4_forms_are_no_address(host: str) -> None:
    assert parse_ipv4(host) is None


def test_req_test_005_names_that_end_in_letters_are_not_addresses() -> None:
    for host in ("example.org", "a.0x", "1.2.3.com", "x"):
        assert ends_in_number(host) == (host == "a.0x"), host


@pytest.mark.parametrize(
    "url",
    [
        "http://2130706433/",
        "http://0177.0.0.1/",
        "http://0x7f.1/",
        "http://127.1/",
        "https://0xA9FEA9FE/latest/meta-data/",
        "https://[::ffff:127.0.0.1]/",
        "https://[::ffff:7f00:1]/",
        "https://%31%30.0.0.1/",
        "https://１０.0.0.1/",
        "https://[0:0:0:0:0:0:0:1]/",
        "https://[64:ff9b::a9fe:a9fe]/",
        "https://[2002:a00:1::]/",
        "https://0251.0376.0251.0376/",
        "https://100.100.100.200/",
    ],
)
def test_req_test_005_literal_notations_are_judged_canonically(url: str) -> None:
    target = parse_fetch_url(url, allow_http=True, secret_mode="refuse")
    assert target.address is not None
    assert POLICY.judge_host(target.host, target.port) == Verdict(False, "builtin_address")
    assert not POLICY.judge_address(target.address, target.host, target.port).allowed


# -- names ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "host",
    [
        "localhost",
        "LOCALHOST.",
        "app.localhost",
        "intranet",
        "printer.local",
        "db.internal",
        "1.0.0.127.in-addr.arpa",
        "router.home.arpa",
        "nas.lan",
        "box.home",
        "dc.corp",
        "abc.onion",
        "metadata.google.internal",
    ],
)
def test_req_sec_006_names_that_never_name_a_public_site(host: str) -> None:
    assert POLICY.judge_host(host, 443) == Verdict(False, "builtin_name")
    assert POLICY.judge_address(ipaddress.IPv4Address("8.8.8.8"), host, 443) == Verdict(
        False, "builtin_name"
    )


@pytest.mark.parametrize(
    "host",
    [
        "",
        ".",
        "a..example",
        ".example",
        "a b.example",
        "-a.example",
        "[::1",
        "a:b",
        "a%2eexample",
        "x" * 64 + ".org",
    ],
)
def test_req_sec_006_a_malformed_name_is_refused_never_matched(host: str) -> None:
    policy = _policy(allow=("*.example",))
    assert policy.judge_host(host, 443) == Verdict(False, "malformed")
    assert policy.judge_address(ipaddress.IPv4Address("8.8.8.8"), host, 443) == Verdict(
        False, "malformed"
    )
    assert not policy.admits_by_rule(host)


def test_req_sec_006_names_compare_lower_cased_without_the_root_dot() -> None:
    assert POLICY.judge_host("Example.ORG.", 443) == Verdict(True, "allowed")
    policy = _policy(deny=("blocked.example",))
    assert policy.judge_host("BLOCKED.example.", 443) == Verdict(False, "deny_rule")
    assert refused_name("example.org") is False
    assert refused_name("example.local") is True
    # example, test and invalid are left to DNS: they cannot resolve publicly.
    for host in ("a.example", "b.test", "c.invalid", "bücher.example".encode("idna").decode()):
        assert POLICY.judge_host(host, 443) == Verdict(True, "allowed"), host


# -- rules: deny, allow, built-in -------------------------------------------------------------


def test_req_sec_006_rules_apply_in_the_order_deny_allow_builtin() -> None:
    both = _policy(
        allow=("wiki.corp.example", "10.0.0.0/8"), deny=("wiki.corp.example", "10.9.0.0/16")
    )
    assert both.judge_host("wiki.corp.example", 443) == Verdict(False, "deny_rule")
    assert both.judge_host("10.9.1.1", 443) == Verdict(False, "deny_rule")
    assert both.judge_host("10.1.1.1", 443) == Verdict(True, "allow_rule")
    assert both.judge_address(ipaddress.IPv4Address("10.9.1.1"), "other.example", 443) == Verdict(
        False, "deny_rule"
    )
    assert both.judge_address(ipaddress.IPv4Address("10.1.1.1"), "other.example", 443) == Verdict(
        True, "allow_rule"
    )
    # Built-in last: without a rule a private address stays refused.
    assert both.judge_host("192.168.1.1", 443) == Verdict(False, "builtin_address")


def test_req_sec_006_a_deny_rule_refuses_a_public_destination() -> None:
    policy = _policy(deny=("*.tracker.example", "8.8.8.8", "2606:4700::/32"))
    assert policy.judge_host("a.tracker.example", 443) == Verdict(False, "deny_rule")
    assert policy.judge_host("tracker.example", 443) == Verdict(True, "allowed")  # *. not itself
    assert policy.judge_host("8.8.8.8", 443) == Verdict(False, "deny_rule")
    assert policy.judge_address(ipaddress.IPv4Address("8.8.8.8"), "dns.example", 443) == Verdict(
        False, "deny_rule"
    )
    assert policy.judge_address(
        ipaddress.IPv6Address("2606:4700::1"), "cdn.example", 443
    ) == Verdict(False, "deny_rule")
    # A deny name rule holds at connect time whatever the address.
    assert policy.judge_address(
        ipaddress.IPv4Address("1.1.1.1"), "x.tracker.example", 443
    ) == Verdict(False, "deny_rule")


def test_req_sec_006_an_allow_name_rule_admits_what_the_name_resolves_to() -> None:
    policy = _policy(allow=("*.corp.example", "intranet"))
    private = ipaddress.IPv4Address("10.20.30.40")
    assert policy.judge_host("wiki.corp.example", 443) == Verdict(True, "allow_rule")
    assert policy.judge_address(private, "wiki.corp.example", 443) == Verdict(True, "allow_rule")
    assert policy.judge_host("intranet", 443) == Verdict(True, "allow_rule")
    # Another name resolving to the same address is not admitted.
    assert policy.judge_address(private, "evil.example", 443) == Verdict(False, "builtin_address")
    # The metadata service is admitted by an address or network rule only.
    metadata = ipaddress.IPv4Address("169.254.169.254")
    assert policy.judge_address(metadata, "wiki.corp.example", 443) == Verdict(
        False, "builtin_address"
    )
    explicit = _policy(allow=("169.254.169.254",))
    assert explicit.judge_address(metadata, "x.example", 443) == Verdict(True, "allow_rule")
    assert explicit.judge_host("169.254.169.254", 443) == Verdict(True, "allow_rule")


def test_req_test_005_a_local_server_is_reached_only_through_an_explicit_allow_rule() -> None:
    loopback = ipaddress.IPv4Address("127.0.0.1")
    assert POLICY.judge_host("127.0.0.1", 443) == Verdict(False, "builtin_address")
    assert POLICY.judge_address(loopback, "site.example", 443).allowed is False
    policy = _policy(allow=("127.0.0.1",))
    assert policy.judge_host("127.0.0.1", 43210) == Verdict(True, "allow_rule")
    assert policy.judge_address(loopback, "127.0.0.1", 43210) == Verdict(True, "allow_rule")
    assert (
        policy.judge_address(ipaddress.IPv4Address("127.0.0.2"), "127.0.0.2", 443).allowed is False
    )


def test_req_sec_021_admits_by_rule_matches_names_and_literal_addresses() -> None:
    policy = _policy(
        allow=("docs.rs", "*.rust-lang.org", "10.0.0.0/8", "2001:db8::1"), deny=("blocked.example",)
    )
    assert policy.admits_by_rule("docs.rs")
    assert policy.admits_by_rule("DOCS.RS.")
    assert policy.admits_by_rule("doc.rust-lang.org")
    assert not policy.admits_by_rule("rust-lang.org")
    assert policy.admits_by_rule("10.1.2.3")
    assert policy.admits_by_rule("2001:db8::1")
    assert policy.admits_by_rule("[2001:db8::1]")
    assert not policy.admits_by_rule("8.8.8.8")
    assert not policy.admits_by_rule("blocked.example")  # a deny rule admits nothing
    assert not policy.admits_by_rule("example.org")


# -- ports ---------------------------------------------------------------------------------


def test_req_sec_009_only_the_configured_ports_without_an_allow_rule() -> None:
    assert POLICY.judge_host("example.org", 443) == Verdict(True, "allowed")
    assert POLICY.judge_host("example.org", 80) == Verdict(True, "allowed")
    for port in (0, 22, 8080, 8443, 65535):
        assert POLICY.judge_host("example.org", port) == Verdict(False, "port"), port
        assert POLICY.judge_host("8.8.8.8", port) == Verdict(False, "port"), port
        assert POLICY.judge_address(
            ipaddress.IPv4Address("8.8.8.8"), "example.org", port
        ) == Verdict(False, "port")
    custom = _policy(ports=(443, 8443))
    assert custom.judge_host("example.org", 8443) == Verdict(True, "allowed")
    assert custom.judge_host("example.org", 80) == Verdict(False, "port")


def test_req_sec_009_an_allow_rule_admits_another_port_and_a_deny_rule_still_wins() -> None:
    policy = _policy(allow=("git.example", "203.0.113.0/24"), deny=("203.0.113.9",))
    assert policy.judge_host("git.example", 8080) == Verdict(True, "allow_rule")
    assert policy.judge_address(ipaddress.IPv4Address("8.8.8.8"), "git.example", 8080) == Verdict(
        True, "allow_rule"
    )
    assert policy.judge_host("203.0.113.5", 8080) == Verdict(True, "allow_rule")
    assert policy.judge_host("203.0.113.9", 8080) == Verdict(False, "deny_rule")
    assert policy.judge_host("other.example", 8080) == Verdict(False, "port")


def test_req_sec_005_the_policy_is_built_from_the_configuration() -> None:
    text = """config_version = 1
[fetch]
ports = [443, 8443]
[egress]
allow = ["wiki.corp.example"]
deny = ["blocked.example"]
"""
    document, positions = parse(text)
    config = validate(document, positions, "test", {})
    policy = egress_policy(config)
    assert policy.judge_host("wiki.corp.example", 9000) == Verdict(True, "allow_rule")
    assert policy.judge_host("blocked.example", 443) == Verdict(False, "deny_rule")
    assert policy.judge_host("example.org", 8443) == Verdict(True, "allowed")
    assert policy.judge_host("example.org", 80) == Verdict(False, "port")
    default = egress_policy(validate(*parse("config_version = 1\n"), "test", {}))
    assert default.judge_host("example.org", 443) == Verdict(True, "allowed")
    assert default.judge_host("127.0.0.1", 443) == Verdict(False, "builtin_address")


def test_req_sec_005_the_engine_profile_admits_the_configured_endpoint_only() -> None:
    judge = EgressPolicy.judge_engine
    api = EngineEndpoint("api.search.example", 443)
    assert judge(api, "API.search.example.", 443) == Verdict(True, "allowed")
    assert judge(api, "api.search.example", 8443) == Verdict(False, "engine_host")
    assert judge(api, "evil.example", 443) == Verdict(False, "engine_host")
    # A private endpoint the operator configured is the operator's choice (REQ-SEC-017).
    private = EngineEndpoint("10.0.0.5", 8080, configured=True)
    assert judge(private, "10.0.0.5", 8080) == Verdict(True, "allowed")
    assert judge(EngineEndpoint("a..example", 443), "a..example", 443) == Verdict(
        False, "malformed"
    )


def _engine_address(
    endpoint: EngineEndpoint, host: str, text: str, policy: EgressPolicy = POLICY
) -> Verdict:
    return policy.judge_engine_address(endpoint, host, ipaddress.ip_address(text))


@pytest.mark.parametrize(
    ("address", "allow", "deny", "verdict"),
    [
        # A provider's own name resolving to a public address: admitted.
        ("93.184.215.14", (), (), Verdict(True, "allowed")),
        # ... to an address the table refuses (a poisoned answer): refused unless an allow
        # rule names it.
        ("127.0.0.1", (), (), Verdict(False, "builtin_address")),
        ("::ffff:127.0.0.1", (), (), Verdict(False, "builtin_address")),
        ("::1", (), (), Verdict(False, "builtin_address")),
        ("10.1.2.3", (), (), Verdict(False, "builtin_address")),
        ("fd12::1", (), (), Verdict(False, "builtin_address")),
        ("169.254.169.254", (), (), Verdict(False, "builtin_address")),
        ("10.1.2.3", ("en.wikipedia.org",), (), Verdict(True, "allow_rule")),
        ("10.1.2.3", ("*.wikipedia.org",), (), Verdict(True, "allow_rule")),
        ("10.1.2.3", ("10.0.0.0/8",), (), Verdict(True, "allow_rule")),
        ("10.1.2.3", ("other.example",), (), Verdict(False, "builtin_address")),
        # An allowed name rebound to the metadata service does not reach it; an address
        # rule naming the metadata address does.
        ("169.254.169.254", ("en.wikipedia.org",), (), Verdict(False, "builtin_address")),
        ("169.254.169.254", ("169.254.169.254",), (), Verdict(True, "allow_rule")),
        # A deny rule refuses even what an allow rule admits, in every notation.
        ("93.184.215.14", (), ("93.184.215.0/24",), Verdict(False, "deny_rule")),
        ("2002:5db8:d70e::1", (), ("93.184.215.14",), Verdict(False, "deny_rule")),
        ("10.1.2.3", ("10.0.0.0/8",), ("en.wikipedia.org",), Verdict(False, "deny_rule")),
    ],
)
def test_req_sec_005_req_sec_017_every_address_of_a_builtin_endpoint_passes_the_table(
    address: str, allow: tuple[str, ...], deny: tuple[str, ...], verdict: Verdict
) -> None:
    # Not written by the operator (no base_url): the built-in table judges after the rules.
    endpoint = EngineEndpoint("wikipedia.org", 443, editions=True)
    policy = _policy(allow=allow, deny=deny)
    assert _engine_address(endpoint, "en.wikipedia.org", address, policy) == verdict


@pytest.mark.parametrize(
    ("address", "allow", "deny", "verdict"),
    [
        # The operator's base_url is the operator's trust (NET-15): any address its name
        # resolves to, a private one without an allow rule.
        ("93.184.215.14", (), (), Verdict(True, "engine_endpoint")),
        ("127.0.0.1", (), (), Verdict(True, "engine_endpoint")),
        ("::ffff:127.0.0.1", (), (), Verdict(True, "engine_endpoint")),
        ("::1", (), (), Verdict(True, "engine_endpoint")),
        ("10.1.2.3", (), (), Verdict(True, "engine_endpoint")),
        ("fd12::1", (), (), Verdict(True, "engine_endpoint")),
        ("169.254.1.1", (), (), Verdict(True, "engine_endpoint")),
        # ... but never the metadata service by a name (a rebinding, not the operator's word).
        ("169.254.169.254", (), (), Verdict(False, "builtin_address")),
        ("::ffff:169.254.169.254", (), (), Verdict(False, "builtin_address")),
        ("fd00:ec2::254", (), (), Verdict(False, "builtin_address")),
        ("100.100.100.200", (), (), Verdict(False, "builtin_address")),
        ("169.254.169.254", ("wiki.corp.example",), (), Verdict(False, "builtin_address")),
        # unless an address rule names it.
        ("169.254.169.254", ("169.254.169.254",), (), Verdict(True, "allow_rule")),
        # Allow rules are read before the endpoint, so the log names the rule.
        ("10.1.2.3", ("wiki.corp.example",), (), Verdict(True, "allow_rule")),
        ("10.1.2.3", ("10.0.0.0/8",), (), Verdict(True, "allow_rule")),
        # Deny rules win over the operator's endpoint too, in every notation.
        ("127.0.0.1", (), ("127.0.0.0/8",), Verdict(False, "deny_rule")),
        ("10.1.2.3", (), ("wiki.corp.example",), Verdict(False, "deny_rule")),
        ("10.1.2.3", (), ("*.corp.example",), Verdict(False, "deny_rule")),
        ("2002:5db8:d70e::1", (), ("93.184.215.14",), Verdict(False, "deny_rule")),
        ("10.1.2.3", ("10.0.0.0/8",), ("wiki.corp.example",), Verdict(False, "deny_rule")),
    ],
)
def test_req_sec_005_req_sec_017_every_address_of_a_base_url_endpoint_is_the_operator_s_trust(
    address: str, allow: tuple[str, ...], deny: tuple[str, ...], verdict: Verdict
) -> None:
    endpoint = EngineEndpoint("wiki.corp.example", 8443, configured=True)
    policy = _policy(allow=allow, deny=deny)
    assert _engine_address(endpoint, "wiki.corp.example", address, policy) == verdict


def test_req_sec_017_an_endpoint_the_operator_wrote_as_an_address_or_localhost_is_admitted() -> (
    None
):
    literal = EngineEndpoint("127.0.0.1", 8080, configured=True)
    assert _engine_address(literal, "127.0.0.1", "127.0.0.1") == Verdict(True, "engine_endpoint")
    assert _engine_address(literal, "127.0.0.1", "::ffff:127.0.0.1") == Verdict(
        True, "engine_endpoint"
    )
    v6 = EngineEndpoint("::1", 8080, configured=True)
    assert _engine_address(v6, "::1", "::1") == Verdict(True, "engine_endpoint")
    assert _engine_address(v6, "[::1]", "::1") == Verdict(True, "engine_endpoint")
    private = EngineEndpoint("10.0.0.5", 443, configured=True)
    assert _engine_address(private, "10.0.0.5", "10.0.0.5") == Verdict(True, "engine_endpoint")
    # A metadata address written as a literal is the operator's own word.
    metadata = EngineEndpoint("169.254.169.254", 80, configured=True)
    assert _engine_address(metadata, "169.254.169.254", "169.254.169.254") == Verdict(
        True, "engine_endpoint"
    )
    local = EngineEndpoint("localhost", 8080, configured=True)
    assert _engine_address(local, "localhost", "127.0.0.1") == Verdict(True, "engine_endpoint")
    assert _engine_address(local, "localhost", "::1") == Verdict(True, "engine_endpoint")
    # localhost is a name: whatever it resolves to is the operator's, the metadata aside.
    assert _engine_address(local, "localhost", "10.0.0.5") == Verdict(True, "engine_endpoint")
    assert _engine_address(local, "localhost", "169.254.169.254") == Verdict(
        False, "builtin_address"
    )
    # The operator's deny rule still wins over the endpoint they wrote.
    denying = _policy(deny=("127.0.0.0/8",))
    assert _engine_address(literal, "127.0.0.1", "127.0.0.1", denying) == Verdict(
        False, "deny_rule"
    )
    assert _engine_address(local, "localhost", "127.0.0.1", denying) == Verdict(False, "deny_rule")
    # It is the operator's writing that counts, not the form: the same literal as a built-in
    # endpoint (none is one today) would be judged by the table.
    builtin = EngineEndpoint("127.0.0.1", 8080)
    assert _engine_address(builtin, "127.0.0.1", "127.0.0.1") == Verdict(False, "builtin_address")


# -- properties ----------------------------------------------------------------------------

PUBLIC_BLOCKS = [
    ipaddress.ip_network(n)
    for n in (
        "8.0.0.0/9",
        "93.184.0.0/16",
        "151.101.0.0/16",
        "1.0.0.0/8",
        "45.0.0.0/8",
        "2606:4700::/32",
        "2a00:1450::/32",
        "2001:4860::/32",
        "2400:cb00::/32",
    )
]


def _inside(network: Network) -> st.SearchStrategy[Address]:
    first = int(network.network_address)
    kind = ipaddress.IPv6Address if network.version == 6 else ipaddress.IPv4Address
    return st.integers(first, first + network.num_addresses - 1).map(kind)


@given(st.sampled_from(PUBLIC_BLOCKS).flatmap(_inside))
def test_req_sec_006_random_public_addresses_are_allowed(address: Address) -> None:
    assert refused_builtin(address) is None
    assert _allowed(address)


@given(
    st.sampled_from([n for n, _ in builtin_blocks()])
    .flatmap(_inside)
    .filter(lambda a: not any(a in n for n in reachable_blocks()))
)
def test_req_sec_006_any_address_in_a_refused_block_is_refused(address: Address) -> None:
    assert refused_builtin(address) is not None
    assert _refused(address)
    if address.version == 4:
        assert _refused(ipaddress.IPv6Address(f"::ffff:{address}"))


@given(st.integers(0, 2**32 - 1))
def test_req_test_005_decimal_notation_equals_the_dotted_form(number: int) -> None:
    address = ipaddress.IPv4Address(number)
    assert parse_ipv4(str(number)) == address
    assert parse_ipv4(hex(number)) == address
    assert parse_ipv4(".".join(f"0{int(p):o}" for p in str(address).split("."))) == address


def test_req_sec_006_ranking_reads_the_operator_rules_through_the_policy() -> None:
    # One match for both: the verdict search uses to drop or keep a result's host.
    policy = EgressPolicy(
        allow=[parse_rule("wiki.corp.example"), parse_rule("10.1.0.0/16")],
        deny=[parse_rule("*.blocked.example"), parse_rule("93.184.216.0/24")],
        ports=DEFAULT_FETCH_PORTS,
    )
    assert policy.has_rules
    assert not EgressPolicy(allow=[], deny=[], ports=DEFAULT_FETCH_PORTS).has_rules
    assert EgressPolicy(allow=[], deny=[parse_rule("x.example")], ports=[443]).has_rules
    assert policy.rule_verdict("wiki.corp.example") is True
    assert policy.rule_verdict("10.1.2.3") is True
    assert policy.rule_verdict("a.blocked.example") is False
    assert policy.rule_verdict("93.184.216.34") is False
    assert policy.rule_verdict("2002:5db8:d822::1") is False  # 6to4 of a denied address
    assert policy.rule_verdict("example.org") is None
    assert policy.rule_verdict("10.2.0.1") is None
    # Deny before allow: a host both name is refused.
    both = EgressPolicy(
        allow=[parse_rule("x.example")], deny=[parse_rule("x.example")], ports=[443]
    )
    assert both.rule_verdict("x.example") is False
