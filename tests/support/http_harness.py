"""What the HTTP listener's tests share: a listener on 127.0.0.1:0 in a thread of this
process (or as `python -m rypsok serve` in a child), raw sockets, requests of the modern
revision and of the legacy handshake, and the replies read back.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel

from rypsok.core import telemetry
from rypsok.core.config import load
from rypsok.core.facade import Rypsok
from rypsok.protocol.http import HttpListener
from tests.support.lanes import http_lines
from tests.support.paths import REPO
from tests.support.run import clean_env

TOKEN_A = "a" * 24 + "-token-of-mimlys-0123456789"
TOKEN_B = "b" * 24 + "-token-of-ops-00000000000000"
MODERN = "2026-07-28"
ACCEPT_BOTH = "application/json, text/event-stream"

BASE = """config_version = 1
[service]
shutdown_ms = 1000
[service.http]
bind = "127.0.0.1:0"
idle_timeout_s = 5
request_timeout_s = 3
{http}
[fetch]
deadline_ms = 1000
connect_timeout_ms = 500
[egress]
allow = ["127.0.0.1"]
{more}
"""

CALLERS = """[[service.http.auth.callers]]
id = "mimlys"
token_env = "RYPSOK_TOKEN_MIMLYS"
[[service.http.auth.callers]]
id = "ops"
token_env = "RYPSOK_TOKEN_OPS"
"""


def config_text(http: str = "", more: str = "", callers: bool = False) -> str:
    """The harness's configuration; the lane is off while RYPSOK_TEST_FAST_LANE says so."""
    return BASE.format(http=http_lines(http), more=more + ("\n" + CALLERS if callers else ""))


def wiki_engine(base_url: str) -> str:
    return (
        '[engines.wikipedia]\ntype = "wikipedia"\ncategories = ["general"]\n'
        f'base_url = "{base_url}"\n'
    )


def caller_env() -> dict[str, str]:
    return clean_env(RYPSOK_TOKEN_MIMLYS=TOKEN_A, RYPSOK_TOKEN_OPS=TOKEN_B)


@dataclass
class Served:
    port: int
    logs: io.StringIO
    listener: HttpListener
    token: Any = None

    def events(self, name: str | None = None) -> list[dict[str, Any]]:
        found = []
        for line in self.logs.getvalue().splitlines():
            with contextlib.suppress(ValueError):
                record = json.loads(line)
                if name is None or record.get("event") == name:
                    found.append(record)
        return found

    def refusals(self) -> dict[str, int]:
        return telemetry.counters.snapshot().get("http", {}).get("refusals", {})


@contextlib.contextmanager
def served(tmp_path: Path, text: str, env: Mapping[str, str] | None = None) -> Iterator[Served]:
    """The listener in a thread of this process, its log captured."""
    path = tmp_path / "rypsok.toml"
    path.write_text(text)
    config = load(str(path), dict(env if env is not None else caller_env()))
    core = Rypsok.from_config(config)
    listener = HttpListener(core, install_signals=False)
    logs = io.StringIO()
    saved = telemetry.log._stream
    telemetry.log._stream = logs
    telemetry.counters.snapshot(reset=True)
    ready = threading.Event()
    box: dict[str, Any] = {}

    async def main() -> None:
        box["token"] = anyio.lowlevel.current_token()
        async with anyio.create_task_group() as group:
            box["port"] = await group.start(
                lambda task_status: listener.run(task_status=task_status)
            )
            ready.set()

    def thread_main() -> None:
        try:
            anyio.run(main)
        except BaseException as exc:  # pragma: no cover - shown by the test
            box["error"] = exc
            ready.set()

    thread = threading.Thread(target=thread_main, daemon=True)
    thread.start()
    assert ready.wait(30), "listener did not start"
    if "error" in box:
        raise box["error"]
    try:
        yield Served(box["port"], logs, listener, box["token"])
    finally:
        anyio.from_thread.run_sync(listener.request_stop, token=box["token"])
        thread.join(15)
        telemetry.log._stream = saved
        assert not thread.is_alive(), "listener did not stop"


# ------------------------------------------------------------------ requests


def envelope(
    method: str, params: dict[str, Any] | None = None, request_id: Any = 1
) -> dict[str, Any]:
    params = dict(params or {})
    params["_meta"] = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "probe", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def tool_call(
    name: str, arguments: dict[str, Any] | None = None, request_id: Any = 1
) -> dict[str, Any]:
    return envelope("tools/call", {"name": name, "arguments": arguments or {}}, request_id)


def modern_headers(
    method: str = "tools/call",
    name: str | None = "engine_status",
    token: str | None = None,
    **extra: str,
) -> dict[str, str]:
    headers = {
        "Host": "127.0.0.1",
        "Content-Type": "application/json",
        "Accept": ACCEPT_BOTH,
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": method,
    }
    if name is not None:
        headers["Mcp-Name"] = name
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    headers.update(extra)
    return headers


# The legacy revision's handshake, which opens a session.
LEGACY = "2025-11-25"


