"""The identity provider, asked as little as possible: its metadata, its key set, and
token introspection.

The provider is the operator's endpoint, like the store: no egress profile, no proxy.
Every request is bounded in bytes (LIM-A1) and time ([service.http.oauth] timeout_ms),
follows no redirect (a 3xx is a failure), and at most LIM-A6 are in flight at once.
The key set is fetched by one request at a time, however many calls wait for it, and
never again sooner than keys_refresh_s after the last attempt: a flood of tokens naming
unknown keys costs the provider one request per interval, not one per token.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

import anyio

from rypsok.core import limits
from rypsok.core.config.settings import OAuthSettings
from rypsok.core.config.validate_oauth import endpoint
from rypsok.core.net.client import ClientError, OutboundClient, Response
from rypsok.core.net.hostname import is_loopback_url
from rypsok.core.oauth.keys import Key, read_key_set
from rypsok.core.telemetry import log

MAX_ANSWER_BYTES = limits.default("LIM-A1")
IN_FLIGHT = limits.default("LIM-A6")
# After a failed attempt the key set (or the metadata) is asked again no sooner than this,
# even when keys_refresh_s is longer: a provider back from an outage is seen quickly.
RETRY_AFTER_FAILURE_S = 5.0
# One warning line per this many seconds at most, however many requests fail.
WARN_EVERY_S = 10.0


class ProviderUnavailable(Exception):
    """The provider could not answer what was needed; the message is our own words."""


@dataclass(frozen=True, slots=True)
class Endpoints:
    jwks_uri: str
    introspection_endpoint: str


def metadata_urls(issuer: str) -> tuple[str, str]:
    """RFC 8414's location (the well-known segment before the issuer's path), then
    OpenID Connect Discovery's (appended to it)."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")
    rfc8414 = urlunsplit(
        (parts.scheme, parts.netloc, "/.well-known/oauth-authorization-server" + path, "", "")
    )
    return rfc8414, issuer.rstrip("/") + "/.well-known/openid-configuration"


