"""web_fetch URL intake (REQ-FETCH-001, -007, -010, REQ-SEC-009, REQ-PRIV-002): pure, no network."""

from __future__ import annotations

import ipaddress
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rypsok.core.fetch import errors
from rypsok.core.fetch.intake import FetchTarget, parse_fetch_url
from rypsok.core.model import MESSAGE_MAX, ToolError

MODES = ("refuse", "mask", "warn", "off")
GITHUB_TOKEN = "ghp_" + "Zq9x" * 9  # key-shaped, 36 characters after the prefix


def _parse(url: str, *, allow_http: bool = False, mode: str = "refuse") -> FetchTarget:
    return parse_fetch_url(url, allow_http=allow_http, secret_mode=mode)


def _error(url: str, *, allow_http: bool = False, mode: str = "refuse") -> ToolError:
    with pytest.raises(ToolError) as caught:
        _parse(url, allow_http=allow_http, mode=mode)
    error = caught.value
    _assert_silent(error, url)
    return error


def _assert_silent(error: ToolError, url: str) -> None:
    """No message or detail value repeats the URL or any part of it."""
    assert len(error.message) <= MESSAGE_MAX
    shown = (error.message + " " + " ".join(str(v) for v in error.detail.values())).lower()
    assert len(url.strip()) < 3 or url.strip().lower() not in shown
    for token in re.split(r"[^0-9a-z\u00c0-\uffff]+", url.lower()):
        if len(token) >= 3 and token not in ("http", "https"):
            assert token not in shown, (token, error.message)


# -- length and shape (REQ-FETCH-001) ---------------------------------------------------------


def test_req_fetch_001_a_url_of_2048_characters_is_read_and_one_more_is_refused() -> None:
    base = "https://qzx.example/"
    at_limit = base + "p" * (2048 - len(base))
    assert len(at_limit) == 2048
    assert _parse(at_limit).target == "/" + "p" * (2048 - len(base))
    error = _error(at_limit + "p")
    assert error.kind == "invalid_request"
    assert error.message == "url must be at most 2048 characters"
    assert error.detail == {"parameter": "url"}


def test_req_fetch_001_length_counts_characters_not_bytes() -> None:
    base = "https://qzx.example/"
    url = base + "é" * (2048 - len(base))
    assert len(url.encode()) > 2048
    assert _parse(url).target.startswith("/%C3%A9")


@pytest.mark.parametrize(
    "url",
    [
        "",
        " ",
        "qzxsite.example/page",
        "//qzxsite.example/",
        "https://",
        "http://",
        "https://[::1",
        "https://[qzx::1]/",
        "https://[v1.qzx]/",
        "https://[::1]qzx/",
        "https://[fe80::1%25eth0]/",
        "https://[fe80::1%eth0]/",
        "https://qzxsite.example:99999/",
        "https://qzxsite.example:8o8o/",
        "https://qzx.example:-1/",
        "https://1.2.3.999/",
        "https://qzx.0x1f/",
        "https://1.2.3.4.5/",
        "https://09.1.1.1/",
        "https://qzx site.example/",
        "https://qzx%2fsite.example/",
        "https://qzx%00.example/",
        "https://qzx<site.example/",
        "https://%ff%fe.example/",
        "https://qzx\x00.example/",
        "https://qzx／site.example/",
        "https://%/",
    ],
)
def test_req_fetch_001_what_is_not_a_url_is_invalid_request(url: str) -> None:
    error = _error(url)
    assert error.kind == "invalid_request", url
    assert error.detail == {"parameter": "url"}
    assert error.message == "url must be an absolute http or https URL with a valid host"


# -- credentials and secrets (REQ-FETCH-007, REQ-PRIV-002) ------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_req_fetch_007_a_user_name_is_refused_in_every_mode(mode: str) -> None:
    error = _error("https://alice@qzxsite.example/docs", mode=mode)
    assert error.kind == "denied"
    assert error.detail == {"reason": "credential_in_url"}
    assert error.message == (
        "the URL carries a user name before @ at character 8; remove it and fetch again"
    )


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("url", "position"),
    [
        ("https://alice:hunter2@qzxsite.example/", 14),
        ("https://:hunter2@qzxsite.example/", 9),
        ("HTTPS:\\\\alice:hunter2@qzxsite.example/", 14),
        ("ftp://alice:hunter2@qzxsite.example/", 12),
    ],
)
def test_req_fetch_007_a_password_is_refused_in_every_mode(
    mode: str, url: str, position: int
) -> None:
    error = _error(url, mode=mode)
    assert error.kind == "denied"
    assert error.detail == {
        "reason": "secret_in_url",
        "kind": "url_userinfo_password",
        "position": position,
    }
    assert "hunter2" not in error.message


