"""URL intake for web_fetch: the URL a caller gave, read as a browser would connect.

Pure: no resolver, no socket. `parse_fetch_url` either raises a ToolError
(invalid_request, or denied with scheme, credential_in_url, secret_in_url,
or egress for a malformed host name) or returns the `FetchTarget` that the
pipeline judges with the egress policy and then fetches.

The parse follows the WHATWG URL Standard for the special schemes http and
https, because the URL is the caller's and what the caller's browser would
reach is what the policy must judge: leading and trailing C0 controls and
spaces are dropped and tabs and line breaks removed; any run of / and \\
after the scheme starts the authority; the host is percent-decoded, mapped
(NFKC, lower case, ideographic full stops) and brought to its ASCII form; a
host whose last label is a number is an IPv4 address in any notation
(decimal 2130706433, octal 0177.0.0.1, hexadecimal 0x7f.1, short 127.1) or
no URL at all. The request target gets dot segments resolved and percent-
encoding as a browser sends it; the fragment never leaves.

Decisions where the book is silent:

* Credentials in the user information are refused in every privacy mode
  (REQ-FETCH-007 forbids sending them). Key-shaped text elsewhere follows the
  mode: ``refuse`` and ``mask`` refuse (a masked URL names another resource,
  so masking cannot help), ``warn`` fetches and hands the finding to the
  pipeline's log, ``off`` does not look.
* When plain http is not allowed, an http URL is upgraded to https; the http
  default port (80, explicit or not) becomes 443, any other port is kept.
* A host with ß, ς or a joiner (U+200C, U+200D) is invalid_request: the
  standard library's IDNA 2003 folds them away (faß to fass) where browsers keep
  them, so the URL would be fetched from another host. Its xn-- form is read.
* A host name that cannot be brought to a valid ASCII form (an empty label,
  a character a DNS label cannot carry) is the egress policy's ``malformed``
  and answers denied with reason egress; a host no browser would accept
  (forbidden characters, a bad IPv6 literal, a zone identifier, an invalid
  IPv4 form) is invalid_request.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from dataclasses import dataclass
from typing import Final, Literal

from rypsok.core.fetch import errors
from rypsok.core.net import authority
from rypsok.core.net.egress import Address, ends_in_number, parse_ipv4
from rypsok.core.net.hostname import HostNameError, to_ascii
from rypsok.core.net.rules import idna_deviation
from rypsok.core.privacy import UrlSecret, check_url

Scheme = Literal["http", "https"]

_SCHEME: Final = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_DEFAULT_PORT: Final[dict[str, int]] = {"http": 80, "https": 443}
_C0_OR_SPACE: Final = "".join(chr(i) for i in range(0x21))
_HEX2: Final = re.compile(r"[0-9A-Fa-f]{2}")
# The URL Standard's forbidden domain code points (C0 controls and DEL included).
_FORBIDDEN_DOMAIN: Final = frozenset([chr(i) for i in range(0x20)] + list(" #%/:<>?@[\\]^|\x7f"))
# Percent-encode sets of the URL Standard for special URLs.
_QUERY_SET: Final = frozenset(" \"#<>'")
_PATH_SET: Final = frozenset(' "#<>?^`{}')
_SINGLE_DOT: Final = frozenset({".", "%2e"})
_DOUBLE_DOT: Final = frozenset({"..", ".%2e", "%2e.", "%2e%2e"})
_IDEOGRAPHIC_STOPS: Final = str.maketrans({"\u3002": ".", "\uff0e": ".", "\uff61": "."})


@dataclass(frozen=True, slots=True)
class FetchTarget:
    """One URL as it will be judged and fetched."""

    scheme: Scheme
    host: str  # ASCII name without root dot, or canonical address (IPv6 without brackets)
    address: Address | None  # the literal address, None for a name
    port: int  # explicit or the scheme's default
    target: str  # request target: path and query, never the fragment
    url: str  # scheme://host[:port]target, as fetched and shown
    upgraded: bool = False  # http rewritten to https because plain http is not allowed
    # warn mode only: key-shaped text that is sent anyway; the pipeline logs kind and position.
    secret_warning: UrlSecret | None = None


def parse_fetch_url(url: str, *, allow_http: bool, secret_mode: str) -> FetchTarget:
    """Read *url* for web_fetch, or raise the ToolError that answers the call."""
    if len(url) > errors.URL_MAX_CHARS:
        raise errors.url_too_long()
    text = url.strip(_C0_OR_SPACE).replace("\t", "").replace("\n", "").replace("\r", "")
    match = _SCHEME.match(text)
    if match is None:
        raise errors.url_invalid()
    warning = _secret_check(url, secret_mode)
    written = match.group(1).lower()
    if written not in _DEFAULT_PORT:
        raise errors.scheme_not_allowed(allow_http=allow_http)

    rest = text[match.end() :]
    start = 0
    while start < len(rest) and rest[start] in "/\\":
        start += 1
    end = start
    while end < len(rest) and rest[end] not in "/\\?#":
        end += 1
    userinfo, host_port = authority.split_userinfo(rest[start:end])
    tail = rest[end:]
    # check_url refused anything carried before @; an empty "@" or ":@" sends nothing.
    if userinfo not in (None, "", ":"):
        raise errors.credential_in_url(None)
    parts = authority.split_host_port(host_port)
    if parts is None:
        raise errors.url_invalid()
    host, address = _host(parts.host)
    scheme: Scheme = "https" if written == "https" else "http"
    port = _DEFAULT_PORT[scheme] if not parts.port else _port(parts.port)
    upgraded = False
    if scheme == "http" and not allow_http:
        scheme, upgraded = "https", True
        if port == _DEFAULT_PORT["http"]:
            port = _DEFAULT_PORT["https"]

    target = _target(tail)
    shown_host = f"[{host}]" if isinstance(address, ipaddress.IPv6Address) else host
    shown_port = "" if port == _DEFAULT_PORT[scheme] else f":{port}"
    return FetchTarget(
        scheme=scheme,
        host=host,
        address=address,
        port=port,
        target=target,
        url=f"{scheme}://{shown_host}{shown_port}{target}",
        upgraded=upgraded,
        secret_warning=warning,
    )


def scheme_of(url: str) -> str | None:
    """The scheme of *url* as a browser reads it, lower case; None when it has none."""
    text = url.strip(_C0_OR_SPACE).replace("\t", "").replace("\n", "").replace("\r", "")
    match = _SCHEME.match(text)
    return match.group(1).lower() if match else None


def _secret_check(url: str, mode: str) -> UrlSecret | None:
    """Raise for a credential or a secret the mode refuses; the finding to log in warn mode."""
    found = check_url(url)
    if found is None:
        return None
    if found.userinfo or mode not in ("warn", "off"):  # an unknown mode refuses: safe side
        if found.reason == "credential_in_url":
            raise errors.credential_in_url(found.position)
        raise errors.secret_in_url(found.kind or "url_userinfo_password", found.position)
    return found if mode == "warn" else None


def _port(text: str) -> int:
    # The URL Standard's port: any number of ASCII digits, 0 included (the client refuses it).
    value = authority.port_number(text, lenient=True)
    if value is None:
        raise errors.url_invalid()
    return value


# -- host ------------------------------------------------------------------------------------


def _host(text: str) -> tuple[str, Address | None]:
    if text.startswith("["):
        inner = text[1:-1]
        if not text.endswith("]") or not inner or "%" in inner:  # no zone identifiers
            raise errors.url_invalid()
        try:
            address6 = ipaddress.IPv6Address(inner)
        except ValueError:
            raise errors.url_invalid() from None
        return address6.compressed, address6
    if not text:
        raise errors.url_invalid()
    decoded = _percent_decode(text)
    if decoded is None:
        raise errors.url_invalid()
    ascii_form = _domain_to_ascii(decoded)
    if not ascii_form or any(ch in _FORBIDDEN_DOMAIN for ch in ascii_form):
        raise errors.url_invalid()
    if ends_in_number(ascii_form):
        address4 = parse_ipv4(ascii_form)
        if address4 is None:
            raise errors.url_invalid()
        return str(address4), address4
    try:
        return to_ascii(ascii_form), None
    except HostNameError:
        # A name the policy calls malformed (an empty label, a character no DNS
        # label carries): refused by the egress policy, never matched.
        raise errors.egress_denied() from None


def _percent_decode(text: str) -> str | None:
    if "%" not in text:
        return text
    out = bytearray()
    i = 0
    while i < len(text):
        if text[i] == "%" and _HEX2.fullmatch(text, i + 1, i + 3):
            out.append(int(text[i + 1 : i + 3], 16))
            i += 3
            continue
        try:
            out += text[i].encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate
            return None
        i += 1
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _domain_to_ascii(domain: str) -> str | None:
    """UTS 46 as far as the standard library reaches: NFKC, lower case, IDNA per label."""
    if domain.isascii():
        return domain.lower()
    mapped = unicodedata.normalize("NFKC", domain)
    if idna_deviation(mapped):
        return None  # faß.example would be fetched as fass.example: another host
    mapped = mapped.translate(_IDEOGRAPHIC_STOPS).lower()
    labels: list[str] = []
    for label in mapped.split("."):
        if label.isascii():
            labels.append(label)
            continue
        try:
            labels.append(label.encode("idna").decode("ascii").lower())
        except UnicodeError:
            return None
    return ".".join(labels)


# -- request target ----------------------------------------------------------------------------


def _encode(text: str, keep_out: frozenset[str]) -> str:
    out: list[str] = []
    for ch in text:
        code = ord(ch)
        if 0x20 < code < 0x7F and ch not in keep_out:
            out.append(ch)
            continue
        if 0xD800 <= code <= 0xDFFF:  # a lone surrogate is U+FFFD in a URL
            ch = "\ufffd"
        out.extend(f"%{b:02X}" for b in ch.encode("utf-8"))
    return "".join(out)


def _target(tail: str) -> str:
    """Path (dot segments resolved) and query, percent-encoded; the fragment dropped."""
    tail = tail.split("#", 1)[0]
    path, question, query = tail.partition("?")
    segments: list[str] = []
    parts = re.split(r"[/\\]", path[1:]) if path else [""]
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        lowered = part.lower()
        if lowered in _DOUBLE_DOT:
            if segments:
                segments.pop()
            if last:
                segments.append("")
        elif lowered in _SINGLE_DOT:
            if last:
                segments.append("")
        else:
            segments.append(_encode(part, _PATH_SET))
    target = "/" + "/".join(segments)
    if question:
        target += "?" + _encode(query, _QUERY_SET)
    return target
