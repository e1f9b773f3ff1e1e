"""A token issuer the tests control: keys made here, tokens minted (or forged) here, and a
small identity provider on 127.0.0.1 that serves the issuer's metadata, its key set and
token introspection, and can be made slow, huge, wrong or absent.

The real identity provider (oidc-provider) is started by tests/support/idp.py; this one is
for the cases a real provider will not produce on demand.
"""

from __future__ import annotations

import base64
import contextlib
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

import anyio
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

from rypsok.core.config import load
from rypsok.core.config.settings import OAuthSettings
from rypsok.core.oauth.claims import Grant, Rejected, Unavailable
from rypsok.core.oauth.resource import ResourceServer

RESOURCE = "http://127.0.0.1:8737/mcp"
INTROSPECTION_SECRET = "s3cret-of-the-resource-server"
ALL_SCOPES = "rypsok:search rypsok:fetch rypsok:status"


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _int(value: int, size: int | None = None) -> str:
    size = size or (value.bit_length() + 7) // 8
    return b64(value.to_bytes(size, "big"))


@dataclass
class SigningKey:
    """A private key and its public JWK."""

    kid: str
    alg: str
    private: Any

    def jwk(self) -> dict[str, Any]:
        public = self.private.public_key()
        base: dict[str, Any] = {"kid": self.kid, "use": "sig", "alg": self.alg}
        if isinstance(public, rsa.RSAPublicKey):
            numbers = public.public_numbers()
            return {**base, "kty": "RSA", "n": _int(numbers.n), "e": _int(numbers.e)}
        if isinstance(public, ec.EllipticCurvePublicKey):
            point = public.public_numbers()
            crv, size = {"secp256r1": ("P-256", 32), "secp384r1": ("P-384", 48)}[public.curve.name]
            return {
                **base,
                "kty": "EC",
                "crv": crv,
                "x": _int(point.x, size),
                "y": _int(point.y, size),
            }
        raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        return {**base, "kty": "OKP", "crv": "Ed25519", "x": b64(raw)}

    def sign(self, data: bytes) -> bytes:
        alg = self.alg
        if alg.startswith("RS"):
            return self.private.sign(data, padding.PKCS1v15(), _hash(alg))  # type: ignore[no-any-return]
        if alg.startswith("PS"):
            digest = _hash(alg)
            pss = padding.PSS(mgf=padding.MGF1(digest), salt_length=digest.digest_size)
            return self.private.sign(data, pss, digest)  # type: ignore[no-any-return]
        if alg.startswith("ES"):
            der = self.private.sign(data, ec.ECDSA(_hash(alg)))
            r, s = decode_dss_signature(der)
            size = {"ES256": 32, "ES384": 48}[alg]
            return r.to_bytes(size, "big") + s.to_bytes(size, "big")
        return self.private.sign(data)  # type: ignore[no-any-return]


def _hash(alg: str) -> hashes.HashAlgorithm:
    return {"256": hashes.SHA256(), "384": hashes.SHA384(), "512": hashes.SHA512()}[alg[2:]]


def new_key(alg: str = "ES256", kid: str = "k1") -> SigningKey:
    if alg.startswith(("RS", "PS")):
        private: Any = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    elif alg == "ES256":
        private = ec.generate_private_key(ec.SECP256R1())
    elif alg == "ES384":
        private = ec.generate_private_key(ec.SECP384R1())
    else:
        private = ed25519.Ed25519PrivateKey.generate()
    return SigningKey(kid, alg, private)


def compact(header: dict[str, Any], claims: dict[str, Any], sign: Any) -> str:
    head = b64(json.dumps(header).encode())
    body = b64(json.dumps(claims).encode())
    signing_input = f"{head}.{body}".encode("ascii")
    return f"{head}.{body}.{b64(sign(signing_input))}"


def claims_for(
    issuer: str,
    *,
    resource: str = RESOURCE,
    subject: str = "alice",
    scope: str = ALL_SCOPES,
    lifetime_s: float = 300,
    now: float | None = None,
    **extra: Any,
) -> dict[str, Any]:
    now = time.time() if now is None else now
    claims: dict[str, Any] = {
        "iss": issuer,
        "aud": resource,
        "sub": subject,
        "client_id": "host-app",
        "scope": scope,
        "iat": int(now),
        "exp": int(now + lifetime_s),
    }
    claims.update(extra)
    return {k: v for k, v in claims.items() if v is not None}


def mint(key: SigningKey, claims: dict[str, Any], **header: Any) -> str:
    head: dict[str, Any] = {"alg": key.alg, "kid": key.kid, "typ": "at+jwt"}
    head.update(header)
    return compact({k: v for k, v in head.items() if v is not None}, claims, key.sign)


