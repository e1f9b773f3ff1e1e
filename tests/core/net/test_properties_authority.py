"""Properties of the one authority reader (net/authority.py) against the readers it replaced.

Five readers split host and port before issue 32: the fetch intake, the result URLs, the
configuration, the listener's gate and the outbound client (through urlsplit). A frozen
copy of each old reader is kept below as the oracle. Where a caller relied on a reading,
the new one gives the same answer; where the old readers disagreed, the new one is never
more lenient than the old, and each difference is named (a zone identifier, brackets
around something other than IPv6, text after the brackets, a port that is not one to
five ASCII digits in range). Well-formed authorities are read as urllib.parse.urlsplit
reads them.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from rypsok.core.config.urls import parse_allowed_host, parse_bind
from rypsok.core.net import authority
from rypsok.core.net.client import ClientError, _parse_url
from rypsok.core.net.hostname import HostNameError, literal_address, to_ascii
from rypsok.core.search import urls
from rypsok.protocol.http.auth import Authenticator
from rypsok.protocol.http.gate import Policy

PROPERTY = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Text that reaches every branch of a split: brackets, colons, "@", zones, digits.
PIECES = st.sampled_from(
    [
        "[",
        "]",
        ":",
        "@",
        "%",
        "%25",
        ".",
        "::1",
        "fe80::1",
        "1.2.3.4",
        "127.0.0.1",
        "0",
        "80",
        "65535",
        "65536",
        "000080",
        "localhost",
        "Example.ORG",
        "v1.x",
        "b\u00fccher",
        "\u00b9",
        "\u0661",
        "_",
        "-",
        "x",
        "eth0",
        " ",
    ]
)
AUTHORITY_TEXT = st.one_of(
    st.lists(PIECES, max_size=8).map("".join),
    st.text(max_size=20),
)
URL_SAFE = AUTHORITY_TEXT.filter(lambda t: not re.search(r"[/?#\\\s\x00-\x20\x7f]", t))


# -- the oracles: the old readers, frozen ------------------------------------------------------


def old_intake_split(text: str) -> tuple[str | None, str, str | None] | None:
    """fetch/intake.py: the user information at the last "@", then _split_authority."""
    userinfo = None
    at = text.rfind("@")
    if at != -1:
        userinfo, text = text[:at], text[at + 1 :]
    if text.startswith("["):
        close = text.find("]")
        if close == -1:
            return None
        after = text[close + 1 :]
        if after and not after.startswith(":"):
            return None
        return userinfo, text[: close + 1], (after[1:] if after else None)
    host, colon, port = text.partition(":")
    return userinfo, host, (port if colon else None)


def old_intake_port(text: str) -> int | None:
    if not text.isascii() or not text.isdigit():
        return None
    value = int(text)
    return value if value <= 65535 else None


def old_search_split(text: str) -> tuple[str, str | None] | None:
    """search/urls.py: no "@" at all, then the split and a port of 0-5 digits, 1-65535."""
    if "@" in text:
        return None
    if text.startswith("["):
        close = text.find("]")
        if close == -1:
            return None
        host, after = text[: close + 1], text[close + 1 :]
        if not after:
            return host, None
        if not after.startswith(":"):
            return None
        port: str | None = after[1:]
    else:
        host, colon, port = text.partition(":")
        if not colon:
            port = None
    if port is not None and (
        not re.fullmatch(r"[0-9]{0,5}", port) or (port and not 1 <= int(port) <= 65535)
    ):
        return None
    return host, port


def _old_config_port(text: str, *, zero: bool = False) -> int | None:
    if not re.fullmatch(r"[0-9]{1,5}", text):
        return None
    value = int(text)
    return value if (0 if zero else 1) <= value <= 65535 else None


def _old_config_host(text: str) -> str | None:
    if text.startswith("["):
        address = literal_address(text)
        return f"[{address.compressed}]" if address is not None and address.version == 6 else None
    try:
        return str(ipaddress.IPv4Address(text))
    except ValueError:
        pass
    try:
        return to_ascii(text)
    except HostNameError:
        return None


def old_parse_allowed_host(text: str) -> str | None:
    text = text.strip().lower()
    if text.startswith("["):
        end = text.find("]")
        host, rest = text[: end + 1], text[end + 1 :]
    else:
        host, colon, port = text.partition(":")
        rest = f":{port}" if colon else ""
    normal = _old_config_host(host)
    if normal is None:
        return None
    if rest:
        if not rest.startswith(":") or _old_config_port(rest[1:]) is None:
            return None
        return f"{normal}{rest}"
    return normal


def old_parse_bind(text: str) -> str | None:
    host, sep, port = text.rpartition(":")
    number = _old_config_port(port, zero=True)
    if not sep or number is None:
        return None
    if host == "localhost":
        host = "127.0.0.1"
    address = literal_address(host)
    if address is None or (address.version == 6 and not host.startswith("[")):
        return None
    shown = f"[{address.compressed}]" if address.version == 6 else address.compressed
    return f"{shown}:{number}"


def old_host_allowed(host: str, bind: str) -> bool:
    """protocol/http/gate.py: split_host (rpartition, str.isdigit), loopback names or bind."""
    host = host.lower()
    if host.startswith("["):
        end = host.find("]")
        if end < 0:
            name, port = host, None
        else:
            rest = host[end + 1 :]
            name, port = host[: end + 1], (rest[1:] if rest.startswith(":") else None)
    else:
        head, sep, tail = host.rpartition(":")
        name, port = (head, tail) if sep else (host, None)
    if port is not None and not port.isdigit():
        return False
    bind = f"[{bind}]" if ":" in bind else bind
    return name in ("localhost", "127.0.0.1", "[::1]") or name == bind


def old_client_host_port(url: str) -> tuple[str, int] | None:
    """net/client.py: urlsplit's hostname and port, an address or a to_ascii name."""
    if any(ord(ch) <= 0x20 or ord(ch) == 0x7F for ch in url):
        return None
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if parts.username is not None or parts.password is not None:
        return None
    raw = parts.hostname or ""
    literal = literal_address(raw)
    if literal is not None:
        if isinstance(literal, ipaddress.IPv6Address) and literal.scope_id:
            return None
        host = str(literal)
    else:
        try:
            host = to_ascii(raw)
        except HostNameError:
            return None
    if port == 0:
        return None
    return host, port or 443


