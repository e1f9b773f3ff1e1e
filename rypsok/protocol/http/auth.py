"""Bearer tokens: which configured caller, if any, a request's Authorization names.

Without callers every request is the caller `local` (loopback only; the
configuration refuses a bind off loopback without callers). With callers, a
request needs exactly one Authorization header `Bearer <token>`: the scheme is
matched without regard to case, the token exactly. Every caller's token is
found by the SHA-256 digest of the presented token, then compared with
hmac.compare_digest: the time taken depends on the digest of what was sent,
never on how close it came to a configured token, and it does not grow with
the number of callers.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence

from rypsok.core.config.settings import Caller
from rypsok.core.facade import LOCAL_CALLER


class Authenticator:
    def __init__(self, callers: Sequence[Caller]) -> None:
        self._tokens = tuple((c.id, c.token.reveal().encode("utf-8")) for c in callers)
        self._by_digest: dict[bytes, tuple[str, bytes]] = {}
        for caller, token in self._tokens:
            self._by_digest.setdefault(_digest(token), (caller, token))  # the first one named

    @property
    def required(self) -> bool:
        return bool(self._tokens)

    @property
    def caller_ids(self) -> tuple[str, ...]:
        return tuple(caller for caller, _ in self._tokens) or (LOCAL_CALLER,)

    def caller(self, authorization: Sequence[bytes]) -> str | None:
        """The caller's id, or None when the request must be answered 401."""
        if not self._tokens:
            return LOCAL_CALLER
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
