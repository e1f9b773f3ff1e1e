"""Result URLs: the URL returned to the caller and the comparison key.

Pure functions, no I/O. Everything that decides what a result URL becomes
lives in this file (REQ-RANK-002, REQ-RANK-003, REQ-CTX-006):

* ``normalize(url)`` either drops the URL with a reason from the notice
  vocabulary (``url_too_long``, ``url_invalid``) or returns the URL shown to
  the caller and the key results are merged by.
* The returned URL is the engine's text with exactly two edits: known
  tracking parameters leave the query (the query is rebuilt only when one
  did), and a host name with non-ASCII labels gets those labels in their
  IDNA ASCII form. Any other byte is the engine's.
* The comparison key is derived from the returned URL and is never shown nor
  fetched. Its rules are listed on ``_comparison_key`` and in docs/ranking.md.

``refuses_host`` applies the egress policy's built-in judgment of a host
(REQ-RANK-003: "a host that web_fetch would accept"): the refusal table, the
refused names and the IPv4 notations all come from rypsok.core.net.egress.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal, NamedTuple

from rypsok.core import limits
from rypsok.core.net import authority
from rypsok.core.net.egress import (
    ends_in_number,
    parse_ipv4,
    refused_builtin,
    refused_name,
)
from rypsok.core.net.hostname import HostNameError, to_ascii
from rypsok.core.net.rules import idna_deviation

URL_MAX_CHARS: Final = limits.default("LIM-F9")

DropReason = Literal["url_invalid", "url_too_long"]

#: Query parameter names removed from returned URLs and keys, compared exactly
#: (case-sensitive) after unreserved percent-escapes in the name are decoded.
#: Only click identifiers and campaign tags that never select content.
TRACKING_PARAMETERS: Final[frozenset[str]] = frozenset(
    {
        "gclid",
        "gclsrc",
        "dclid",
        "gbraid",
        "wbraid",
        "_gl",  # Google Ads / linker
        "fbclid",  # Meta
        "msclkid",  # Microsoft Ads
        "mc_cid",
        "mc_eid",  # Mailchimp
        "yclid",
        "ysclid",  # Yandex
        "_hsenc",
        "_hsmi",
        "__hssc",
        "__hstc",
        "__hsfp",
        "hsCtaTracking",  # HubSpot
        "igshid",  # Instagram
        "twclid",  # X / Twitter
        "ttclid",  # TikTok
        "li_fat_id",  # LinkedIn
        "mkt_tok",  # Marketo
        "_openstat",  # Openstat
        "oly_anon_id",
        "oly_enc_id",  # Omeda
        "vero_id",
        "vero_conv",  # Vero
    }
)
#: Every parameter whose name starts with this prefix is a campaign tag.
TRACKING_PREFIX: Final = "utm_"

_DEFAULT_PORT: Final = {"http": 80, "https": 443}
_DECIMAL = re.compile(r"[0-9]+")
_HEXDIGITS: Final = frozenset("0123456789abcdefABCDEF")
_UNRESERVED: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
# Characters a URI may carry as they are (RFC 3986 unreserved, gen-delims,
# sub-delims); everything else is percent-encoded in the key.
_URI_CHARS: Final = _UNRESERVED | frozenset(":/?#[]@!$&'()*+,;=")

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True, slots=True)
class NormalUrl:
    """A URL that may be shown: what the caller sees, and what results merge by."""

    url: str  # returned URL (REQ-RANK-003)
    key: str  # comparison key (REQ-RANK-002): never returned, never fetched
    https: bool  # the scheme is https (the form shown when http and https merge)


@dataclass(frozen=True, slots=True)
class DroppedUrl:
    """A URL that is not shown; the reason is a results_dropped notice reason."""

    reason: DropReason


UrlResult = NormalUrl | DroppedUrl


class _Parts(NamedTuple):  # a tuple: cheaper to build than a frozen dataclass
    scheme: str  # as written
    host: str  # as written, brackets included for IPv6
    port: str | None  # digits as written, "" for "host:", None without a colon
    path: str
    query: str | None  # without "?"; None when there is no "?"
    fragment: str | None  # without "#"


#: The operator's egress rules for a host (ASCII name or canonical address):
#: True when an allow rule admits it, False when a deny rule refuses it (the IPv4 address
#: an IPv6 one carries included), None when neither speaks and the built-in judgment
#: applies (rules order: deny, allow, built-in). `EgressPolicy.rule_verdict` is the one.
HostRules = Callable[[str], bool | None]


#: Host judgments already made, keyed by the host as written: one search's results
#: share few hosts, and a judgment is a pure function of the host (see ``normalize``).
HostMemo = dict[str, tuple[str, str] | None]

_UNJUDGED: Final = ("", "")


def normalize(url: str, rules: HostRules | None = None, hosts: HostMemo | None = None) -> UrlResult:
    """The returned URL and comparison key of an engine's URL, or why it is dropped.

    Never raises. Length is checked first (LIM-F9 in Unicode scalar values),
    on the engine's text and again on the returned URL, which an IDNA host
    can make longer. `hosts`, when given, remembers the built-in judgment of each
    host across calls (the caller keeps it for one search); it changes nothing but time.
    """
    if len(url) > URL_MAX_CHARS:
        return DroppedUrl("url_too_long")
    if rules is None and hosts is not None:
        plain = _plain_normal(url, hosts)
        if plain is not None:
            return plain
    parts = _split(url)
    if parts is None:
        return DroppedUrl("url_invalid")
    if hosts is None:
        judged = _judge_host(parts.host)
    else:
        known = hosts.get(parts.host, _UNJUDGED)
        if known is _UNJUDGED:
            known = hosts[parts.host] = _judge_host(parts.host)
        judged = known
    if rules is not None:
        lenient = _lenient_host(parts.host)
        verdict = rules(lenient[0].strip("[]")) if lenient is not None else None
        if verdict is False:
            return DroppedUrl("url_invalid")
        if verdict is True and judged is None:
            judged = lenient
    if judged is None:
        return DroppedUrl("url_invalid")
    key_host, shown_host = judged
    query = parts.query if parts.query is None else _without_tracking(parts.query)
    if query is parts.query and shown_host == parts.host:
        shown = url  # nothing edited: _split loses nothing, so joining gives the text back
    else:
        shown = _join(parts.scheme, shown_host, parts.port, parts.path, query, parts.fragment)
        if len(shown) > URL_MAX_CHARS:
            return DroppedUrl("url_too_long")
    scheme = parts.scheme.lower()
    return NormalUrl(
        url=shown,
        key=_comparison_key(scheme, key_host, parts.port, parts.path, query),
        https=scheme == "https",
    )


# The common engine URL: printable ASCII, a lower-case http(s) scheme, a host without a
# port, userinfo or brackets, then path, query and fragment as _URL reads them.
_PLAIN_URL: Final = re.compile(r"(https?)://([^/?#@:\[\]]+)(/[^?#]*)?(?:\?([^#]*))?(?:#.*)?")


def _plain_normal(url: str, hosts: HostMemo) -> NormalUrl | DroppedUrl | None:
    """normalize without operator rules for the common URL, in fewer steps; None for any
    other URL, which takes the general path. Same result as the general path: the same
    split (no port, so the default one), the same host judgment, the same edits."""
    if not (url.isascii() and url.isprintable()) or " " in url:
        return None
    match = _PLAIN_URL.fullmatch(url)
    if match is None:
        return None
    scheme, host, query = match[1], match[2], match[4]
    path = match[3] or ""
    judged = hosts.get(host, _UNJUDGED)
    if judged is _UNJUDGED:
        judged = hosts[host] = _judge_host(host)
    if judged is None:
        return DroppedUrl("url_invalid")
    key_host, shown_host = judged  # an ASCII host is shown as written
    if query is None:
        kept = None
        key = f"//{key_host}{_normal_escapes(path) or '/'}"
    else:
        kept = _without_tracking(query)
        key = f"//{key_host}{_normal_escapes(path) or '/'}"
        if kept is not None:
            key += "?" + _normal_escapes(kept)
    # Only a tracking parameter removed changes the text shown.
    shown = url if kept is query else _join(scheme, shown_host, None, path, kept, _fragment(url))
    return NormalUrl(url=shown, key=key, https=scheme == "https")


def _fragment(url: str) -> str | None:
    mark = url.find("#")
    return None if mark == -1 else url[mark + 1 :]


def _comparison_key(scheme: str, host: str, port: str | None, path: str, query: str | None) -> str:
    """The comparison key of a returned URL's parts (REQ-RANK-002).

    Rules, each one that keeps resource identity:

    * http and https share one key: the scheme is left out (the book merges the
      two forms of one resource and shows https), but the port is kept whenever
      it is not the scheme's default, so ``http://h:443/`` and ``https://h/``
      stay apart.
    * The host is lower-cased ASCII without the root dot; an address literal is
      written canonically (dotted decimal, compressed IPv6 in brackets).
    * The default port (80 for http, 443 for https) and an empty port are removed.
    * The fragment is removed. Tracking parameters are already gone.
    * An empty path is ``/`` (the same request target in HTTP).
    * Percent-encoding: escapes of unreserved characters are decoded, other
      escapes get upper-case hex digits, characters outside the URI character
      set (non-ASCII as UTF-8) are percent-encoded. A ``%`` not followed by two
      hex digits stays as it is.
    * Nothing else: no ``www.`` folding, no dot-segment removal, no trailing
      slash change, no parameter sorting, no ``+`` to ``%20``.
    """
    default = _DEFAULT_PORT[scheme]
    number = int(port) if port else default
    shown_port = "" if number == default else f":{number}"
    key = f"//{host}{shown_port}{_normal_escapes(path) or '/'}"
    if query is not None:
        key += "?" + _normal_escapes(query)
    return key


def refuses_host(host: str) -> bool:
    """True when web_fetch would refuse this URL host (brackets around IPv6).

    The egress policy's built-in judgment, without operator rules: malformed
    names, names that never name a public site (egress.refused_name), and
    address literals (in any IPv4 notation a browser reads) that the built-in
    table refuses (egress.refused_builtin).
    """
    return _judge_host(host) is None


# -- splitting ---------------------------------------------------------------


# scheme "://" authority (to the first "/", "?" or "#"), path (to the first "?" or "#"),
# query (from the first "?" before any "#") and fragment (from the first "#").
_URL: Final = re.compile(
    r"([A-Za-z][A-Za-z0-9+.\-]*)://([^/?#]*)([^?#]*)(?:\?([^#]*))?(?:#(.*))?", re.DOTALL
)


def _split(url: str) -> _Parts | None:
    """The parts of an absolute http(s) URL with an authority, or None."""
    # Whitespace, controls, format characters (bidi, zero-width), surrogates,
    # private-use and unassigned code points make no valid URL, and would be
    # removed from any other external text (REQ-SEC-015): refuse, never rewrite.
    if not (url.isascii() and url.isprintable() and " " not in url) and any(
        unicodedata.category(ch)[0] in "CZ" for ch in set(url)
    ):
        return None
    match = _URL.fullmatch(url)
    if match is None:
        return None
    scheme, written, path, query, fragment = match.groups()
    if scheme.lower() not in _DEFAULT_PORT:
        return None
    split = authority.split(written)
    if split is None or split.userinfo is not None:  # credentials are never shown
        return None
    port = split.port
    if port:  # an empty port is the default one, kept as written
        number = authority.port_number(port)
        if number is None or number == 0:
            return None
    return _Parts(scheme, split.host, port, path, query, fragment)


def _join(
    scheme: str,
    host: str,
    port: str | None,
    path: str,
    query: str | None,
    fragment: str | None,
) -> str:
    out = f"{scheme}://{host}"
    if port is not None:
        out += ":" + port
    out += path
    if query is not None:
        out += "?" + query
    if fragment is not None:
        out += "#" + fragment
    return out


# -- tracking parameters -----------------------------------------------------


def is_tracking_parameter(name: str) -> bool:
    """True for a query parameter name on the tracking list (as written in a URL)."""
    decoded = _decode_unreserved(name)
    return decoded.startswith(TRACKING_PREFIX) or decoded in TRACKING_PARAMETERS


def _without_tracking(query: str) -> str | None:
    """The query without tracking parameters; untouched when none is there.

    When one is removed the query is rebuilt from the remaining parameters,
    each with its text as written, joined by ``&``; empty segments go, and a
    query left empty loses its ``?`` (None).
    """
    segments = query.split("&")
    kept = [s for s in segments if not is_tracking_parameter(s.split("=", 1)[0])]
    if len(kept) == len(segments):
        return query
    kept = [s for s in kept if s]
    return "&".join(kept) if kept else None


# -- percent-encoding --------------------------------------------------------


def _escape_at(text: str, i: int) -> int | None:
    """The byte of a well-formed %XX escape at text[i], else None."""
    if (
        text[i] == "%"
        and i + 2 < len(text)
        and text[i + 1] in _HEXDIGITS
        and text[i + 2] in _HEXDIGITS
    ):
        return int(text[i + 1 : i + 3], 16)
    return None


def _decode_unreserved(text: str) -> str:
    if "%" not in text:
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        byte = _escape_at(text, i)
        if byte is not None and chr(byte) in _UNRESERVED:
            out.append(chr(byte))
            i += 3
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


_PLAIN_URI: Final = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@/?\[\]]*")


def _normal_escapes(text: str) -> str:
    if _PLAIN_URI.fullmatch(text):
        return text  # no escape and nothing to encode: the common case
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        byte = _escape_at(text, i)
        if byte is not None:
            out.append(chr(byte) if chr(byte) in _UNRESERVED else f"%{byte:02X}")
            i += 3
            continue
        if ch in _URI_CHARS or ch == "%":
            out.append(ch)
        else:
            out.extend(f"%{b:02X}" for b in ch.encode("utf-8"))
        i += 1
    return "".join(out)


# -- hosts ---------------------------------------------------------------------


def _judge_host(host: str) -> tuple[str, str] | None:
    """(key form, shown form) of an acceptable host, or None when refused."""
    if host.startswith("["):
        inner = host[1:-1]
        if not host.endswith("]") or "%" in inner:  # no zone identifiers
            return None
        try:
            address6 = ipaddress.IPv6Address(inner)
        except ValueError:
            return None
        if not _global_address(address6):
            return None
        return f"[{address6.compressed}]", host
    if host.isascii() and ends_in_number(host):
        address4 = parse_ipv4(host)
        if address4 is None or not _global_address(address4):
            return None
        # 010.8.8.8 is 8.8.8.8 to a browser but 10.8.8.8 to readers that take
        # leading zeros as decimal: both readings must pass.
        decimal = _ipv4_leading_zeros_decimal(host)
        if decimal is not None and not _global_address(decimal):
            return None
        return str(address4), host
    if idna_deviation(host):
        return None  # its ASCII form here would name another host than a browser's
    try:
        name = to_ascii(host)
    except HostNameError:
        return None
    if refused_name(name):
        return None
    return name, _shown_name(host, name)


def _lenient_host(host: str) -> tuple[str, str] | None:
    """(key form, shown form) of a well-formed host, without the built-in refusals:
    what an operator's allow rule may admit."""
    if host.startswith("["):
        try:
            address6 = ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            return None
        return f"[{address6.compressed}]", host
    if host.isascii() and ends_in_number(host):
        address4 = parse_ipv4(host)
        return (str(address4), host) if address4 is not None else None
    if idna_deviation(host):
        return None
    try:
        name = to_ascii(host)
    except HostNameError:
        return None
    return name, _shown_name(host, name)


def _shown_name(host: str, name: str) -> str:
    """The host as written, with each non-ASCII label in its ASCII form."""
    if host.isascii():
        return host
    root = host.endswith(".")
    written = (host[:-1] if root else host).split(".")
    ascii_labels = name.split(".")  # to_ascii keeps one label per written label
    shown = [w if w.isascii() else a for w, a in zip(written, ascii_labels, strict=True)]
    return ".".join(shown) + ("." if root else "")


def _ipv4_leading_zeros_decimal(host: str) -> ipaddress.IPv4Address | None:
    """The other reading of a dotted-decimal quad with leading zeros, if any."""
    labels = host.removesuffix(".").split(".")
    if len(labels) != 4 or not all(_DECIMAL.fullmatch(label) for label in labels):
        return None
    if not any(len(label) > 1 and label.startswith("0") for label in labels):
        return None
    values = [int(label, 10) for label in labels]
    if any(v > 255 for v in values):
        return None
    return ipaddress.IPv4Address(".".join(str(v) for v in values))


def _global_address(address: Address) -> bool:
    """Not refused by the egress policy's built-in table (embedded IPv4 forms included)."""
    return refused_builtin(address) is None
