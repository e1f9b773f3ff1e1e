"""Replicas of `rypsok serve --transport http` on 127.0.0.1, and what drives them: used by
the end-to-end tests of issue 21 (tests/e2e/test_replicas.py) and by the replicas section
of bench/http_load.py.

* `start_replicas` / `replicas`: child processes started from one configuration file,
  each bound to 127.0.0.1:0; the port is read from the child's `listening` line. Their
  stderr goes to a file (a pipe that nobody drains would stall a child that logs every
  call), read back as JSON events.
* `Engines`: one HTTP server on 127.0.0.1 that answers as MediaWiki's search API under
  `/<name>/w/api.php` and as SearXNG's JSON API under `/<name>/search`, counts the
  requests each name receives, and can be told while it runs to answer a name with an
  unreadable body (a parse failure, which counts towards opening a circuit).
* `call`: one MCP `tools/call` over the 2026-07-28 stateless revision, on a connection
  of its own, with how long the answer took.
* `redis_info`: a section of Redis's INFO, read over a plain socket.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.support.paths import REPO

MODERN = "2026-07-28"
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0


# -- replicas -------------------------------------------------------------------------------


@dataclass
class Replica:
    """One `rypsok serve --transport http` child; its stderr in `log_path`."""

    label: str
    proc: subprocess.Popen[bytes]
    port: int
    log_path: Path

    @property
    def pid(self) -> int:
        return self.proc.pid

    def events(self, name: str | None = None) -> list[dict[str, Any]]:
        """The JSON log lines written so far, those of one event when `name` is given."""
        found: list[dict[str, Any]] = []
        text = self.log_path.read_text(encoding="utf-8", errors="replace")
        for line in text.splitlines():
            with contextlib.suppress(ValueError):
                record = json.loads(line)
                if isinstance(record, dict) and (name is None or record.get("event") == name):
                    found.append(record)
        return found

    def stop(self) -> int | None:
        """SIGTERM (a graceful stop), then SIGKILL if it lingers; the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(STOP_TIMEOUT_S)
        return self.proc.returncode


def _listening_port(log_path: Path) -> int | None:
    text = log_path.read_text(encoding="utf-8", errors="replace")
    for line in text.splitlines():
        with contextlib.suppress(ValueError):
            record = json.loads(line)
            if isinstance(record, dict) and record.get("event") == "listening":
                return int(str(record["address"]).rsplit(":", 1)[1])
    return None


def start_replicas(
    workdir: Path, config_text: str, env: Mapping[str, str], count: int, name: str = "replica"
) -> list[Replica]:
    """`count` children of one configuration file, started together; returns once each
    has said where it listens. A child that exits or stays silent stops them all."""
    config = workdir / f"{name}.toml"
    config.write_text(config_text, encoding="utf-8")
    command = [sys.executable, "-m", "rypsok", "serve", "--transport", "http"]
    started: list[tuple[subprocess.Popen[bytes], Path]] = []
    for index in range(1, count + 1):
        log_path = workdir / f"{name}-{index}.log"
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                [*command, "--config", str(config)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
                env=dict(env),
                cwd=REPO,
            )
        started.append((proc, log_path))
    found: list[Replica] = []
    deadline = time.monotonic() + START_TIMEOUT_S
    try:
        for index, (proc, log_path) in enumerate(started, start=1):
            while True:
                port = _listening_port(log_path)
                if port is not None:
                    found.append(Replica(f"{name} {index}", proc, port, log_path))
                    break
                if proc.poll() is not None or time.monotonic() > deadline:
                    tail = log_path.read_text(encoding="utf-8", errors="replace")[-800:]
                    raise RuntimeError(f"{name} {index} did not report `listening`: {tail}")
                time.sleep(0.02)
    except BaseException:
        for proc, _ in started:
            if proc.poll() is None:
                proc.kill()
                proc.wait(STOP_TIMEOUT_S)
        raise
    return found


@contextlib.contextmanager
def replicas(
    workdir: Path, config_text: str, env: Mapping[str, str], count: int, name: str = "replica"
) -> Iterator[list[Replica]]:
    """`start_replicas`, every child stopped at the end of the block whatever happened."""
    running = start_replicas(workdir, config_text, env, count, name)
    try:
        yield running
    finally:
        for replica in running:
            replica.stop()


