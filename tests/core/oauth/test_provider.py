"""Issue 37, item 2: the identity provider asked as little as possible, bounded in bytes
and time, never followed elsewhere; its failures refuse calls with 503 (Unavailable),
never accept them; a flood of bad tokens costs it no storm of requests."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from rypsok.core.config.settings import OAuthSettings
from rypsok.core.net.client import OutboundClient, user_agent
from rypsok.core.net.tls import client_context
from rypsok.core.oauth.claims import Grant, Rejected
from rypsok.core.oauth.provider import IdentityProvider
from rypsok.core.oauth.resource import ResourceServer, Unavailable
from tests.support.clock import FakeClock
from tests.support.token_issuer import (
    INTROSPECTION_SECRET,
    RESOURCE,
    Issuer,
    claims_for,
    free_port,
    judge,
    mint,
    new_key,
    oauth_settings,
    running,
)

SECRET = INTROSPECTION_SECRET


def Clock() -> FakeClock:
    return FakeClock(1000.0)


def server_for(
    settings: OAuthSettings, clock: FakeClock | None = None, wall: Any = time.time
) -> ResourceServer:
    client = OutboundClient(tls=client_context(), user_agent=user_agent(""))
    provider = IdentityProvider(settings, client, clock=clock or time.monotonic)
    return ResourceServer(settings, provider, wall=wall)


@pytest.fixture(scope="module")
def keys() -> list[Any]:
    return [new_key("ES256", "k1"), new_key("ES256", "k2")]


@pytest.fixture
def issuer(keys: list[Any]) -> Iterator[Issuer]:
    with running(Issuer([keys[0]])) as served:
        yield served


def test_issue_37_keys_are_discovered_from_the_issuer_metadata_once(
    tmp_path: Any, issuer: Issuer
) -> None:
    server = server_for(oauth_settings(tmp_path, issuer.url))
    for n in range(5):
        assert isinstance(judge(server, mint(issuer.keys[0], claims_for(issuer.url, jti=n))), Grant)
    assert issuer.hits == {"metadata": 1, "jwks": 1}


def test_issue_37_forged_kids_cost_one_key_set_fetch_per_interval(
    tmp_path: Any, issuer: Issuer, keys: list[Any]
) -> None:
    clock = Clock()
    server = server_for(oauth_settings(tmp_path, issuer.url, "keys_refresh_s = 60\n"), clock)
    forged = [mint(keys[0], claims_for(issuer.url), kid=f"forged-{n}") for n in range(200)]

    async def flood() -> list[Any]:
        results: list[Any] = [None] * len(forged)

        async def one(i: int) -> None:
            results[i] = await server.authenticate(forged[i].encode())

        async with anyio.create_task_group() as group:
            for i in range(len(forged)):
                group.start_soon(one, i)
        return results

    results = anyio.run(flood)
    assert all(r == Rejected("the token's signature does not verify") for r in results)
    # The first fetch, then at most one refresh for an unknown kid in the interval.
    assert issuer.hits["jwks"] <= 2
    before = issuer.hits["jwks"]
    clock.now += 61
    assert isinstance(judge(server, forged[0]), Rejected)
    assert issuer.hits["jwks"] == before + 1


def test_issue_37_a_rotated_key_is_found_by_one_refresh(
    tmp_path: Any, issuer: Issuer, keys: list[Any]
) -> None:
    clock = Clock()
    server = server_for(oauth_settings(tmp_path, issuer.url, "keys_refresh_s = 60\n"), clock)
    assert isinstance(judge(server, mint(keys[0], claims_for(issuer.url))), Grant)
    issuer.keys.append(keys[1])
    clock.now += 61
    assert isinstance(judge(server, mint(keys[1], claims_for(issuer.url))), Grant)
    assert issuer.hits["jwks"] == 2


@pytest.mark.parametrize("mode", ["huge", "html", "redirect", "status", "slow", "down"])
def test_issue_37_a_provider_that_fails_refuses_the_call_with_unavailable_in_bounded_time(
    tmp_path: Any, issuer: Issuer, mode: str
) -> None:
    url = issuer.url if mode != "down" else f"http://127.0.0.1:{free_port()}"
    if mode == "slow":
        issuer.slow_s = 3.0
    else:
        issuer.mode = mode
    server = server_for(oauth_settings(tmp_path, url))  # timeout_ms = 1000
    started = time.monotonic()
    verdict = judge(server, mint(issuer.keys[0], claims_for(url)))
    elapsed = time.monotonic() - started
    assert isinstance(verdict, Unavailable)
    assert elapsed < 2.5  # metadata and key set, each within the deadline of 1 s
    if mode == "redirect":
        assert set(issuer.hits) == {"metadata"}  # the Location was never asked


def test_issue_37_known_keys_keep_working_while_the_provider_is_down(
    tmp_path: Any, issuer: Issuer
) -> None:
    clock = Clock()
    server = server_for(oauth_settings(tmp_path, issuer.url, "keys_max_age_s = 300\n"), clock)
    assert isinstance(judge(server, mint(issuer.keys[0], claims_for(issuer.url))), Grant)
    issuer.mode = "status"
    clock.now += 301  # the set is old: asked again, and the failure keeps the old one
    assert isinstance(judge(server, mint(issuer.keys[0], claims_for(issuer.url, jti=2))), Grant)
    assert issuer.hits["jwks"] == 2


def test_issue_37_opaque_tokens_are_introspected_and_positive_answers_kept(
    tmp_path: Any, issuer: Issuer
) -> None:
    wall = Clock()
    wall.now = time.time()
    settings = oauth_settings(
        tmp_path, issuer.url, "introspection_cache_s = 60\n", introspection=True
    )
    server = server_for(settings, wall=wall)
    answer = {"active": True, **claims_for(issuer.url, subject="bob", now=wall.now)}
    issuer.active["opaque-token-1"] = answer
    first = judge(server, "opaque-token-1")
    assert isinstance(first, Grant) and first.caller == "oauth:bob"
    assert judge(server, "opaque-token-1") == first
    assert issuer.hits["introspect"] == 1  # the second answer was the kept one
    assert issuer.seen_basic[0].startswith("Basic ")
    # Revoked at the provider: seen once the kept answer is older than the cache time.
    del issuer.active["opaque-token-1"]
    wall.now += 61
    assert judge(server, "opaque-token-1") == Rejected("the token is not active")
    assert judge(server, "opaque-token-1") == Rejected("the token is not active")
    assert issuer.hits["introspect"] == 3  # refusals are never kept


def test_issue_37_an_introspected_token_for_another_resource_is_refused(
    tmp_path: Any, issuer: Issuer
) -> None:
    server = server_for(oauth_settings(tmp_path, issuer.url, introspection=True))
    other = {"active": True, **claims_for(issuer.url, resource="https://other.example/mcp")}
    issuer.active["for-another"] = other
    no_audience = {"active": True, **claims_for(issuer.url, aud=None)}
    issuer.active["no-audience"] = no_audience
    for token in ("for-another", "no-audience"):
        assert judge(server, token) == Rejected("the token was issued for another resource")


def test_issue_37_introspection_requests_in_flight_are_bounded(
    tmp_path: Any, issuer: Issuer
) -> None:
    issuer.slow_s = 0.2
    server = server_for(oauth_settings(tmp_path, issuer.url, introspection=True))

    async def flood() -> None:
        async with anyio.create_task_group() as group:
            for n in range(12):
                group.start_soon(server.authenticate, f"bogus-{n}".encode())

    anyio.run(flood)
    assert issuer.most_in_flight <= 4  # LIM-A6
    assert issuer.hits["introspect"] >= 1


def test_issue_37_the_client_secret_never_reaches_a_log_or_a_repr(
    tmp_path: Any, issuer: Issuer, capsys: pytest.CaptureFixture[str]
) -> None:
    issuer.mode = "status"
    settings = oauth_settings(tmp_path, issuer.url, introspection=True)
    assert SECRET not in repr(settings)
    assert isinstance(judge(server_for(settings), "opaque"), Unavailable)
    captured = capsys.readouterr()
    assert '"event":"oauth_provider_failed"' in captured.err.replace(" ", "")
    assert SECRET not in captured.out + captured.err
    assert RESOURCE not in captured.err