@dataclass
class Issuer:
    """The identity provider's state: what it serves and what it saw."""

    keys: list[SigningKey]
    port: int = 0
    mode: str = "ok"  # ok | huge | html | redirect | status (slow_s delays any of them)
    slow_s: float = 0.0
    active: dict[str, dict[str, Any]] = field(default_factory=dict)  # opaque token -> answer
    client: tuple[str, str] = ("rypsok", INTROSPECTION_SECRET)
    hits: dict[str, int] = field(default_factory=dict)
    seen_basic: list[str] = field(default_factory=list)
    in_flight: int = 0
    most_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def metadata(self) -> dict[str, Any]:
        return {
            "issuer": self.url,
            "jwks_uri": f"{self.url}/jwks",
            "introspection_endpoint": f"{self.url}/introspect",
            "authorization_endpoint": f"{self.url}/authorize",
            "token_endpoint": f"{self.url}/token",
        }


def _handler(issuer: Issuer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _answer(self, status: int, body: bytes, kind: str = "application/json") -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            with contextlib.suppress(OSError):
                self.wfile.write(body)

        def _common(self, name: str) -> bool:
            with issuer.lock:
                issuer.hits[name] = issuer.hits.get(name, 0) + 1
                issuer.in_flight += 1
                issuer.most_in_flight = max(issuer.most_in_flight, issuer.in_flight)
            try:
                return self._mode()
            finally:
                with issuer.lock:
                    issuer.in_flight -= 1

        def _mode(self) -> bool:
            if issuer.slow_s:
                time.sleep(issuer.slow_s)
            if issuer.mode == "huge":
                self._answer(200, b'{"keys": [' + b" " * (10 * 1024 * 1024) + b"]}")
                return True
            if issuer.mode == "html":
                self._answer(200, b"<html><body>Sign in</body></html>", "text/html")
                return True
            if issuer.mode == "redirect":
                self.send_response(302)
                self.send_header("Location", "http://127.0.0.2:9/elsewhere")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return True
            if issuer.mode == "status":
                self._answer(500, b"{}")
                return True
            return False

        def do_GET(self) -> None:
            path = self.path.split("?")[0]
            if path == "/.well-known/oauth-authorization-server":
                if not self._common("metadata"):
                    self._answer(200, json.dumps(issuer.metadata()).encode())
            elif path == "/jwks":
                if not self._common("jwks"):
                    keys = [k.jwk() for k in issuer.keys]
                    self._answer(200, json.dumps({"keys": keys}).encode())
            else:
                self._answer(404, b"{}")

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            form = parse_qs(self.rfile.read(length).decode())
            if self.path != "/introspect" or self._common("introspect"):
                return
            issuer.seen_basic.append(self.headers.get("Authorization", ""))
            expected = base64.b64encode(":".join(issuer.client).encode()).decode()
            if self.headers.get("Authorization") != f"Basic {expected}":
                self._answer(401, b'{"error":"invalid_client"}')
                return
            token = form.get("token", [""])[0]
            answer = issuer.active.get(token, {"active": False})
            self._answer(200, json.dumps(answer).encode())

    return Handler


@contextlib.contextmanager
def running(issuer: Issuer) -> Iterator[Issuer]:
    """The identity provider on 127.0.0.1 (a free port), stopped after."""
    server = ThreadingHTTPServer(("127.0.0.1", issuer.port), _handler(issuer))
    server.daemon_threads = True
    issuer.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield issuer
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def free_port() -> int:
    """A port nothing listens on (bound, then released): an identity provider that is down."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def oauth_settings(tmp_path: Any, issuer_url: str, extra: str = "", **kw: Any) -> OAuthSettings:
    """[service.http.oauth] read from a file of oauth_table's lines, as serve reads it."""
    path = tmp_path / "rypsok.toml"
    path.write_text("config_version = 1\n" + oauth_table(issuer_url, extra=extra, **kw))
    env = {"RYPSOK_OAUTH_SECRET": INTROSPECTION_SECRET}
    settings = load(str(path), env).service.http.oauth
    assert settings is not None
    return settings


def judge(server: ResourceServer, token: str) -> Grant | Rejected | Unavailable:
    """The resource server's verdict on one token, in an event loop of its own."""
    return anyio.run(server.authenticate, token.encode("ascii"))


def oauth_table(
    issuer_url: str,
    *,
    resource: str = RESOURCE,
    introspection: bool = False,
    extra: str = "",
) -> str:
    lines = [
        "[service.http.oauth]",
        f'resource = "{resource}"',
        f'issuer = "{issuer_url}"',
        'algorithms = ["RS256", "PS256", "ES256", "ES384", "EdDSA"]',
        "timeout_ms = 1000",
    ]
    if introspection:
        lines += ['client_id = "rypsok"', 'client_secret_env = "RYPSOK_OAUTH_SECRET"']
    return "\n".join(lines) + "\n" + extra
