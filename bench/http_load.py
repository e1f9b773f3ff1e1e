"""Load benchmark of the HTTP listener: keep-alive clients calling engine_status, a bare
SDK server under uvicorn beside it, and a flood of idle connections.

Run from the repository root with the dev interpreter:

    .venv/bin/python bench/http_load.py [--seconds N] [--quick] [--only SECTION]

Section 1 starts `python -m rypsok serve --transport http` and, as the reference, a bare
low-level SDK Server with one tool served by uvicorn (Server.streamable_http_app()), both
as child processes on 127.0.0.1:0, and drives each with the same 64 keep-alive clients
(asyncio, raw sockets, one connection each) sending tools/call engine_status over the
2026-07-28 revision. Section 2 opens 1000 connections that send nothing, holds them,
and measures what 8 real clients experience against rypsok in three configurations.
It prints figures beside references and never asserts; bench/README.md says what
each figure means.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MODERN = "2026-07-28"
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0
WARMUP_S = 1.0  # load before the measured window, not counted
CLIENTS = 64
RATE_PER_MINUTE = 6000  # limits.engine_status_per_minute, the most the configuration allows
FLOOD_CONNECTIONS = 1000
FLOOD_CLIENTS = 8
FLOOD_SECONDS = 10.0
FLOOD_SETTLE_S = 3.0  # at most this long for the server to accept (or refuse) the flood
RETRY_S = 0.1  # a real client's pause before it reconnects after a failed attempt
RSS_EVERY_S = 5.0  # VmRSS samples of the server during section 1's window
GRACE_S = 2.0  # an attempt under way when the window closes may finish within this

# -- the servers ---------------------------------------------------------------------------

RYPSOK_CONFIG = """config_version = 1

[service.http]
bind = "127.0.0.1:0"
{http}
[limits]
engine_status_per_minute = {rate}
{callers}"""

CALLER = """
[[service.http.auth.callers]]
id = "bench{index:02d}"
token_env = "RYPSOK_BENCH_TOKEN_{index:02d}"
"""

# One tool, answering what rypsok's engine_status answers with the default
# configuration (the same structured content and text), so the bodies are of a size.
BARE_SERVER = """
import json
import socket
import sys

import mcp_types as types
import uvicorn
from mcp.server import Server

PAYLOAD = {"engines": [{"id": "brave", "state": "disabled", "latency_ms": None,
                        "reason": "no_credential"},
                       {"id": "wikipedia", "state": "closed", "latency_ms": None}],
           "notices": [], "outcome": "ok"}
TEXT = json.dumps(PAYLOAD, separators=(",", ":"), sort_keys=True)


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=[types.Tool(
        name="engine_status", description="Report each engine's health.",
        input_schema={"type": "object", "properties": {}})])


async def call_tool(ctx, params):
    return types.CallToolResult(content=[types.TextContent(type="text", text=TEXT)],
                                structured_content=PAYLOAD)


server = Server("bare", version="1", on_list_tools=list_tools, on_call_tool=call_tool)
app = server.streamable_http_app()
sock = socket.socket()
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
sock.bind(("127.0.0.1", 0))
sock.listen(4096)
sys.stderr.write(json.dumps({"event": "listening",
                             "address": "127.0.0.1:%d" % sock.getsockname()[1]}) + "\\n")
sys.stderr.flush()
uvicorn.Server(uvicorn.Config(app, http="h11", loop="asyncio", log_level="warning",
                              access_log=False)).run(sockets=[sock])
