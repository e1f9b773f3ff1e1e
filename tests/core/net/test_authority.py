"""The one reader of an authority's host and port (net/authority.py), by example.

Every former reader now calls it: the fetch intake, the result URLs, the configuration,
the listener's gate and the outbound client. Where they read one text differently, the
difference is settled here, and each row below says which way.
"""

from __future__ import annotations

import pytest

from rypsok.core.config.urls import parse_allowed_host, parse_base_url, parse_bind, parse_proxy
from rypsok.core.net import authority
from rypsok.core.net.authority import Authority, HostPort
from rypsok.core.net.client import ClientError, _parse_url


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("example.org", Authority(None, "example.org", None)),
        ("example.org:", Authority(None, "example.org", "")),
        ("example.org:8080", Authority(None, "example.org", "8080")),
        ("u:p@example.org:1", Authority("u:p", "example.org", "1")),
        ("a@b@example.org", Authority("a@b", "example.org", None)),  # the last "@" ends it
        ("@example.org", Authority("", "example.org", None)),
        ("[::1]", Authority(None, "[::1]", None)),
        ("[::1]:443", Authority(None, "[::1]", "443")),
        ("[::1]:", Authority(None, "[::1]", "")),
        ("a:b:c", Authority(None, "a", "b:c")),  # the host runs to the first ":"
        ("[::1]:1]", Authority(None, "[::1]", "1]")),
        ("", Authority(None, "", None)),
        ("[::1", None),  # unclosed
        ("[::1]x", None),  # only ":" and a port may follow the brackets
        ("[::1]]", None),
    ],
)
def test_an_authority_splits_one_way(text: str, parts: Authority | None) -> None:
    assert authority.split(text) == parts


@pytest.mark.parametrize(
    ("text", "strict", "lenient"),
    [
        ("0", 0, 0),
        ("80", 80, 80),
        ("65535", 65535, 65535),
        ("00080", 80, 80),
        ("000080", None, 80),  # more than five digits: a URL may, a strict port may not
        ("0" * 3000 + "443", None, 443),  # never handed to int() whole
        ("65536", None, None),
        ("99999999999", None, None),
        ("", None, None),
        ("+80", None, None),
        (" 80", None, None),
        ("8_0", None, None),
        ("\u00b9", None, None),  # a superscript: str.isdigit() says yes
        ("\u0661", None, None),  # an Arabic-Indic digit
    ],
)
def test_a_port_is_ascii_digits_up_to_65535(
    text: str, strict: int | None, lenient: int | None
) -> None:
    assert authority.port_number(text) == strict
    assert authority.port_number(text, lenient=True) == lenient


@pytest.mark.parametrize(
    ("text", "host"),
    [
        ("Example.ORG.", "example.org"),
        ("b\u00fccher.example", "xn--bcher-kva.example"),
        ("127.0.0.1", "127.0.0.1"),
        ("[::1]", "[::1]"),
        ("[0:0::1]", "[::1]"),
        ("[::FFFF:1.2.3.4]", "[::ffff:102:304]"),
        ("[fe80::1%eth0]", None),  # no zone
        ("[fe80::1%25eth0]", None),
        ("[1.2.3.4]", None),  # brackets hold IPv6 only
        ("[v1.x]", None),  # an IPvFuture literal is no host name
        ("::1", None),  # IPv6 without brackets
        ("127.1", None),  # a strict host is a dotted quad or a name
        ("127.000.0.1", None),
        ("", None),
        ("a..b", None),
        ("a_b.example", "a_b.example"),
    ],
)
def test_a_strict_host_is_a_bracketed_ipv6_a_dotted_quad_or_a_name(
    text: str, host: str | None
) -> None:
    assert authority.strict_host(text) == host


