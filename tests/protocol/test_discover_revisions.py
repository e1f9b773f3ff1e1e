"""server/discover lists the revisions the transport really serves (REQ-MCP-006; book:
Integration guide, "Transport and lifecycle"; issue 14 item 3).

- stdio serves the handshake-based revisions and 2026-07-28 on every connection
  (clarifications: legacy_revisions governs the HTTP listener only), so discover lists all.
- HTTP lists them only while [service.http] legacy_revisions is on (the default); when it
  is off, 2026-07-28 alone.

Each listed revision is then checked to be served: a handshake with it is accepted, and
with legacy_revisions off the same handshake is refused with -32022.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from tests.support.http_harness import (
    ACCEPT_BOTH,
    MODERN,
    config_text,
    envelope,
    modern_headers,
    post,
    served,
    sse_json,
)
from tests.support.mcp_lines import answers, lines, request
from tests.support.run import cli

# The SDK's handshake-based revisions, newest first after the stateless one.
ALL_SERVED = [MODERN, *sorted(HANDSHAKE_PROTOCOL_VERSIONS, reverse=True)]


def _initialize(version: str, request_id: int = 0) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "tests", "version": "1"},
        },
    }


def _legacy_headers() -> dict[str, str]:
    return {"Host": "127.0.0.1", "Content-Type": "application/json", "Accept": ACCEPT_BOTH}


def _stdio_discover(config: Path | None) -> list[str]:
    args = ("serve",) if config is None else ("serve", "--config", str(config))
    run = cli(*args, stdin=lines(request(1, "server/discover")))
    assert run.code == 0, run.err
    versions: list[str] = answers(run.out)[1]["result"]["supportedVersions"]
    return versions


def _http_discover(port: int) -> list[str]:
    reply = post(
        port, envelope("server/discover"), modern_headers(method="server/discover", name=None)
    )
    assert reply.status == 200
    versions: list[str] = sse_json(reply)["result"]["supportedVersions"]
    return versions


def test_req_mcp_006_stdio_discover_lists_the_handshake_revisions_beside_2026_07_28(
    write_config: Any,
) -> None:
    assert _stdio_discover(None) == ALL_SERVED
    # legacy_revisions is the HTTP listener's key: stdio serves (and lists) both anyway.
    off = write_config(config_text("legacy_revisions = false"))
    assert _stdio_discover(off) == ALL_SERVED
    # Every revision listed is one a handshake over stdio is accepted in.
    for version in HANDSHAKE_PROTOCOL_VERSIONS:
        run = cli("serve", "--config", str(off), stdin=lines(_initialize(version)))
        assert answers(run.out)[0]["result"]["protocolVersion"] == version


def test_req_mcp_006_http_discover_lists_the_handshake_revisions_while_legacy_is_on(
    tmp_path: Path,
) -> None:
    with served(tmp_path, config_text()) as server:  # legacy_revisions defaults to true
        listed = _http_discover(server.port)
        assert listed == ALL_SERVED
        for request_id, version in enumerate(listed[1:], start=1):
            reply = post(server.port, _initialize(version, request_id), _legacy_headers())
            assert reply.status == 200
            assert sse_json(reply)["result"]["protocolVersion"] == version
            assert reply.headers["mcp-session-id"]


def test_req_mcp_006_http_discover_lists_2026_07_28_alone_when_legacy_is_off(
    tmp_path: Path,
) -> None:
    with served(tmp_path, config_text("legacy_revisions = false")) as server:
        assert _http_discover(server.port) == [MODERN]
        for request_id, version in enumerate(HANDSHAKE_PROTOCOL_VERSIONS, start=1):
            reply = post(server.port, _initialize(version, request_id), _legacy_headers())
            assert reply.json()["error"]["code"] == -32022
            assert "mcp-session-id" not in reply.headers
