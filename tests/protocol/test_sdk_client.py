"""An independent MCP client (the SDK's own) lists and calls tools over stdio, in both
revisions (REQ-MCP-001, REQ-MCP-006, REQ-TEST-009)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.support.examples import tutorial_1_config
from tests.support.paths import REPO
from tests.support.run import clean_env
from tests.support.standin import mediawiki


async def _session(config: Path, modern: bool) -> dict[str, Any]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "rypsok", "serve", "--config", str(config)],
        env=clean_env(),
        cwd=str(REPO),
    )
    with open("/dev/null", "w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            if modern:
                await session.discover()
            else:
                await session.initialize()
            listed = await session.list_tools()
            found = await session.call_tool("web_search", {"query": "rust", "max_results": 2})
            status = await session.call_tool("engine_status", {})
            return {
                "version": session.protocol_version,
                "tools": [t.name for t in listed.tools],
                "search": found.structured_content,
                "search_error": found.is_error,
                "status": status.structured_content,
            }


def _run(tmp_path: Path, modern: bool) -> dict[str, Any]:
    with mediawiki() as wiki:
        config = tmp_path / "c.toml"
        config.write_text(tutorial_1_config(wiki["base_url"]))

        async def go() -> dict[str, Any]:
            with anyio.fail_after(60):
                return await _session(config, modern)

        return anyio.run(go)


def test_req_mcp_001_req_mcp_006_sdk_client_current_revision(tmp_path: Path) -> None:
    got = _run(tmp_path, modern=True)
    assert got["version"] == "2026-07-28"
    assert got["tools"] == ["web_search", "web_fetch", "engine_status"]
    assert got["search_error"] is False and got["search"]["outcome"] == "ok"
    assert len(got["search"]["results"]) == 2
    assert got["status"]["engines"][0]["id"] == "wikipedia"


def test_req_test_009_sdk_client_handshake_revision(tmp_path: Path) -> None:
    got = _run(tmp_path, modern=False)
    assert got["version"] != "2026-07-28"
    assert got["tools"] == ["web_search", "web_fetch", "engine_status"]
    assert got["search"]["outcome"] == "ok"
