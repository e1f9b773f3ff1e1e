"""Properties of the egress judgment of a URL and of a rule (REQ-SEC-006, REQ-SEC-023, THR-05).

A refused address stays refused in every notation a client reads as that address: IPv4 in
decimal, octal and hexadecimal parts, the short forms of one to three parts, a trailing
dot, percent-encoded or full-width characters; IPv6 compressed, exploded, upper-case or
with a dotted tail; and the IPv6 forms that carry an IPv4 address (mapped, compatible,
NAT64, 6to4, Teredo). The refused addresses come from the IANA special-purpose registries
(the copies in fixtures/iana), read here and not from the code's table; an address the
registries mark globally reachable by a more specific row is not one of them.

Each notation goes the whole way a caller's URL goes: the fetch intake reads it, then the
policy judges the host before resolution and the address at connect time; the same URL as
a search result must be dropped (REQ-RANK-003: a host web_fetch would refuse).
"""

from __future__ import annotations

import csv
import ipaddress

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from rypsok.core.config.load import parse
from rypsok.core.config.validate import validate
from rypsok.core.facade import egress_policy
from rypsok.core.fetch.intake import parse_fetch_url
from rypsok.core.limits import DEFAULT_FETCH_PORTS
from rypsok.core.model import ToolError
from rypsok.core.net.egress import EgressPolicy, builtin_blocks
from rypsok.core.net.rules import Rule, RuleError, parse_rule
from rypsok.core.search.urls import DroppedUrl, normalize
from tests.support.paths import FIXTURES

IPv4 = ipaddress.IPv4Address
IPv6 = ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

IANA = FIXTURES / "iana"
BUILTIN = EgressPolicy(allow=(), deny=(), ports=DEFAULT_FETCH_PORTS)


def _registry(name: str) -> list[dict[str, str]]:
    path = IANA / name
    if not path.is_file():
        pytest.fail(f"the IANA registry copy fixtures/iana/{name} is missing (REQ-SEC-023)")
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _refused_blocks(name: str) -> list[Network]:
    blocks = [
        ipaddress.ip_network(row["address_block"])
        for row in _registry(name)
        if row["globally_reachable_normalized"] == "false"
    ]
    # ::ffff:0:0/96 is how IPv6 writes an IPv4 address: it is judged as the IPv4 address it
    # maps (a public one is allowed), and every IPv4 sample is also rendered mapped below.
    return [b for b in blocks if b != ipaddress.IPv6Network("::ffff:0:0/96")]


V4_BLOCKS = _refused_blocks("iana-ipv4-special-registry.csv")
V6_BLOCKS = _refused_blocks("iana-ipv6-special-registry.csv")
# Rows marked globally reachable: inside a refused block (192.0.0.9 in 192.0.0.0/24), the
# most specific row decides and the address is admitted, so it is no refused sample.
REACHABLE = [
    ipaddress.ip_network(row["address_block"])
    for name in ("iana-ipv4-special-registry.csv", "iana-ipv6-special-registry.csv")
    for row in _registry(name)
    if row["globally_reachable_normalized"] == "true"
    and row["address_block"] != "64:ff9b::/96"  # NAT64: refused by REQ-SEC-006 all the same
]


def _not_reachable(value: int, version: int) -> bool:
    address = IPv4(value) if version == 4 else IPv6(value)
    return not any(address in n for n in REACHABLE if n.version == version)


# Multicast and the cloud metadata addresses are not in the special-purpose registries.
EXTRA_V4 = [n for n, _ in builtin_blocks() if n.version == 4 and n not in V4_BLOCKS]


def _inside(network: Network) -> st.SearchStrategy[int]:
    first = int(network.network_address)
    return st.integers(first, first + network.num_addresses - 1)


# -- renderings of an IPv4 address ---------------------------------------------------------


def _number(value: int, base: str) -> str:
    if base == "oct":
        return "0" + format(value, "o")
    if base == "hex":
        return f"0x{value:x}"
    if base == "HEX":
        return f"0X{value:X}"
    if base == "hex0":  # leading zeros after 0x are allowed
        return f"0x00{value:x}"
    return str(value)


_BASES = st.sampled_from(["dec", "oct", "hex", "HEX", "hex0"])