@pytest.mark.parametrize("url", ["https://@qzxsite.example/", "https://:@qzxsite.example/"])
def test_req_fetch_007_an_empty_user_information_carries_nothing(url: str) -> None:
    target = _parse(url)
    assert target.host == "qzxsite.example"
    assert "@" not in target.url


@pytest.mark.parametrize("mode", ["refuse", "mask", "unknown-mode"])
def test_req_priv_002_a_key_in_the_url_is_refused_with_kind_and_position(mode: str) -> None:
    url = f"https://qzxsite.example/search?qzxkey={GITHUB_TOKEN}"
    error = _error(url, mode=mode)
    assert error.kind == "denied"
    assert error.detail == {
        "reason": "secret_in_url",
        "kind": "github_token",
        "position": url.index("ghp_"),
    }
    assert GITHUB_TOKEN.lower() not in error.message.lower()


def test_req_priv_002_warn_mode_fetches_and_reports_the_finding() -> None:
    url = f"https://qzxsite.example/search?qzxkey={GITHUB_TOKEN}"
    target = _parse(url, mode="warn")
    assert target.secret_warning is not None
    assert target.secret_warning.kind == "github_token"
    assert target.secret_warning.position == url.index("ghp_")
    assert GITHUB_TOKEN in target.target
    assert _parse(url, mode="off").secret_warning is None


def test_req_priv_002_a_key_beside_a_user_name_is_refused_even_when_detection_is_off() -> None:
    url = f"https://alice@qzxsite.example/?t={GITHUB_TOKEN}"
    error = _error(url, mode="off")
    assert error.detail["reason"] == "secret_in_url"


# -- scheme (REQ-FETCH-010, REQ-SEC-009) -------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "ftp://qzxsite.example/",
        "file:///etc/passwd",
        "javascript:alert(1)",
        "data:text/html,<b>qzx</b>",
        "ws://qzxsite.example/",
        "wss://qzxsite.example/",
        "mailto:qzx@site.example",
        "gopher://qzxsite.example/",
        "qzxsite.example:8080/",
        "view-source:https://qzxsite.example/",
    ],
)
def test_req_fetch_010_another_scheme_is_denied(url: str) -> None:
    for allow_http in (False, True):
        error = _error(url, allow_http=allow_http)
        assert error.kind == "denied"
        assert error.detail == {"reason": "scheme"}
        assert error.message.startswith("the URL scheme is not allowed")
    assert _error(url).message == "the URL scheme is not allowed; use an https URL"
    assert _error(url, allow_http=True).message == (
        "the URL scheme is not allowed; use an http or https URL"
    )


def test_req_fetch_010_http_is_upgraded_to_https_when_not_allowed() -> None:
    target = _parse("http://qzxsite.example/a?b=1")
    assert (target.scheme, target.port, target.upgraded) == ("https", 443, True)
    assert target.url == "https://qzxsite.example/a?b=1"
    explicit = _parse("HTTP://qzxsite.example:80/")
    assert (explicit.scheme, explicit.port, explicit.url) == (
        "https",
        443,
        "https://qzxsite.example/",
    )
    other = _parse("http://qzxsite.example:8080/")
    assert (other.port, other.url, other.upgraded) == (8080, "https://qzxsite.example:8080/", True)


def test_req_fetch_010_http_stays_http_when_the_operator_allows_it() -> None:
    target = _parse("http://qzxsite.example/", allow_http=True)
    assert (target.scheme, target.port, target.upgraded) == ("http", 80, False)
    assert target.url == "http://qzxsite.example/"
    https = _parse("https://qzxsite.example/", allow_http=True)
    assert (https.scheme, https.port, https.upgraded) == ("https", 443, False)


