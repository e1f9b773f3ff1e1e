"""rypsok/protocol/http/session_ledger.py: the sessions of the public path, counted by the SDK's
own rules from the requests and answers that pass, and a cancelled call's -32800
dropped; at the bound, the public path answers a handshake that raced past the gate
as the hooked one does."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest

from rypsok.core.config import load
from rypsok.core.facade import Rypsok
from rypsok.protocol.http.asgi import Message, build_scope, normalised_headers
from rypsok.protocol.http.session_ledger import SessionLedger, is_cancelled_event
from rypsok.protocol.http.sessions import SessionPool
from rypsok.protocol.server import build_server
from tests.support.run import clean_env

EXPIRY_S = 0.2
LEGACY = b"2025-11-25"


def _scope(method: bytes = b"POST", **headers: bytes) -> Message:
    head = [(k.replace("_", "-").encode(), v) for k, v in headers.items()]
    return build_scope(method, b"/mcp", head, ("127.0.0.1", 1), ("127.0.0.1", 2), b"1.1")


class _Manager:
    """Stands for a caller's session manager: answers with the status and session id
    it is told, and holds a request open until `release` is set."""

    def __init__(self) -> None:
        self.status = 200
        self.session: bytes | None = b"s1"
        self.release: anyio.Event | None = None
        self.live_seen: list[int] = []

    async def __call__(self, scope: Message, receive: Any, send: Any) -> None:
        if self.release is not None:
            await self.release.wait()
        headers = [(b"content-type", b"application/json")]
        if self.session is not None:
            headers.append((b"mcp-session-id", self.session))
        await send({"type": "http.response.start", "status": self.status, "headers": headers})
        await send({"type": "http.response.body", "body": b"{}", "more_body": False})


async def _send_nowhere(message: Message) -> None:
    pass


async def _never() -> Message:  # pragma: no cover - the stand-in never reads
    return {"type": "http.disconnect"}


def _run(test: Callable[[SessionLedger, _Manager], Awaitable[None]]) -> None:
    async def main() -> None:
        await test(SessionLedger(lambda: EXPIRY_S), _Manager())

    anyio.run(main)


def test_an_opening_counts_from_its_admission_and_stays_when_answered() -> None:
    async def test(ledger: SessionLedger, manager: _Manager) -> None:
        app = ledger.tracking("a", manager, lambda: False)
        manager.release = anyio.Event()
        async with anyio.create_task_group() as group:
            group.start_soon(app, _scope(), _never, _send_nowhere)
            await anyio.sleep(0.01)
            assert ledger.live() == 1  # admitted, not yet answered
            manager.release.set()
        assert ledger.live() == 1
        manager.release, manager.status, manager.session = None, 400, b"s2"
        await app(_scope(), _never, _send_nowhere)
        assert ledger.live() == 1  # a refused opening opened nothing

    _run(test)


@pytest.mark.parametrize(
    ("method", "status", "ended"),
    [(b"DELETE", 200, True), (b"POST", 404, True), (b"POST", 200, False), (b"DELETE", 400, False)],
)
def test_a_session_ends_with_a_delete_or_a_404(method: bytes, status: int, ended: bool) -> None:
    async def test(ledger: SessionLedger, manager: _Manager) -> None:
        app = ledger.tracking("a", manager, lambda: False)
        await app(_scope(), _never, _send_nowhere)
        manager.status = status
        await app(
            _scope(method, mcp_session_id=b"s1", mcp_protocol_version=LEGACY), _never, _send_nowhere
        )
        assert ledger.live() == (0 if ended else 1)

    _run(test)


def test_a_session_expires_only_after_the_expiry_without_a_request_in_flight() -> None:
    async def test(ledger: SessionLedger, manager: _Manager) -> None:
        app = ledger.tracking("a", manager, lambda: False)
        await app(_scope(), _never, _send_nowhere)
        manager.release = anyio.Event()
        within = _scope(b"GET", mcp_session_id=b"s1", mcp_protocol_version=LEGACY)
        async with anyio.create_task_group() as group:
            group.start_soon(app, within, _never, _send_nowhere)  # an open stream
            await anyio.sleep(EXPIRY_S * 1.5)
            assert ledger.live() == 1  # held by the request in flight
            manager.release.set()
        await anyio.sleep(EXPIRY_S / 2)
        assert ledger.live() == 1  # the expiry counts from the request's end
        await anyio.sleep(EXPIRY_S)
        assert ledger.live() == 0

    _run(test)


def test_sessions_are_the_callers_own_and_the_stateless_revision_has_none() -> None:
    async def test(ledger: SessionLedger, manager: _Manager) -> None:
        a = ledger.tracking("a", manager, lambda: False)
        b = ledger.tracking("b", manager, lambda: False)
        await a(_scope(), _never, _send_nowhere)
        manager.status = 404  # caller b names a's session: unknown to b's manager
        await b(_scope(mcp_session_id=b"s1", mcp_protocol_version=LEGACY), _never, _send_nowhere)
        assert ledger.live() == 1
        manager.status = 200
        await a(_scope(mcp_protocol_version=b"2026-07-28"), _never, _send_nowhere)
        assert ledger.live() == 1

    _run(test)


def test_a_cancelled_calls_event_is_dropped_and_nothing_else() -> None:
    cancelled = {
        "jsonrpc": "2.0",
        "id": 4,
        "error": {"code": -32800, "message": "Request cancelled"},
    }
    event = b"event: message\r\ndata: " + json.dumps(cancelled).encode() + b"\r\n\r\n"
    assert is_cancelled_event(event)
    answer = {"jsonrpc": "2.0", "id": 4, "result": {"content": [{"text": "-32800"}]}}
    assert not is_cancelled_event(b"event: message\r\ndata: " + json.dumps(answer).encode())
    assert not is_cancelled_event(b": ping\r\n\r\n")

    async def main() -> list[Message]:
        sent: list[Message] = []

        async def send(message: Message) -> None:
            sent.append(message)

        async def manager(scope: Message, receive: Any, send: Any) -> None:
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": event, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})

        app = SessionLedger(lambda: EXPIRY_S).tracking("a", manager, lambda: False)
        await app(_scope(mcp_session_id=b"s1", mcp_protocol_version=LEGACY), _never, send)
        return sent

    sent = anyio.run(main)
    assert [m.get("body") for m in sent] == [None, b"", b""]


# ------------------------------------------------- at the bound, both ways alike


def _initialize(request_id: int) -> bytes:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "initialize",
            "params": {
                "protocolVersion": LEGACY.decode(),
                "capabilities": {},
                "clientInfo": {"name": "probe", "version": "0"},
            },
        }
    ).encode()


async def _asgi(app: Any, body: bytes) -> list[Message]:
    head = [(b"host", b"127.0.0.1"), (b"content-length", b"%d" % len(body))]
    scope = build_scope(
        b"POST", b"/mcp", normalised_headers(head, True), ("127.0.0.1", 1), ("127.0.0.1", 2), b"1.1"
    )
    pending, out = [body], []

    async def receive() -> Message:
        if pending:
            return {"type": "http.request", "body": pending.pop(), "more_body": False}
        await anyio.sleep_forever()
        raise AssertionError  # pragma: no cover

    async def send(message: Message) -> None:
        out.append(message)

    await app(scope, receive, send)
    return out


@pytest.mark.parametrize("hooked", [True, False], ids=["hooked", "public"])
def test_a_handshake_past_the_gate_at_the_bound_gets_the_sdks_503(hooked: bool) -> None:
    async def main() -> tuple[list[Message], list[Message]]:
        pool = SessionPool(1, hooked=hooked)
        core = Rypsok.from_config(load(None, clean_env()))
        pool.add("local", build_server(core, "local", legacy_revisions=True), 1 << 16)
        async with pool.running():
            app = pool.app("local")
            first = await _asgi(app, _initialize(1))
            assert pool.full()
            return first, await _asgi(app, _initialize(2))  # as if it raced past the gate

    first, second = anyio.run(main)
    assert first[0]["status"] == 200
    assert second == [
        {
            "type": "http.response.start",
            "status": 503,
            "headers": [(b"content-length", b"86"), (b"content-type", b"application/json")],
        },
        {
            "type": "http.response.body",
            "body": b'{"jsonrpc":"2.0","id":null,"error":{"code":-32603,'
            b'"message":"Too many open sessions"}}',
        },
    ]
