"""Egress rules of the configuration: networks, addresses, names, *.suffixes.

A rule never carries a scheme or a port. Names are lower-cased, in ASCII
form, without the root dot; a rule written with a leading or trailing dot,
or with an empty label, is a configuration error.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Final, Literal

from rypsok.core.net.hostname import HostNameError, to_ascii

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Kind = Literal["network", "address", "host", "suffix"]


# Characters that IDNA 2003 (the standard library's codec, used by hostname.to_ascii) and
# UTS 46 as browsers apply it read differently: browsers keep ß and ς where the codec folds
# them to ss and σ, and keep or refuse the joiners where the codec drops them. A name with
# one would come out as the ASCII form of another host, so it is refused, never rewritten;
# its xn-- form is read the same by everyone.
IDNA_DEVIATIONS: Final = frozenset("\u00df\u03c2\u1e9e\u200c\u200d")


def idna_deviation(name: str) -> bool:
    """Whether *name* holds a character the two IDNA readings disagree on."""
    return not name.isascii() and not IDNA_DEVIATIONS.isdisjoint(name)


class RuleError(ValueError):
    """A rule is malformed; the message is ours and repeats nothing of the rule."""


@dataclass(frozen=True, slots=True)
class Rule:
    kind: Kind
    network: Network | None = None  # for "network" and "address"
    name: str | None = None  # for "host" and "suffix" (without the "*.")

    def matches_name(self, host: str) -> bool:
        """Whether a host name (already in comparable form) matches this rule."""
        if self.kind == "host":
            return host == self.name
        if self.kind == "suffix" and self.name is not None:
            return host.endswith("." + self.name)
        return False

    def matches_address(self, address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
        if self.network is None:
            return False
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            mapped = address.ipv4_mapped
            if mapped.version == self.network.version and mapped in self.network:
                return True
        return address.version == self.network.version and address in self.network

    def wider_than(self, v4_prefix: int, v6_prefix: int) -> bool:
        if self.network is None:
            return False
        limit = v4_prefix if self.network.version == 4 else v6_prefix
        return self.network.prefixlen < limit


def parse_rule(text: str) -> Rule:
    if not text.strip():
        raise RuleError("a rule must not be empty")
    if text != text.strip():
        raise RuleError("a rule must not have surrounding spaces")
    if "://" in text:
        raise RuleError("a rule must not carry a scheme")
    if "/" in text:
        try:
            network = ipaddress.ip_network(text, strict=True)
        except ValueError as exc:
            if "has host bits set" in str(exc):
                raise RuleError("a network must have no bits set after its prefix") from None
            raise RuleError("a rule with / must be a network in CIDR notation") from None
        return Rule("network", network=network)
    if text.startswith("["):
        if "]:" in text:
            raise RuleError("a rule must not carry a port")
        raise RuleError("write an IPv6 address without brackets")
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        pass
    else:
        return Rule("address", network=ipaddress.ip_network(address))
    if ":" in text:
        raise RuleError("a rule must not carry a port")
    if text.startswith("."):
        raise RuleError("a host pattern must not start with a dot")
    if text.endswith("."):
        raise RuleError("a host pattern must not end with a dot")
    kind: Kind = "host"
    name = text
    if text.startswith("*."):
        kind, name = "suffix", text[2:]
    if "*" in name:
        raise RuleError("a wildcard may only stand as the first label, as in *.example.org")
    if idna_deviation(name):
        raise RuleError("a host pattern with ß, ς or a joiner must be written in its xn-- form")
    try:
        ascii_name = to_ascii(name)
    except HostNameError as exc:
        raise RuleError(str(exc).replace("a host name", "a host pattern")) from None
    return Rule(kind, name=ascii_name)