def test_req_fetch_010_the_two_scheme_messages_and_the_other_constructors() -> None:
    retry = errors.https_retry_failed()
    assert (retry.kind, retry.detail) == ("denied", {"reason": "scheme"})
    assert retry.message == "an http URL was retried over https and that request failed"
    egress = errors.egress_denied()
    assert (egress.kind, egress.detail) == ("denied", {"reason": "egress"})
    assert egress.message == "the destination is not allowed by the egress policy"
    network = errors.network_unavailable()
    assert (network.kind, network.detail) == ("unavailable", {"reason": "network"})
    assert errors.credential_in_url(None).message == (
        "the URL carries a user name before @; remove it and fetch again"
    )


# -- hosts -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("http://2130706433/", "127.0.0.1"),
        ("http://0177.0.0.1/", "127.0.0.1"),
        ("http://0x7f.1/", "127.0.0.1"),
        ("http://127.1/", "127.0.0.1"),
        ("http://0x7F000001/", "127.0.0.1"),
        ("http://127.0.0.1./", "127.0.0.1"),
        ("https://%31%32%37.0.0.1/", "127.0.0.1"),
        ("https://１２７．０．０．１/", "127.0.0.1"),
        ("https://0xa9.0xfe.0xa9.0xfe/", "169.254.169.254"),
        ("https://010.8.8.8/", "8.8.8.8"),
        ("https://8.8.8.8:443/", "8.8.8.8"),
        ("https://0/", "0.0.0.0"),
    ],
)
def test_req_test_005_ipv4_literals_in_every_notation(url: str, host: str) -> None:
    target = _parse(url, allow_http=True)
    assert target.host == host
    assert target.address == ipaddress.IPv4Address(host)
    assert target.url.split("//", 1)[1].startswith(host + "/")


@pytest.mark.parametrize(
    ("url", "host", "shown"),
    [
        ("https://[::1]/", "::1", "[::1]"),
        ("https://[0:0:0:0:0:0:0:1]/", "::1", "[::1]"),
        ("https://[::FFFF:127.0.0.1]/", "::ffff:7f00:1", "[::ffff:7f00:1]"),
        (
            "https://[2606:4700:0::6810:84E5]:8443/",
            "2606:4700::6810:84e5",
            "[2606:4700::6810:84e5]:8443",
        ),
    ],
)
def test_req_test_005_ipv6_literals_are_canonical(url: str, host: str, shown: str) -> None:
    target = _parse(url)
    assert target.host == host
    assert target.address == ipaddress.IPv6Address(host)
    assert target.url == f"https://{shown}/"


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://QzxSite.Example./", "qzxsite.example"),
        ("https://bücher.example/", "xn--bcher-kva.example"),
        ("https://BÜCHER.example/", "xn--bcher-kva.example"),
        ("https://b%C3%BCcher.example/", "xn--bcher-kva.example"),
        ("https://qzx%2Esite.example/", "qzx.site.example"),
        ("https://qzx。site。example/", "qzx.site.example"),
        ("https://ｑｚｘ.example/", "qzx.example"),
        ("https://a_b.example/", "a_b.example"),
        ("https:qzxsite.example/x", "qzxsite.example"),
        ("https:\\\\qzxsite.example\\x", "qzxsite.example"),
        ("  https://qzx\tsite.exa\nmple/\r\n", "qzxsite.example"),
        ("https:///qzxsite.example/", "qzxsite.example"),
    ],
)
def test_req_fetch_001_host_names_as_a_browser_reads_them(url: str, host: str) -> None:
    target = _parse(url)
    assert target.host == host
    assert target.address is None
    assert target.url.startswith(f"https://{host}/")


@pytest.mark.parametrize(
    "url",
    [
        "https://qzx..example/",
        "https://.qzx.example/",
        "https://qzx!site.example/",
        "https://-qzx.example/",
        "https://" + "q" * 64 + ".example/",
    ],
)
def test_req_sec_006_a_malformed_host_name_is_denied_by_the_egress_policy(url: str) -> None:
    error = _error(url)
    assert error.kind == "denied"
    assert error.detail == {"reason": "egress"}
    assert error.message == "the destination is not allowed by the egress policy"


