"""The [service.http.oauth] table: rypsok as an OAuth resource server (read by
`validate_service`).

Its URLs are the operator's: https, or http to a loopback host only (an identity
provider on the same machine, or a test's). The client secret, used only for token
introspection, is read like a caller's token: from a variable or a file, never inline.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import urlsplit

from rypsok.core import limits
from rypsok.core.config import secrets
from rypsok.core.config.positions import Path
from rypsok.core.config.problems import describe
from rypsok.core.config.reader import Reader, Table
from rypsok.core.config.settings import (
    OAUTH_CALLER_CLAIMS,
    OAUTH_TOOLS,
    OAuthSettings,
)
from rypsok.core.net.hostname import is_loopback_host

L = limits.get

# Asymmetric signatures only: a resource server holds no shared secret, and a key set's
# public key must never be taken for an HMAC secret.
ALGORITHMS = (
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "ES512",
    "EdDSA",
)
DEFAULT_ALGORITHMS = ("RS256", "PS256", "ES256")
SCOPE_KEYS = {
    "web_search": "search_scope",
    "web_fetch": "fetch_scope",
    "engine_status": "status_scope",
}
DEFAULT_SCOPES = {
    "web_search": "rypsok:search",
    "web_fetch": "rypsok:fetch",
    "engine_status": "rypsok:status",
}
# RFC 6749 3.3: a scope token is printable ASCII without space, '"' or '\'.
_SCOPE = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]{1,128}")
KEYS = (
    "resource",
    "issuer",
    "jwks_uri",
    "introspection_endpoint",
    "client_id",
    "client_secret_env",
    "client_secret_file",
    "algorithms",
    "caller_claim",
    *SCOPE_KEYS.values(),
    "leeway_s",
    "keys_refresh_s",
    "keys_max_age_s",
    "introspection_cache_s",
    "timeout_ms",
)
NOT_A_VARIABLE = "the value is not the name of an environment variable (it is not shown)"
URL_FORM = "an https URL (http only to a loopback host)"


def endpoint(value: str, *, query: bool = False) -> str | None:
    """The URL as written when it may name an operator's endpoint, else None."""
    # No quote or backslash either: the URL is written into a WWW-Authenticate value.
    if not value or any(ord(ch) <= 0x20 or ord(ch) >= 0x7F or ch in '"\\' for ch in value):
        return None
    try:
        parts = urlsplit(value)
        host = parts.hostname or ""
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        return None
    if not host or parts.username is not None or parts.password is not None or parts.fragment:
        return None
    if parts.query and not query:
        return None
    if parts.scheme == "https" or (parts.scheme == "http" and is_loopback_host(host)):
        return value
    return None


def oauth_of(
    r: Reader, raw: Table, env: Mapping[str, str], read_secrets: bool
) -> OAuthSettings | None:
    """The settings, or None when the table is absent (or too broken to use)."""
    path: Path = ("service", "http", "oauth")
    if not raw:
        return None
    r.unknown(raw, path, KEYS)
    resource = _required_url(r, raw, path, "resource")
    issuer = _required_url(r, raw, path, "issuer")
    jwks_uri = r.text(raw, path, "jwks_uri", "", URL_FORM, lambda v: endpoint(v, query=True))
    introspection = r.text(
        raw, path, "introspection_endpoint", "", URL_FORM, lambda v: endpoint(v, query=True)
    )
    client_id = r.text(raw, path, "client_id", "", "a client id of printable ASCII", _printable)
    secret, secret_env = _client_secret(r, raw, path, env, read_secrets, bool(client_id))
    if introspection and not client_id:
        r.add((*path, "introspection_endpoint"), "introspection needs a client_id")
    algorithms = _algorithms(r, raw, path)
    claim = r.choice(raw, path, "caller_claim", OAUTH_CALLER_CLAIMS, "sub")
    scopes = tuple(
        (tool, r.text(raw, path, SCOPE_KEYS[tool], DEFAULT_SCOPES[tool], "a scope word", _scope))
        for tool in OAUTH_TOOLS
    )
    settings = OAuthSettings(
        resource=resource,
        issuer=issuer,
        jwks_uri=jwks_uri,
        introspection_endpoint=introspection,
        client_id=client_id,
        client_secret=secret,
        client_secret_env=secret_env,
        algorithms=algorithms,
        caller_claim=claim,
        scopes=scopes,
        leeway_s=r.integer(raw, path, "leeway_s", L("LIM-A7")),
        keys_refresh_s=r.integer(raw, path, "keys_refresh_s", L("LIM-A8")),
        keys_max_age_s=r.integer(raw, path, "keys_max_age_s", L("LIM-A9")),
        introspection_cache_s=r.integer(raw, path, "introspection_cache_s", L("LIM-A10")),
        timeout_ms=r.integer(raw, path, "timeout_ms", L("LIM-A11")),
    )
    return settings if resource and issuer else None


