"""Load benchmark of the HTTP listener: keep-alive clients calling engine_status, a bare
SDK server under uvicorn beside it, a flood of idle connections, and replicas sharing
one Redis.

Run from the repository root with the dev interpreter:

    .venv/bin/python -m bench.http_load [--seconds N] [--quick] [--only SECTION]
    .venv/bin/python -m bench.http_load --only replicas [--replica-seconds N]
        [--replica-clients N ...] [--store-timeout-ms MS]

Section 1 starts `python -m rypsok serve --transport http` and, as the reference, a bare
low-level SDK Server with one tool served by uvicorn (Server.streamable_http_app()), both
as child processes on 127.0.0.1:0, and drives each with the same 64 keep-alive clients
(asyncio, raw sockets, one connection each) sending tools/call engine_status over the
2026-07-28 revision. Section 2 opens 1000 connections that send nothing, holds them,
and measures what 8 real clients experience against rypsok in three configurations.
Section 3 runs one process with the memory store, one with the redis store and three
replicas sharing one redis-server (tests/support/replicas.py starts them; the server is
tests/support/redis.py's) under the same keep-alive loads of engine_status and of
cached web_search, and reads Redis's INFO around each load. Section 4 runs section 1's
load with [service.metrics] off and on (scraped every second), in turns (issue 38).
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
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # Imported where used: only section 3 (replicas) needs them.
    from tests.support.redis import RedisServer
    from tests.support.replicas import Engines, Replica

from rypsok.core import limits

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
{callers}{extra}"""

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


