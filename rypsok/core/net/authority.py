"""Host and port of an authority (RFC 3986 3.2): the one split every reader uses.

    authority = [ userinfo "@" ] host [ ":" port ]

The split, the same for every caller: the user information ends at the last
"@" (as browsers and urllib read it); a host that starts with "[" is an IP
literal and runs to the first "]", after which only ":" and a port may follow;
any other host runs to the first ":". Where the host is read from the split
differs by what the text is, so each reader below says which one it uses:

* The strict form, for what we send and what the configuration and our
  listener accept: no user information; a port of one to five ASCII digits
  (0 to 65535; whether 0 may stand is the caller's word); a host that is an
  IPv6 literal in brackets without a zone, a dotted-quad IPv4 address, or a
  host name in its ASCII form (`hostname.to_ascii`: IDNA 2003 per label).
* The lenient form, for a URL a caller or an engine hands us (the WHATWG URL
  Standard, as a browser would reach it): a port of any number of ASCII
  digits (leading zeros), an empty port meaning the scheme's default. The
  host of such a URL is read by its caller (web_fetch as a browser does, a
  result URL as the egress policy judges it), from the same split.

Pure: no resolver, no cache (a host may be part of a caller's URL).
"""

from __future__ import annotations

import ipaddress
import re
from typing import Final, NamedTuple

from rypsok.core.net.hostname import HostNameError, to_ascii

PORT_MAX: Final = 65535
_STRICT_PORT: Final = re.compile(r"[0-9]{1,5}")
_LENIENT_PORT: Final = re.compile(r"[0-9]+")


class HostPort(NamedTuple):
    """A host and its port, as written: the host with its brackets, the port's digits."""

    host: str
    port: str | None  # "" for "host:", None without a ":"


class Authority(NamedTuple):
    userinfo: str | None  # before the last "@"; None without one
    host: str  # as written, an IP literal with its brackets
    port: str | None  # as written: "" for "host:", None without a ":"


def split_userinfo(text: str) -> tuple[str | None, str]:
    """(user information or None, the rest): the user information ends at the last "@"."""
    at = text.rfind("@")
    if at == -1:
        return None, text
    return text[:at], text[at + 1 :]


def split_host_port(text: str) -> HostPort | None:
    """Host and port of *text* (no user information), or None when the brackets of an IP
    literal do not close or anything but ":" and a port follows them."""
    if text.startswith("["):
        close = text.find("]")
        if close == -1:
            return None
        after = text[close + 1 :]
        if not after:
            return HostPort(text, None)
        if after[0] != ":":
            return None
        return HostPort(text[: close + 1], after[1:])
    host, colon, port = text.partition(":")
    return HostPort(host, port if colon else None)


def split(text: str) -> Authority | None:
    """User information, host and port of *text*; None as for `split_host_port`."""
    userinfo, rest = split_userinfo(text)
    parts = split_host_port(rest)
    if parts is None:
        return None
    return Authority(userinfo, parts.host, parts.port)


def port_number(text: str, *, lenient: bool = False) -> int | None:
    """The port *text* names (0 to 65535), or None.

    Strict: one to five ASCII digits. Lenient (a URL, as browsers read it): any number
    of ASCII digits. Never ``str.isdigit``: it takes superscripts and other scripts'
    digits, which no port is written in.
    """
    pattern = _LENIENT_PORT if lenient else _STRICT_PORT
    if not pattern.fullmatch(text):
        return None
    # Leading zeros are all a long port may add: dropped before int(), so a hostile
    # run of digits is never converted.
    significant = text.lstrip("0")
    if len(significant) > 5:
        return None
    value = int(significant or "0")
    return value if value <= PORT_MAX else None


def strict_host(text: str) -> str | None:
    """The comparable form of a host of the strict form, or None.

    An IPv6 literal in brackets (no zone: RFC 3986 has none, and no browser sends
    one) becomes its compressed form in brackets; a dotted-quad IPv4 address its
    canonical text; anything else must be a host name, which `to_ascii` brings to
    lower-case ASCII without the root dot, refusing a name whose last label is a number.
    """
    if text.startswith("["):
        inner = text[1:-1]
        if not text.endswith("]") or "%" in inner:
            return None
        try:
            return f"[{ipaddress.IPv6Address(inner).compressed}]"
        except ValueError:
            return None
    try:
        return str(ipaddress.IPv4Address(text))
    except ValueError:
        pass
    try:
        return to_ascii(text)
    except HostNameError:
        return None


def parse_strict(text: str, *, zero_port: bool = False) -> HostPort | None:
    """host[:port] of the strict form: the host in its comparable form (`strict_host`),
    the port's digits as written; None for user information, an empty port, a port out
    of range (0 only with *zero_port*) or a host that is not one."""
    parts = split(text)
    if parts is None or parts.userinfo is not None:
        return None
    if parts.port is not None:
        number = port_number(parts.port)
        if number is None or (number == 0 and not zero_port):
            return None
    host = strict_host(parts.host)
    return None if host is None else HostPort(host, parts.port)