def _printable(value: str) -> str | None:
    return value if value and all(0x21 <= ord(ch) <= 0x7E for ch in value) else None


def _scope(value: str) -> str | None:
    return value if value == "" or _SCOPE.fullmatch(value) else None


def _required_url(r: Reader, raw: Table, path: Path, name: str) -> str:
    if name not in raw:
        r.add(path, f"[service.http.oauth] needs {name}", key=True)
        return ""
    if name == "resource":
        expected = "the https URL of this MCP endpoint as hosts reach it (http only on loopback)"
    else:
        expected = URL_FORM + " without a query"
    return r.text(raw, path, name, "", expected, endpoint)


def _algorithms(r: Reader, raw: Table, path: Path) -> tuple[str, ...]:
    items = r.string_list(raw, path, "algorithms", (), "algorithm names", max_items=16)
    if items is None:
        return DEFAULT_ALGORITHMS
    chosen: list[str] = []
    for index, name in items:
        if name.upper().startswith("HS") or name.lower() == "none":
            r.add(
                (*path, "algorithms", index),
                "HMAC algorithms and none are never accepted: a resource server checks "
                "signatures with the issuer's public keys only",
            )
        elif name not in ALGORITHMS:
            r.add((*path, "algorithms", index), "expected one of " + ", ".join(ALGORITHMS))
        elif name not in chosen:
            chosen.append(name)
    if not chosen and not items:
        r.add((*path, "algorithms"), "expected at least one algorithm")
    return tuple(chosen) or DEFAULT_ALGORITHMS


def _client_secret(
    r: Reader, raw: Table, path: Path, env: Mapping[str, str], read: bool, has_client: bool
) -> tuple[secrets.Secret | None, str | None]:
    if "client_secret" in raw:
        r.add(
            (*path, "client_secret"),
            "give the secret by client_secret_env or client_secret_file",
            key=True,
        )
    has_env, has_file = "client_secret_env" in raw, "client_secret_file" in raw
    if has_env and has_file:
        r.add(path, "give at most one of client_secret_env and client_secret_file", key=True)
        return None, None
    if (has_env or has_file) and not has_client:
        r.add(path, "a client secret needs a client_id", key=True)
        return None, None
    if has_client and not (has_env or has_file):
        r.add(path, "a client_id needs client_secret_env or client_secret_file", key=True)
        return None, None
    if has_env:
        name = raw["client_secret_env"]
        if not isinstance(name, str):
            r.add((*path, "client_secret_env"), f"expected a variable name, found {describe(name)}")
            return None, None
        if not secrets.is_variable_name(name):
            r.add((*path, "client_secret_env"), NOT_A_VARIABLE)
            return None, None
        if not read:
            return None, name
        got = secrets.from_env(name, env)
        if got.secret is None:
            r.add((*path, "client_secret_env"), got.problem or "the secret cannot be read")
        return got.secret, name
    if has_file:
        value = raw["client_secret_file"]
        if not isinstance(value, str) or not value:
            r.add((*path, "client_secret_file"), f"expected a file path, found {describe(value)}")
            return None, None
        if not read:
            return None, None
        got = secrets.from_file(value, "client_secret_file")
        if got.secret is None:
            r.add((*path, "client_secret_file"), got.problem or "the secret cannot be read")
        return got.secret, None
    return None, None


__all__ = ["ALGORITHMS", "DEFAULT_ALGORITHMS", "DEFAULT_SCOPES", "endpoint", "oauth_of"]
