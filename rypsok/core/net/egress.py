"""The egress policy: which destinations rypsok may connect to (REQ-SEC-005).

One component, two profiles. The agent-directed profile (fetches and
robots.txt reads, REQ-SEC-006) admits only globally routable unicast
addresses and names that can name a public site; the engine profile
(REQ-SEC-017) admits the configured host and port of an engine only. Of that
host's addresses, an endpoint the operator wrote (a `base_url`) is the
operator's trust (NET-15): every address is admitted, but deny rules still
win and a name never reaches the cloud metadata service. A built-in endpoint
(a provider's own host, which the operator did not write) gets the built-in
table after the rules, so a poisoned answer for it is refused. The engine
client asks it of every engine request (net/client.py, `engine=`).

Pure: no resolver, no socket. The fetch pipeline calls `judge_host` on the
URL's host before resolution and `judge_address` on every address it is
about to connect to (REQ-SEC-007), each redirect hop included.

Order of judgment (the book's [egress] section): deny rules, then allow
rules, then the built-in table. Decisions where the book is silent:

* A name rule that admits a host also admits every address that name
  resolves to (that is what ``wiki.corp.example`` in an allow list is for),
  except the cloud metadata addresses: those are admitted only by an
  address or network rule naming them, so an allowed name rebound to the
  metadata service does not reach it. An engine endpoint the operator wrote
  by name is read the same way; written as a metadata address, it is the
  operator's own word and admitted.
* A port outside ``fetch.ports`` is admitted only when an allow rule
  matches the destination as the URL names it (by name for a name rule, by
  the literal address for an address rule) or, at connect time, the address.
* A deny rule on an IPv4 address or network also refuses the IPv6 forms that
  carry it (mapped, compatible, NAT64, 6to4, Teredo): the operator denied the
  host, not one spelling of it. Allow rules match only what they name.
* The built-in table is written here, not derived from ``ipaddress``'s
  ``is_global``/``is_private``, which are wrong for several blocks in 3.11.

The WHATWG IPv4 host parser (decimal, octal, hexadecimal, one to four parts)
lives here too, because the fetch intake and the result-URL check must read
an address exactly as the policy does.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from rypsok.core.net.hostname import HostNameError, literal_address, to_ascii
from rypsok.core.net.rules import Rule

IPv4Address = ipaddress.IPv4Address
IPv6Address = ipaddress.IPv6Address
Address = IPv4Address | IPv6Address

Reason = Literal[
    "allowed",
    "allow_rule",
    "deny_rule",
    "builtin_address",
    "builtin_name",
    "malformed",
    "port",
    "engine_host",
    "engine_endpoint",
]


@dataclass(frozen=True, slots=True)
class Verdict:
    """The policy's answer for one destination; ``reason`` is for the operator's log."""

    allowed: bool
    reason: Reason


# -- the built-in refusal table ------------------------------------------------------------
#
# The most specific row decides, as in the IANA registries: an address is judged by the
# smallest block that holds it (the rows are sorted so below), so a block the registries
# mark globally reachable inside a wider one they do not is admitted, and a narrower
# refused block (a metadata address) names itself in the log.

_V4_TABLE: Final[tuple[tuple[str, str], ...]] = (
    # Cloud metadata and host services: single addresses, so their own row names them.
    ("169.254.169.254/32", "cloud metadata (AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle)"),
    ("169.254.170.2/32", "cloud metadata (AWS ECS task credentials)"),
    ("169.254.0.23/32", "cloud metadata (Tencent Cloud)"),
    ("100.100.100.200/32", "cloud metadata (Alibaba Cloud)"),
    ("192.0.0.192/32", "cloud metadata (Oracle Cloud)"),
    # A public Microsoft address answered only from inside Azure (wire server,
    # instance health, DNS): reachable from a VM there and nowhere else.
    ("168.63.129.16/32", "cloud host service (Azure wire server)"),
    ("0.0.0.0/8", "this network"),
    ("10.0.0.0/8", "private-use"),
    ("100.64.0.0/10", "shared address space (carrier-grade NAT)"),
    ("127.0.0.0/8", "loopback"),
    ("169.254.0.0/16", "link-local"),
    ("172.16.0.0/12", "private-use"),
    ("192.0.0.0/24", "IETF protocol assignments"),
    ("192.0.2.0/24", "documentation (TEST-NET-1)"),
    ("192.88.99.0/24", "deprecated 6to4 relay anycast"),
    ("192.168.0.0/16", "private-use"),
    ("198.18.0.0/15", "benchmarking"),
    ("198.51.100.0/24", "documentation (TEST-NET-2)"),
    ("203.0.113.0/24", "documentation (TEST-NET-3)"),
    ("224.0.0.0/4", "multicast"),
    ("255.255.255.255/32", "limited broadcast"),
    ("240.0.0.0/4", "reserved"),
)

_V6_TABLE: Final[tuple[tuple[str, str], ...]] = (
    ("fd00:ec2::254/128", "cloud metadata (AWS IPv6)"),
    ("fd00:ec2::23/128", "cloud host service (AWS IPv6 time sync)"),
    ("::/128", "unspecified"),
    ("::1/128", "loopback"),
    ("::/96", "IPv4-compatible (deprecated)"),
    ("64:ff9b::/96", "NAT64 well-known prefix"),
    ("64:ff9b:1::/48", "NAT64 local-use prefix"),
    ("100::/64", "discard-only"),
    ("100:0:0:1::/64", "dummy prefix"),
    # Teredo wholesale (the registry says N/A): it tunnels to an IPv4 address it hides.
    ("2001::/32", "Teredo"),
    ("2001:2::/48", "benchmarking"),
    ("2001::/23", "IETF protocol assignments"),
    ("2001:db8::/32", "documentation"),
    ("3fff::/20", "documentation"),
    ("5f00::/16", "segment routing (SRv6) SIDs"),
    ("fc00::/7", "unique-local"),
    ("fe80::/10", "link-local"),
    ("fec0::/10", "site-local (deprecated)"),
    ("ff00::/8", "multicast"),
)

# Rows the registries mark globally reachable inside a block of the table above: each is
# judged by its own row and admitted. (NAT64's 64:ff9b::/96 is marked reachable too, but
# REQ-SEC-006 refuses NAT64 by name, so it stays in the table.)
_V4_REACHABLE: Final[tuple[str, ...]] = (
    "192.0.0.9/32",  # Port Control Protocol anycast
    "192.0.0.10/32",  # TURN anycast
)
_V6_REACHABLE: Final[tuple[str, ...]] = (
    "2001:1::1/128",  # Port Control Protocol anycast
    "2001:1::2/128",  # TURN anycast
    "2001:1::3/128",  # DNS-SD Service Registration Protocol anycast
    "2001:3::/32",  # AMT
    "2001:4:112::/48",  # AS112-v6
    "2001:20::/28",  # ORCHIDv2
    "2001:30::/28",  # Drone Remote ID Protocol Entity Tags
)

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def _most_specific_first(
    refused: tuple[tuple[str, str], ...], reachable: tuple[str, ...]
) -> tuple[tuple[Network, str | None], ...]:
    """The rows longest prefix first (a stable sort keeps the written order among equals);
    a reachable row carries None for its name."""
    rows: list[tuple[Network, str | None]] = [
        (ipaddress.ip_network(n), name) for n, name in refused
    ]
    rows += [(ipaddress.ip_network(n), None) for n in reachable]
    return tuple(sorted(rows, key=lambda row: -row[0].prefixlen))


_V4_ROWS: Final = _most_specific_first(_V4_TABLE, _V4_REACHABLE)
_V6_ROWS: Final = _most_specific_first(_V6_TABLE, _V6_REACHABLE)
_V4_BLOCKS: Final = tuple((ipaddress.IPv4Network(n), name) for n, name in _V4_TABLE)
_V6_BLOCKS: Final = tuple((ipaddress.IPv6Network(n), name) for n, name in _V6_TABLE)
# Only 2000::/3 is allocated as global unicast; anything outside it (that the
# table above did not name) is reserved by the IETF and routes nowhere public.
_V6_GLOBAL_UNICAST: Final = ipaddress.IPv6Network("2000::/3")
_SIX_TO_FOUR: Final = ipaddress.IPv6Network("2002::/16")


def builtin_blocks() -> tuple[tuple[Network, str], ...]:
    """The built-in table's refused blocks, IPv4 then IPv6, each network with its name."""
    return (*_V4_BLOCKS, *_V6_BLOCKS)


