"""The listener's two ways to serve (rypsok/protocol/sdk_private.py): the fast lane with
the session hooks, and the SDK's public path, taken when [service.http] fast_lane is
off or the installed SDK is not the one the hooks were read in. The answers are the
same bytes either way; the lane leans on the gate's checks, so a request the gate
refuses never reaches it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from rypsok.protocol import sdk_private
from rypsok.protocol.http.modern import ModernLane
from tests.support import lanes
from tests.support.http_harness import (
    LEGACY,
    MODERN,
    Served,
    config_text,
    envelope,
    exchange,
    legacy_initialize,
    modern_headers,
    parse,
    request_bytes,
    served,
    tool_call,
)
from tests.support.run import clean_env

SESSION_ID = re.compile(rb"(?im)^(mcp-session-id: )[0-9a-f]+\r$")


def _handshake_headers(session: str | None = None) -> dict[str, str]:
    headers = {
        "Host": "127.0.0.1",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    if session is not None:
        headers.update({"Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY})
    return headers


@pytest.fixture
def lane_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every request the lane is asked to look at, by the method of its body."""
    seen: list[str] = []
    prepare = ModernLane.prepare

    async def counted(self: ModernLane, scope: Any, decoded: dict[str, Any]) -> Any:
        seen.append(str(decoded.get("method")))
        return await prepare(self, scope, decoded)

    monkeypatch.setattr(ModernLane, "prepare", counted)
    return seen


def _conversation(server: Served) -> list[bytes]:
    """The raw answers to a conversation of both revisions, with the session bound
    reached and a slot freed; session ids masked, since each is new."""
    out: list[bytes] = []

    def send(data: bytes) -> bytes:
        raw = exchange(server.port, data)
        out.append(SESSION_ID.sub(rb"\1<session>\r", raw))
        return raw

    send(request_bytes(tool_call("engine_status", request_id=1), modern_headers()))
    send(request_bytes(tool_call("nope", request_id=2), modern_headers(name="nope")))
    send(
        request_bytes(
            tool_call("web_fetch", {"url": "ftp://example.com/"}, request_id="x-3"),
            modern_headers(name="web_fetch"),
        )
    )
    send(
        request_bytes(
            tool_call("web_search", {"query": 5}, request_id=4), modern_headers(name="web_search")
        )
    )
    send(
        request_bytes(
            envelope("server/discover", request_id=5),
            modern_headers(method="server/discover", name=None),
        )
    )
    send(request_bytes(envelope("tools/list", request_id=6), modern_headers("tools/list", None)))
    send(request_bytes(None, modern_headers(), method="GET"))
    opened = parse(send(request_bytes(legacy_initialize(7), _handshake_headers())))
    session = opened.headers["mcp-session-id"]
    within = _handshake_headers(session)
    send(request_bytes({"jsonrpc": "2.0", "method": "notifications/initialized"}, within))
    send(request_bytes({"jsonrpc": "2.0", "id": 8, "method": "tools/list"}, within))
    call = {"jsonrpc": "2.0", "id": 9, "method": "tools/call"}
    send(request_bytes({**call, "params": {"name": "engine_status", "arguments": {}}}, within))
    send(request_bytes({**call, "id": 10, "params": {"name": "nope", "arguments": {}}}, within))
    send(request_bytes(legacy_initialize(11), _handshake_headers()))  # the bound (1) is full
    send(request_bytes(None, within, method="DELETE"))
    send(request_bytes({"jsonrpc": "2.0", "id": 12, "method": "tools/list"}, within))  # gone
    send(request_bytes(legacy_initialize(13), _handshake_headers()))  # the slot is free again
    return out


