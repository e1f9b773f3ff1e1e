"""Host names as the egress policy and the configuration compare them.

Pure functions: lower-cased ASCII (IDNA) form, no root dot, every label
non-empty and at most 63 characters, at most 253 in all.
"""

from __future__ import annotations

import ipaddress
import re

_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?")


class HostNameError(ValueError):
    """A host name is malformed; the message is ours and shows no input text."""


def to_ascii(name: str) -> str:
    """The comparable form of a host name, or HostNameError.

    A single trailing root dot is dropped (``blocked.example.`` is
    ``blocked.example``); anything else malformed is refused, never matched.
    """
    if not name:
        raise HostNameError("a host name must not be empty")
    if name.endswith("."):
        name = name[:-1]
    if not name:
        raise HostNameError("a host name must not be empty")
    labels = name.split(".")
    out: list[str] = []
    for label in labels:
        if not label:
            raise HostNameError("a host name has an empty label")
        if label.isascii():
            ascii_label = label.lower()
        else:
            try:
                ascii_label = label.encode("idna").decode("ascii").lower()
            except UnicodeError:
                raise HostNameError("a host name is not valid IDNA") from None
        if not _LABEL.fullmatch(ascii_label):
            raise HostNameError("a host name has a label with characters not allowed")
        out.append(ascii_label)
    result = ".".join(out)
    if len(result) > 253:
        raise HostNameError("a host name is longer than 253 characters")
    if out[-1].isdigit():
        raise HostNameError("a host name must not end in a numeric label")
    return result


def literal_address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address when *text* is an IP literal (IPv6 with or without brackets)."""
    candidate = text[1:-1] if text.startswith("[") and text.endswith("]") else text
    try:
        return ipaddress.ip_address(candidate)
    except ValueError:
        return None


def is_loopback_host(host: str) -> bool:
    address = literal_address(host)
    if address is not None:
        return address.is_loopback
    return host.lower().rstrip(".") == "localhost"


def is_loopback_url(url: str) -> bool:
    """Whether the URL's host is a loopback one (is_loopback_host)."""
    from urllib.parse import urlsplit

    return is_loopback_host(urlsplit(url).hostname or "")
