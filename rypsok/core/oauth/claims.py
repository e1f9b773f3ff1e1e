"""What a token says, checked: a compact JWS split, and the claims of an access token.

Pure functions: bytes and settings in, a Grant or a reason out. The reasons are our own
fixed words; nothing a token carries is ever put into one. No cryptography here, so the
listener can name these values without loading it when OAuth is off.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rypsok.core import limits
from rypsok.core.config.settings import OAuthSettings

MAX_TOKEN_BYTES = limits.default("LIM-A2")
MAX_CALLER_CHARS = limits.default("LIM-A3")
# A caller from a token is told apart from the configured callers, whose ids never hold
# a colon: the two never share limits, cache entries or continuation memory.
CALLER_PREFIX = "oauth:"
# RFC 9068 names at+jwt; most providers still write JWT.
ACCEPTED_TYPES = frozenset({"at+jwt", "application/at+jwt", "jwt", "application/jwt"})


@dataclass(frozen=True, slots=True)
class Grant:
    """A token accepted: who calls, what they may call, and until when."""

    caller: str
    scopes: frozenset[str]
    expires_at: float  # wall clock: accepted (and kept) until then


@dataclass(frozen=True, slots=True)
class Rejected:
    """A token refused; `reason` is one of our fixed words (RFC 6750 error_description)."""

    reason: str


@dataclass(frozen=True, slots=True)
class Unavailable:
    """The provider was needed and could not answer: the call is refused with 503."""

    reason: str


@dataclass(frozen=True, slots=True)
class Compact:
    """A compact JWS, split and decoded; nothing in it is trusted yet."""

    header: Mapping[str, Any]
    claims: Mapping[str, Any]
    signing_input: bytes
    signature: bytes


def b64url(text: object) -> bytes | None:
    """Unpadded base64url (RFC 7515 2), strictly: None for anything else."""
    if not isinstance(text, str) or "=" in text:
        return None
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return None


def split_compact(token: bytes) -> Compact | None:
    """The three parts of a JWS in compact form, or None when it is not one (an opaque
    token, or garbage)."""
    if len(token) > MAX_TOKEN_BYTES or token.count(b".") != 2:
        return None
    try:
        text = token.decode("ascii")
    except UnicodeDecodeError:
        return None
    head, body, sig = text.split(".")
    header, claims, signature = _json(b64url(head)), _json(b64url(body)), b64url(sig)
    if header is None or claims is None or signature is None:
        return None
    return Compact(header, claims, f"{head}.{body}".encode("ascii"), signature)


def _json(raw: bytes | None) -> Mapping[str, Any] | None:
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def header_problem(header: Mapping[str, Any], algorithms: tuple[str, ...]) -> str | None:
    alg = header.get("alg")
    if not isinstance(alg, str) or alg not in algorithms:
        return "the token is signed with an algorithm this server does not accept"
    if "crit" in header:  # no extension is understood, so none may be required (RFC 7515)
        return "the token requires an extension this server does not support"
    typ = header.get("typ")
    if typ is not None and (not isinstance(typ, str) or typ.lower() not in ACCEPTED_TYPES):
        return "the token is not an access token"
    return None


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def caller_of(value: object) -> str | None:
    """The caller id for a subject or client id; None when it cannot name one."""
    if not isinstance(value, str) or not 0 < len(value) <= MAX_CALLER_CHARS:
        return None
    if not all(0x21 <= ord(ch) <= 0x7E for ch in value):
        return None
    return CALLER_PREFIX + value


# Most tokens carry one of a few scope sets: each kept once, so that 10,000 kept tokens
# (LIM-A5) do not hold 10,000 copies of the same words. Bounded: a set past the bound is
# used as it is, not kept here.
_SCOPE_SETS: dict[frozenset[str], frozenset[str]] = {}
SCOPE_SETS_KEPT = 64


def scopes_of(claims: Mapping[str, Any]) -> frozenset[str]:
    """`scope` (RFC 9068, space-separated) or `scp` (a list, as some providers write)."""
    scope = claims.get("scope")
    scp = claims.get("scp")
    if isinstance(scope, str):
        found = frozenset(scope.split())
    elif isinstance(scp, str):
        found = frozenset(scp.split())
    elif isinstance(scp, list):
        found = frozenset(s for s in scp if isinstance(s, str))
    else:
        found = frozenset()
    kept = _SCOPE_SETS.get(found)
    if kept is not None:
        return kept
    if len(_SCOPE_SETS) < SCOPE_SETS_KEPT:
        _SCOPE_SETS[found] = found
    return found


def check_claims(
    claims: Mapping[str, Any], settings: OAuthSettings, now: float, *, introspected: bool = False
) -> Grant | Rejected:
    """The checks every accepted token passes, signed or introspected."""
    leeway = settings.leeway_s
    issuer = claims.get("iss")
    if issuer != settings.issuer and not (introspected and issuer is None):
        return Rejected("the token was issued by another issuer")
    audience = claims.get("aud")
    audiences = audience if isinstance(audience, list) else [audience]
    if settings.resource not in audiences:
        return Rejected("the token was issued for another resource")
    expires = _number(claims.get("exp"))
    if expires is None and not introspected:
        return Rejected("the token has no expiry")
    if expires is not None and now >= expires + leeway:
        return Rejected("the token has expired")
    for name in ("nbf", "iat"):
        if name in claims:
            moment = _number(claims[name])
            if moment is None or moment > now + leeway:
                return Rejected("the token is not valid yet")
    caller = caller_of(claims.get(settings.caller_claim))
    if caller is None:
        return Rejected("the token's " + settings.caller_claim + " cannot name a caller")
    horizon = expires + leeway if expires is not None else math.inf
    return Grant(caller, scopes_of(claims), horizon)