"""


@dataclass
class Served:
    """A server in a child process, its stderr in a file."""

    label: str
    proc: subprocess.Popen[bytes]
    port: int
    log_path: Path

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stop(self) -> int | None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(STOP_TIMEOUT_S)
        return self.proc.returncode


def tokens(count: int) -> list[str]:
    return [f"bench{i:02d}-{secrets.token_urlsafe(32)}" for i in range(count)]


def rypsok_config(callers: int, http: str = "") -> str:
    return RYPSOK_CONFIG.format(
        http=http,
        rate=RATE_PER_MINUTE,
        callers="".join(CALLER.format(index=i) for i in range(callers)),
    )


def child_env(workdir: Path, secret: Sequence[str] = ()) -> dict[str, str]:
    """No RYPSOK_CONFIG, no keys, no proxies; the callers' tokens when there are any."""
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG")}
    env["HOME"] = str(workdir)
    for i, token in enumerate(secret):
        env[f"RYPSOK_BENCH_TOKEN_{i:02d}"] = token
    return env


def start(label: str, cmd: Sequence[str], env: dict[str, str], log_path: Path) -> Served:
    """Start cmd and wait for its `listening` line (the address really bound) on stderr."""
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log, env=env, cwd=REPO
        )
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        for line in log_path.read_text(encoding="utf-8", errors="replace").splitlines():
            with contextlib.suppress(ValueError):
                record = json.loads(line)
                if isinstance(record, dict) and record.get("event") == "listening":
                    port = int(str(record["address"]).rsplit(":", 1)[1])
                    return Served(label, proc, port, log_path)
        if proc.poll() is not None:
            break
        time.sleep(0.02)
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    tail = log_path.read_text(encoding="utf-8", errors="replace")[-600:]
    raise SystemExit(f"bench: {label} did not report `listening`: {tail}")


def start_rypsok(workdir: Path, name: str, secret: Sequence[str], http: str = "") -> Served:
    path = workdir / f"{name}.toml"
    path.write_text(rypsok_config(len(secret), http), encoding="utf-8")
    return start(
        f"rypsok ({name})",
        [sys.executable, "-m", "rypsok", "serve", "--transport", "http", "--config", str(path)],
        child_env(workdir, secret),
        workdir / f"{name}.log",
    )


def start_bare(workdir: Path) -> Served:
    return start(
        "bare SDK + uvicorn",
        [sys.executable, "-c", BARE_SERVER],
        child_env(workdir),
        workdir / "bare.log",
    )


def vm_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text(encoding="ascii").splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise SystemExit("bench: no VmRSS in /proc (Linux only)")


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a live process, from /proc/<pid>/stat."""
    stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# -- the client -----------------------------------------------------------------------------


def request_bytes(port: int, token: str | None, request_id: int) -> bytes:
    """tools/call engine_status with the 2026-07-28 headers and _meta."""
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {
                "name": "engine_status",
                "arguments": {},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": MODERN,
                    "io.modelcontextprotocol/clientInfo": {
                        "name": "bench-http-load",
                        "version": "1",
                    },
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
            },
        },
        separators=(",", ":"),
    ).encode()
    lines = [
        "POST /mcp HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        f"MCP-Protocol-Version: {MODERN}",
        "Mcp-Method: tools/call",
        "Mcp-Name: engine_status",
        f"Content-Length: {len(body)}",
    ]
    if token is not None:
        lines.append(f"Authorization: Bearer {token}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


class Failed(Exception):
    """The exchange failed: the kind is what the error table counts."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