class IdentityProvider:
    def __init__(
        self,
        settings: OAuthSettings,
        client: OutboundClient,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._settings = settings
        self._client = client
        self._clock = clock
        self._timeout_s = settings.timeout_ms / 1000
        self._slots = anyio.Semaphore(IN_FLIGHT)
        self._endpoints: Endpoints | None = None
        self._endpoints_tried = -float("inf")
        self._keys: list[Key] | None = None
        self._keys_at = -float("inf")  # when the set in hand was fetched
        self._keys_tried = -float("inf")  # when a fetch last started
        self._keys_failed = False
        self._lock = anyio.Lock()
        self._warned = -float("inf")
        self.fetches = 0  # key set requests sent: read by tests and the bench

    # ------------------------------------------------------------------ key set

    async def keys_for(self, kid: str | None, alg: str) -> list[Key]:
        """The keys that may have signed a token naming *kid* with *alg* (every fitting
        key when it names none); empty when none may.

        Raises ProviderUnavailable when no key set could be had, or when an unknown
        key was asked for and the provider could not be reached to look for it."""
        now = self._clock()
        if self._keys is None or now - self._keys_at >= self._settings.keys_max_age_s:
            await self._refresh(stale_ok=self._keys is not None)
        found = self._matching(kid, alg)
        if found or kid is None:
            return found
        # An unknown kid: the provider may have rotated its keys. Asked again only when
        # the last attempt is old enough, so forged kids cannot make it a storm.
        if self._clock() - self._keys_tried >= self._settings.keys_refresh_s:
            await self._refresh(stale_ok=False)
            return self._matching(kid, alg)
        return []

    def _matching(self, kid: str | None, alg: str) -> list[Key]:
        keys = self._keys or []
        return [k for k in keys if k.fits(alg) and (kid is None or k.kid == kid)]

    async def _refresh(self, *, stale_ok: bool) -> None:
        tried = self._keys_tried
        async with self._lock:
            if self._keys_tried != tried:
                # Another call fetched while this one waited: its outcome stands.
                if self._keys is None:
                    raise ProviderUnavailable("the identity provider's keys could not be read")
                return
            now = self._clock()
            gap = RETRY_AFTER_FAILURE_S if self._keys_failed else 0.0
            if now - self._keys_tried < gap:
                if self._keys is None or not stale_ok:
                    raise ProviderUnavailable("the identity provider's keys could not be read")
                return
            self._keys_tried = now
            try:
                url = self._settings.jwks_uri or (await self._discovered()).jwks_uri
                answer = await self._ask("keys", url)
                keys = read_key_set(answer.body) if answer.status == HTTPStatus.OK else None
                if keys is None:
                    self._warn("keys", "content")
                    raise ProviderUnavailable("the identity provider's keys could not be read")
            except ProviderUnavailable:
                self._keys_failed = True
                if self._keys is None or not stale_ok:
                    raise
                return
            self._keys, self._keys_at, self._keys_failed = keys, self._clock(), False

    # ----------------------------------------------------------------- metadata

    async def _discovered(self) -> Endpoints:
        if self._endpoints is not None:
            return self._endpoints
        now = self._clock()
        if now - self._endpoints_tried < RETRY_AFTER_FAILURE_S:
            raise ProviderUnavailable("the identity provider's metadata could not be read")
        self._endpoints_tried = now
        for url in metadata_urls(self._settings.issuer):
            answer = await self._ask("metadata", url)
            if answer.status != HTTPStatus.OK:
                continue
            found = self._endpoints_of(answer.body)
            if found is not None:
                self._endpoints = found
                return found
        self._warn("metadata", "content")
        raise ProviderUnavailable("the identity provider's metadata could not be read")

    def _endpoints_of(self, body: bytes) -> Endpoints | None:
        document = _object(body)
        # RFC 8414 3.3: the metadata must name the issuer it was asked for.
        if document is None or document.get("issuer") != self._settings.issuer:
            return None
        jwks = document.get("jwks_uri")
        jwks_uri = endpoint(jwks, query=True) if isinstance(jwks, str) else None
        if jwks_uri is None:
            return None
        found = document.get("introspection_endpoint")
        introspection = endpoint(found, query=True) if isinstance(found, str) else None
        return Endpoints(jwks_uri, introspection or "")

    # ------------------------------------------------------------ introspection

    @property
    def introspects(self) -> bool:
        return bool(self._settings.client_id and self._settings.client_secret is not None)

    async def introspect(self, token: bytes) -> Mapping[str, Any]:
        """The provider's answer for an opaque token (RFC 7662), as a JSON object."""
        settings = self._settings
        url = settings.introspection_endpoint or (await self._discovered()).introspection_endpoint
        if not url or settings.client_secret is None:
            raise ProviderUnavailable("the identity provider names no introspection endpoint")
        # RFC 6749 2.3.1: each part form-encoded before the Basic encoding.
        secret = settings.client_secret.reveal()
        pair = f"{quote(settings.client_id, safe='')}:{quote(secret, safe='')}"
        basic = base64.b64encode(pair.encode("utf-8")).decode("ascii")
        form = urlencode({"token": token.decode("ascii"), "token_type_hint": "access_token"})
        answer = await self._ask(
            "introspection",
            url,
            body=form.encode("ascii"),
            headers=(("Authorization", f"Basic {basic}"), ("Accept", "application/json")),
        )
        document = _object(answer.body) if answer.status == HTTPStatus.OK else None
        if document is None or not isinstance(document.get("active"), bool):
            self._warn("introspection", "content" if answer.status == HTTPStatus.OK else "status")
            raise ProviderUnavailable("the identity provider's introspection could not be read")
        return document

    # -------------------------------------------------------------------- wire

    async def _ask(
        self,
        step: str,
        url: str,
        *,
        body: bytes | None = None,
        headers: tuple[tuple[str, str], ...] = (),
    ) -> Response:
        allow_http = is_loopback_url(url)  # the configuration admits http to loopback only
        try:
            with anyio.fail_after(self._timeout_s):
                async with self._slots:
                    if body is None:
                        self.fetches += step == "keys"
                        answer = await self._client.get(
                            url,
                            headers=(("Accept", "application/json"),),
                            max_bytes=MAX_ANSWER_BYTES,
                            connect_timeout_s=self._timeout_s,
                            total_timeout_s=self._timeout_s,
                            allow_http=allow_http,
                        )
                    else:
                        answer = await self._client.post(
                            url,
                            body,
                            content_type="application/x-www-form-urlencoded",
                            headers=headers,
                            max_bytes=MAX_ANSWER_BYTES,
                            connect_timeout_s=self._timeout_s,
                            total_timeout_s=self._timeout_s,
                            allow_http=allow_http,
                        )
        except ClientError as error:
            self._warn(step, error.kind)
            raise ProviderUnavailable(f"the identity provider's {step} could not be read") from None
        except TimeoutError:
            self._warn(step, "timeout")
            raise ProviderUnavailable(f"the identity provider's {step} could not be read") from None
        if HTTPStatus.MULTIPLE_CHOICES <= answer.status < HTTPStatus.BAD_REQUEST:
            # Never followed: a redirect could lead the secret or the trust elsewhere.
            self._warn(step, "redirect")
            raise ProviderUnavailable(f"the identity provider's {step} could not be read")
        return answer

    def _warn(self, step: str, kind: str) -> None:
        now = self._clock()
        if now - self._warned >= WARN_EVERY_S:
            self._warned = now
            # Fixed words only: no URL, no provider text, no token.
            log.warn("oauth_provider_failed", step=step, kind=kind)


def _object(body: bytes) -> Mapping[str, Any] | None:
    try:
        value = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    return value if isinstance(value, dict) else None