@st.composite
def ipv4_host(draw: st.DrawFn, value: int) -> str:
    """One way a browser's URL parser reads `value` as an IPv4 host."""
    o = value.to_bytes(4, "big")
    parts = draw(
        st.sampled_from(
            [
                [o[0], o[1], o[2], o[3]],  # a.b.c.d
                [o[0], o[1], (o[2] << 8) | o[3]],  # a.b.c16
                [o[0], (o[1] << 16) | (o[2] << 8) | o[3]],  # a.b24
                [value],  # a 32-bit number
            ]
        )
    )
    host = ".".join(_number(p, draw(_BASES)) for p in parts)
    if draw(st.booleans()):
        host += "."  # the root
    style = draw(st.sampled_from(["plain", "percent", "wide"]))
    if style == "percent":  # a URL's host is percent-decoded before it is read
        flags = draw(st.lists(st.booleans(), min_size=len(host), max_size=len(host)))
        host = "".join(f"%{ord(c):02X}" if f else c for c, f in zip(host, flags, strict=True))
    elif style == "wide":  # full-width digits, letters and stops map (NFKC) to ASCII
        host = "".join(
            chr(ord(c) + 0xFEE0) if c.isalnum() else "\u3002" if c == "." else c for c in host
        )
    return host


def _ipv6_text(address: IPv6, style: str) -> str:
    if style == "exploded":
        return address.exploded
    if style == "upper":
        return address.compressed.upper()
    if style == "dotted":  # the last 32 bits as a dotted quad
        head = ":".join(address.exploded.split(":")[:6])
        return f"{head}:{IPv4(int(address) & 0xFFFFFFFF)}"
    return address.compressed


_V6_STYLES = st.sampled_from(["compressed", "exploded", "upper", "dotted"])


@st.composite
def carrying_ipv6(draw: st.DrawFn, value: int) -> IPv6:
    """An IPv6 address that carries the IPv4 address `value`."""
    kind = draw(
        st.sampled_from(
            [
                "mapped",
                "compatible",
                "nat64",
                "nat64_local",
                "6to4",
                "teredo_client",
                "teredo_server",
            ]
        )
    )
    if kind == "mapped":
        return IPv6((0xFFFF << 32) | value)
    if kind == "compatible":
        return IPv6(value)
    if kind == "nat64":
        return IPv6((0x0064FF9B << 96) | value)
    if kind == "nat64_local":
        return IPv6((0x0064FF9B0001 << 80) | value)
    if kind == "6to4":
        return IPv6((0x2002 << 112) | (value << 80) | draw(st.integers(0, 2**80 - 1)))
    other = int(IPv4("93.184.216.34"))
    flags_port = draw(st.integers(0, 2**32 - 1))
    server, client = (other, value) if kind == "teredo_client" else (value, other)
    return IPv6((0x20010000 << 96) | (server << 64) | (flags_port << 32) | (client ^ 0xFFFFFFFF))


@st.composite
def notations_of_ipv4(draw: st.DrawFn, value: int) -> str:
    if draw(st.integers(0, 2)) < 2:
        return draw(ipv4_host(value))
    return f"[{_ipv6_text(draw(carrying_ipv6(value)), draw(_V6_STYLES))}]"


@st.composite
def refused_urls(draw: st.DrawFn) -> str:
    """A URL whose host is an address from a refused block, in some notation."""
    if draw(st.booleans()):
        value = draw(
            st.sampled_from(V4_BLOCKS + EXTRA_V4)
            .flatmap(_inside)
            .filter(lambda v: _not_reachable(v, 4))
        )
        host = draw(notations_of_ipv4(value))
    else:
        address = IPv6(
            draw(st.sampled_from(V6_BLOCKS).flatmap(_inside).filter(lambda v: _not_reachable(v, 6)))
        )
        host = f"[{_ipv6_text(address, draw(_V6_STYLES))}]"
    scheme, port = draw(
        st.sampled_from([("https", ""), ("http", ""), ("https", ":443"), ("HTTP", ":80")])
    )
    return f"{scheme}://{host}{port}/"


def _outcome(url: str, policy: EgressPolicy) -> str:
    """refused_at_intake, or the policy's verdicts; the literal and connect verdicts agree."""
    try:
        target = parse_fetch_url(url, allow_http=True, secret_mode="refuse")
    except ToolError as error:
        assert error.kind in ("invalid_request", "denied")
        return "refused_at_intake"
    literal = policy.judge_host(target.host, target.port)
    assert target.address is not None, "an address notation was read as a name"
    connect = policy.judge_address(target.address, target.host, target.port)
    assert literal == connect
    return literal.reason if not literal.allowed else "allowed"


# -- the built-in table --------------------------------------------------------------------


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(refused_urls())
@example("https://0x7f.1/")
@example("https://[2002:a9fe:a9fe::1]/")
@example("https://%31%30%2e0.0.1/")
def test_req_sec_006_a_refused_address_is_refused_in_every_notation(url: str) -> None:
    assert _outcome(url, BUILTIN) in ("refused_at_intake", "builtin_address")
    assert isinstance(normalize(url), DroppedUrl)  # nor shown as a search result


# -- operator rules --------------------------------------------------------------------------