def legacy_initialize(request_id: int = 1) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "probe", "version": "0"},
        },
    }


def legacy_headers(token: str | None = None, **extra: str) -> dict[str, str]:
    headers = {"Host": "127.0.0.1", "Content-Type": "application/json", "Accept": ACCEPT_BOTH}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    headers.update(extra)
    return headers


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes
    raw: bytes = field(repr=False, default=b"")

    def json(self) -> Any:
        return json.loads(self.body)


def request_bytes(
    body: bytes | dict[str, Any] | None,
    headers: Mapping[str, str],
    method: str = "POST",
    path: str = "/mcp",
) -> bytes:
    data = json.dumps(body).encode() if isinstance(body, dict) else (body or b"")
    lines = [f"{method} {path} HTTP/1.1"]
    names = {k.lower() for k in headers}
    lines += [f"{k}: {v}" for k, v in headers.items()]
    if (
        "content-length" not in names
        and "transfer-encoding" not in names
        and (method == "POST" or data)
    ):
        lines.append(f"Content-Length: {len(data)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + data


def exchange(port: int, data: bytes, *, timeout: float = 10.0, half_close: bool = False) -> bytes:
    """Send bytes, read until the server closes or goes quiet for the timeout."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        with contextlib.suppress(OSError):
            sock.sendall(data)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        return read_all(sock, timeout)


def read_all(sock: socket.socket, timeout: float) -> bytes:
    sock.settimeout(timeout)
    chunks = []
    with contextlib.suppress(OSError):
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
            if _complete(b"".join(chunks)):
                break
    return b"".join(chunks)


def _complete(data: bytes) -> bool:
    """Whether *data* holds a whole response: its Content-Length, or its last chunk (an
    event stream ends with one); otherwise the read goes on until close or quiet."""
    head, sep, body = data.partition(b"\r\n\r\n")
    if not sep:
        return False
    if re.search(rb"(?im)^transfer-encoding:\s*chunked\s*$", head):
        return _last_chunk_read(body)
    match = re.search(rb"(?im)^content-length:\s*(\d+)", head)
    return match is not None and len(body) >= int(match.group(1))


def _last_chunk_read(body: bytes) -> bool:
    while True:
        size_line, sep, rest = body.partition(b"\r\n")
        if not sep:
            return False
        try:
            size = int(size_line.split(b";")[0], 16)
        except ValueError:
            return False
        if size == 0:
            return rest.startswith(b"\r\n")  # no trailers are sent
        if len(rest) < size + 2:
            return False
        body = rest[size + 2 :]


def parse(raw: bytes) -> Reply:
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1]) if lines and lines[0].startswith("HTTP/") else 0
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding") == "chunked":
        body = _unchunk(body)
    return Reply(status, headers, body, raw)


def _unchunk(data: bytes) -> bytes:
    out = bytearray()
    while data:
        size_line, _, rest = data.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            break
        out += rest[:size]
        data = rest[size + 2 :]
    return bytes(out)


def post(
    port: int,
    body: bytes | dict[str, Any] | None,
    headers: Mapping[str, str],
    method: str = "POST",
    path: str = "/mcp",
    timeout: float = 10.0,
) -> Reply:
    return parse(exchange(port, request_bytes(body, headers, method, path), timeout=timeout))


def sse_json(reply: Reply) -> Any:
    """The JSON-RPC message of a reply, whether plain JSON or one SSE event."""
    if reply.headers.get("content-type", "").startswith("text/event-stream"):
        for line in reply.body.decode().splitlines():
            if line.startswith("data:") and line[5:].strip():
                return json.loads(line[5:])
        raise AssertionError("no data in the event stream")
    return reply.json()


# ----------------------------------------------------------- a child process


@dataclass
class Child:
    proc: subprocess.Popen[bytes]
    port: int
    first_lines: list[str]

    def stop(self, timeout: float = 15) -> tuple[int, bytes, str]:
        self.proc.send_signal(signal.SIGTERM)
        out, err = self.proc.communicate(timeout=timeout)
        return self.proc.returncode, out, "\n".join(self.first_lines) + "\n" + err.decode()


@contextlib.contextmanager
def child(tmp_path: Path, text: str, env: Mapping[str, str] | None = None) -> Iterator[Child]:
    path = tmp_path / "child.toml"
    path.write_text(text)
    proc = subprocess.Popen(
        [sys.executable, "-m", "rypsok", "serve", "--transport", "http", "--config", str(path)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(env if env is not None else caller_env()),
        cwd=REPO,
    )
    lines: list[str] = []
    port = 0
    try:
        deadline = time.monotonic() + 30
        assert proc.stderr is not None
        while time.monotonic() < deadline:
            line = proc.stderr.readline().decode()
            if not line:
                break
            lines.append(line.rstrip("\n"))
            record = json.loads(line)
            if record.get("event") == "listening":
                port = int(record["address"].rsplit(":", 1)[1])
                break
        assert port, f"no listening line: {lines}"
        yield Child(proc, port, lines)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
