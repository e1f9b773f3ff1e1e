"""rypsok as an OAuth resource server: a bearer token in, a Grant, a refusal or "ask
later" out, and the protected resource metadata (RFC 9728) it publishes.

A signed token (a compact JWS) is checked here against the issuer's keys; any other
token is introspected when a client is configured, and refused when not. Accepted
tokens are kept, by their SHA-256, until they expire (signed ones) or for
introspection_cache_s at most (introspected ones), LIM-A5 entries at most: a call with a
token already seen costs one hash and one look-up.
"""

from __future__ import annotations

import hashlib
import json
import ssl
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import replace

from rypsok.core import limits
from rypsok.core.config.settings import OAUTH_TOOLS, OAuthSettings
from rypsok.core.net.client import OutboundClient, user_agent
from rypsok.core.net.tls import client_context
from rypsok.core.oauth.claims import (
    MAX_TOKEN_BYTES,
    Grant,
    Rejected,
    Unavailable,
    check_claims,
    header_problem,
    split_compact,
)
from rypsok.core.oauth.keys import verify
from rypsok.core.oauth.provider import IdentityProvider, ProviderUnavailable
from rypsok.core.telemetry import counters

MAX_KEPT = limits.default("LIM-A5")
WELL_KNOWN = "/.well-known/oauth-protected-resource"


Verdict = Grant | Rejected | Unavailable


class _Kept:
    """Accepted tokens by digest, each until its own end; the oldest go first."""

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._entries: OrderedDict[bytes, tuple[Grant, float]] = OrderedDict()

    def get(self, digest: bytes, now: float) -> Grant | None:
        entry = self._entries.get(digest)
        if entry is None:
            return None
        grant, until = entry
        if now >= until:
            del self._entries[digest]
            return None
        self._entries.move_to_end(digest)
        return grant

    def put(self, digest: bytes, grant: Grant, until: float) -> None:
        self._entries[digest] = (grant, until)
        self._entries.move_to_end(digest)
        while len(self._entries) > self._capacity:
            self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)


class ResourceServer:
    def __init__(
        self,
        settings: OAuthSettings,
        provider: IdentityProvider,
        *,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.settings = settings
        self.provider = provider
        self._wall = wall
        self._kept = _Kept(MAX_KEPT)

    def scope_for(self, tool: str) -> str:
        return self.settings.scope_for(tool)

    async def authenticate(self, token: bytes) -> Verdict:
        digest = hashlib.sha256(token).digest()
        now = self._wall()
        kept = self._kept.get(digest, now)
        if kept is not None:
            counters.add("oauth", "tokens", "kept")
            return kept
        try:
            verdict = await self._judge(token, now)
        except ProviderUnavailable as error:
            counters.add("oauth", "tokens", "provider_unavailable")
            return Unavailable(str(error))
        if isinstance(verdict, Grant):
            counters.add("oauth", "tokens", "accepted")
            if verdict.expires_at > now:
                self._kept.put(digest, verdict, verdict.expires_at)
        else:
            counters.add("oauth", "tokens", "refused")
        return verdict

    async def _judge(self, token: bytes, now: float) -> Grant | Rejected:
        if len(token) > MAX_TOKEN_BYTES:
            return Rejected("the token is longer than this server accepts")
        compact = split_compact(token)
        if compact is None:
            if not self.provider.introspects:
                return Rejected("the token is not a signed token and introspection is off")
            answer = await self.provider.introspect(token)
            if answer.get("active") is not True:
                return Rejected("the token is not active")
            grant = check_claims(answer, self.settings, now, introspected=True)
            if isinstance(grant, Grant):  # kept no longer than introspection_cache_s
                cap = now + self.settings.introspection_cache_s
                grant = replace(grant, expires_at=min(grant.expires_at, cap))
            return grant
        problem = header_problem(compact.header, self.settings.algorithms)
        if problem is not None:
            return Rejected(problem)
        alg = str(compact.header["alg"])
        kid = compact.header.get("kid")
        if kid is not None and not isinstance(kid, str):
            return Rejected("the token names its key in another form")
        keys = await self.provider.keys_for(kid, alg)
        if not any(verify(k, alg, compact.signing_input, compact.signature) for k in keys):
            return Rejected("the token's signature does not verify")
        return check_claims(compact.claims, self.settings, now)

    def metadata(self) -> bytes:
        """The protected resource metadata document (RFC 9728 2)."""
        scopes = sorted({s for _, s in self.settings.scopes if s})
        document = {
            "resource": self.settings.resource,
            "authorization_servers": [self.settings.issuer],
            "scopes_supported": scopes,
            "bearer_methods_supported": ["header"],
            "resource_name": "rypsok",
        }
        return json.dumps(document, separators=(",", ":")).encode("utf-8")

    def metadata_url(self) -> str:
        """Where the metadata of this resource is published (RFC 9728 3.1)."""
        scheme, _, rest = self.settings.resource.partition("://")
        host, slash, path = rest.partition("/")
        path = (slash + path).rstrip("/")
        return f"{scheme}://{host}{WELL_KNOWN}{path}"

    def metadata_paths(self) -> tuple[bytes, ...]:
        """The local paths the metadata is served at: the path-suffixed form for this
        resource, and the bare form for hosts that ask at the root."""
        suffixed = self.metadata_url().partition("://")[2]
        suffixed = "/" + suffixed.partition("/")[2]
        return tuple(dict.fromkeys([suffixed.encode("ascii"), WELL_KNOWN.encode("ascii")]))


def resource_server(
    settings: OAuthSettings, contact: str, tls: ssl.SSLContext | None = None
) -> ResourceServer:
    """The resource server with its own client: the system's trust store, rypsok's
    User-Agent, no proxy (the identity provider is the operator's endpoint)."""
    client = OutboundClient(tls=tls or client_context(), user_agent=user_agent(contact))
    return ResourceServer(settings, IdentityProvider(settings, client))


__all__ = ["OAUTH_TOOLS", "ResourceServer", "Unavailable", "Verdict", "resource_server"]
