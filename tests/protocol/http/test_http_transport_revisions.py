"""Streamable HTTP only: the HTTP+SSE transport of revision 2024-11-05 is not offered
(REQ-MCP-003).

That transport had two endpoints. A GET on an event-stream path (/sse in the SDK's own
example, mcp/server/sse.py) kept a stream open whose first event, `endpoint`, named a
message path; the client then POSTed its messages to that path (/messages/?session_id=
<hex>) and read the answers on the stream. For rypsok both are paths other than /mcp,
which the book's status table gives a 404 from the gate (counted as not_found, not
logged). A client that tries the old transport after a refused POST does a GET on the
server URL itself; on /mcp that GET must not open a stream either.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from tests.support.http_harness import (
    ACCEPT_BOTH,
    TOKEN_A,
    Reply,
    Served,
    config_text,
    post,
    served,
)

# Where servers of the old transport put their two endpoints: the SDK's example paths,
# and the same under the Streamable HTTP path.
SSE_PATHS = ["/sse", "/sse/", "/mcp/sse"]
MESSAGE_PATHS = ["/messages/", "/messages", "/mcp/messages/"]
# Short: an answer of the gate is complete at once; an opened stream would only go quiet.
QUIET_S = 2.0


def _stream_headers(token: str | None = None) -> dict[str, str]:
    """A GET as a 2024-11-05 client sends it: no protocol headers, no session."""
    headers = {"Host": "127.0.0.1", "Accept": "text/event-stream", "Cache-Control": "no-cache"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return headers


def _message_headers(token: str | None = None) -> dict[str, str]:
    headers = {"Host": "127.0.0.1", "Content-Type": "application/json", "Accept": ACCEPT_BOTH}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return headers


def _initialize(version: str = "2024-11-05") -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "old-client", "version": "0"},
        },
    }


def _no_stream(reply: Reply) -> None:
    assert not reply.headers.get("content-type", "").startswith("text/event-stream")
    assert b"event: endpoint" not in reply.raw
    assert b"session_id=" not in reply.raw


def _gate_404(reply: Reply) -> None:
    assert reply.status == 404
    assert reply.headers["connection"] == "close"  # the gate's own answers close
    _no_stream(reply)


@pytest.fixture
def local(tmp_path: Path):  # type: ignore[no-untyped-def]
    with served(tmp_path, config_text()) as server:
        yield server


def test_req_mcp_003_no_event_stream_on_the_old_sse_paths(local: Served) -> None:
    for path in SSE_PATHS:
        _gate_404(
            post(local.port, None, _stream_headers(), method="GET", path=path, timeout=QUIET_S)
        )
    # The gate's own 404: counted, not logged, and the SDK never saw the requests.
    assert local.refusals() == {"not_found": len(SSE_PATHS)}
    assert not local.events("http_refused")


def test_req_mcp_003_no_message_endpoint_even_for_a_live_session_id(local: Served) -> None:
    # A session of a handshake revision exists, so a message path that looked sessions up
    # would find this id (the SDK's ids are uuid4 hex, the old transport's format too).
    opened = post(local.port, _initialize(), _message_headers())
    assert opened.status == 200
    live = opened.headers["mcp-session-id"]
    assert uuid.UUID(hex=live).hex == live
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "engine_status", "arguments": {}},
    }
    sent = 0
    for path in MESSAGE_PATHS:
        for session_id in (live, uuid.uuid4().hex):
            reply = post(
                local.port, call, _message_headers(), path=f"{path}?session_id={session_id}"
            )
            _gate_404(reply)  # the old transport: 202, the answer sent on the stream
            sent += 1
        _gate_404(post(local.port, _initialize(), _message_headers(), path=path))
        sent += 1
    assert local.refusals() == {"not_found": sent}
    assert not local.events("call")  # nothing was handed to a tool


def test_req_mcp_003_a_get_on_the_endpoint_opens_no_stream_without_a_session(
    local: Served,
) -> None:
    # The fallback of an old client: its POST was refused, so it GETs the server URL and
    # waits for an `endpoint` event. Without a session of a handshake revision there is
    # no stream to open; the book's table names no status for this GET, so only its class.
    reply = post(local.port, None, _stream_headers(), method="GET", path="/mcp", timeout=QUIET_S)
    assert 400 <= reply.status < 500
    _no_stream(reply)
    assert not local.events("call")


def test_req_mcp_003_an_authenticated_caller_gets_no_old_transport_either(tmp_path: Path) -> None:
    with served(tmp_path, config_text(callers=True)) as server:
        for token in (TOKEN_A, None):  # the path decides before the token (404 before 401)
            for path in SSE_PATHS:
                _gate_404(
                    post(
                        server.port,
                        None,
                        _stream_headers(token),
                        method="GET",
                        path=path,
                        timeout=QUIET_S,
                    )
                )
            for path in MESSAGE_PATHS:
                target = f"{path}?session_id={uuid.uuid4().hex}"
                _gate_404(post(server.port, _initialize(), _message_headers(token), path=target))
        assert server.refusals() == {"not_found": 2 * (len(SSE_PATHS) + len(MESSAGE_PATHS))}
        assert not server.events("http_refused")