# -- the differences the new reader settles ---------------------------------------------------


def _bracketed_non_ipv6(host: str) -> bool:
    """Brackets around an IPv4 address, an IPvFuture or a zone: RFC 3986 has IPv6 only."""
    if not host.startswith("["):
        return False
    inner = host.strip("[]")
    return "%" in inner or literal_address(inner) is None or ":" not in inner


def _not_a_strict_port(port: str | None) -> bool:
    return port is not None and authority.port_number(port) is None


# -- the properties ------------------------------------------------------------------------------


@PROPERTY
@given(AUTHORITY_TEXT)
@example("u:p@[::1]:1]")
def test_the_split_is_the_fetch_intakes(text: str) -> None:
    parts = authority.split(text)
    assert (None if parts is None else tuple(parts)) == old_intake_split(text)
    if parts is not None and parts.port:
        assert authority.port_number(parts.port, lenient=True) == old_intake_port(parts.port)


@PROPERTY
@given(URL_SAFE)
@example("[::1]:")
@example("h:0")
def test_result_urls_split_as_before(text: str) -> None:
    parts = urls._split(f"https://{text}/p")
    if not text.isprintable():
        return  # refused before the split, both ways
    assert (None if parts is None else (parts.host, parts.port)) == old_search_split(text)


@PROPERTY
@given(AUTHORITY_TEXT)
@example("[fe80::1%eth0]")
@example("[::1]x")
def test_allowed_hosts_read_as_before_but_for_zones(text: str) -> None:
    new, old = parse_allowed_host(text), old_parse_allowed_host(text)
    if new != old:
        assert new is None and "%" in text  # a zone identifier no longer passes