# -- ports and request target -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "port", "shown"),
    [
        ("https://qzx.example/", 443, "https://qzx.example/"),
        ("https://qzx.example:443/", 443, "https://qzx.example/"),
        ("https://qzx.example:/", 443, "https://qzx.example/"),
        ("https://qzx.example:0080/", 80, "https://qzx.example:80/"),
        ("https://qzx.example:8443", 8443, "https://qzx.example:8443/"),
        ("https://qzx.example:65535/", 65535, "https://qzx.example:65535/"),
        ("https://qzx.example:0/", 0, "https://qzx.example:0/"),
    ],
)
def test_req_sec_009_the_port_is_explicit_or_the_default(url: str, port: int, shown: str) -> None:
    target = _parse(url)
    assert (target.port, target.url) == (port, shown)


@pytest.mark.parametrize(
    ("url", "target"),
    [
        ("https://qzx.example", "/"),
        ("https://qzx.example?", "/?"),
        ("https://qzx.example?a=1", "/?a=1"),
        ("https://qzx.example/a/b#frag", "/a/b"),
        ("https://qzx.example/a#x?y", "/a"),
        ("https://qzx.example/a/../b/./c/", "/b/c/"),
        ("https://qzx.example/a/%2e%2E/b/%2e", "/b/"),
        ("https://qzx.example/../../etc", "/etc"),
        ("https://qzx.example/a\\b\\..\\c", "/a/c"),
        ('https://qzx.example/a b"<>`{}^', "/a%20b%22%3C%3E%60%7B%7D%5E"),
        ("https://qzx.example/?q=a b\"'<>`{}", "/?q=a%20b%22%27%3C%3E`{}"),
        ("https://qzx.example/ä?ü=ö", "/%C3%A4?%C3%BC=%C3%B6"),
        ("https://qzx.example/%41%2f%zz%", "/%41%2f%zz%"),
        ("https://qzx.example/it's", "/it's"),
        ("https://qzx.example/a\x01b\x7f", "/a%01b%7F"),
        ("https://qzx.example/?a=\\b", "/?a=\\b"),
    ],
)
def test_req_fetch_001_the_request_target_as_a_browser_sends_it(url: str, target: str) -> None:
    parsed = _parse(url)
    assert parsed.target == target
    assert parsed.url == "https://qzx.example" + target


def test_req_fetch_001_a_lone_surrogate_in_the_path_becomes_the_replacement_character() -> None:
    assert _parse("https://qzx.example/a\ud800").target == "/a%EF%BF%BD"


# -- properties --------------------------------------------------------------------------------

_URL_TEXT = st.text(
    alphabet=st.sampled_from([*"abcxyz019.:/\\?#@%[]-_~ \t!'\"<>^`{}|", "ä", "。", "０"]),
    max_size=40,
)


@settings(max_examples=400)
@given(st.sampled_from(["https://", "http://", "https:", "HTTP://x.", "https://[::1]"]), _URL_TEXT)
def test_req_fetch_001_intake_raises_only_tool_errors_and_is_idempotent(
    prefix: str, rest: str
) -> None:
    url = prefix + rest
    try:
        target = parse_fetch_url(url, allow_http=True, secret_mode="off")
    except ToolError as error:
        assert error.kind in ("invalid_request", "denied")
        assert len(error.message) <= MESSAGE_MAX
        return
    assert parse_fetch_url(target.url, allow_http=True, secret_mode="off") == target
    assert "#" not in target.url
    assert target.target.startswith("/")
    assert target.url.isascii()


@pytest.mark.parametrize(
    ("url", "scheme"),
    [
        ("FTP://files.example/a", "ftp"),
        ("https://example.org/", "https"),
        ("\x00 \x1f javascript:alert(1)", "javascript"),
        ("\x01https://example.org/", "https"),
        ("java\tscript:alert(1)", "javascript"),
        ("java\nscript:alert(1)", "javascript"),
        ("java\rscript:alert(1)", "javascript"),
        ("d\ta\nt\ra:text/plain,x", "data"),
        ("//example.org/path", None),
        ("/only/a/path", None),
        ("", None),
    ],
)
def test_req_fetch_010_a_redirect_targets_scheme_is_read_as_a_browser_reads_it(
    url: str, scheme: str | None
) -> None:
    """The scheme a redirect target would be followed with: C0 controls and spaces
    around it trimmed, tabs and line breaks inside it dropped, lower case (the URL
    standard's reading), so `java\\tscript:` is still javascript and refused."""
    from rypsok.core.fetch.intake import scheme_of

    assert scheme_of(url) == scheme