def reachable_blocks() -> tuple[Network, ...]:
    """The globally reachable blocks the table admits inside its refused ones."""
    return tuple(ipaddress.ip_network(n) for n in (*_V4_REACHABLE, *_V6_REACHABLE))


# Single addresses of cloud metadata and host services: a name rule never admits them.
_METADATA: Final[frozenset[Address]] = frozenset(
    net.network_address for net, name in builtin_blocks() if name.startswith("cloud ")
)


def refused_builtin(address: Address) -> str | None:
    """The name of the built-in block refusing *address*, or None for global unicast.

    The most specific row that holds the address decides. IPv4-mapped addresses are judged
    as the IPv4 address they carry; a 6to4 address is refused when the IPv4 address it
    embeds is.
    """
    if isinstance(address, IPv4Address):
        for network, name in _V4_ROWS:
            if address in network:
                return name
        return None
    mapped = address.ipv4_mapped
    if mapped is not None:
        return refused_builtin(mapped)
    for network6, name in _V6_ROWS:
        if address in network6:
            return name
    if address in _SIX_TO_FOUR:
        embedded = address.sixtofour
        inner = refused_builtin(embedded) if embedded is not None else "6to4"
        return None if inner is None else f"6to4 embedding {inner}"
    if address not in _V6_GLOBAL_UNICAST:
        return "reserved (outside 2000::/3)"
    return None


