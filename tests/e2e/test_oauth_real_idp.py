"""Issue 37, item 4: a real identity provider (oidc-provider, tests/support/idp.py) and the
MCP TypeScript SDK's own client (tests/support/mcp_ts_client.py) against rypsok serving
HTTP with [service.http.oauth]: discovery from the 401, dynamic registration,
authorisation with automated consent, token, tool calls, refresh, and refused tokens.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.http_harness import config_text, served
from tests.support.idp import start_idp
from tests.support.mcp_ts_client import run_client
from tests.support.run import clean_env
from tests.support.token_issuer import free_port

SECRET = "introspection-secret-of-the-resource-server-0123"


def rypsok_text(port: int, issuer: str, extra: str = "") -> str:
    resource = f"http://127.0.0.1:{port}/mcp"
    table = (
        "[service.http.oauth]\n"
        f'resource = "{resource}"\n'
        f'issuer = "{issuer}"\n'
        'algorithms = ["ES256", "RS256"]\n'
        "leeway_s = 0\n" + extra
    )
    text = config_text(more=table)
    return text.replace('bind = "127.0.0.1:0"', f'bind = "127.0.0.1:{port}"')


def steps_of(report: dict[str, Any]) -> list[dict[str, Any]]:
    assert report["ok"], json.dumps(report, indent=1)[:4000]
    return list(report["steps"])


def result_text(step: dict[str, Any]) -> dict[str, Any]:
    return dict(json.loads(step["text"]))


@pytest.mark.parametrize("alg", ["ES256", "RS256"])
def test_issue_37_the_sdk_client_connects_through_oauth_calls_and_refreshes(
    tmp_path: Path, alg: str
) -> None:
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    with start_idp(resource=resource, format="jwt", alg=alg, access_ttl_s=2) as idp:
        text = rypsok_text(port, idp.issuer)
        with served(tmp_path, text, clean_env()) as server:
            report = run_client(
                resource,
                ["connect", "list", "call:engine_status", "sleep:2600", "call:engine_status"],
            )
            calls = server.events("call")
    steps = steps_of(report)
    connect = steps[0]["http"]
    # Discovery started from rypsok's 401 and went through its metadata document.
    assert connect[0].startswith("POST /mcp 401")
    assert any("/.well-known/oauth-protected-resource/mcp 200" in line for line in connect)
    assert report["registrations"] == 1
    assert report["token_requests"]["authorization_code"] == 1
    assert steps[1]["tools"] == ["web_search", "web_fetch", "engine_status"]
    assert result_text(steps[2])["outcome"] == "ok"
    # The access token expired (2 s, no leeway): rypsok answered 401, the client refreshed.
    assert any(line.startswith("POST /mcp 401") for line in steps[4]["http"])
    assert report["token_requests"]["refresh_token"] >= 1
    assert result_text(steps[4])["outcome"] == "ok"
    assert [e["caller"] for e in calls] == ["oauth:alice", "oauth:alice"]


def test_issue_37_a_token_without_a_tools_scope_is_refused_403_naming_it(tmp_path: Path) -> None:
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    narrow = ["rypsok:search", "rypsok:status"]
    with start_idp(resource=resource, format="jwt", grant_scopes=narrow) as idp:  # noqa: SIM117 - the second needs the first's issuer
        with served(tmp_path, rypsok_text(port, idp.issuer), clean_env()):
            report = run_client(resource, ["connect", "probe:web_fetch", "probe:engine_status"])
    steps = steps_of(report)
    fetch, status = steps[1], steps[2]
    assert fetch["status"] == 403
    assert fetch["www_authenticate"].startswith(
        'Bearer error="insufficient_scope", scope="rypsok:fetch"'
    )
    assert status["status"] == 200


def test_issue_37_an_opaque_token_is_introspected_and_a_revoked_one_refused(
    tmp_path: Path,
) -> None:
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    client = {"id": "rypsok", "secret": SECRET}
    with start_idp(resource=resource, format="opaque", introspection_client=client) as idp:
        extra = (
            'client_id = "rypsok"\n'
            'client_secret_env = "RYPSOK_OAUTH_SECRET"\n'
            "introspection_cache_s = 0\n"
        )
        env = clean_env(RYPSOK_OAUTH_SECRET=SECRET)
        with served(tmp_path, rypsok_text(port, idp.issuer, extra), env) as server:
            report = run_client(
                resource, ["connect", "call:engine_status", "revoke", "probe", "call:engine_status"]
            )
            log = server.logs.getvalue()
    steps = steps_of(report)
    assert result_text(steps[1])["outcome"] == "ok"
    probe = steps[3]
    assert probe["status"] == 401
    assert (
        'error="invalid_token", error_description="the token is not active"'
        in (probe["www_authenticate"])
    )
    # The client started over (the provider revoked the whole grant) and was let in again.
    assert steps[4]["reauthorized"] is True
    assert result_text(steps[4])["outcome"] == "ok"
    assert SECRET not in log and report["access_token"] not in log
