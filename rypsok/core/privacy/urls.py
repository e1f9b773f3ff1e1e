"""The secret check of a fetch URL: user information and key-shaped text (REQ-FETCH-007,
REQ-PRIV-002)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

from rypsok.core.privacy.detectors import find_secrets
from rypsok.core.privacy.views import _view

UrlReason = Literal["secret_in_url", "credential_in_url"]


@dataclass(frozen=True, slots=True)
class UrlSecret:
    """Why a fetch URL is refused: ``secret_in_url`` or ``credential_in_url``.

    ``kind`` is None for ``credential_in_url`` (a user name is not a secret).
    ``userinfo`` says the URL carries user information at all: REQ-FETCH-007
    refuses such a URL whatever the privacy mode, while a key-shaped text
    elsewhere in the URL follows the mode (LIM-P1).
    """

    reason: UrlReason
    kind: str | None
    position: int
    userinfo: bool


_SPECIAL_SCHEMES: Final = frozenset(("http", "https", "ws", "wss", "ftp"))
_URL_KEEP: Final = frozenset[str]()  # a URL parser removes tabs and line breaks too
_SCHEME = re.compile(r"[\x00-\x20]{0,2048}+(?P<s>[A-Za-z][A-Za-z0-9+.-]{0,63}+):")


@dataclass(frozen=True, slots=True)
class _Userinfo:
    start: int  # where the user information starts in the URL
    has_name: bool
    password: int | None  # where a non-empty password starts, if there is one


def _userinfo(url: str) -> _Userinfo | None:
    """The user information of ``url``, or None when it carries none.

    Read the way a WHATWG URL parser reads it, so that what is judged here is
    what a client would send: tabs and line breaks are ignored, after a special
    scheme any run of / and \\ ends the scheme, the authority ends at / ? # (and
    \\ for special schemes), and the user information ends at its last @.
    """
    view = _view(url, decode=False, keep=_URL_KEEP)
    s = view.text
    m = _SCHEME.match(s)
    if m is None:
        return None
    i = m.end()
    special = m.group("s").lower() in _SPECIAL_SCHEMES
    if special:
        while i < len(s) and s[i] in "/\\":
            i += 1
    elif s.startswith("//", i):
        i += 2
    else:
        return None
    stops = "/?#\\" if special else "/?#"
    j = i
    while j < len(s) and s[j] not in stops:
        j += 1
    at = s.rfind("@", i, j)
    if at <= i:  # no @, or an empty user information: nothing is carried
        return None
    colon = s.find(":", i, at)
    name_end = at if colon < 0 else colon
    password = view.starts[colon + 1] if 0 <= colon < at - 1 else None
    if name_end == i and password is None:  # ":@" carries neither
        return None
    return _Userinfo(view.starts[i], name_end > i, password)


def check_url(url: str) -> UrlSecret | None:
    """Why ``url`` must not be fetched as it is, or None.

    ``secret_in_url`` for ``user:password@`` (at the password) and for a
    key-shaped text anywhere in the URL (its kind and position);
    ``credential_in_url`` for a user name alone, at the name. A password wins
    over anything else in the URL, and a secret over a name. Never raises.
    """
    info = _userinfo(url)
    if info is not None and info.password is not None:
        return UrlSecret("secret_in_url", "url_userinfo_password", info.password, True)
    findings = find_secrets(url)
    if findings:
        first = findings[0]
        return UrlSecret("secret_in_url", first.kind, first.position, info is not None)
    if info is not None:
        return UrlSecret("credential_in_url", None, info.start, True)
    return None
