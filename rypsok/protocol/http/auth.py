"""Bearer tokens: which caller, if any, a request's Authorization names.

Without callers every request is the caller `local` (loopback only; the
configuration refuses a bind off loopback without callers). With callers, a
request needs exactly one Authorization header `Bearer <token>`: the scheme is
matched without regard to case, the token exactly. Every caller's token is
found by the SHA-256 digest of the presented token, then compared with
hmac.compare_digest: the time taken depends on the digest of what was sent,
never on how close it came to a configured token, and it does not grow with
the number of callers.

With [service.http.oauth], a bearer token that is no configured caller's goes to the
resource server (core/oauth): the caller is then the token's subject (or client id),
and the token's scopes open the tools. Static callers keep working beside it.
"""

from __future__ import annotations

import contextvars
import hashlib
import hmac
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rypsok.core.config.settings import Caller
from rypsok.core.facade import LOCAL_CALLER
from rypsok.core.oauth.claims import Grant, Rejected, Unavailable

if TYPE_CHECKING:  # loaded (with cryptography) only when [service.http.oauth] is on
    from rypsok.core.oauth.resource import ResourceServer

# The app key under which every caller from a token is served: one SDK server whose tools
# read the caller of the request they serve from TOKEN_CALLER (see listener.py).
OAUTH_APP = "oauth:"  # a colon: never a configured caller's id
TOKEN_CALLER: contextvars.ContextVar[str] = contextvars.ContextVar("rypsok_token_caller")


def token_caller() -> str:
    return TOKEN_CALLER.get()


@dataclass(frozen=True, slots=True)
class Identity:
    """Who a request is from; `scopes` None: a configured caller, every tool open."""

    caller: str
    scopes: frozenset[str] | None = None

    @property
    def app(self) -> str:
        return self.caller if self.scopes is None else OAUTH_APP


@dataclass(frozen=True, slots=True)
class Refused:
    """Why a request's credentials were not accepted; the gate answers 401 or 503."""

    unavailable: bool
    reason: str | None  # our fixed words for error_description; None: nothing was sent


class Authenticator:
    def __init__(self, callers: Sequence[Caller], oauth: ResourceServer | None = None) -> None:
        self.oauth = oauth
        self._tokens = tuple((c.id, c.token.reveal().encode("utf-8")) for c in callers)
        self._by_digest: dict[bytes, tuple[str, bytes]] = {}
        for caller, token in self._tokens:
            self._by_digest.setdefault(_digest(token), (caller, token))  # the first one named

    @property
    def required(self) -> bool:
        return bool(self._tokens) or self.oauth is not None

    @property
    def caller_ids(self) -> tuple[str, ...]:
        """The configured callers, each served by an SDK server of its own."""
        if not self._tokens and self.oauth is not None:
            return ()
        return tuple(caller for caller, _ in self._tokens) or (LOCAL_CALLER,)

    async def identify(self, authorization: Sequence[bytes]) -> Identity | Refused:
        """The request's identity, a configured caller's first; then the token's."""
        assert self.oauth is not None  # only called with [service.http.oauth]
        caller = self.caller(authorization) if self._tokens else None
        if caller is not None:
            return Identity(caller)
        if len(authorization) != 1:
            reason = "send exactly one Authorization header" if authorization else None
            return Refused(False, reason)
        presented = _bearer(authorization[0])
        if presented is None:
            return Refused(False, None)
        verdict = await self.oauth.authenticate(presented)
        if isinstance(verdict, Grant):
            return Identity(verdict.caller, verdict.scopes)
        if isinstance(verdict, Rejected):
            return Refused(False, verdict.reason)
        assert isinstance(verdict, Unavailable)
        return Refused(True, verdict.reason)

    def caller(self, authorization: Sequence[bytes]) -> str | None:
        """The caller's id, or None when the request must be answered 401."""
        if not self._tokens:
            return None if self.oauth is not None else LOCAL_CALLER
        if len(authorization) != 1:
            return None
        presented = _bearer(authorization[0])
        if presented is None:
            return None
        entry = self._by_digest.get(_digest(presented))
        if entry is None:
            return None
        caller, token = entry
        return caller if hmac.compare_digest(presented, token) else None


def _digest(token: bytes) -> bytes:
    return hashlib.sha256(token).digest()


def _bearer(value: bytes) -> bytes | None:
    scheme, _, rest = value.partition(b" ")
    if scheme.lower() != b"bearer":
        return None
    token = rest.strip(b" \t")
    if not token or b" " in token or b"\t" in token:
        return None
    return token