def base_env(**extra: str) -> dict[str, str]:
    """A child's environment: no RYPSOK_CONFIG, no keys, no proxies; then `extra`."""
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    env.update(extra)
    return env


# -- engines that count -----------------------------------------------------------------------

_WIKI_HITS = [
    {
        "ns": 0,
        "title": "Rust (programming language)",
        "pageid": 1,
        "snippet": "A general-purpose programming language",
        "timestamp": "2026-09-01T10:00:00Z",
    }
]


class Engines:
    """MediaWiki and SearXNG stand-ins on 127.0.0.1, plain HTTP, one server for all names.

    `count(name)` is how many requests reached `/<name>/...`; `fail(name)` makes the
    name answer 200 with a body that is not JSON from now on (`heal` undoes it)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()
        self._failing: set[str] = set()
        engines = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                engines._answer(self)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,))
        self._thread.daemon = True

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(STOP_TIMEOUT_S)

    def wiki_url(self, name: str) -> str:
        """A base_url for an engine of type wikipedia."""
        return f"http://127.0.0.1:{self.port}/{name}/w"

    def searxng_url(self, name: str) -> str:
        """A base_url for an engine of type searxng."""
        return f"http://127.0.0.1:{self.port}/{name}"

    def count(self, name: str) -> int:
        with self._lock:
            return self._counts[name]

    def fail(self, name: str) -> None:
        with self._lock:
            self._failing.add(name)

    def heal(self, name: str) -> None:
        with self._lock:
            self._failing.discard(name)

    def _answer(self, handler: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(handler.path)
        params = parse_qs(parts.query)
        name, _, rest = parts.path.lstrip("/").partition("/")
        if rest == "w/api.php":
            query = params.get("srsearch", [""])[0]
            answer: dict[str, Any] = {"batchcomplete": "", "query": {"search": _WIKI_HITS}}
        elif rest == "search":
            query = params.get("q", [""])[0]
            answer = {
                "query": query,
                "results": [
                    {
                        "url": f"https://{name}.example/{len(query)}",
                        "title": f"{name} on {query}"[:100],
                        "content": "A result of the stand-in.",
                        "engines": ["wikipedia"],
                    }
                ],
                "unresponsive_engines": [],
            }
        else:
            handler.send_error(404)
            return
        with self._lock:
            self._counts[name] += 1
            failing = name in self._failing
        body = b"<html>not an API answer</html>" if failing else json.dumps(answer).encode()
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        with contextlib.suppress(OSError):
            handler.wfile.write(body)


@contextlib.contextmanager
def engines() -> Iterator[Engines]:
    running = Engines()
    running.start()
    try:
        yield running
    finally:
        running.close()


# -- one MCP call -------------------------------------------------------------------------------


def call_body(tool: str, arguments: Mapping[str, Any] | None = None, request_id: int = 1) -> bytes:
    """A tools/call request of the 2026-07-28 revision: the revision in `_meta`."""
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {
            "name": tool,
            "arguments": dict(arguments or {}),
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientInfo": {"name": "e2e-replicas", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    return json.dumps(message, separators=(",", ":")).encode()


def call_headers(tool: str, token: str | None, port: int) -> dict[str, str]:
    headers = {
        "Host": f"127.0.0.1:{port}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": tool,
    }
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return headers


@dataclass
class Answer:
    """What came back for one call: the HTTP status (0 when no response came, with
    `failure` saying why), the JSON-RPC message, and the seconds from connect to the
    last byte."""

    status: int
    elapsed_s: float
    message: dict[str, Any] = field(default_factory=dict)
    failure: str | None = None

    @property
    def result(self) -> dict[str, Any]:
        value = self.message.get("result")
        return value if isinstance(value, dict) else {}

    @property
    def answered(self) -> bool:
        """A 200 whose message is a tools/call result (a tool error included)."""
        return self.status == 200 and self.failure is None and bool(self.result)

    @property
    def is_tool_error(self) -> bool:
        return bool(self.result.get("isError"))

    @property
    def content(self) -> dict[str, Any]:
        value = self.result.get("structuredContent")
        return value if isinstance(value, dict) else {}

    @property
    def error(self) -> dict[str, Any]:
        """A tool error's object (kind, message, detail); {} for a success."""
        value = self.content.get("error") if self.is_tool_error else None
        return value if isinstance(value, dict) else {}

    @property
    def reason(self) -> str | None:
        detail = self.error.get("detail")
        return detail.get("reason") if isinstance(detail, dict) else None

    def notices(self, code: str | None = None) -> list[dict[str, Any]]:
        found = self.content.get("notices")
        if not isinstance(found, list):
            return []
        return [n for n in found if isinstance(n, dict) and (code is None or n["code"] == code)]


