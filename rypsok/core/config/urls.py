"""Parsers for the URL-shaped and address-shaped settings.

Each returns the normalized value, or None when the text is not of the
expected form; the caller words the problem without repeating the text.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

from rypsok.core import limits
from rypsok.core.net.hostname import HostNameError, is_loopback_host, literal_address, to_ascii

_PORT = re.compile(r"[0-9]{1,5}")
_PRINTABLE = re.compile(r"[\x21-\x7e]+")


def _port(text: str, *, zero: bool = False) -> int | None:
    if not _PORT.fullmatch(text):
        return None
    value = int(text)
    return value if (0 if zero else 1) <= value <= 65535 else None


def _host(text: str) -> str | None:
    """A host name in ASCII form, or an IP literal (IPv6 in brackets)."""
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


def parse_bind(text: str) -> str | None:
    """An address and port (port 0 picks a free one); 'localhost' means 127.0.0.1."""
    host, sep, port = text.rpartition(":")
    number = _port(port, zero=True)
    if not sep or number is None:
        return None
    if host == "localhost":
        host = "127.0.0.1"
    address = literal_address(host)
    if address is None or (address.version == 6 and not host.startswith("[")):
        return None
    shown = f"[{address.compressed}]" if address.version == 6 else address.compressed
    return f"{shown}:{number}"


def parse_allowed_host(text: str) -> str | None:
    """A Host header value the listener accepts: host or host:port, lower-cased."""
    text = text.strip().lower()
    if text.startswith("["):
        end = text.find("]")
        host, rest = text[: end + 1], text[end + 1 :]
    else:
        host, _, port = text.partition(":")
        rest = f":{port}" if _ else ""
    normal = _host(host)
    if normal is None:
        return None
    if rest:
        if not rest.startswith(":") or _port(rest[1:]) is None:
            return None
        return f"{normal}{rest}"
    return normal


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
        port = parts.port
    except ValueError:
        return None
    if parts.scheme != "http" or parts.username is not None or parts.password is not None:
        return None
    if parts.path not in ("", "/") or parts.query or parts.fragment or not parts.hostname:
        return None
    host = _host(f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname)
    if host is None:
        return None
    return host.strip("[]"), port or 80


def parse_base_url(text: str, http_anywhere: bool = False) -> str | None:
    """An engine's root URL: https anywhere; plain http on a loopback host only, or on
    any host for an instance the operator runs (http_anywhere)."""
    if len(text) > limits.default("LIM-F9"):
        return None
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    if parts.username is not None or parts.password is not None or parts.query or parts.fragment:
        return None
    hostname = parts.hostname
    host = _host(f"[{hostname}]" if ":" in hostname else hostname)
    if host is None:
        return None
    if parts.scheme == "http" and not http_anywhere and not is_loopback_host(host):
        return None
    netloc = host if port is None else f"{host}:{port}"
    return f"{parts.scheme}://{netloc}{parts.path.rstrip('/')}"