def test_the_strict_form_refuses_userinfo_empty_and_zero_ports() -> None:
    assert authority.parse_strict("Example.org:0080") == HostPort("example.org", "0080")
    assert authority.parse_strict("[::1]") == HostPort("[::1]", None)
    assert authority.parse_strict("u@example.org") is None
    assert authority.parse_strict("example.org:") is None
    assert authority.parse_strict("example.org:0") is None
    assert authority.parse_strict("example.org:0", zero_port=True) == HostPort("example.org", "0")


# -- what each caller now does with the forms its old reader took another way ---------------


@pytest.mark.parametrize(
    ("text", "normal"),
    [
        ("127.0.0.1:8737", "127.0.0.1:8737"),
        ("localhost:0", "127.0.0.1:0"),
        ("[::1]:8737", "[::1]:8737"),
        ("[0::1]:80", "[::1]:80"),
        ("[1.2.3.4]:80", None),  # was 1.2.3.4:80: brackets hold IPv6 only
        ("[fe80::1%eth0]:80", None),  # was accepted with its zone
        ("::1:80", None),
        ("[::1]", None),
        ("127.0.0.1:65536", None),
        ("LOCALHOST:80", None),  # the one name is written as it is
    ],
)
def test_bind(text: str, normal: str | None) -> None:
    assert parse_bind(text) == normal


@pytest.mark.parametrize(
    ("text", "normal"),
    [
        ("MCP.example:8443", "mcp.example:8443"),
        ("mcp.example:08443", "mcp.example:08443"),  # the port as written: the gate compares text
        ("[::1]:80", "[::1]:80"),
        ("[fe80::1%eth0]", None),  # was accepted with its zone
        ("mcp.example:", None),
        ("mcp.example:0", None),
        ("user@mcp.example", None),
    ],
)
def test_allowed_host(text: str, normal: str | None) -> None:
    assert parse_allowed_host(text) == normal


@pytest.mark.parametrize(
    ("text", "proxy"),
    [
        ("http://proxy.internal:3128", ("proxy.internal", 3128)),
        ("http://proxy.internal:", ("proxy.internal", 80)),
        ("http://[::1]:3128/", ("::1", 3128)),
        ("http://proxy.internal:0", None),  # was read as port 80
        ("http://[::1]x:3128", None),  # urlsplit dropped what followed the brackets
        ("http://[v1.x]:3128", None),  # urlsplit gave the host name "v1.x"
        ("http://[fe80::1%25eth0]:3128", None),  # urlsplit gave the zone "25eth0"
        ("http://u@proxy.internal:3128", None),
    ],
)
def test_proxy(text: str, proxy: tuple[str, int] | None) -> None:
    assert parse_proxy(text) == proxy


@pytest.mark.parametrize(
    ("text", "normal"),
    [
        ("https://Search.Example:0443/api/", "https://search.example:443/api"),
        ("https://search.example:/api", "https://search.example/api"),
        ("https://search.example:0/", None),  # was kept as :0, which the client refuses
        ("https://[::1]x/", None),
        ("https://[v1.x]/", None),
    ],
)
def test_base_url(text: str, normal: str | None) -> None:
    assert parse_base_url(text) == normal


@pytest.mark.parametrize(
    "url",
    [
        "https://[::1]x/",  # urlsplit read the host ::1
        "https://[v1.x]/",  # urlsplit read the host name v1.x
        "https://[fe80::1%25eth0]/",
        "https://h.example:0/",
        "https://h.example:65536/",
        "https://u@h.example/",
    ],
)
def test_the_client_sends_the_strict_form_only(url: str) -> None:
    with pytest.raises(ClientError) as caught:
        _parse_url(url, allow_http=False)
    assert caught.value.kind == "protocol"


def test_the_client_reads_a_port_as_a_url_writes_it() -> None:
    target = _parse_url("https://H.Example:000443/x", allow_http=False)
    assert (target.host, target.port, target.host_header) == ("h.example", 443, "h.example")
    assert _parse_url("https://h.example:/", allow_http=False).port == 443