@PROPERTY
@given(AUTHORITY_TEXT)
@example("[1.2.3.4]:80")
@example("[fe80::1%eth0]:80")
def test_bind_reads_as_before_but_for_brackets_around_other_than_ipv6(text: str) -> None:
    new, old = parse_bind(text), old_parse_bind(text)
    if new != old:
        host = text.rpartition(":")[0]
        assert new is None and _bracketed_non_ipv6(host)


@PROPERTY
@given(AUTHORITY_TEXT, st.sampled_from(["127.0.0.1", "::", "0.0.0.0", "example.internal"]))
@example("[::1]x", "127.0.0.1")
@example("localhost:\u00b2", "127.0.0.1")
@example("localhost:99999", "127.0.0.1")
def test_the_gate_admits_no_host_it_refused_and_refuses_only_malformed_ones(
    text: str, bind: str
) -> None:
    policy = Policy(Authenticator([]), (), bind, (), 1024, True)
    new, old = policy.host_allowed(text), old_host_allowed(text, bind)
    if new != old:
        parts = authority.split(text.lower())
        assert old and not new
        assert parts is None or _not_a_strict_port(parts.port)


def _new_client(url: str) -> tuple[str, int] | None:
    try:
        target = _parse_url(url, allow_http=False)
    except ClientError:
        return None
    return target.host, target.port


@PROPERTY
@given(URL_SAFE)
@example("[::1]x")
@example("[v1.x]")
@example("][v1.x")
@example("H.Example:000443")
def test_the_client_reads_as_urlsplit_did_but_for_malformed_literals(text: str) -> None:
    url = f"https://{text}/"
    new, old = _new_client(url), old_client_host_port(url)
    if new != old:
        # urlsplit took the text between the first "[" and "]" wherever they stood, an
        # IPvFuture as a host name, and dropped what followed the "]".
        assert new is None and "[" in authority.split_userinfo(text)[1]


LABEL = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?", fullmatch=True)
LAST_LABEL = st.from_regex(r"[a-z]([a-z0-9-]{0,8}[a-z0-9])?", fullmatch=True)
NAME = st.tuples(st.lists(LABEL, max_size=3), LAST_LABEL).map(lambda t: ".".join([*t[0], t[1]]))
HOST = st.one_of(
    NAME,
    NAME.map(str.upper),
    st.ip_addresses(v=4).map(str),
    st.ip_addresses(v=6).map(lambda a: f"[{a}]"),
    st.ip_addresses(v=6).map(lambda a: f"[{a.exploded.upper()}]"),
)
PORT = st.one_of(st.none(), st.just(""), st.integers(1, 65535).map(str))
USERINFO = st.one_of(st.none(), st.from_regex(r"[a-z0-9]{0,6}(:[a-z0-9]{0,6})?", fullmatch=True))


@PROPERTY
@given(USERINFO, HOST, PORT)
def test_a_well_formed_authority_reads_as_urlsplit_reads_it(
    userinfo: str | None, host: str, port: str | None
) -> None:
    text = (
        ("" if userinfo is None else f"{userinfo}@") + host + ("" if port is None else f":{port}")
    )
    split = urlsplit(f"http://{text}/")
    parts = authority.split(text)
    assert parts is not None
    assert (parts.userinfo is not None) == (split.username is not None)
    assert (authority.port_number(parts.port) if parts.port else None) == split.port
    assert split.hostname is not None
    canonical = authority.strict_host(parts.host)
    assert canonical is not None
    address = literal_address(split.hostname)
    assert canonical.strip("[]") == (split.hostname if address is None else str(address))
    if userinfo is None and port != "":
        assert authority.parse_strict(text) == (canonical, port)