_NAT64: Final = (ipaddress.IPv6Network("64:ff9b::/96"), ipaddress.IPv6Network("64:ff9b:1::/48"))
_COMPATIBLE: Final = ipaddress.IPv6Network("::/96")


def carried_ipv4(address: IPv6Address) -> tuple[IPv4Address, ...]:
    """The IPv4 addresses an IPv6 address carries: IPv4-mapped and -compatible, NAT64
    (the low 32 bits), 6to4, and a Teredo server and client.

    A deny rule on an IPv4 address reads through these, so the operator's refusal holds in
    every notation of the address; an allow rule does not, so it never admits more than it
    names.
    """
    found: list[IPv4Address] = []  # :: and ::1 are not IPv4-compatible addresses
    if address.ipv4_mapped is not None:
        found.append(address.ipv4_mapped)
    if (address in _COMPATIBLE and int(address) > 1) or any(address in n for n in _NAT64):
        found.append(IPv4Address(int(address) & 0xFFFFFFFF))
    if address.sixtofour is not None:
        found.append(address.sixtofour)
    if address.teredo is not None:
        found.extend(address.teredo)
    return tuple(found)


# -- names ---------------------------------------------------------------------------------

# Top-level names that never name a public site. RFC 6761 (localhost), RFC 6762
# (local), ICANN's private-use TLD (internal), the infrastructure domain (arpa,
# home.arpa included); and names that are never delegated but widely used
# inside networks, so that only a local resolver would answer them: lan (home
# routers), home and corp (ICANN declined to delegate them), onion (RFC 7686:
# must not be resolved by DNS). example, test and invalid are left to DNS: they
# cannot resolve publicly, and tests use them as public stand-ins.
_INTERNAL_TLDS: Final = frozenset(
    {"localhost", "local", "internal", "arpa", "lan", "home", "corp", "onion"}
)


def refused_name(name: str) -> bool:
    """True when a name (comparable form, see hostname.to_ascii) never names a public site."""
    if "." not in name:  # single labels, localhost included
        return True
    return name.rsplit(".", 1)[1] in _INTERNAL_TLDS


# -- WHATWG IPv4 parsing ---------------------------------------------------------------------

_DECIMAL: Final = re.compile(r"[0-9]+")
_OCTAL: Final = re.compile(r"0[0-7]*")
_HEX: Final = re.compile(r"[0-9A-Fa-f]+")


def _ipv4_number(text: str) -> int | None:
    if text[:2] in ("0x", "0X"):
        digits = text[2:]
        if not digits:  # "0x" alone is zero in the URL Standard
            return 0
        return int(digits, 16) if _HEX.fullmatch(digits) else None
    if len(text) > 1 and text.startswith("0"):
        return int(text, 8) if _OCTAL.fullmatch(text) else None
    return int(text) if _DECIMAL.fullmatch(text) else None


def _labels(host: str) -> list[str]:
    labels = host.split(".")
    if labels[-1] == "" and len(labels) > 1:
        labels.pop()
    return labels


def ends_in_number(host: str) -> bool:
    """The URL Standard's test: a host whose last label is a number must parse as IPv4."""
    last = _labels(host)[-1]
    return bool(_DECIMAL.fullmatch(last)) or (bool(last) and _ipv4_number(last) is not None)