def test_lane_off_answers_every_request_with_the_same_bytes_as_lane_on(
    tmp_path: Path, lane_calls: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    answers: dict[str, list[bytes]] = {}
    for mode in lanes.MODES:
        monkeypatch.setenv(lanes.VARIABLE, "true" if mode == "lane" else "false")
        (tmp_path / mode).mkdir()
        with served(tmp_path / mode, config_text("max_sessions = 1"), clean_env()) as server:
            assert server.listener.fast_lane is (mode == "lane")
            answers[mode] = _conversation(server)
        if mode == "lane":
            assert lane_calls.count("tools/call") == 4  # the stateless calls took the lane
            lane_calls.clear()
    assert lane_calls == []  # with the lane off, nothing looks at it
    statuses = [parse(raw).status for raw in answers["lane"]]
    stateless = [200, 200, 200, 200, 200, 200, 405]
    sessions = [200, 202, 200, 200, 200, 503, 200, 404, 200]
    assert statuses == stateless + sessions
    for lane, public in zip(answers["lane"], answers["public"], strict=True):
        assert public == lane


# ------------------------------------------------------------------ the gate first

REFUSED_BY_THE_GATE = {
    "a foreign Host": ({"Host": "evil.example"}, 403),
    "an Origin not listed": ({"Origin": "https://evil.example"}, 403),
    "Accept without event streams": ({"Accept": "application/json"}, 406),
    "Accept without JSON": ({"Accept": "text/event-stream"}, 406),
    "a body that is not JSON by its type": ({"Content-Type": "text/plain"}, 415),
}


@pytest.mark.parametrize("case", sorted(REFUSED_BY_THE_GATE))
def test_a_call_the_gate_refuses_never_reaches_the_lane_that_would_take_it(
    tmp_path: Path, lane_calls: list[str], monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    # The lane checks none of these itself (modern.py's docstring): given the same
    # request as an ASGI scope, it would serve it.
    monkeypatch.setenv(lanes.VARIABLE, "true")
    changed, status = REFUSED_BY_THE_GATE[case]
    message = tool_call("engine_status", request_id=1)
    with served(tmp_path, config_text(), clean_env()) as server:
        refused = parse(exchange(server.port, request_bytes(message, modern_headers(**changed))))
        assert refused.status == status
        assert lane_calls == []
        answered = parse(exchange(server.port, request_bytes(message, modern_headers())))
        assert answered.status == 200
        assert lane_calls == ["tools/call"]  # the same call, admitted, takes the lane


def test_the_lane_itself_would_serve_what_the_gate_refuses() -> None:
    import anyio

    from rypsok.core.config import load
    from rypsok.core.facade import Rypsok
    from rypsok.protocol.http.asgi import build_scope
    from rypsok.protocol.http.sessions import SessionPool
    from rypsok.protocol.server import build_server

    message = tool_call("engine_status", request_id=1)
    head = [
        (b"host", b"evil.example"),
        (b"origin", b"https://evil.example"),
        (b"accept", b"application/json, text/event-stream"),
        (b"content-type", b"application/json"),
        (b"mcp-protocol-version", MODERN.encode()),
        (b"mcp-method", b"tools/call"),
        (b"mcp-name", b"engine_status"),
    ]
    scope = build_scope(b"POST", b"/mcp", head, ("127.0.0.1", 1), ("127.0.0.1", 2), b"1.1")

    async def main() -> bool:
        pool = SessionPool(1, hooked=True)
        core = Rypsok.from_config(load(None, clean_env()))
        pool.add("local", build_server(core, "local", legacy_revisions=False), 1 << 16)
        async with pool.running() as managers:
            return await ModernLane(managers["local"]).prepare(scope, message) is not None

    assert anyio.run(main)


# ---------------------------------------------------------- the SDK's version


def test_with_another_sdk_version_the_public_path_serves_and_start_says_so_once(
    tmp_path: Path, lane_calls: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sdk_private, "AVAILABLE", False)
    monkeypatch.setattr(sdk_private, "UNAVAILABLE", "mcp 9.9.9 is installed")
    monkeypatch.setenv(lanes.VARIABLE, "true")  # the operator leaves the lane on
    with served(tmp_path, config_text("max_sessions = 1"), clean_env()) as server:
        assert server.listener.fast_lane is False
        call = request_bytes(tool_call("engine_status"), modern_headers())
        assert parse(exchange(server.port, call)).status == 200
        assert lane_calls == []
        opening = request_bytes(legacy_initialize(1), _handshake_headers())
        assert parse(exchange(server.port, opening)).status == 200
        assert parse(exchange(server.port, opening)).status == 503  # the bound still holds
        warned = server.events("sdk_hooks_unavailable")
    assert len(warned) == 1
    assert warned[0]["level"] == "warn" and warned[0]["pinned"] == sdk_private.PINNED
    assert "mcp 9.9.9 is installed" in warned[0]["message"]
    assert [e["event"] for e in server.events()].index("sdk_hooks_unavailable") < [
        e["event"] for e in server.events()
    ].index("listening")
