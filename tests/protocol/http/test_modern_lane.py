"""The lane of protocol/http/modern.py answers a stateless-revision call exactly as the
pinned SDK's own entry does (issue 17: the same answers, without its transport's cost).

Each request goes once through the SDK's session manager and once through the lane,
as ASGI messages, and the two lists are compared whole: status, headers and bytes. A
request the SDK refuses is one the lane leaves to it. Then the same through the
listener: a call over a socket is served by the lane and its bytes are the SDK's.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.server import Server
from mcp.server import _streamable_http_modern as sdk_modern
from mcp.server.context import ServerRequestContext

from rypsok.core.config import load
from rypsok.core.facade import Rypsok
from rypsok.protocol.http.asgi import build_scope, normalised_headers
from rypsok.protocol.http.modern import ModernLane
from rypsok.protocol.http.sessions import SessionPool
from rypsok.protocol.server import build_server
from tests.support import lanes
from tests.support.http_harness import config_text as http_config
from tests.support.http_harness import (
    exchange,
    modern_headers,
    request_bytes,
    served,
    tool_call,
)
from tests.support.run import clean_env

MODERN = "2026-07-28"
Messages = list[dict[str, Any]]


def _envelope(method: str, params: dict[str, Any], request_id: Any = 7) -> dict[str, Any]:
    params = dict(params)
    params.setdefault(
        "_meta",
        {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientInfo": {"name": "probe", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {},
        },
    )
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def _call(name: str, arguments: Any = None, **extra: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    params.update(extra)
    return _envelope("tools/call", params)


def _scope(body: bytes, name: str | None, **extra: bytes) -> dict[str, Any]:
    head = [
        (b"host", b"127.0.0.1"),
        (b"content-type", b"application/json"),
        (b"accept", b"application/json, text/event-stream"),
        (b"mcp-protocol-version", MODERN.encode()),
        (b"mcp-method", b"tools/call"),
        (b"content-length", b"%d" % len(body)),
    ]
    if name is not None:
        head.append((b"mcp-name", name.encode()))
    head += [(k.replace("_", "-").encode(), v) for k, v in extra.items()]
    return build_scope(
        b"POST",
        b"/mcp",
        normalised_headers(head, True),
        ("127.0.0.1", 1),
        ("127.0.0.1", 2),
        b"1.1",
    )


@contextlib.asynccontextmanager
async def _running(server: Server[Any]) -> AsyncIterator[Any]:
    pool = SessionPool(4, hooked=True)
    pool.add("local", server, 1 << 20)
    async with pool.running() as managers:
        yield managers["local"]


async def _through_sdk(manager: Any, scope: dict[str, Any], body: bytes) -> Messages:
    out: Messages = []
    pending = [body]
    never = anyio.Event()

    async def receive() -> dict[str, Any]:
        if pending:
            return {"type": "http.request", "body": pending.pop(), "more_body": False}
        await never.wait()
        return {"type": "http.disconnect"}  # pragma: no cover

    async def send(message: dict[str, Any]) -> None:
        out.append(message)

    await manager.handle_request(dict(scope), receive, send)
    return out


async def _through_lane(
    manager: Any,
    scope: dict[str, Any],
    body: bytes,
    watch: Callable[[anyio.CancelScope], None] = lambda scope: None,
) -> Messages | None:
    lane = ModernLane(manager)
    prepared = await lane.prepare(dict(scope), json.loads(body))
    if prepared is None:
        return None
    out: Messages = []

    async def send(message: dict[str, Any]) -> None:
        out.append(message)

    await lane.serve(prepared, send, watch)
    return out


def _rypsok_server() -> Server[Any]:
    core = Rypsok.from_config(load(None, clean_env()))
    return build_server(core, "local", legacy_revisions=False)


def _both(
    server: Server[Any], message: dict[str, Any], name: str | None, **extra: bytes
) -> tuple[Messages, Messages | None]:
    """The request through the SDK, then through the lane (None: the lane left it)."""
    body = json.dumps(message).encode()

    async def main() -> tuple[Messages, Messages | None]:
        async with _running(server) as manager:
            scope = _scope(body, name, **extra)
            by_sdk = await _through_sdk(manager, scope, body)
            return by_sdk, await _through_lane(manager, scope, body)

    return anyio.run(main)


# Served by the lane: the answer of each is compared with the SDK's, byte for byte.
SERVED: dict[str, tuple[dict[str, Any], str | None]] = {
    "engine_status": (_call("engine_status", {}), "engine_status"),
    "no arguments at all": (_call("engine_status"), "engine_status"),
    "a tool error": (_call("web_fetch", {"url": "ftp://example.com/"}), "web_fetch"),
    "an argument the schema refuses": (_call("web_search", {"query": 5}), "web_search"),
    "an unknown tool": (_call("no_such_tool", {}), "no_such_tool"),
    "arguments that are not an object": (_call("engine_status", [1]), "engine_status"),
    "a string id": ({**_call("engine_status", {}), "id": "x-1"}, "engine_status"),
    "a progress token": (
        _call("engine_status", {}, _meta={**_call("x")["params"]["_meta"], "progressToken": 3}),
        "engine_status",
    ),
}

# Refused by the SDK before it dispatches: the lane leaves each to it.
LEFT: dict[str, tuple[dict[str, Any], str | None]] = {
    "a notification": (
        {k: v for k, v in _call("engine_status", {}).items() if k != "id"},
        "engine_status",
    ),
    "Mcp-Name disagreeing with the body": (_call("engine_status", {}), "web_search"),
    "Mcp-Name missing": (_call("engine_status", {}), None),
    "no client capabilities": (
        _call("engine_status", {}, _meta={"io.modelcontextprotocol/protocolVersion": MODERN}),
        "engine_status",
    ),
    "an unsupported revision in the body": (
        _call(
            "engine_status",
            {},
            _meta={
                "io.modelcontextprotocol/protocolVersion": "2099-01-01",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        ),
        "engine_status",
    ),
    "a malformed id": ({**_call("engine_status", {}), "id": [1]}, "engine_status"),
}


@pytest.mark.parametrize("case", sorted(SERVED))
def test_lane_answers_exactly_as_the_sdk_does(case: str) -> None:
    by_sdk, by_lane = _both(_rypsok_server(), *SERVED[case])
    assert by_lane is not None, "the lane left a request it should serve"
    assert by_lane == by_sdk
    assert by_sdk[0]["type"] == "http.response.start"


@pytest.mark.parametrize("case", sorted(LEFT))
def test_lane_leaves_what_the_sdk_refuses_to_the_sdk(case: str) -> None:
    by_sdk, by_lane = _both(_rypsok_server(), *LEFT[case])
    assert by_lane is None
    assert by_sdk[0]["status"] in (202, 400)


def test_lane_leaves_a_mismatched_mcp_param_header_to_the_sdk() -> None:
    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        schema = {
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
        }
        return types.ListToolsResult(tools=[types.Tool(name="t", input_schema=schema)])

    async def call_tool(ctx: Any, params: Any) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(type="text", text="ok")])

    def server() -> Server[Any]:
        return Server("p", on_list_tools=list_tools, on_call_tool=call_tool)

    message = _call("t", {"region": "eu"})
    agreeing_sdk, agreeing_lane = _both(server(), message, "t", mcp_param_region=b"eu")
    mismatched_sdk, mismatched_lane = _both(server(), message, "t", mcp_param_region=b"us")
    assert agreeing_lane == agreeing_sdk and agreeing_sdk[0]["status"] == 200
    assert mismatched_lane is None and mismatched_sdk[0]["status"] == 400


def _notifying_server(pause_s: float, notify: bool) -> Server[Any]:
    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[types.Tool(name="slow", input_schema={"type": "object"})]
        )

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if notify:
            await ctx.session.report_progress(0.5, 1.0, "half")
        await anyio.sleep(pause_s)
        return types.CallToolResult(content=[types.TextContent(type="text", text="done")])

    return Server("n", on_list_tools=list_tools, on_call_tool=call_tool)


def _with_progress_token() -> dict[str, Any]:
    meta = {**_call("x")["params"]["_meta"], "progressToken": "p1"}
    return _call("slow", {}, _meta=meta)


def test_lane_turns_to_an_event_stream_at_a_notification_as_the_sdk_does() -> None:
    by_sdk, by_lane = _both(_notifying_server(0.05, notify=True), _with_progress_token(), "slow")
    assert by_lane == by_sdk
    assert (b"content-type", b"text/event-stream") in by_sdk[0]["headers"]
    assert b"notifications/progress" in by_sdk[1]["body"]
    assert b'"done"' in by_sdk[-1]["body"] and by_sdk[-1]["more_body"] is False


def test_lane_keeps_a_silent_call_alive_with_pings_as_the_sdk_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The lane reads the SDK's own interval at each call (protocol/sdk_private.py).
    monkeypatch.setattr(sdk_modern, "_SSE_PING_INTERVAL", 0.1)
    by_sdk, by_lane = _both(_notifying_server(0.45, notify=False), _call("slow", {}), "slow")
    assert by_lane is not None
    for got in (by_sdk, by_lane):
        assert got[0] == by_sdk[0] and (b"content-type", b"text/event-stream") in got[0]["headers"]
        pings = got[1:-1]
        assert len(pings) >= 3
        assert all(p["body"] == b": ping\r\n\r\n" and p["more_body"] for p in pings)
    assert by_lane[-1] == by_sdk[-1]


def test_lane_ends_a_call_with_no_answer_once_the_client_has_left() -> None:
    body = json.dumps(_call("slow", {})).encode()
    left_after_s = 0.1

    async def main() -> tuple[Messages | None, float]:
        async with _running(_notifying_server(30, notify=False)) as manager:

            def watch(call: anyio.CancelScope) -> None:
                # The connection's part: the client goes away shortly after.
                asyncio.get_running_loop().call_later(left_after_s, call.cancel)

            started = anyio.current_time()
            got = await _through_lane(manager, _scope(body, "slow"), body, watch)
            return got, anyio.current_time() - started

    got, took = anyio.run(main)
    assert got == []
    assert took < 5


# ------------------------------------------------------------------ over a socket


def test_listener_serves_a_modern_call_through_the_lane_with_the_sdks_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    served_by_lane: list[int] = []
    serve = ModernLane.serve

    async def counted(self: ModernLane, *args: Any) -> None:
        served_by_lane.append(1)
        await serve(self, *args)

    monkeypatch.setattr(ModernLane, "serve", counted)
    monkeypatch.setenv(lanes.VARIABLE, "true")  # this test is the lane's, whatever the run's
    data = request_bytes(tool_call("engine_status", request_id=3), modern_headers())
    with served(tmp_path, http_config(), clean_env()) as server:
        through_lane = exchange(server.port, data)
        assert served_by_lane == [1]

        async def declined(self: ModernLane, scope: Any, decoded: Any) -> None:
            return None

        monkeypatch.setattr(ModernLane, "prepare", declined)
        through_sdk = exchange(server.port, data)
        assert served_by_lane == [1]
    assert through_lane.startswith(b"HTTP/1.1 200 ")
    assert through_lane == through_sdk