def parse_ipv4(host: str) -> IPv4Address | None:
    """An IPv4 host in any notation a browser reads (1-4 parts, decimal/octal/hex), or None."""
    labels = _labels(host)
    # 40 characters are more than any valid part needs; bounds int() on hostile input.
    if len(labels) > 4 or any(not label or len(label) > 40 for label in labels):
        return None
    values: list[int] = []
    for label in labels:
        number = _ipv4_number(label)
        if number is None:
            return None
        values.append(number)
    *head, last = values
    if any(n > 0xFF for n in head) or last >> (8 * (5 - len(values))):
        return None
    value = last
    for position, n in enumerate(head):
        value += n << (8 * (3 - position))
    return IPv4Address(value)


# -- the policy --------------------------------------------------------------------------------


def _canonical(address: Address) -> Address:
    if isinstance(address, IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _literal(host: str) -> Address | None:
    text = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if "%" in text:  # a zone identifier is never a destination
        return None
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


class EgressPolicy:
    """The agent-directed profile with the operator's rules; immutable after construction."""

    __slots__ = ("_allow", "_deny", "_ports")

    def __init__(
        self, *, allow: Sequence[Rule], deny: Sequence[Rule], ports: Sequence[int]
    ) -> None:
        self._allow: tuple[Rule, ...] = tuple(allow)
        self._deny: tuple[Rule, ...] = tuple(deny)
        self._ports: frozenset[int] = frozenset(ports)

    # A host as the URL gives it: (name, None) or (None, address); None when malformed.
    @staticmethod
    def _host(host: str) -> tuple[str | None, Address | None] | None:
        address = _literal(host)
        if address is not None:
            return None, _canonical(address)
        if host.startswith("[") or "%" in host or ":" in host:
            return None
        try:
            return to_ascii(host), None
        except HostNameError:
            return None

    @staticmethod
    def _matches(rules: tuple[Rule, ...], name: str | None, address: Address | None) -> bool:
        for rule in rules:
            if address is not None and rule.matches_address(address):
                return True
            if name is not None and rule.matches_name(name):
                return True
        return False

    def _denied(self, name: str | None, address: Address | None) -> bool:
        # Deny rules also see the IPv4 address an IPv6 form carries: without it a denied
        # 93.184.216.34 was reached as 6to4 [2002:5db8:d822::1] (found by a property test).
        if self._matches(self._deny, name, address):
            return True
        if isinstance(address, IPv6Address):
            return any(self._matches(self._deny, None, v4) for v4 in carried_ipv4(address))
        return False

    def judge_host(self, host: str, port: int) -> Verdict:
        """Judge the URL's host before resolution: a name, or an address literal."""
        parsed = self._host(host)
        if parsed is None:
            return Verdict(False, "malformed")
        name, address = parsed
        if self._denied(name, address):
            return Verdict(False, "deny_rule")
        if self._matches(self._allow, name, address):
            return Verdict(True, "allow_rule")
        if port not in self._ports:
            return Verdict(False, "port")
        if address is not None:
            if refused_builtin(address) is not None:
                return Verdict(False, "builtin_address")
        elif name is not None and refused_name(name):
            return Verdict(False, "builtin_name")
        return Verdict(True, "allowed")

    def _rules_at_connect(
        self, host: str, address: Address
    ) -> tuple[Verdict | None, str | None, Address]:
        """The operator's rules on an address about to be connected to (*host* is the URL's),
        for both profiles: a verdict first when the host is malformed or a rule decides, else
        None; then the host's name (None for an address literal) and the address in canonical
        form, for the checks that follow.

        Deny rules, then allow rules by address, then by name: a name rule admits what the
        name resolves to, but not the metadata service (an allowed name rebound to it does
        not reach it)."""
        parsed = self._host(host)
        if parsed is None:
            return Verdict(False, "malformed"), None, address
        name, _literal_host = parsed
        address = _canonical(address)
        if self._denied(name, address):
            return Verdict(False, "deny_rule"), name, address
        if self._matches(self._allow, None, address):
            return Verdict(True, "allow_rule"), name, address
        if self._matches(self._allow, name, None):
            if address in _METADATA:
                return Verdict(False, "builtin_address"), name, address
            return Verdict(True, "allow_rule"), name, address
        return None, name, address

    def judge_address(self, address: Address, host: str, port: int) -> Verdict:
        """Judge one address about to be connected to; *host* is the URL's host."""
        ruled, name, address = self._rules_at_connect(host, address)
        if ruled is not None:
            return ruled
        if port not in self._ports:
            return Verdict(False, "port")
        if name is not None and refused_name(name):
            return Verdict(False, "builtin_name")
        if refused_builtin(address) is not None:
            return Verdict(False, "builtin_address")
        return Verdict(True, "allowed")

    @property
    def has_rules(self) -> bool:
        return bool(self._allow or self._deny)

    def rule_verdict(self, host: str) -> bool | None:
        """The operator's rules alone, for ranking: False when a deny rule refuses *host*
        (an IPv4 address an IPv6 one carries included), True when an allow rule admits it,
        None when neither speaks and the built-in judgment applies.

        *host* is a returned URL's host as search keys it: an ASCII name, or an address
        written canonically without brackets. The same match `judge_host` makes, so a
        result the operator denies is never shown."""
        address = literal_address(host)
        name = None if address is not None else host
        if self._denied(name, address):
            return False
        if self._matches(self._allow, name, address):
            return True
        return None

    def admits_by_rule(self, host: str) -> bool:
        """Whether an allow rule matches *host* (strict mode): by name, or by literal address."""
        parsed = self._host(host)
        if parsed is None:
            return False
        name, address = parsed
        return self._matches(self._allow, name, address)

    # -- the engine profile (REQ-SEC-017) --

    @staticmethod
    def judge_engine(endpoint: EngineEndpoint, host: str, port: int) -> Verdict:
        """A request's target (the URL's host and port, also through a proxy), before any
        I/O: the endpoint of the engine as configured, nothing else."""
        wanted = EgressPolicy._host(endpoint.host)
        given = EgressPolicy._host(host)
        if wanted is None or given is None:
            return Verdict(False, "malformed")
        if port != endpoint.port:
            return Verdict(False, "engine_host")
        if not endpoint.editions:
            return Verdict(True, "allowed") if given == wanted else Verdict(False, "engine_host")
        name = given[0]
        # One label more, and never an empty one (to_ascii refuses those): <edition>.wikipedia.org
        if name is not None and name.partition(".")[2] == wanted[0]:
            return Verdict(True, "allowed")
        return Verdict(False, "engine_host")

    def judge_engine_address(
        self, endpoint: EngineEndpoint, host: str, address: Address
    ) -> Verdict:
        """One address of an engine's host (*host* is the URL's, already judged by
        judge_engine), about to be connected to.

        Deny rules, then allow rules, then, for an endpoint the operator configured, the
        operator's trust: any address its host resolves to (a private wiki needs no allow
        rule), except a metadata address reached by a name, a rebinding rather than the
        operator's word; an address literal written in base_url is admitted whatever it
        is. A built-in endpoint (the operator did not write it) gets the built-in table
        last, so a poisoned answer naming a private address is refused before any connect.
        """
        ruled, name, address = self._rules_at_connect(host, address)
        if ruled is not None:
            return ruled
        if endpoint.configured:
            # REQ-SEC-017 with NET-15: the endpoint is the operator's setting and trust.
            if name is not None and address in _METADATA:
                return Verdict(False, "builtin_address")
            return Verdict(True, "engine_endpoint")
        if refused_builtin(address) is not None:
            return Verdict(False, "builtin_address")
        return Verdict(True, "allowed")


@dataclass(frozen=True, slots=True)
class EngineEndpoint:
    """Where one engine's requests may go: its configured host and port (REQ-SEC-017).

    With ``editions`` the host is a parent domain and the endpoint is any name one label
    below it (Wikipedia's language editions, <edition>.wikipedia.org). ``configured`` says
    the operator wrote the endpoint (a ``base_url``): its addresses are then the operator's
    trust, not the built-in table's (see EgressPolicy.judge_engine_address). A provider's
    fixed host, or a driver's default, is not configured.
    """

    host: str
    port: int
    editions: bool = False
    configured: bool = False


@dataclass(frozen=True, slots=True)
class EngineProfile:
    """The engine profile of the egress component, for one configured engine: what the
    engine client asks of every request's target and of every address it connects to."""

    policy: EgressPolicy
    endpoint: EngineEndpoint

    def target(self, host: str, port: int) -> Verdict:
        return self.policy.judge_engine(self.endpoint, host, port)

    def address(self, host: str, address: Address) -> Verdict:
        return self.policy.judge_engine_address(self.endpoint, host, address)
