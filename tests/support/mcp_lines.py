"""Helpers that write MCP messages as a host would, one JSON object per line."""

from __future__ import annotations

import json
from typing import Any

REVISION = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": REVISION,
    "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def request(
    request_id: int, method: str, params: dict[str, Any] | None = None, modern: bool = True
) -> dict[str, Any]:
    body = dict(params or {})
    if modern:
        body["_meta"] = META
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": body}


def call(
    request_id: int, name: str, arguments: dict[str, Any] | None = None, modern: bool = True
) -> dict[str, Any]:
    return request(request_id, "tools/call", {"name": name, "arguments": arguments or {}}, modern)


def lines(*messages: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(m).encode() + b"\n" for m in messages)


def answers(stdout: str) -> dict[Any, dict[str, Any]]:
    out: dict[Any, dict[str, Any]] = {}
    for line in stdout.splitlines():
        message = json.loads(line)
        out[message.get("id")] = message
    return out


HANDSHAKE = [
    {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "tests", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
]
