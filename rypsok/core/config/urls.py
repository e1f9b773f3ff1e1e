"""Parsers for the URL-shaped and address-shaped settings.

Each returns the normalized value, or None when the text is not of the
expected form; the caller words the problem without repeating the text.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from rypsok.core import limits
from rypsok.core.net import authority
from rypsok.core.net.hostname import is_loopback_host, literal_address

_PRINTABLE = re.compile(r"[\x21-\x7e]+")


def parse_bind(text: str) -> str | None:
    """An address and port (port 0 picks a free one); 'localhost' means 127.0.0.1."""
    parts = authority.split(text)
    if parts is None or parts.userinfo is not None or parts.port is None:
        return None
    number = authority.port_number(parts.port)
    if number is None:
        return None
    host = authority.strict_host("127.0.0.1" if parts.host == "localhost" else parts.host)
    address = None if host is None else literal_address(host)
    if address is None:
        return None
    shown = f"[{address.compressed}]" if address.version == 6 else address.compressed
    return f"{shown}:{number}"


def parse_allowed_host(text: str) -> str | None:
    """A Host header value the listener accepts: host or host:port, lower-cased."""
    found = authority.parse_strict(text.strip().lower())
    if found is None:
        return None
    return found.host if found.port is None else f"{found.host}:{found.port}"


def parse_origin(text: str) -> str | None:
    """An Origin value: scheme://host[:port], :* for any port, or the word null."""
    if text == "null":
        return text
    scheme, sep, rest = text.partition("://")
    if not sep or scheme.lower() not in ("http", "https") or not rest or "/" in rest:
        return None
    any_port = rest.endswith(":*")
    if any_port:
        rest = rest[:-2]
    host = parse_allowed_host(rest)
    if host is None or (any_port and ":" in host.rsplit("]", 1)[-1]):
        return None
    return f"{scheme.lower()}://{host}{':*' if any_port else ''}"


def parse_contact(text: str) -> str | None:
    """A URL or an e-mail address that fits in the User-Agent's comment."""
    if not text:
        return ""
    if len(text) > 200 or not _PRINTABLE.fullmatch(text) or any(c in text for c in "();\\"):
        return None
    if re.fullmatch(r"(https?://|mailto:)\S+", text) or re.fullmatch(r"[^@\s]+@[^@\s]+\.\w+", text):
        return text
    return None


def parse_proxy(text: str) -> tuple[str, int] | None:
    """An HTTP CONNECT proxy, http://host:port, without credentials or a path."""
    try:
        parts = urlsplit(text)
    except ValueError:
        return None
    if parts.scheme != "http" or parts.path not in ("", "/") or parts.query or parts.fragment:
        return None
    found = _url_authority(parts.netloc)
    if found is None:
        return None
    host, port = found
    return host.strip("[]"), 80 if port is None else port


def parse_base_url(text: str, http_anywhere: bool = False) -> str | None:
    """An engine's root URL: https anywhere; plain http on a loopback host only, or on
    any host for an instance the operator runs (http_anywhere)."""
    if len(text) > limits.default("LIM-F9"):
        return None
    try:
        parts = urlsplit(text)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or parts.query or parts.fragment:
        return None
    found = _url_authority(parts.netloc)
    if found is None:
        return None
    host, port = found
    if parts.scheme == "http" and not http_anywhere and not is_loopback_host(host):
        return None
    netloc = host if port is None else f"{host}:{port}"
    return f"{parts.scheme}://{netloc}{parts.path.rstrip('/')}"


def _url_authority(netloc: str) -> tuple[str, int | None] | None:
    """Host (comparable form, IPv6 in brackets) and port of a configured URL's authority:
    no user information, a port of any number of digits (an empty one is the default)
    but never 0."""
    parts = authority.split(netloc)
    if parts is None or parts.userinfo is not None:
        return None
    host = authority.strict_host(parts.host)
    if host is None:
        return None
    if not parts.port:
        return host, None
    port = authority.port_number(parts.port, lenient=True)
    return None if port is None or port == 0 else (host, port)
