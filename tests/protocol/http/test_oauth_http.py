"""Issue 37, items 1 and 3, from the outside: the listener as an OAuth resource server.

The protected resource metadata at both paths, 401 with the way to a token, 403 naming
the missing scope, 503 while the identity provider cannot answer, callers from tokens
beside the configured ones, each with its own limits and sessions. The identity provider
is tests/support/token_issuer.py on 127.0.0.1; the real one is in tests/e2e.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.http_harness import (
    TOKEN_A,
    caller_env,
    config_text,
    legacy_headers,
    legacy_initialize,
    modern_headers,
    post,
    served,
    sse_json,
    tool_call,
)
from tests.support.token_issuer import (
    RESOURCE,
    Issuer,
    claims_for,
    free_port,
    mint,
    new_key,
    oauth_table,
    running,
)

METADATA_URL = "http://127.0.0.1:8737/.well-known/oauth-protected-resource/mcp"
SCOPES = "rypsok:fetch rypsok:search rypsok:status"


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    with running(Issuer([new_key("ES256", "k1")])) as served_issuer:
        yield served_issuer


def text_with(issuer_url: str, *, callers: bool = False, more: str = "") -> str:
    return config_text(more=more + "\n" + oauth_table(issuer_url), callers=callers)


def token(issuer: Issuer, **claims: Any) -> str:
    return mint(issuer.keys[0], claims_for(issuer.url, **claims))


def call(port: int, bearer: str | None, tool: str = "engine_status") -> Any:
    return post(port, tool_call(tool), modern_headers(name=tool, token=bearer))


def test_issue_37_the_protected_resource_metadata_is_served_at_both_paths(
    tmp_path: Path, issuer: Issuer
) -> None:
    with served(tmp_path, text_with(issuer.url)) as server:
        for path in (
            "/.well-known/oauth-protected-resource/mcp",
            "/.well-known/oauth-protected-resource",
        ):
            reply = post(server.port, None, {"Host": "127.0.0.1"}, method="GET", path=path)
            assert reply.status == 200, path
            assert reply.headers["content-type"] == "application/json"
            assert reply.json() == {
                "resource": RESOURCE,
                "authorization_servers": [issuer.url],
                "scopes_supported": SCOPES.split(),
                "bearer_methods_supported": ["header"],
                "resource_name": "rypsok",
            }
        foreign = post(
            server.port,
            None,
            {"Host": "evil.example"},
            method="GET",
            path="/.well-known/oauth-protected-resource",
        )
        assert foreign.status == 403


def test_issue_37_without_the_table_nothing_of_oauth_is_served(tmp_path: Path) -> None:
    with served(tmp_path, config_text(callers=True)) as server:
        reply = post(
            server.port,
            None,
            {"Host": "127.0.0.1"},
            method="GET",
            path="/.well-known/oauth-protected-resource/mcp",
        )
        assert reply.status == 404
        unauthorized = call(server.port, None)
        assert unauthorized.status == 401
        assert unauthorized.headers["www-authenticate"] == "Bearer"


def test_issue_37_a_call_without_a_valid_token_gets_401_with_the_metadata(
    tmp_path: Path, issuer: Issuer
) -> None:
    with served(tmp_path, text_with(issuer.url)) as server:
        bare = call(server.port, None)
        assert bare.status == 401
        assert bare.headers["www-authenticate"] == (
            f'Bearer resource_metadata="{METADATA_URL}", scope="{SCOPES}"'
        )
        expired = call(server.port, token(issuer, lifetime_s=-600))
        assert expired.status == 401
        assert expired.headers["www-authenticate"] == (
            'Bearer error="invalid_token", error_description="the token has expired", '
            f'resource_metadata="{METADATA_URL}", scope="{SCOPES}"'
        )
        other = call(server.port, token(issuer, resource="https://other.example/mcp"))
        assert (
            'error_description="the token was issued for another resource"'
            in (other.headers["www-authenticate"])
        )
        assert server.refusals()["unauthorized"] == 3


def test_issue_37_a_token_without_the_tools_scope_gets_403_naming_it(
    tmp_path: Path, issuer: Issuer
) -> None:
    with served(tmp_path, text_with(issuer.url)) as server:
        narrow = token(issuer, scope="rypsok:search")
        refused = call(server.port, narrow, "engine_status")
        assert refused.status == 403
        challenge = refused.headers["www-authenticate"]
        assert challenge.startswith('Bearer error="insufficient_scope", scope="rypsok:status"')
        assert f'resource_metadata="{METADATA_URL}"' in challenge
        listed = post(
            server.port,
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/list",
                "params": {
                    "_meta": {
                        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                        "io.modelcontextprotocol/clientInfo": {"name": "probe", "version": "0"},
                        "io.modelcontextprotocol/clientCapabilities": {},
                    }
                },
            },
            modern_headers(method="tools/list", name=None, token=narrow),
        )
        assert listed.status == 200  # listing needs no tool's scope
        allowed = call(server.port, token(issuer), "engine_status")
        assert allowed.status == 200
        assert sse_json(allowed)["result"]["isError"] is False
        assert server.refusals()["insufficient_scope"] == 1


def test_issue_37_an_identity_provider_that_is_down_refuses_calls_with_503(
    tmp_path: Path, issuer: Issuer
) -> None:
    down = f"http://127.0.0.1:{free_port()}"
    with served(tmp_path, text_with(down)) as server:
        reply = call(server.port, mint(issuer.keys[0], claims_for(down)))
        assert reply.status == 503
        assert reply.headers["retry-after"] == "5"
        assert "identity provider" in reply.json()["error"]["message"]
        events = server.events("oauth_provider_failed")
        assert events and set(events[0]) >= {"step", "kind"}
        assert down not in server.logs.getvalue()


def test_issue_37_static_callers_and_token_callers_in_one_process_with_their_own_limits(
    tmp_path: Path, issuer: Issuer
) -> None:
    more = "[limits]\nengine_status_per_minute = 2\n"
    with served(tmp_path, text_with(issuer.url, callers=True, more=more), caller_env()) as server:
        alice, bob = token(issuer, subject="alice"), token(issuer, subject="bob")
        outcomes = [
            sse_json(call(server.port, bearer))["result"]["isError"]
            for bearer in (alice, alice, alice, bob, TOKEN_A, TOKEN_A)
        ]
        assert outcomes == [False, False, True, False, False, False]
        callers = [e["caller"] for e in server.events("call")]
        assert callers == ["oauth:alice"] * 3 + ["oauth:bob", "mimlys", "mimlys"]
        log = server.logs.getvalue()
        assert alice not in log and bob not in log  # never a token in the log


@pytest.mark.usefixtures("both_lanes")
def test_issue_37_a_session_opened_by_one_token_caller_is_not_anothers(
    tmp_path: Path, issuer: Issuer
) -> None:
    with served(tmp_path, text_with(issuer.url)) as server:
        alice, bob = token(issuer, subject="alice"), token(issuer, subject="bob")
        opened = post(server.port, legacy_initialize(), legacy_headers(alice))
        assert opened.status == 200
        session = opened.headers["mcp-session-id"]
        version = "2025-11-25"
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
        extra = {"Mcp-Session-Id": session, "MCP-Protocol-Version": version}
        stolen = post(server.port, listing, legacy_headers(bob, **extra))
        assert stolen.status == 404
        # The owner, with a fresh token of the same subject (a refresh), goes on.
        again = post(
            server.port, listing, legacy_headers(token(issuer, subject="alice", jti="2"), **extra)
        )
        assert again.status == 200
        tools = [t["name"] for t in sse_json(again)["result"]["tools"]]
        assert tools == ["web_search", "web_fetch", "engine_status"]
        called = post(
            server.port,
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "engine_status", "arguments": {}},
            },
            legacy_headers(alice, **extra),
        )
        assert called.status == 200 and sse_json(called)["result"]["isError"] is False
        assert [e["caller"] for e in server.events("call")] == ["oauth:alice"]


def test_issue_37_check_prints_one_line_naming_the_issuer_and_never_the_secret(
    tmp_path: Path, issuer: Issuer
) -> None:
    from rypsok.core.config import load
    from rypsok.core.config.report import lines

    path = tmp_path / "rypsok.toml"
    path.write_text("config_version = 1\n" + oauth_table(issuer.url, introspection=True))
    secret = "a-client-secret-that-must-never-show"
    config = load(str(path), {"RYPSOK_OAUTH_SECRET": secret})
    found = [line for line in lines(config) if line.startswith("service.http.oauth:")]
    assert len(found) == 1
    assert f"issuer={issuer.url} " in found[0] and secret not in json.dumps(lines(config))
