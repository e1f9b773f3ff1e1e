"""``site:`` and ``-site:`` terms of a web_search query (issue 36).

rypsok reads them itself instead of sending them to the engines as words: the
query's other words go to every engine, each engine whose admission record says
it understands the operator gets the terms back in its own form
(``engines/base.query_text``), and the fused list keeps only results whose host
is one of the ``site:`` hosts or under one (several mean any of them) and none of
the ``-site:`` hosts. A term is a word of the query, ``site:`` in any case, then
a host: a name (IDN allowed, turned into its ASCII form), an IPv4 or IPv6
address, with or without a port, a leading ``*.``, a scheme or a path, all of
which are let go of (the host is what is matched). The secret check, the bounds
and the comparison key see the query as given; only the engines see it without
its terms.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from rypsok.core import limits
from rypsok.core.model import ToolError
from rypsok.core.net.hostname import HostNameError, to_ascii

__all__ = ["MAX_TERMS", "SiteFilter", "host_matches", "read_sites", "result_host"]

MAX_TERMS = limits.default("LIM-S14")
# A word that starts with "site:" or "-site:", in any case.
_TERM = re.compile(r"(?<!\S)(-?)site:(\S*)", re.IGNORECASE)
_PORT = re.compile(r":\d{1,5}$")
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class SiteFilter:
    """The query's words without its site terms, and the hosts they name: ASCII
    names in lower case or canonical addresses, each once, in the order written."""

    text: str
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.include or self.exclude)

    def __repr__(self) -> str:  # words of the caller's query: counts only
        return f"SiteFilter(include={len(self.include)}, exclude={len(self.exclude)})"

    def admits(self, host: str) -> bool:
        """Whether a result on ``host`` (ASCII, lower case) is kept."""
        if any(host_matches(host, site) for site in self.exclude):
            return False
        return not self.include or any(host_matches(host, site) for site in self.include)


def host_matches(host: str, site: str) -> bool:
    """``host`` is ``site`` or a name under it; an address matches only itself."""
    return host == site or host.endswith("." + site)


def _invalid(message: str) -> ToolError:
    return ToolError("invalid_request", message, {"parameter": "query"})


def _host(value: str) -> str:
    """The host a term names, in the form results are matched in."""
    if "://" in value:
        try:
            value = urlsplit(value).netloc
        except ValueError:
            raise _invalid("a site: term names a URL that cannot be read") from None
    value = value.split("/", 1)[0].rsplit("@", 1)[-1]
    if value.startswith("["):  # [2001:db8::1] or [2001:db8::1]:443
        inner, _, _ = value[1:].partition("]")
        value = inner
    elif value.count(":") == 1:
        value = _PORT.sub("", value)
    value = value.removeprefix("*.")
    host = _canonical(value) if value and "*" not in value else None
    if host is None:
        raise _invalid("site: takes a host name, such as site:docs.python.org")
    return host


def _canonical(host: str) -> str | None:
    """A host as terms and results are matched: an address written canonically, or a
    name in lower-case ASCII without its root dot; None when it is neither."""
    host = host.rstrip(".").lower()
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    try:
        return to_ascii(host).lower() if host else None
    except HostNameError:
        return None


def read_sites(query: str) -> SiteFilter:
    """The query's site terms, read; raises invalid_request for a term that names no
    host, for more than LIM-S14 terms, and for a query of site terms only."""
    include: list[str] = []
    exclude: list[str] = []
    terms = 0
    for match in _TERM.finditer(query):
        terms += 1
        if terms > MAX_TERMS:
            raise _invalid(f"a query may hold at most {MAX_TERMS} site: terms")
        host = _host(match.group(2))
        chosen = exclude if match.group(1) else include
        if host not in chosen:
            chosen.append(host)
    if not terms:
        return SiteFilter(query)
    text = _SPACES.sub(" ", _TERM.sub(" ", query)).strip()
    if not text:
        raise _invalid("the query needs words to search for besides its site: terms")
    return SiteFilter(text, tuple(include), tuple(exclude))


def result_host(url: str) -> str | None:
    """A result URL's host in the form site terms are matched in; None when the URL
    names none (ranking drops such a URL anyway)."""
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return None
    if not host:
        return None
    # A name that is no host's still gets compared, as written: it matches no term.
    return _canonical(host) or host.rstrip(".").lower()