def rypsok_config(callers: int, http: str = "", extra: str = "") -> str:
    return RYPSOK_CONFIG.format(
        http=http,
        rate=RATE_PER_MINUTE,
        callers="".join(CALLER.format(index=i) for i in range(callers)),
        extra=extra,
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


def start_rypsok(
    workdir: Path, name: str, secret: Sequence[str], http: str = "", extra: str = ""
) -> Served:
    path = workdir / f"{name}.toml"
    path.write_text(rypsok_config(len(secret), http, extra), encoding="utf-8")
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


def request_bytes(
    port: int,
    token: str | None,
    request_id: int,
    tool: str = "engine_status",
    arguments: dict[str, str] | None = None,
) -> bytes:
    """tools/call of `tool` (engine_status unless told) with the 2026-07-28 headers and
    _meta."""
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {
                "name": tool,
                "arguments": arguments or {},
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
        f"Mcp-Name: {tool}",
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
        content = result.get("structuredContent") or {}
        error = content.get("error") or {}
        detail = error.get("detail") or {}
        outcome = content.get("outcome") or f"{error.get('kind', '?')}:{detail.get('reason', '?')}"
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
    attempts: int = 0  # every call that was sent, the warm-up's and the failed included


async def drive(
    ports: Sequence[int],
    requests: Sequence[bytes | Sequence[bytes]],
    seconds: float,
    load: Load,
    server_pids: Sequence[int],
) -> None:
    """Each item of `requests` is one client on its own keep-alive connection to
    ports[i % len(ports)], calling back to back for WARMUP_S (not counted) and then
    `seconds`; a client given several requests sends them in turn. The server's CPU and
    VmRSS are the sums over `server_pids`."""
    count = len(requests)
    load.per_client = [0] * count
    connections = [Connection(ports[i % len(ports)]) for i in range(count)]
    state = {"measuring": False}
    started = time.perf_counter()
    end = started + WARMUP_S + seconds

    async def client(index: int) -> None:
        conn, item = connections[index], requests[index]
        turns = (item,) if isinstance(item, bytes) else item
        turn = 0
        while True:
            sent = time.perf_counter()
            if sent >= end:
                return
            load.attempts += 1
            data = turns[turn % len(turns)]
            turn += 1
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
        server0 = sum(cpu_seconds(pid) for pid in server_pids)
        client0, t0 = time.process_time(), time.perf_counter()
        while (left := end - time.perf_counter()) > 0:
            await asyncio.sleep(min(left, RSS_EVERY_S))
            load.rss_samples_kib.append(sum(vm_rss_kib(pid) for pid in server_pids))
        load.server_cpu_s = sum(cpu_seconds(pid) for pid in server_pids) - server0
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
    asyncio.run(drive([served.port], requests[:1], 0.2, probe, [served.pid]))
    if not probe.latencies_ms:
        raise SystemExit(
            f"bench: {served.label} did not answer engine_status: {dict(probe.errors)}"
        )
    time.sleep(0.5)
    load.rss_before_kib = vm_rss_kib(served.pid)
    asyncio.run(drive([served.port], requests, seconds, load, [served.pid]))
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
    client_tokens: list[str | None] = list(secret) or [None]
    # The second row is the SDK's public path ([service.http] fast_lane = false): what
    # serves when the installed SDK is not the one the lane was read in (issue 32).
    for name, label, http in (
        ("load", "rypsok serve --transport http", ""),
        ("public", "rypsok, fast_lane = false", "fast_lane = false"),
    ):
        rypsok = start_rypsok(workdir, name, secret, http)
        try:
            results.append(run_load(rypsok, label, client_tokens, seconds))
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


METRICS_ROUNDS = 3  # off, on, off, on...: each configuration in turn, to share the noise
SCRAPE_EVERY_S = 1.0  # fifteen times Prometheus's usual interval: the cost at its worst


def _metrics_port(served: Served) -> int:
    for line in served.log_path.read_text(encoding="utf-8", errors="replace").splitlines():
        with contextlib.suppress(ValueError):
            record = json.loads(line)
            if isinstance(record, dict) and record.get("event") == "metrics_listening":
                return int(record["port"])
    raise SystemExit("bench: the metrics listener did not report its port")


def _scrape_while(port: int, stop: threading.Event, sizes: list[int]) -> None:
    import urllib.request

    while not stop.wait(SCRAPE_EVERY_S):
        address = f"http://127.0.0.1:{port}/metrics"
        with contextlib.suppress(OSError), urllib.request.urlopen(address, timeout=5) as reply:
            sizes.append(len(reply.read()))


def section_metrics(seconds: float, workdir: Path, callers: int) -> list[tuple[str, float]]:
    """Section 4: the same load as section 1, with [service.metrics] off and on (a scrape
    every second meanwhile), in turns; requests per second of each, and the ratio."""
    secret = tokens(callers)
    client_tokens: list[str | None] = list(secret) or [None]
    print(
        f"4. the load of section 1 ({CLIENTS} clients, engine_status) with the metrics "
        f"listener off and on, {METRICS_ROUNDS} rounds of {seconds:g} s each, in turns; "
        f"with it on, /metrics is scraped every {SCRAPE_EVERY_S:g} s"
    )
    rates: dict[str, list[float]] = {"off": [], "on": []}
    sizes: list[int] = []
    for round_ in range(METRICS_ROUNDS):
        for mode in ("off", "on"):
            extra = '\n[service.metrics]\nbind = "127.0.0.1:0"\n' if mode == "on" else ""
            served = start_rypsok(workdir, f"metrics-{mode}-{round_}", secret, extra=extra)
            stop = threading.Event()
            scraper = None
            try:
                if mode == "on":
                    port = _metrics_port(served)
                    scraper = threading.Thread(target=_scrape_while, args=(port, stop, sizes))
                    scraper.start()
                load = run_load(served, f"metrics {mode}", client_tokens, seconds)
            finally:
                stop.set()
                if scraper is not None:
                    scraper.join(10)
                served.stop()
            rates[mode].append(len(load.latencies_ms) / load.seconds if load.seconds else 0.0)
    off, on = statistics.median(rates["off"]), statistics.median(rates["on"])
    table(
        ("metrics listener", "req/s per round", "median req/s"),
        [
            ("off", " ".join(f"{r:.0f}" for r in rates["off"]), f"{off:.0f}"),
            ("on, scraped every 1 s", " ".join(f"{r:.0f}" for r in rates["on"]), f"{on:.0f}"),
        ],
    )
    cost = 100 * (off - on) / off if off else 0.0
    print(
        f"  cost of the metrics: {cost:.1f} % of the requests per second (bound: 3 %); "
        f"{len(sizes)} scrapes of {statistics.median(sizes) if sizes else 0:.0f} bytes each"
    )
    print()
    return [("off", off), ("on", on)]


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


# -- section 3: replicas sharing one Redis ----------------------------------------------------

REPLICAS = 3
REPLICA_SECONDS = 5.0  # measured seconds of each row of section 3 (--quick: 2)
REPLICA_CLIENTS = (1, 8, CLIENTS)  # the loads of section 3, in keep-alive clients
SEARCH_CALLERS = 16  # web_search rows: client i is caller i mod 16, each with one cached query
SEARCH_QUERY = "bench replicas"
STANDIN = "standin"  # the one engine of section 3, a SearXNG stand-in in this process
# The commands the redis store's client sends itself; every other command INFO
# commandstats counts ran inside one of its Lua scripts.
CLIENT_COMMANDS = frozenset(
    {
        "auth",
        "client|setinfo",
        "eval",
        "evalsha",
        "get",
        "hello",
        "ping",
        "script|load",
        "select",
        "zmscore",
        "zrem",
    }
)

REPLICA_CONFIG = """config_version = 1

[service.http]
bind = "127.0.0.1:0"

[limits]
engine_status_per_minute = {rate}
web_search_per_minute = {rate}

[egress]
allow = ["127.0.0.1"]

[cache]
enabled = true
{store}
[engines.{engine}]
type = "searxng"
categories = ["general"]
base_url = "{base_url}"
rate_per_minute = 600
{callers}"""

REDIS_STORE = """
[store]
backend = "redis"
url_env = "RYPSOK_REDIS_URL"
replicas = {replicas}
{timeout}"""


@dataclass(frozen=True)
class Setup:
    label: str
    processes: int
    redis: bool


SETUPS = (
    Setup("1 process, memory store", 1, False),
    Setup("1 process, redis store", 1, True),
    Setup(f"{REPLICAS} replicas, redis store", REPLICAS, True),
)


@dataclass
class StoreRun:
    setup: Setup
    tool: str
    clients: int
    load: Load
    commands: dict[str, int] = field(default_factory=dict)  # run during warm-up + window
    redis_cpu_s: float = 0.0  # redis-server's CPU over warm-up + window
    redis_memory: dict[str, str] = field(default_factory=dict)  # INFO memory after the load
    redis_keys: int = 0
    engine_requests: int = 0  # requests that reached the stand-in during the load
    unavailable: int = 0  # store_unavailable lines of the processes
    recovered: int = 0  # store_recovered lines
    local_answers: int = 0  # store operations answered from a process's own memory

    @property
    def client_commands(self) -> int:
        return sum(n for name, n in self.commands.items() if name in CLIENT_COMMANDS)


def _store_counters(replica: Replica) -> tuple[int, int, int]:
    """(store_unavailable lines, store_recovered lines, operations answered locally) of a
    stopped replica: the last from the counters it logs at shutdown."""
    local = 0
    for record in replica.events("counters"):
        found = record.get("store", {}).get("local", {})
        local += sum(int(v) for v in found.values()) if isinstance(found, dict) else 0
    return len(replica.events("store_unavailable")), len(replica.events("store_recovered")), local


def run_store(
    setup: Setup,
    tool: str,
    clients: int,
    workdir: Path,
    secret: Sequence[str],
    seconds: float,
    engines: Engines,
    timeout_ms: int | None,
) -> StoreRun:
    """One row: fresh processes (and a fresh Redis), `clients` keep-alive clients spread
    round robin over them, Redis's counters read around the load."""
    from tests.support.redis import redis_server
    from tests.support.replicas import call, calls_between, command_calls, redis_info, replicas

    name = f"{'redis' if setup.redis else 'memory'}-{setup.processes}-{tool}-{clients}"
    folder = workdir / name
    folder.mkdir()
    callers = "".join(CALLER.format(index=i) for i in range(len(secret)))
    run = StoreRun(setup, tool, clients, Load(f"{setup.label}, {clients} clients: {tool}"))
    with contextlib.ExitStack() as stack:
        env = child_env(folder, secret)
        redis: RedisServer | None = None
        store = ""
        if setup.redis:
            redis = stack.enter_context(redis_server(folder))
            env["RYPSOK_REDIS_URL"] = redis.url
            timeout = f"timeout_ms = {timeout_ms}\n" if timeout_ms is not None else ""
            store = REDIS_STORE.format(replicas=setup.processes, timeout=timeout)
        text = REPLICA_CONFIG.format(
            rate=RATE_PER_MINUTE,
            store=store,
            engine=STANDIN,
            base_url=engines.searxng_url(STANDIN),
            callers=callers,
        )
        running = stack.enter_context(replicas(folder, text, env, setup.processes, name))
        ports = [r.port for r in running]
        arguments = {"query": SEARCH_QUERY} if tool == "web_search" else None
        # Every process answers once, one after another; for web_search each caller's
        # query is asked once, so that the load is answered from the cache (the engine's
        # rate is 600/min, the most an operator may set).
        first = max(len(ports), SEARCH_CALLERS) if tool == "web_search" else len(ports)
        for i in range(first):
            answer = call(ports[i % len(ports)], tool, arguments, token=secret[i % len(secret)])
            if not answer.answered or answer.is_tool_error:
                raise SystemExit(f"bench: {run.load.label}: no answer ({answer.failure})")
        time.sleep(0.5)
        # Client i speaks for the callers j with j mod clients = i, in turn (the caller
        # i mod callers when there are fewer callers than clients): whatever the number
        # of clients, every caller is used and no caller's limit binds.
        callers_used = SEARCH_CALLERS if tool == "web_search" else len(secret)
        requests = [
            [
                request_bytes(ports[i % len(ports)], secret[j], i + 1, tool, arguments)
                for j in range(callers_used)
                if j % clients == i or (clients > callers_used and j == i % callers_used)
            ]
            for i in range(clients)
        ]
        redis_pid = redis.process.pid if redis is not None and redis.process else 0
        commands0 = command_calls(redis.port) if redis else {}
        redis_cpu0 = cpu_seconds(redis_pid) if redis else 0.0
        engine0 = engines.count(STANDIN)
        asyncio.run(drive(ports, requests, seconds, run.load, [r.pid for r in running]))
        run.engine_requests = engines.count(STANDIN) - engine0
        if redis is not None:
            run.redis_cpu_s = cpu_seconds(redis_pid) - redis_cpu0
            run.commands = calls_between(commands0, command_calls(redis.port))
            run.redis_memory = redis_info(redis.port, "memory")
            keyspace = redis_info(redis.port, "keyspace").get("db0", "keys=0")
            run.redis_keys = int(dict(p.split("=") for p in keyspace.split(","))["keys"])
        for replica in running:
            replica.stop()
            down, up, local = _store_counters(replica)
            run.unavailable += down
            run.recovered += up
            run.local_answers += local
    return run


def section_replicas(
    seconds: float, workdir: Path, loads: Sequence[int], timeout_ms: int | None
) -> list[StoreRun]:
    from tests.support.replicas import engines

    default_ms = limits.default("LIM-D1")
    timeout = f"{timeout_ms} ms" if timeout_ms is not None else f"{default_ms} ms (the default)"
    print(
        f"3. Replicas sharing one Redis: {', '.join(map(str, loads))} keep-alive clients "
        f"spread round robin over the processes, {seconds:g} s a row (after {WARMUP_S:g} s "
        f"warm-up)"
    )
    print(
        f"  fresh processes (and a fresh Redis, {_redis_version()}) for each row; [cache] on, "
        f"one SearXNG stand-in engine, {CLIENTS} callers, *_per_minute = {RATE_PER_MINUTE}, "
        f"[store] timeout_ms {timeout}"
    )
    secret = tokens(CLIENTS)
    runs: list[StoreRun] = []
    with engines() as standins:
        for tool in ("engine_status", "web_search"):
            for clients in loads:
                for setup in SETUPS:
                    if setup.processes > clients:
                        continue  # one client reaches one process only
                    runs.append(
                        run_store(
                            setup, tool, clients, workdir, secret, seconds, standins, timeout_ms
                        )
                    )
    _replicas_table(runs)
    print("  what the store adds to a call (1 process: redis store - memory store):")
    for tool in ("engine_status", "web_search"):
        for clients in loads:
            pair = [r for r in runs if r.tool == tool and r.clients == clients]
            memory = next((r for r in pair if r.setup == SETUPS[0]), None)
            redis = next((r for r in pair if r.setup == SETUPS[1]), None)
            if memory is None or redis is None:
                continue
            a, b = memory.load.latencies_ms, redis.load.latencies_ms
            if not a or not b:
                continue
            cpu_a, cpu_b = memory.load.server_cpu_s / len(a), redis.load.server_cpu_s / len(b)
            print(
                f"    {tool}, {clients} clients: p50 {pct(b, 50) - pct(a, 50):+.2f} ms, "
                f"p99 {pct(b, 99) - pct(a, 99):+.2f} ms, mean "
                f"{sum(b) / len(b) - sum(a) / len(a):+.2f} ms; rypsok CPU "
                f"{1e6 * (cpu_b - cpu_a):+.0f} us a call; req/s "
                f"{len(b) / redis.load.seconds:.0f} against {len(a) / memory.load.seconds:.0f}"
                + (
                    f" (the redis store answered {redis.local_answers} operations locally)"
                    if redis.local_answers
                    else ""
                )
            )
    for r in runs:
        if r.setup.redis:
            mem = r.redis_memory
            top = ", ".join(f"{k} {v / max(1, r.load.attempts):.2f}" for k, v in _top(r.commands))
            print(
                f"  {r.load.label}: Redis used_memory {mem.get('used_memory_human', '?')} "
                f"(dataset {_kib(mem.get('used_memory_dataset'))}, rss "
                f"{mem.get('used_memory_rss_human', '?')}), {r.redis_keys} keys after "
                f"{r.load.attempts} calls; commands a call: {top or 'none'}"
            )
        if r.load.errors or r.engine_requests:
            errors = ", ".join(f"{k}: {v}" for k, v in r.load.errors.most_common())
            print(
                f"  {r.load.label}: {r.engine_requests} engine requests during the load"
                + (f"; errors {errors}" if errors else "")
            )
    print(
        "  Redis trips/call: commands the store's client sent (EVALSHA, GET, ZREM, ...) per "
        "call sent, warm-up included; cmds/call: with the commands its scripts ran"
    )
    print(
        "  Redis CPU/call: redis-server's user + system time over warm-up + window per call; "
        "down/up/local: store_unavailable and store_recovered lines, store operations "
        "answered from a process's own memory"
    )
    print(
        f"  rypsok CPU: the processes' summed CPU (100% = one core); the callers are shared "
        f"out among the clients, each client sending for its callers in turn: {CLIENTS} "
        f"callers for engine_status, {SEARCH_CALLERS} for web_search, whose one query each "
        f"was asked before the load, so a call is answered from the cache while the store "
        f"answers (ceilings {CLIENTS * RATE_PER_MINUTE // 60} and "
        f"{SEARCH_CALLERS * RATE_PER_MINUTE // 60} rps)"
    )
    print()
    return runs


def _replicas_table(runs: Sequence[StoreRun]) -> None:
    rows: list[tuple[str, ...]] = []
    for r in runs:
        total = len(r.load.latencies_ms)
        calls = max(1, r.load.attempts)
        redis = r.setup.redis
        rows.append(
            (
                r.setup.label,
                r.tool,
                str(r.clients),
                f"{total / r.load.seconds:.0f}" if r.load.seconds else "-",
                ms(pct(r.load.latencies_ms, 50)) if total else "-",
                ms(pct(r.load.latencies_ms, 99)) if total else "-",
                str(sum(r.load.errors.values())),
                f"{100 * r.load.server_cpu_s / r.load.seconds:.0f}%" if r.load.seconds else "-",
                f"{1e6 * r.load.server_cpu_s / max(1, total):.0f} us",
                f"{r.client_commands / calls:.2f}" if redis else "-",
                f"{sum(r.commands.values()) / calls:.1f}" if redis else "-",
                f"{1e6 * r.redis_cpu_s / calls:.0f} us" if redis else "-",
                f"{r.unavailable}/{r.recovered}/{r.local_answers}" if redis else "-",
            )
        )
    table(
        (
            "setup",
            "tool",
            "clients",
            "req/s",
            "p50",
            "p99",
            "errors",
            "rypsok CPU",
            "CPU/call",
            "Redis trips/call",
            "cmds/call",
            "Redis CPU/call",
            "down/up/local",
        ),
        rows,
    )


def _top(commands: Mapping[str, int], count: int = 5) -> list[tuple[str, int]]:
    return sorted(commands.items(), key=lambda kv: -kv[1])[:count]


def _kib(value: str | None) -> str:
    return f"{int(value) / 1024:.0f} KiB" if value is not None and value.isdigit() else "?"


def _redis_version() -> str:
    from tests.support.redis import NOT_INSTALLED

    binary = shutil.which(os.environ.get("RYPSOK_REDIS_SERVER") or "redis-server")
    if binary is None:
        raise SystemExit(f"bench: {NOT_INSTALLED}")
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, check=False)
    version = next((p for p in out.stdout.split() if p.startswith("v=")), "v=?")
    return f"redis-server {version[2:]}"


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
    parser.add_argument(
        "--quick", action="store_true", help="5 s per server in section 1, 2 s a row in section 3"
    )
    parser.add_argument(
        "--replica-seconds",
        type=float,
        default=None,
        help=f"measured seconds of each row of section 3 (default {REPLICA_SECONDS:g}, --quick 2)",
    )
    parser.add_argument(
        "--replica-clients",
        type=int,
        action="append",
        help="a load of section 3, in clients (repeatable; default "
        + ", ".join(map(str, REPLICA_CLIENTS))
        + ")",
    )
    parser.add_argument(
        "--store-timeout-ms",
        type=int,
        default=None,
        help="[store] timeout_ms of section 3's redis rows (5 .. 200; default: the "
        "configuration's default)",
    )
    parser.add_argument(
        "--only",
        choices=("load", "flood", "replicas", "metrics"),
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
    replica_seconds = args.replica_seconds or (2.0 if args.quick else REPLICA_SECONDS)
    if replica_seconds <= 0:
        parser.error("--replica-seconds must be positive")
    loads = args.replica_clients or list(REPLICA_CLIENTS)
    if not all(1 <= n <= CLIENTS for n in loads):
        parser.error(f"--replica-clients must be 1 .. {CLIENTS}")
    if not 0 <= args.callers <= CLIENTS:
        parser.error(f"--callers must be 0 .. {CLIENTS}")
    sections = set(args.only or ("load", "flood", "replicas", "metrics"))
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
        if "replicas" in sections:
            section_replicas(replica_seconds, workdir, loads, args.store_timeout_ms)
        if "metrics" in sections:
            section_metrics(seconds, workdir, args.callers)
    return 0


if __name__ == "__main__":
    sys.exit(main())