# Public addresses the operator denies, beside allow rules for the IPv6 prefixes that carry
# an IPv4 address: a deny rule wins over an allow rule, whatever the notation.
DENIED = ("93.184.216.0/24", "151.101.1.69", "8.8.4.0/22", "2606:4700::6810:84e5")
ALLOWED = ("64:ff9b::/96", "64:ff9b:1::/48", "2001::/32", "2002::/16", "::/96")
_CONFIG = validate(
    *parse(
        "config_version = 1\n[egress]\n"
        f"deny = {list(DENIED)!r}\nallow = {list(ALLOWED)!r}\n".replace("'", '"')
    ),
    "test",
    {},
)
RULED = egress_policy(_CONFIG)
RULES = RULED.rule_verdict


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from([ipaddress.ip_network(d) for d in DENIED if ":" not in d])
    .flatmap(_inside)
    .flatmap(notations_of_ipv4)
)
@example("[2002:5db8:d822::1]")  # 6to4 of 93.184.216.34: the deny rule did not see it
@example("[64:ff9b::93.184.216.34]")
@example("[2001:0:5db8:d822:0:0:6afe:fefe]")  # Teredo server 93.184.216.34
def test_req_sec_006_a_deny_rule_holds_in_every_notation_of_its_address(host: str) -> None:
    url = f"https://{host}/"
    assert _outcome(url, RULED) in ("refused_at_intake", "deny_rule")
    assert isinstance(normalize(url, RULES), DroppedUrl)


@settings(max_examples=10, deadline=None)
@given(_V6_STYLES)
def test_req_sec_006_a_denied_ipv6_address_is_denied_in_every_spelling(style: str) -> None:
    text = _ipv6_text(IPv6("2606:4700::6810:84e5"), style)
    assert _outcome(f"https://[{text}]/", RULED) == "deny_rule"


def test_req_sec_006_an_allow_rule_admits_only_what_it_names() -> None:
    # The IPv6 prefixes are allowed; what they carry is not denied: the allow rule stands,
    # and it does not reach into embedded addresses (10.0.0.1 stays refused as itself).
    assert _outcome("https://[2002:808:808::1]/", RULED) == "allowed"
    assert _outcome("https://[64:ff9b::8.8.8.8]/", RULED) == "allowed"
    assert _outcome("https://10.0.0.1/", RULED) == "builtin_address"


# -- rules as the operator writes them ---------------------------------------------------------

_MARK = "ZQX"
_RULE_TEXT = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=st.sampled_from("abcdef0123456789.:/*[]% -_xXé"), max_size=40),
).map(lambda t: _MARK + t)


@settings(max_examples=300, deadline=None)
@given(_RULE_TEXT, st.sampled_from(["", "*.", "[", "10.0.0.0/"]))
@example("faß.example", "")  # ß: IDNA 2003 reads fass.example, a browser xn--fa-hia.example
@example("σίσυφος.example", "")
def test_req_cfg_005_a_rule_parses_or_fails_with_a_message_of_our_own(
    text: str, prefix: str
) -> None:
    try:
        rule = parse_rule(prefix + text)
    except RuleError as error:
        message = str(error)
        assert 0 < len(message) <= 200 and message.isprintable()
        assert _MARK not in message and text not in message
        return
    assert isinstance(rule, Rule)
    if rule.name is not None:
        # A name rule speaks of one ASCII name: the form the policy compares hosts in.
        assert rule.name.isascii() and rule.name == rule.name.lower()


def test_req_sec_006_a_name_rule_browsers_read_otherwise_is_refused() -> None:
    # IDNA 2003 would make the rule faß.example speak of fass.example, and leave the real
    # faß.example (xn--fa-hia.example to every browser) undenied.
    for text in ("faß.example", "*.faß.example", "σίσυφος.example", "a\u200db.example"):
        with pytest.raises(RuleError):
            parse_rule(text)
    assert parse_rule("xn--fa-hia.example") == Rule("host", name="xn--fa-hia.example")
    assert parse_rule("bücher.example") == Rule("host", name="xn--bcher-kva.example")


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(V4_BLOCKS + [ipaddress.ip_network(d) for d in DENIED if ":" not in d]).flatmap(
        _inside
    ),
    st.booleans(),
)
def test_req_sec_006_an_address_rule_matches_every_notation_of_its_address(
    value: int, as_network: bool
) -> None:
    address = IPv4(value)
    rule = parse_rule(f"{address}/32" if as_network else str(address))
    policy = EgressPolicy(allow=(), deny=(rule,), ports=DEFAULT_FETCH_PORTS)
    for host in (
        str(value),
        f"0x{value:x}",
        f"[::ffff:{address}]",
        f"[2002:{value >> 16:x}:{value & 0xFFFF:x}::]",
        f"[64:ff9b::{address}]",
    ):
        assert _outcome(f"https://{host}/", policy) == "deny_rule", host
