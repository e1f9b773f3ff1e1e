"""Issue 37, item 2: access tokens validated, not trusted. Signed tokens against the
issuer's key set (tests/support/token_issuer.py serves it on 127.0.0.1), with every bad
token the issue names refused with our own words."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from rypsok.core.oauth.claims import CALLER_PREFIX, Grant, Rejected
from rypsok.core.oauth.resource import resource_server
from tests.support.token_issuer import (
    RESOURCE,
    Issuer,
    b64,
    claims_for,
    compact,
    judge,
    mint,
    new_key,
    oauth_settings,
    running,
)

ALGORITHMS = ["RS256", "PS256", "ES256", "ES384", "EdDSA"]


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    with running(Issuer([new_key("ES256", "k1"), new_key("RS256", "r1")])) as served:
        yield served


def test_issue_37_tokens_of_every_accepted_algorithm_are_accepted(tmp_path: Any) -> None:
    keys = [new_key(alg, f"kid-{alg}") for alg in ALGORITHMS]
    with running(Issuer(keys)) as idp:
        server = resource_server(oauth_settings(tmp_path, idp.url), "")
        for key in keys:
            verdict = judge(server, mint(key, claims_for(idp.url, subject=f"user-{key.alg}")))
            assert isinstance(verdict, Grant), (key.alg, verdict)
            assert verdict.caller == f"{CALLER_PREFIX}user-{key.alg}"
            assert verdict.scopes == {"rypsok:search", "rypsok:fetch", "rypsok:status"}


class In:
    """A moment this many seconds from when the test runs (not from its collection: the
    whole suite takes minutes)."""

    def __init__(self, seconds: int) -> None:
        self.seconds = seconds


@pytest.mark.parametrize(
    ("claims", "reason"),
    [
        ({"exp": In(-120)}, "the token has expired"),
        ({"nbf": In(120)}, "the token is not valid yet"),
        ({"iat": In(120)}, "the token is not valid yet"),
        ({"aud": "https://other.example/mcp"}, "the token was issued for another resource"),
        ({"aud": ["https://other.example/mcp"]}, "the token was issued for another resource"),
        ({"iss": "https://evil.example"}, "the token was issued by another issuer"),
        ({"exp": None}, "the token has no expiry"),
        ({"exp": "tomorrow"}, "the token has no expiry"),
        ({"sub": "x" * 256}, "the token's sub cannot name a caller"),
        ({"sub": "x" * 10_000}, "the token is longer than this server accepts"),
        ({"sub": "alice\r\nevent: injected"}, "the token's sub cannot name a caller"),
        ({"sub": "\u00e9l\u00e8ve"}, "the token's sub cannot name a caller"),
        ({"sub": None}, "the token's sub cannot name a caller"),
    ],
)
def test_issue_37_bad_claims_are_refused(
    tmp_path: Any, issuer: Issuer, claims: dict[str, Any], reason: str
) -> None:
    server = resource_server(oauth_settings(tmp_path, issuer.url, "leeway_s = 30\n"), "")
    now = int(time.time())
    values = {k: now + v.seconds if isinstance(v, In) else v for k, v in claims.items()}
    token = mint(issuer.keys[0], claims_for(issuer.url, **values))
    verdict = judge(server, token)
    assert verdict == Rejected(reason)


def test_issue_37_the_leeway_admits_a_small_clock_skew_and_no_more(
    tmp_path: Any, issuer: Issuer
) -> None:
    server = resource_server(oauth_settings(tmp_path, issuer.url, "leeway_s = 30\n"), "")
    now = time.time()
    just = mint(issuer.keys[0], claims_for(issuer.url, exp=int(now) - 20, nbf=int(now) + 20))
    assert isinstance(judge(server, just), Grant)
    late = mint(issuer.keys[0], claims_for(issuer.url, exp=int(now) - 40))
    assert judge(server, late) == Rejected("the token has expired")


def test_issue_37_a_token_for_another_resource_is_refused_even_beside_ours(
    tmp_path: Any, issuer: Issuer
) -> None:
    """RFC 8707: the audience must name this resource; one that names it among others
    passes, one that names only a sibling path or a prefix does not."""
    server = resource_server(oauth_settings(tmp_path, issuer.url), "")
    both = mint(issuer.keys[0], claims_for(issuer.url, aud=["https://x.example", RESOURCE]))
    assert isinstance(judge(server, both), Grant)
    for near in (RESOURCE + "/", RESOURCE.rsplit("/", 1)[0], RESOURCE.upper()):
        token = mint(issuer.keys[0], claims_for(issuer.url, aud=near))
        assert judge(server, token) == Rejected("the token was issued for another resource")


def test_issue_37_alg_none_and_hmac_with_the_public_key_are_refused(
    tmp_path: Any, issuer: Issuer
) -> None:
    server = resource_server(oauth_settings(tmp_path, issuer.url), "")
    claims = claims_for(issuer.url)
    unsigned = compact({"alg": "none", "kid": "k1"}, claims, lambda _: b"")
    assert judge(server, unsigned) == Rejected(
        "the token is signed with an algorithm this server does not accept"
    )
    # The classic confusion: the RSA public key's bytes used as an HMAC secret.
    public = json.dumps(issuer.keys[1].jwk()).encode()
    forged = compact(
        {"alg": "HS256", "kid": "r1"},
        claims,
        lambda data: hmac.new(public, data, hashlib.sha256).digest(),
    )
    assert judge(server, forged) == Rejected(
        "the token is signed with an algorithm this server does not accept"
    )
    # An allowed algorithm over the wrong key type: an ES256 header naming the RSA key.
    crossed = mint(issuer.keys[1], claims, alg="ES256")
    assert judge(server, crossed) == Rejected("the token's signature does not verify")


def test_issue_37_a_changed_token_or_another_signers_token_does_not_verify(
    tmp_path: Any, issuer: Issuer
) -> None:
    server = resource_server(oauth_settings(tmp_path, issuer.url), "")
    token = mint(issuer.keys[0], claims_for(issuer.url))
    head, _, sig = token.split(".")
    richer = b64(json.dumps(claims_for(issuer.url, subject="admin")).encode())
    assert judge(server, f"{head}.{richer}.{sig}") == Rejected(
        "the token's signature does not verify"
    )
    stranger = new_key("ES256", "k1")  # same kid, another key
    assert judge(server, mint(stranger, claims_for(issuer.url))) == Rejected(
        "the token's signature does not verify"
    )


def test_issue_37_a_critical_header_or_another_token_type_is_refused(
    tmp_path: Any, issuer: Issuer
) -> None:
    server = resource_server(oauth_settings(tmp_path, issuer.url), "")
    claims = claims_for(issuer.url)
    assert judge(server, mint(issuer.keys[0], claims, crit=["exp"])) == Rejected(
        "the token requires an extension this server does not support"
    )
    assert judge(server, mint(issuer.keys[0], claims, typ="logout+jwt")) == Rejected(
        "the token is not an access token"
    )
    assert isinstance(judge(server, mint(issuer.keys[0], claims, typ="JWT")), Grant)
    assert isinstance(judge(server, mint(issuer.keys[0], claims, typ=None)), Grant)


def test_issue_37_scopes_are_read_from_scope_or_scp_and_the_caller_from_the_claim_chosen(
    tmp_path: Any, issuer: Issuer
) -> None:
    server = resource_server(oauth_settings(tmp_path, issuer.url), "")
    claims = claims_for(issuer.url, scope=None, scp=["rypsok:fetch", 7])
    verdict = judge(server, mint(issuer.keys[0], claims))
    assert isinstance(verdict, Grant) and verdict.scopes == {"rypsok:fetch"}
    by_client = resource_server(
        oauth_settings(tmp_path, issuer.url, 'caller_claim = "client_id"\n'), ""
    )
    verdict = judge(by_client, mint(issuer.keys[0], claims_for(issuer.url)))
    assert isinstance(verdict, Grant) and verdict.caller == CALLER_PREFIX + "host-app"


def test_issue_37_garbage_and_oversized_tokens_are_refused_without_the_provider(
    tmp_path: Any, issuer: Issuer
) -> None:
    server = resource_server(oauth_settings(tmp_path, issuer.url), "")
    for token in ("a.b.c", "not-a-jwt", "x" * 20_000, b64(b"{}") + "." + b64(b"[]") + ".AA"):
        verdict = judge(server, token)
        assert isinstance(verdict, Rejected), token[:20]
    assert issuer.hits.get("introspect", 0) == 0
    header = base64.urlsafe_b64encode(b'{"alg":"ES256","kid":"k1"}').decode()
    assert judge(server, header + "..") == Rejected(
        "the token is not a signed token and introspection is off"
    )
