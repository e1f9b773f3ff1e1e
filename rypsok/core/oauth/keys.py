"""An issuer's key set (RFC 7517) read into public keys, and one signature checked.

Only asymmetric keys are read: a symmetric ("oct") key in a set is skipped, so no
token can be checked with a secret taken from public data. A key is used for an
algorithm only when its type (and curve) is that algorithm's: RSA for RS* and PS*,
the named curve for ES*, Ed25519 for EdDSA. A key that says it is for another use or
another algorithm is not used.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from rypsok.core import limits
from rypsok.core.oauth.claims import b64url

MAX_KEYS = limits.default("LIM-A4")
# Below 2048 bits an RSA key is refused (NIST SP 800-131A); above 8192 its check is slow.
RSA_BITS = (2048, 8192)

_HASHES: dict[str, type[hashes.HashAlgorithm]] = {
    "256": hashes.SHA256,
    "384": hashes.SHA384,
    "512": hashes.SHA512,
}
_CURVES: dict[str, tuple[str, type[ec.EllipticCurve], int]] = {
    # algorithm -> (JWK crv, curve, bytes of one coordinate)
    "ES256": ("P-256", ec.SECP256R1, 32),
    "ES384": ("P-384", ec.SECP384R1, 48),
    "ES512": ("P-521", ec.SECP521R1, 66),
}

PublicKey = rsa.RSAPublicKey | ec.EllipticCurvePublicKey | ed25519.Ed25519PublicKey


@dataclass(frozen=True, slots=True)
class Key:
    kid: str | None
    family: str  # "RSA", an ES algorithm name, or "EdDSA"
    alg: str | None  # the algorithm the set pins the key to, if it does
    public: PublicKey

    def fits(self, alg: str) -> bool:
        if self.alg is not None and self.alg != alg:
            return False
        if alg.startswith(("RS", "PS")):
            return self.family == "RSA"
        return self.family == alg


def _integer(text: object) -> int | None:
    raw = b64url(text) if isinstance(text, str) else None
    return int.from_bytes(raw, "big") if raw else None


def read_key_set(body: bytes) -> list[Key] | None:
    """The usable keys of a JWKS document; None when it is not one."""
    try:
        document = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    if not isinstance(document, dict) or not isinstance(document.get("keys"), list):
        return None
    keys: list[Key] = []
    for entry in document["keys"][:MAX_KEYS]:
        if isinstance(entry, dict):
            key = _read_key(entry)
            if key is not None:
                keys.append(key)
    return keys


def _read_key(jwk: Mapping[str, Any]) -> Key | None:
    use = jwk.get("use")
    ops = jwk.get("key_ops")
    if use is not None and use != "sig":
        return None
    if ops is not None and (not isinstance(ops, list) or "verify" not in ops):
        return None
    kid = jwk.get("kid")
    kid = kid if isinstance(kid, str) and 0 < len(kid) <= 256 else None
    alg = jwk.get("alg")
    alg = alg if isinstance(alg, str) else None
    try:
        return _public(jwk, kid, alg)
    except (ValueError, TypeError):
        return None


def _public(jwk: Mapping[str, Any], kid: str | None, alg: str | None) -> Key | None:
    kty = jwk.get("kty")
    if kty == "RSA":
        n, e = _integer(jwk.get("n")), _integer(jwk.get("e"))
        if n is None or e is None or not RSA_BITS[0] <= n.bit_length() <= RSA_BITS[1]:
            return None
        return Key(kid, "RSA", alg, rsa.RSAPublicNumbers(e, n).public_key())
    if kty == "EC":
        for name, (crv, curve, size) in _CURVES.items():
            if jwk.get("crv") != crv:
                continue
            x, y = b64url(jwk.get("x", "")), b64url(jwk.get("y", ""))
            if x is None or y is None or len(x) != size or len(y) != size:
                return None
            numbers = ec.EllipticCurvePublicNumbers(
                int.from_bytes(x, "big"), int.from_bytes(y, "big"), curve()
            )
            return Key(kid, name, alg, numbers.public_key())
        return None
    if kty == "OKP" and jwk.get("crv") == "Ed25519":
        x = b64url(jwk.get("x", ""))
        if x is None or len(x) != 32:
            return None
        return Key(kid, "EdDSA", alg, ed25519.Ed25519PublicKey.from_public_bytes(x))
    return None  # "oct" and every other type: never a verification key here


def verify(key: Key, alg: str, signing_input: bytes, signature: bytes) -> bool:
    """Whether *signature* is *key*'s over *signing_input* with *alg*."""
    if not key.fits(alg):
        return False
    public = key.public
    try:
        if alg.startswith("RS") and isinstance(public, rsa.RSAPublicKey):
            public.verify(signature, signing_input, padding.PKCS1v15(), _HASHES[alg[2:]]())
            return True
        if alg.startswith("PS") and isinstance(public, rsa.RSAPublicKey):
            digest = _HASHES[alg[2:]]()
            pss = padding.PSS(mgf=padding.MGF1(digest), salt_length=digest.digest_size)
            public.verify(signature, signing_input, pss, digest)
            return True
        if alg in _CURVES and isinstance(public, ec.EllipticCurvePublicKey):
            size = _CURVES[alg][2]
            if len(signature) != 2 * size:  # JWS carries r || s, not DER (RFC 7518 3.4)
                return False
            r = int.from_bytes(signature[:size], "big")
            s = int.from_bytes(signature[size:], "big")
            public.verify(encode_dss_signature(r, s), signing_input, ec.ECDSA(_HASHES[alg[2:]]()))
            return True
        if alg == "EdDSA" and isinstance(public, ed25519.Ed25519PublicKey):
            public.verify(signature, signing_input)
            return True
    except (InvalidSignature, ValueError):
        return False
    return False