class Connection:
    """One keep-alive HTTP/1.1 connection; reconnects when the server closed it."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.opened = 0

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            with contextlib.suppress(OSError, asyncio.CancelledError):
                await self.writer.wait_closed()
        self.reader = self.writer = None

    async def call(self, data: bytes) -> bytes:
        """Send one request, read its response; the body of a 200 with a result."""
        if self.writer is None:
            try:
                self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
            except OSError as exc:
                raise Failed(f"connect: {type(exc).__name__}") from None
            self.opened += 1
        assert self.reader is not None and self.writer is not None
        try:
            self.writer.write(data)
            await self.writer.drain()
            head = await self.reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, OSError) as exc:
            await self.close()
            gone = asyncio.IncompleteReadError | ConnectionResetError | BrokenPipeError
            kind = "closed without a response" if isinstance(exc, gone) else type(exc).__name__
            raise Failed(kind) from None
        status, headers = _parse_head(head)
        try:
            body = await self._body(headers)
        except (asyncio.IncompleteReadError, OSError, ValueError):
            await self.close()
            raise Failed("response cut short") from None
        if headers.get("connection", "").lower() == "close":
            await self.close()
        if status != 200:
            raise Failed(f"HTTP {status}")
        _check(body, headers.get("content-type", ""))
        return body

    async def _body(self, headers: dict[str, str]) -> bytes:
        assert self.reader is not None
        if "content-length" in headers:
            return await self.reader.readexactly(int(headers["content-length"]))
        if headers.get("transfer-encoding", "").lower() == "chunked":
            out = bytearray()
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
                if size == 0:
                    await self.reader.readuntil(b"\r\n")  # no trailers expected
                    return bytes(out)
                out += await self.reader.readexactly(size + 2)
                del out[-2:]
        return await self.reader.read()  # delimited by the close


def _parse_head(head: bytes) -> tuple[int, dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split()
    status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
    headers = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    return status, headers


def _check(body: bytes, content_type: str) -> None:
    """A JSON-RPC response with a result that is no tool error (plain JSON or SSE)."""
    text = body
    if content_type.startswith("text/event-stream"):
        data = [line[5:] for line in body.split(b"\n") if line.startswith(b"data:")]
        text = data[-1] if data else b""
    try:
        message = json.loads(text)
    except ValueError:
        raise Failed("body is not JSON") from None
    result = message.get("result") if isinstance(message, dict) else None
    if not isinstance(result, dict):
        raise Failed("no result")
    if result.get("isError"):
        outcome = (result.get("structuredContent") or {}).get("outcome", "?")
        raise Failed(f"tool error: {outcome}")


def pct(values: Sequence[float], q: float) -> float:
    """The q-th percentile, nearest rank (p50 of 1000 values is the 500th smallest)."""
    ordered = sorted(values)
    index = max(0, min(len(ordered) - 1, int(-(-q * len(ordered) // 100)) - 1))
    return ordered[index]


# -- section 1: 64 keep-alive clients ---------------------------------------------------------


@dataclass
class Load:
    label: str
    seconds: float = 0.0
    latencies_ms: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    per_client: list[int] = field(default_factory=list)
    connections: int = 0
    rss_before_kib: int = 0
    rss_after_kib: int = 0
    rss_samples_kib: list[int] = field(default_factory=list)  # every RSS_EVERY_S of the window
    server_cpu_s: float = 0.0
    client_cpu_s: float = 0.0


async def drive(
    port: int, requests: Sequence[bytes], seconds: float, load: Load, server_pid: int
) -> None:
    """Each request in `requests` is one client on its own keep-alive connection,
    calling back to back for WARMUP_S (not counted) and then `seconds`."""
    count = len(requests)
    load.per_client = [0] * count
    connections = [Connection(port) for _ in range(count)]
    state = {"measuring": False}
    started = time.perf_counter()
    end = started + WARMUP_S + seconds

    async def client(index: int) -> None:
        conn, data = connections[index], requests[index]
        while True:
            sent = time.perf_counter()
            if sent >= end:
                return
            try:
                await conn.call(data)
            except Failed as failure:
                if state["measuring"]:
                    load.errors[failure.kind] += 1
                await asyncio.sleep(RETRY_S)
                continue
            if state["measuring"]:
                load.latencies_ms.append((time.perf_counter() - sent) * 1000)
                load.per_client[index] += 1

    async def measure() -> None:
        await asyncio.sleep(WARMUP_S)
        # The window begins: what completes from now on is counted.
        state["measuring"] = True
        server0, client0, t0 = cpu_seconds(server_pid), time.process_time(), time.perf_counter()
        while (left := end - time.perf_counter()) > 0:
            await asyncio.sleep(min(left, RSS_EVERY_S))
            load.rss_samples_kib.append(vm_rss_kib(server_pid))
        load.server_cpu_s = cpu_seconds(server_pid) - server0
        load.client_cpu_s = time.process_time() - client0
        load.seconds = time.perf_counter() - t0

    tasks = [asyncio.create_task(client(i)) for i in range(count)]
    await measure()
    await asyncio.gather(*tasks)
    load.connections = sum(c.opened for c in connections)
    for conn in connections:
        await conn.close()


def run_load(served: Served, label: str, secret: Sequence[str | None], seconds: float) -> Load:
    """CLIENTS clients; client i presents secret[i % len(secret)] (None: no header)."""
    load = Load(label)
    requests = [request_bytes(served.port, secret[i % len(secret)], i + 1) for i in range(CLIENTS)]
    # One call first, on a connection of its own that is closed again, so that the
    # server is known to answer; then a pause for the server to release it.
    probe = Load("probe")
    asyncio.run(drive(served.port, requests[:1], 0.2, probe, served.pid))
    if not probe.latencies_ms:
        raise SystemExit(
            f"bench: {served.label} did not answer engine_status: {dict(probe.errors)}"
        )
    time.sleep(0.5)
    load.rss_before_kib = vm_rss_kib(served.pid)
    asyncio.run(drive(served.port, requests, seconds, load, served.pid))
    load.rss_after_kib = vm_rss_kib(served.pid)
    return load


def section_load(seconds: float, workdir: Path, callers: int) -> list[Load]:
    secret = tokens(callers)
    if callers:
        who = (
            f"{callers} callers with their own tokens (env RYPSOK_BENCH_TOKEN_NN); "
            f"client i presents token i mod {callers}"
        )
        ceiling = f"{callers} x {RATE_PER_MINUTE}/min = {callers * RATE_PER_MINUTE / 60:.0f} rps"
    else:
        who = "no callers: every request is the caller `local`"
        ceiling = f"{RATE_PER_MINUTE}/min = {RATE_PER_MINUTE / 60:.0f} rps in all"
    print(
        f"1. {CLIENTS} keep-alive clients calling engine_status back to back for "
        f"{seconds:g} s (after {WARMUP_S:g} s warm-up), 2026-07-28 revision"
    )
    print(
        f"  rypsok: default configuration + bind 127.0.0.1:0, engine_status_per_minute = "
        f"{RATE_PER_MINUTE}, {who}"
    )
    print(f"  rate limit ceiling for this load: {ceiling} (per caller, sliding 60 s window)")
    results = []
    rypsok = start_rypsok(workdir, "load", secret)
    try:
        client_tokens: list[str | None] = list(secret) or [None]
        results.append(run_load(rypsok, "rypsok serve --transport http", client_tokens, seconds))
    finally:
        rypsok.stop()
    bare = start_bare(workdir)
    try:
        results.append(run_load(bare, "reference: bare SDK Server + uvicorn", [None], seconds))
    finally:
        bare.stop()

    rows: list[tuple[str, ...]] = []
    for r in results:
        total = len(r.latencies_ms)
        rps = total / r.seconds if r.seconds else 0.0
        p50 = ms(pct(r.latencies_ms, 50)) if total else "-"
        p99 = ms(pct(r.latencies_ms, 99)) if total else "-"
        rows.append(
            (
                r.label,
                f"{rps:.0f}",
                p50,
                p99,
                str(total),
                str(sum(r.errors.values())),
                f"{mib(r.rss_before_kib)} -> {mib(r.rss_after_kib)}",
                f"{100 * r.server_cpu_s / r.seconds:.0f}%",
                f"{1e6 * r.server_cpu_s / max(1, total):.0f} us",
                f"{100 * r.client_cpu_s / r.seconds:.0f}%",
            )
        )
    table(
        (
            "server",
            "req/s",
            "p50",
            "p99",
            "calls",
            "errors",
            "VmRSS before -> after",
            "server CPU",
            "CPU/call",
            "client CPU",
        ),
        rows,
    )
    for r in results:
        if r.errors:
            print(
                f"  errors of {r.label}: "
                + ", ".join(f"{k}: {v}" for k, v in r.errors.most_common())
            )
        print(
            f"  {r.label}: {r.connections} connections opened for {CLIENTS} clients; "
            f"calls per client {min(r.per_client)} .. {max(r.per_client)}; VmRSS every "
            f"{RSS_EVERY_S:g} s: " + " ".join(f"{k / 1024:.1f}" for k in r.rss_samples_kib) + " MiB"
        )
    if callers:
        busiest = max(_per_caller(results[0].per_client, callers))
        print(
            f"  busiest rypsok caller: {busiest} calls in {results[0].seconds:.1f} s "
            f"(+ warm-up), its limit {RATE_PER_MINUTE} per 60 s: the limiter never bound"
        )
    print(
        "  latency: from writing the request to the last byte of the response, per call; "
        "p50/p99 nearest rank"
    )
    print(
        "  server CPU: the child's user + system time over the window (100% = one core); "
        "client CPU: this process (the load generator), on the machine's other core"
    )
    print(
        "  uvicorn runs with http=h11, loop=asyncio (httptools and uvloop are not "
        "installed); the bare tool answers the same structured content as rypsok's "
        "engine_status"
    )
    print(
        f"  rypsok logs one JSON line per call on stderr (to a file here); "
        f"max_connections = 64 (default) = the {CLIENTS} clients"
    )
    print()
    return results


def _per_caller(per_client: Sequence[int], callers: int) -> list[int]:
    sums = [0] * callers
    for i, n in enumerate(per_client):
        sums[i % callers] += n
    return sums


# -- section 2: a flood of idle connections ----------------------------------------------------


@dataclass
class Flood:
    label: str
    idle_timeout_s: int
    opened: int = 0
    connect_failures: Counter[str] = field(default_factory=Counter)
    closed_at_s: list[float] = field(default_factory=list)  # since the flood began
    served_ms: list[float] = field(default_factory=list)  # waits of the served calls
    first_served_s: list[float | None] = field(default_factory=list)  # per client
    attempts_failed: Counter[str] = field(default_factory=Counter)
    unserved: int = 0  # calls still without an answer when the window ended
    unserved_s: float = 0.0  # the longest of their waits
    rss_idle_kib: int = 0
    rss_flood_kib: int = 0
    rss_after_kib: int = 0


async def _flood(port: int, requests: Sequence[bytes], result: Flood, server_pid: int) -> None:
    began = time.perf_counter()
    held: list[asyncio.StreamWriter] = []
    watchers: list[asyncio.Task[None]] = []

    async def watch(reader: asyncio.StreamReader) -> None:
        with contextlib.suppress(OSError):
            await reader.read(1)  # nothing is sent to it, so this ends with the close
        result.closed_at_s.append(time.perf_counter() - began)

    async def open_one() -> None:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError as exc:
            result.connect_failures[type(exc).__name__] += 1
            return
        held.append(writer)
        watchers.append(asyncio.create_task(watch(reader)))

    for batch in range(0, FLOOD_CONNECTIONS, 100):
        await asyncio.gather(
            *(open_one() for _ in range(batch, min(batch + 100, FLOOD_CONNECTIONS)))
        )
    result.opened = len(held)
    # Let the server take them: those over its cap are closed at accept.
    settle = time.perf_counter() + FLOOD_SETTLE_S
    last = -1
    while time.perf_counter() < settle:
        await asyncio.sleep(0.2)
        if len(result.closed_at_s) == last:
            break
        last = len(result.closed_at_s)
    result.rss_flood_kib = vm_rss_kib(server_pid)

    window_start = time.perf_counter()
    end = window_start + FLOOD_SECONDS

    async def real_client(data: bytes) -> None:
        """Calls back to back until the window closes; a failed attempt is retried
        after RETRY_S on a new connection, as long as the window is open."""
        conn = Connection(port)
        first: float | None = None
        while time.perf_counter() < end:
            asked = time.perf_counter()
            served = False
            while True:
                limit = max(0.001, end + GRACE_S - time.perf_counter())
                try:
                    await asyncio.wait_for(conn.call(data), limit)
                except Failed as failure:
                    result.attempts_failed[failure.kind] += 1
                except TimeoutError:
                    await conn.close()
                    result.attempts_failed["no answer within the window + grace"] += 1
                    break
                else:
                    served = True
                    break
                if time.perf_counter() + RETRY_S >= end:
                    break
                await asyncio.sleep(RETRY_S)
            waited = time.perf_counter() - asked
            if not served:
                result.unserved += 1
                result.unserved_s = max(result.unserved_s, waited)
                break  # the window is over for this client
            result.served_ms.append(waited * 1000)
            if first is None:
                first = time.perf_counter() - began
        result.first_served_s.append(first)
        await conn.close()

    await asyncio.gather(*(real_client(d) for d in requests))
    for writer in held:
        writer.close()
    for task in watchers:
        task.cancel()
    await asyncio.gather(*watchers, return_exceptions=True)


def run_flood(workdir: Path, name: str, label: str, http: str, idle_s: int) -> Flood:
    secret = tokens(FLOOD_CLIENTS)
    served = start_rypsok(workdir, name, secret, http)
    result = Flood(label, idle_s)
    try:
        requests = [request_bytes(served.port, t, i + 1) for i, t in enumerate(secret)]
        time.sleep(0.3)
        result.rss_idle_kib = vm_rss_kib(served.pid)
        asyncio.run(_flood(served.port, requests, result, served.pid))
        result.rss_after_kib = vm_rss_kib(served.pid)
    finally:
        served.stop()
    return result


def section_flood(workdir: Path) -> list[Flood]:
    print(
        f"2. {FLOOD_CONNECTIONS} connections that send nothing, held, while "
        f"{FLOOD_CLIENTS} real clients call engine_status for {FLOOD_SECONDS:g} s (rypsok)"
    )
    configs = (
        ("flood_a", "(A) defaults: max_connections 64, idle_timeout_s 60", "", 60),
        ("flood_b", "(B) max_connections 64, idle_timeout_s 5", "idle_timeout_s = 5", 5),
        (
            "flood_c",
            "(C) max_connections 2048, idle_timeout_s 5",
            "max_connections = 2048\nidle_timeout_s = 5",
            5,
        ),
    )
    results = [run_flood(workdir, name, label, http, idle) for name, label, http, idle in configs]
    rows: list[tuple[str, ...]] = []
    for r in results:
        waits = r.served_ms
        firsts = [f for f in r.first_served_s if f is not None]
        never = len(r.first_served_s) - len(firsts)
        rows.append(
            (
                r.label,
                str(len(waits)),
                ms(pct(waits, 50)) if waits else "-",
                ms(pct(waits, 99)) if waits else "-",
                ms(max(waits)) if waits else "-",
                str(sum(r.attempts_failed.values())),
                f"{r.unserved}, waited {r.unserved_s:.1f} s" if r.unserved else "0",
                (f"{max(firsts):.2f} s" if firsts else "-") + (f", {never} never" if never else ""),
            )
        )
    table(
        (
            "configuration",
            "served",
            "wait p50",
            "wait p99",
            "wait max",
            "failed attempts",
            "unserved",
            "first served (last client)",
        ),
        rows,
    )
    for r in results:
        early = sum(1 for t in r.closed_at_s if t < FLOOD_SETTLE_S)
        late = sorted(t for t in r.closed_at_s if t >= FLOOD_SETTLE_S)
        span = f" (at {late[0]:.1f} .. {late[-1]:.1f} s)" if late else ""
        failed = ", ".join(f"{k}: {v}" for k, v in r.attempts_failed.most_common()) or "none"
        refused = (
            ", connect failures " + ", ".join(f"{k}: {v}" for k, v in r.connect_failures.items())
            if r.connect_failures
            else ""
        )
        print(
            f"  {r.label}: flood {r.opened} opened{refused}; server closed {early} at "
            f"once (over the cap), {len(late)} later{span}, "
            f"{r.opened - len(r.closed_at_s)} still open at the end"
        )
        print(
            f"      failed attempts: {failed}; VmRSS idle {mib(r.rss_idle_kib)}, flood held "
            f"{mib(r.rss_flood_kib)}, after {mib(r.rss_after_kib)}; aim: served within "
            f"idle_timeout_s = {r.idle_timeout_s} s of the flood"
        )
    print(
        f"  wait: from a call's first attempt to its answer, retries included (a failed "
        f"attempt: reconnect after {RETRY_S * 1000:.0f} ms, no new attempt after the "
        f"window; one under way may finish within {GRACE_S:g} s); unserved: calls without "
        f"an answer at the window's end, and the longest of their waits"
    )
    print(
        "  first served: seconds from the flood's first connection to the client's first "
        "answer, for the last of the 8 clients; the flood never reconnects what is closed"
    )
    print(
        f"  the flood is opened, then up to {FLOOD_SETTLE_S:g} s for the server to take it, "
        f"then the {FLOOD_SECONDS:g} s window of the real clients; each real client has "
        f"its own caller and token; engine_status_per_minute = {RATE_PER_MINUTE}"
    )
    print()
    return results


# -- output ------------------------------------------------------------------------------------


def ms(value: float, digits: int = 2) -> str:
    return f"{value:.{digits}f} ms"


def mib(kib: float) -> str:
    return f"{kib / 1024:.1f} MiB"


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    print(
        "  "
        + "  ".join(
            h.ljust(w) if i == 0 else h.rjust(w)
            for i, (h, w) in enumerate(zip(header, widths, strict=True))
        )
    )
    print("  " + "  ".join("-" * w for w in widths))
    for row in rows:
        print(
            "  "
            + "  ".join(
                str(c).ljust(w) if i == 0 else str(c).rjust(w)
                for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
        )


def raise_open_files(needed: int) -> str:
    """Raise the soft limit on open files towards `needed`, within the hard limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < needed:
        target = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        soft = target
    return f"open files: soft limit {soft} (hard {hard}), inherited by the servers"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="HTTP load benchmark of rypsok (figures, no asserts)."
    )
    parser.add_argument(
        "--seconds",
        type=float,
        default=None,
        help="measured seconds of section 1 per server (default 30, --quick 5)",
    )
    parser.add_argument("--quick", action="store_true", help="5 s per server in section 1")
    parser.add_argument(
        "--only",
        choices=("load", "flood"),
        action="append",
        help="run only this section (repeatable)",
    )
    parser.add_argument(
        "--callers",
        type=int,
        default=CLIENTS,
        help=f"rypsok callers with tokens in section 1 (default {CLIENTS}: "
        f"one per client; 0: no callers, all requests are `local` "
        f"and share one {RATE_PER_MINUTE}/min limit)",
    )
    args = parser.parse_args(argv)
    seconds = args.seconds if args.seconds is not None else (5.0 if args.quick else 30.0)
    if seconds <= 0:
        parser.error("--seconds must be positive")
    if not 0 <= args.callers <= CLIENTS:
        parser.error(f"--callers must be 0 .. {CLIENTS}")
    sections = set(args.only or ("load", "flood"))
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from importlib.metadata import version

    import rypsok

    limit = raise_open_files(2 * FLOOD_CONNECTIONS + 512)
    print(
        f"rypsok {rypsok.__version__}, mcp {version('mcp')}, uvicorn {version('uvicorn')}, "
        f"h11 {version('h11')}, Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
        f"{sys.platform}; {limit}"
    )
    print()
    with tempfile.TemporaryDirectory(prefix="rypsok-http-bench-") as tmp:
        workdir = Path(tmp)
        if "load" in sections:
            section_load(seconds, workdir, args.callers)
        if "flood" in sections:
            section_flood(workdir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
