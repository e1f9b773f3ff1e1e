"""Raw HTTP/1.1 exchanges with the listener, and what an answer says.

Raw sockets rather than an HTTP library, so that a request can be written a byte
at a time, stopped halfway, or never written at all, and so that nothing between
the soak and the server retries, pools or times out on its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass
from typing import Any

MODERN = "2026-07-28"
ACCEPT_BOTH = "application/json, text/event-stream"
CLIENT_INFO = {"name": "rypsok-soak", "version": "1"}
# From 2025-06-18 on, a request of a handshake session repeats its revision in a header.
HEADER_FROM = "2025-06-18"


class Gone(Exception):
    """The connection ended before a whole response; kind is what the report counts."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


@dataclass(frozen=True, slots=True)
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes


def _http(method: str, port: int, headers: list[tuple[str, str]], body: bytes) -> bytes:
    lines = [f"{method} /mcp HTTP/1.1", f"Host: 127.0.0.1:{port}"]
    lines += [f"{name}: {value}" for name, value in headers]
    if method == "POST":
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def _auth(token: str | None) -> list[tuple[str, str]]:
    return [] if token is None else [("Authorization", f"Bearer {token}")]


def modern(
    port: int,
    token: str | None,
    request_id: int,
    method: str,
    params: dict[str, Any],
    name: str | None = None,
) -> bytes:
    """A request of the stateless revision: headers and _meta."""
    body = dict(params)
    body["_meta"] = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    data = json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": method, "params": body},
        separators=(",", ":"),
    ).encode()
    headers = [
        ("Content-Type", "application/json"),
        ("Accept", ACCEPT_BOTH),
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", method),
    ]
    if name is not None:
        headers.append(("Mcp-Name", name))
    return _http("POST", port, headers + _auth(token), data)


def modern_call(
    port: int, token: str | None, request_id: int, tool: str, arguments: dict[str, Any]
) -> bytes:
    return modern(
        port, token, request_id, "tools/call", {"name": tool, "arguments": arguments}, tool
    )


def legacy(
    port: int,
    token: str | None,
    message: dict[str, Any] | None,
    session: str | None,
    version: str | None,
    method: str = "POST",
) -> bytes:
    """A request of a handshake-based revision (a session once initialize is done)."""
    headers = [("Content-Type", "application/json"), ("Accept", ACCEPT_BOTH)]
    if session is not None:
        headers.append(("Mcp-Session-Id", session))
    if version is not None and version >= HEADER_FROM:
        headers.append(("MCP-Protocol-Version", version))
    data = b"" if message is None else json.dumps(message, separators=(",", ":")).encode()
    return _http(method, port, headers + _auth(token), data)


def initialize(request_id: int, version: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": CLIENT_INFO},
    }


class Connection:
    """One HTTP/1.1 connection, opened on first use and again after the server closed it."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        if self.writer is None:
            try:
                self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
            except OSError as exc:
                raise Gone(f"connect failed: {type(exc).__name__}") from None

    async def close(self) -> None:
        writer, self.reader, self.writer = self.writer, None, None
        if writer is not None:
            writer.close()
            with contextlib.suppress(OSError, asyncio.CancelledError, TimeoutError):
                await asyncio.wait_for(writer.wait_closed(), 2.0)

    async def write(self, data: bytes, spread_s: float = 0.0) -> None:
        """All of data at once, or spread over spread_s a byte at a time (a slow client).

        The bytes keep to a schedule rather than to fixed pauses, so that a late wake-up
        of this process sends the bytes that are due together instead of stretching
        the request: how long a slow request takes is the soak's choice, not its lag.
        """
        await self.open()
        assert self.writer is not None
        try:
            if not spread_s:
                self.writer.write(data)
                await self.writer.drain()
                return
            loop = asyncio.get_running_loop()
            began, sent, step = loop.time(), 0, spread_s / len(data)
            while sent < len(data):
                due = min(len(data), max(sent + 1, int((loop.time() - began) / step) + 1))
                self.writer.write(data[sent:due])
                await self.writer.drain()
                sent = due
                await asyncio.sleep(step)
        except OSError:
            await self.close()
            raise Gone("closed while the request was written") from None

    async def read_reply(self) -> Reply:
        assert self.reader is not None
        try:
            head = await self.reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, OSError):
            await self.close()
            raise Gone("closed without a response") from None
        status, headers = _head(head)
        try:
            body = await self._body(headers)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, OSError, ValueError):
            await self.close()
            raise Gone("response cut short") from None
        if headers.get("connection", "").lower() == "close":
            await self.close()
        return Reply(status, headers, body)

    async def _body(self, headers: dict[str, str]) -> bytes:
        assert self.reader is not None
        if headers.get("transfer-encoding", "").lower() == "chunked":
            out = bytearray()
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
                if size == 0:
                    while (await self.reader.readuntil(b"\r\n")) != b"\r\n":
                        pass  # trailers, none expected
                    return bytes(out)
                out += await self.reader.readexactly(size + 2)
                del out[-2:]
        if "content-length" in headers:
            return await self.reader.readexactly(int(headers["content-length"]))
        return await self.reader.read()  # delimited by the close


def _head(head: bytes) -> tuple[int, dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split()
    status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    return status, headers


# -- what an answer says ---------------------------------------------------------------------


def messages(reply: Reply) -> list[Any]:
    """The JSON-RPC messages of a reply: one JSON body, or the data of each SSE event."""
    if not reply.headers.get("content-type", "").startswith("text/event-stream"):
        with contextlib.suppress(ValueError):
            return [json.loads(reply.body)]
        return []
    found, data = [], []
    for line in [*reply.body.decode("utf-8", "replace").splitlines(), ""]:
        if line.startswith("data:"):
            data.append(line[5:].lstrip(" "))
        elif not line and data:
            with contextlib.suppress(ValueError):
                found.append(json.loads("\n".join(data)))
            data = []
    return found


def outcome(reply: Reply, request_id: int | None) -> str:
    """One label: an HTTP status, a JSON-RPC error, a tool error's kind and reason,
    or the response's own outcome. Labels come from rypsok's fixed vocabularies."""
    if reply.status == 202:
        return "accepted"
    if reply.status != 200 or request_id is None:
        return f"http {reply.status}"  # a notification or a DELETE has no JSON-RPC answer
    mine = [m for m in messages(reply) if isinstance(m, dict) and m.get("id") == request_id]
    if not mine:
        return "200 without the response"
    message = mine[-1]
    if "error" in message:
        error = message["error"]
        return f"jsonrpc error {error.get('code') if isinstance(error, dict) else '?'}"
    result = message.get("result")
    if not isinstance(result, dict):
        return "result missing"
    structured = result.get("structuredContent")
    if not isinstance(structured, dict):
        structured = {}
    if result.get("isError"):
        error = structured.get("error") or {}
        detail = error.get("detail") or {}
        reason = detail.get("reason") if isinstance(detail, dict) else None
        return f"error: {error.get('kind', '?')}" + (f" ({reason})" if reason else "")
    label = structured.get("outcome")
    return str(label) if label else "result"