def _message(body: bytes, content_type: str) -> dict[str, Any]:
    """The JSON-RPC message of a body, plain JSON or the last event of a stream."""
    text = body
    if content_type.startswith("text/event-stream"):
        data = [line[5:] for line in body.split(b"\n") if line.startswith(b"data:")]
        text = data[-1] if data else b""
    value = json.loads(text)
    return value if isinstance(value, dict) else {}


def call(
    port: int,
    tool: str,
    arguments: Mapping[str, Any] | None = None,
    token: str | None = None,
    timeout_s: float = 10.0,
) -> Answer:
    """One tools/call on a new connection, closed afterwards. A transport failure (refused,
    reset, closed unanswered, silent past `timeout_s`) is an Answer with status 0."""
    body = call_body(tool, arguments)
    headers = call_headers(tool, token, port)
    started = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout_s)
    try:
        conn.request("POST", "/mcp", body=body, headers=headers)
        response = conn.getresponse()
        data = response.read()
        elapsed = time.monotonic() - started
        status = response.status
        content_type = response.getheader("Content-Type") or ""
    except (OSError, http.client.HTTPException) as exc:
        return Answer(0, time.monotonic() - started, failure=type(exc).__name__)
    finally:
        conn.close()
    if status != 200:
        return Answer(status, elapsed, failure=f"HTTP {status}")
    try:
        message = _message(data, content_type)
    except ValueError:
        return Answer(status, elapsed, failure="body is not JSON")
    return Answer(status, elapsed, message)


# -- Redis, read over a plain socket -----------------------------------------------------------


def redis_info(port: int, section: str, timeout_s: float = 5.0) -> dict[str, str]:
    """`INFO <section>` of the Redis at 127.0.0.1:`port` as name -> value."""
    with socket.create_connection(("127.0.0.1", port), timeout_s) as sock:
        sock.sendall(f"INFO {section}\r\n".encode())
        data = b""
        while b"\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                raise ConnectionError("Redis closed the connection")
            data += chunk
        first, _, rest = data.partition(b"\r\n")
        if not first.startswith(b"$"):
            raise ConnectionError(f"unexpected INFO answer: {first[:80]!r}")
        size = int(first[1:])
        while len(rest) < size + 2:
            chunk = sock.recv(65536)
            if not chunk:
                raise ConnectionError("Redis closed the connection")
            rest += chunk
    info: dict[str, str] = {}
    for line in rest[:size].decode().splitlines():
        name, sep, value = line.partition(":")
        if sep and not name.startswith("#"):
            info[name] = value
    return info


def command_calls(port: int) -> dict[str, int]:
    """Calls per command since Redis started (INFO commandstats), by command name."""
    calls: dict[str, int] = {}
    for name, value in redis_info(port, "commandstats").items():
        if not name.startswith("cmdstat_"):
            continue
        fields = dict(part.split("=", 1) for part in value.split(","))
        calls[name.removeprefix("cmdstat_")] = int(fields["calls"])
    return calls


def calls_between(before: Mapping[str, int], after: Mapping[str, int]) -> dict[str, int]:
    """The commands run between two `command_calls` readings (INFO itself left out)."""
    names = set(before) | set(after)
    delta = {n: after.get(n, 0) - before.get(n, 0) for n in names if n != "info"}
    return {n: d for n, d in sorted(delta.items()) if d > 0}


__all__ = [
    "MODERN",
    "Answer",
    "Engines",
    "Replica",
    "base_env",
    "call",
    "call_body",
    "call_headers",
    "calls_between",
    "command_calls",
    "engines",
    "redis_info",
    "replicas",
    "start_replicas",
]
