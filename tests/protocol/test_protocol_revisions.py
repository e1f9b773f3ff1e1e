"""The protocol tests against every revision rypsok serves (REQ-TEST-009).

The revisions are the pinned SDK's: the handshake-based ones (initialize names a
protocolVersion, a session follows) and the stateless 2026-07-28 one (server/discover,
`_meta` on every request and, over HTTP, the MCP-Protocol-Version, Mcp-Method and
Mcp-Name headers). For each revision one scripted conversation per transport runs once and
the tests read its record:

- stdio: one child process per revision, the five running side by side. A wrapper makes
  engine_status print and write to fd 1 as a careless dependency would.
- HTTP: one listener in this process, one caller per revision so that the per-caller rate
  limits of one revision cannot hide or cause those of another.

Covered in every revision: the tool list and its budget (REQ-MCP-008), the annotations
(REQ-MCP-009), the rate limit (REQ-MCP-010), cancellation (REQ-MCP-007); on stdio also
stdout purity and shutdown at end of input (REQ-MCP-002), which have no HTTP counterpart:
there stdout is not the protocol's channel and there is no end of input.
"""

from __future__ import annotations

import contextlib
import json
import select
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from rypsok.core import limits
from tests.support.http_harness import (
    ACCEPT_BOTH,
    Served,
    config_text,
    post,
    request_bytes,
    served,
    sse_json,
)
from tests.support.paths import REPO
from tests.support.run import clean_env

REVISIONS = (*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS)
# MCP-Protocol-Version on requests after the handshake came with 2025-06-18.
NO_VERSION_HEADER = ("2024-11-05", "2025-03-26")
PINNED = REPO / "fixtures" / "protocol" / "tools-list.json"
ANNOTATIONS = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True}
OPEN_WORLD = {"web_search": True, "web_fetch": True, "engine_status": False}
STRAY = ("STRAY-PRINT", "STRAY-FD1")
SHUTDOWN_MS = 1500
BRIEF_S = 0.5  # answered after end of input, well inside SHUTDOWN_MS
HOLD_S = 9.0  # below the search deadline below: only an abort ends a held call early
# LIM-O2 plus room for a machine shared with other runs; a call that is not cancelled
# runs for HOLD_S.
CANCEL_BOUND_S = limits.default("LIM-O2") / 1000 + 0.5
WAIT_S = 20.0

ENGINE = """[search]
deadline_ms = 10000
engine_timeout_ms = 9500
[limits]
engine_status_per_minute = 2
[engines.wikipedia]
type = "wikipedia"
categories = ["general", "science"]
base_url = "{base_url}"
"""

STDIO_CONFIG = (
    'config_version = 1\n[service]\nshutdown_ms = {shutdown}\n[egress]\nallow = ["127.0.0.1"]\n'
    + ENGINE
)

# Runs `serve` with engine_status wrapped to write around the protocol, the way a
# dependency's print or a stray os.write would.
WRAPPER = """
import os, sys
from rypsok.core import facade
from rypsok.commands.cli import main
original = facade.Rypsok.status
async def status(self, *args, **kwargs):
    print("STRAY-PRINT", flush=True)
    os.write(1, b"STRAY-FD1\\n")
    return await original(self, *args, **kwargs)
facade.Rypsok.status = status
sys.exit(main(["serve", "--config", sys.argv[1]]))
"""


# --------------------------------------------------------------- the engine stand-in


class Wiki:
    """A MediaWiki API on 127.0.0.1 whose answer time the query picks: `hold ...` waits
    until the client goes away (or HOLD_S, or let_go), `brief ...` answers after BRIEF_S,
    anything else at once. It notes when each query arrived and when a held one was
    abandoned, which is how an aborted outbound request is seen from outside the process.

    Wikipedia's admission allows one request at a time per process, so a held request
    that was not aborted is let go once judged: the next call must not queue behind it."""

    def __init__(self) -> None:
        self.arrived: dict[str, float] = {}
        self.abandoned: dict[str, float] = {}
        self.released: set[str] = set()
        self.release = threading.Event()
        self.base_url = ""

    def let_go(self, query: str) -> None:
        self.released.add(query)

    def wait(self, book: dict[str, float], query: str, timeout: float) -> float | None:
        give_up = time.monotonic() + timeout
        while query not in book and time.monotonic() < give_up:
            time.sleep(0.01)
        return book.get(query)

    def handler(self) -> type[BaseHTTPRequestHandler]:
        wiki = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                params = parse_qs(urlsplit(self.path).query)
                query = params.get("srsearch", [""])[0]
                wiki.arrived[query] = time.monotonic()
                if query.startswith("hold") and self._held(query):
                    wiki.abandoned[query] = time.monotonic()
                    return
                if query.startswith("brief"):
                    time.sleep(BRIEF_S)
                body = json.dumps(
                    {
                        "requestid": params.get("requestid", ["en"])[0],
                        "batchcomplete": "",
                        "query": {"search": [{"ns": 0, "title": "Rust", "snippet": "A language"}]},
                    }
                ).encode()
                with contextlib.suppress(OSError):
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)

            def _held(self, query: str) -> bool:
                """True when the client closed its connection while held."""
                give_up = time.monotonic() + HOLD_S
                while time.monotonic() < give_up and not wiki.release.is_set():
                    if query in wiki.released:
                        return False
                    readable, _, _ = select.select([self.connection], [], [], 0.02)
                    if readable:
                        try:
                            return not self.connection.recv(1, socket.MSG_PEEK)
                        except OSError:
                            return True
                return False

            def log_message(self, *args: Any) -> None:
                pass

        return Handler


@contextlib.contextmanager
def wiki_standin() -> Iterator[Wiki]:
    wiki = Wiki()
    server = ThreadingHTTPServer(("127.0.0.1", 0), wiki.handler())
    threading.Thread(target=server.serve_forever, daemon=True).start()
    wiki.base_url = f"http://127.0.0.1:{server.server_address[1]}/w"
    try:
        yield wiki
    finally:
        wiki.release.set()
        server.shutdown()
        server.server_close()


# ------------------------------------------------------------------ the record


@dataclass
class Record:
    """What one conversation in one revision saw; the tests judge it."""

    revision: str
    opening: dict[str, Any] = field(default_factory=dict)
    sessions: set[str] = field(default_factory=set)  # HTTP: Mcp-Session-Id values answered
    results: list[dict[str, Any]] = field(default_factory=list)  # every result, in order
    tools: dict[str, Any] = field(default_factory=dict)
    statuses: list[dict[str, Any]] = field(default_factory=list)
    after_cancel: dict[str, Any] = field(default_factory=dict)
    cancel_answered: bool = False
    cancel_abandoned_s: float | None = None  # engine request gone, after the cancel
    cancel_logged_s: float | None = None  # the call's log event, after the cancel
    # stdio only
    stdout: list[tuple[float, bytes]] = field(default_factory=list)
    stderr: list[tuple[float, bytes]] = field(default_factory=list)
    answers: dict[Any, dict[str, Any]] = field(default_factory=dict)
    exit_code: int | None = None
    eof_at: float = 0.0
    exit_s: float | None = None
    eof_held_abandoned: bool = False


def meta(revision: str) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": revision,
        "io.modelcontextprotocol/clientInfo": {"name": "revisions", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }


def message(
    revision: str, request_id: int | None, method: str, params: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A request (or, without an id, a notification) as a client of *revision* writes it."""
    body = dict(params or {})
    if revision in MODERN_PROTOCOL_VERSIONS and request_id is not None:
        body["_meta"] = meta(revision)
    out: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": body}
    if request_id is not None:
        out["id"] = request_id
    return out


def call(revision: str, request_id: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return message(revision, request_id, "tools/call", {"name": name, "arguments": arguments})


def initialize(revision: str, request_id: int) -> dict[str, Any]:
    return message(
        revision,
        request_id,
        "initialize",
        {
            "protocolVersion": revision,
            "capabilities": {},
            "clientInfo": {"name": "revisions", "version": "1"},
        },
    )


def cancelled(request_id: int) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": request_id, "reason": "test"},
    }


def modern(revision: str) -> bool:
    return revision in MODERN_PROTOCOL_VERSIONS


# ------------------------------------------------------------- stdio, per revision


class Child:
    """`serve` in a child process; lines read in threads, each with its arrival time."""

    def __init__(self, config: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", WRAPPER, str(config)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=REPO,
            env=clean_env(),
        )
        self.stdout: list[tuple[float, bytes]] = []
        self.stderr: list[tuple[float, bytes]] = []
        self.readers = [
            threading.Thread(target=self._read, args=(self.proc.stdout, self.stdout), daemon=True),
            threading.Thread(target=self._read, args=(self.proc.stderr, self.stderr), daemon=True),
        ]
        for reader in self.readers:
            reader.start()

    @staticmethod
    def _read(stream: Any, into: list[tuple[float, bytes]]) -> None:
        for line in iter(stream.readline, b""):
            into.append((time.monotonic(), line))

    def send(self, *messages: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
        self.proc.stdin.flush()

    def answer(self, request_id: int, timeout: float = WAIT_S) -> dict[str, Any]:
        give_up = time.monotonic() + timeout
        while time.monotonic() < give_up:
            for _, line in list(self.stdout):
                with contextlib.suppress(ValueError):
                    got = json.loads(line)
                    if isinstance(got, dict) and got.get("id") == request_id:
                        return got
            time.sleep(0.01)
        return {}

    def logged(self, event: str, tool: str, timeout: float) -> float | None:
        give_up = time.monotonic() + timeout
        while time.monotonic() < give_up:
            for at, line in list(self.stderr):
                with contextlib.suppress(ValueError):
                    record = json.loads(line)
                    if record.get("event") == event and record.get("tool") == tool:
                        return at
            time.sleep(0.01)
        return None


def stdio_conversation(revision: str, config: Path, wiki: Wiki) -> Record:
    record = Record(revision)
    child = Child(config)
    try:
        if modern(revision):
            child.send(message(revision, 1, "server/discover"))
        else:
            child.send(
                initialize(revision, 1), message(revision, None, "notifications/initialized")
            )
        record.opening = child.answer(1).get("result", {})
        child.send(message(revision, 2, "tools/list"))
        record.tools = child.answer(2).get("result", {})
        child.send(*(call(revision, i, "engine_status", {}) for i in (3, 4, 5)))
        record.statuses = [child.answer(i).get("result", {}) for i in (3, 4, 5)]

        held = f"hold cancel {revision}"
        child.send(call(revision, 6, "web_search", {"query": held}))
        if wiki.wait(wiki.arrived, held, WAIT_S) is not None:
            sent = time.monotonic()
            child.send(cancelled(6), message(revision, 7, "tools/list"))
            record.after_cancel = child.answer(7).get("result", {})
            abandoned = wiki.wait(wiki.abandoned, held, CANCEL_BOUND_S)
            logged = child.logged("call", "web_search", CANCEL_BOUND_S)
            record.cancel_abandoned_s = None if abandoned is None else abandoned - sent
            record.cancel_logged_s = None if logged is None else logged - sent
        wiki.let_go(held)

        # End of input with two calls in flight: 8 at the engine, 9 queued behind it (one
        # engine request at a time), so 9 is still running when shutdown_ms is up.
        brief, held = f"brief eof {revision}", f"hold eof {revision}"
        child.send(call(revision, 8, "web_search", {"query": brief}))
        wiki.wait(wiki.arrived, brief, WAIT_S)
        child.send(call(revision, 9, "web_search", {"query": held}))
        record.eof_at = time.monotonic()
        assert child.proc.stdin is not None
        child.proc.stdin.close()
        record.exit_code = child.proc.wait(WAIT_S)
        record.exit_s = time.monotonic() - record.eof_at
        record.eof_held_abandoned = held in wiki.abandoned
    finally:
        if child.proc.poll() is None:
            child.proc.kill()
            child.proc.wait(10)
        for reader in child.readers:
            reader.join(10)
    record.stdout, record.stderr = child.stdout, child.stderr
    for _, line in record.stdout:
        with contextlib.suppress(ValueError):
            got = json.loads(line)
            if isinstance(got, dict) and "id" in got:
                record.answers[got["id"]] = got
    record.cancel_answered = 6 in record.answers
    record.results = [a["result"] for a in record.answers.values() if "result" in a]
    return record


# -------------------------------------------------------------- HTTP, per revision


def caller_id(revision: str) -> str:
    return "rev_" + revision.replace("-", "_")


def token(revision: str) -> str:
    return "t" * 24 + "-token-of-" + revision.replace("-", "") + "-0123456789"


def http_config(base_url: str) -> str:
    callers = "".join(
        f'[[service.http.auth.callers]]\nid = "{caller_id(r)}"\n'
        f'token_env = "RYPSOK_TOKEN_{caller_id(r).upper()}"\n'
        for r in REVISIONS
    )
    return config_text(more=ENGINE.format(base_url=base_url) + callers)


def http_env() -> dict[str, str]:
    return clean_env(**{f"RYPSOK_TOKEN_{caller_id(r).upper()}": token(r) for r in REVISIONS})


class HttpClient:
    """Requests as a client of one revision sends them: the headers of 2026-07-28, or a
    session of a handshake revision with the version header where it existed."""

    def __init__(self, port: int, revision: str) -> None:
        self.port = port
        self.revision = revision
        self.session: str | None = None
        self.sessions: set[str] = set()

    def headers(self, body: dict[str, Any]) -> dict[str, str]:
        headers = {
            "Host": "127.0.0.1",
            "Content-Type": "application/json",
            "Accept": ACCEPT_BOTH,
            "Authorization": f"Bearer {token(self.revision)}",
        }
        if modern(self.revision):
            headers["MCP-Protocol-Version"] = self.revision
            headers["Mcp-Method"] = body["method"]
            if body["method"] == "tools/call":
                headers["Mcp-Name"] = body["params"]["name"]
            return headers
        if self.session is not None:
            headers["Mcp-Session-Id"] = self.session
            if self.revision not in NO_VERSION_HEADER:
                headers["MCP-Protocol-Version"] = self.revision
        return headers

    def result(self, body: dict[str, Any]) -> dict[str, Any]:
        reply = post(self.port, body, self.headers(body))
        if "mcp-session-id" in reply.headers:
            self.sessions.add(reply.headers["mcp-session-id"])
        if reply.status != 200 or not reply.body:
            return {}
        if body["method"] == "initialize":
            self.session = reply.headers.get("mcp-session-id")
        return dict(sse_json(reply).get("result", {}))


def http_conversation(server: Served, revision: str, wiki: Wiki) -> Record:
    record = Record(revision)
    client = HttpClient(server.port, revision)
    results: list[dict[str, Any]] = []

    def ask(body: dict[str, Any]) -> dict[str, Any]:
        got = client.result(body)
        results.append(got)
        return got

    if modern(revision):
        record.opening = ask(message(revision, 1, "server/discover"))
    else:
        record.opening = ask(initialize(revision, 1))
        initialized = message(revision, None, "notifications/initialized")
        post(server.port, initialized, client.headers(initialized))
    record.tools = ask(message(revision, 2, "tools/list"))
    record.statuses = [ask(call(revision, i, "engine_status", {})) for i in (3, 4, 5)]
    record.results = results

    # The signal over HTTP is the closed response stream.
    held = f"hold http {revision}"
    body = call(revision, 6, "web_search", {"query": held})
    with socket.create_connection(("127.0.0.1", server.port), timeout=WAIT_S) as sock:
        sock.sendall(request_bytes(body, client.headers(body)))
        arrived = wiki.wait(wiki.arrived, held, WAIT_S)
    closed = time.monotonic()
    if arrived is not None:
        abandoned = wiki.wait(wiki.abandoned, held, CANCEL_BOUND_S)
        record.cancel_abandoned_s = None if abandoned is None else abandoned - closed
        give_up = closed + CANCEL_BOUND_S
        while time.monotonic() < give_up and record.cancel_logged_s is None:
            for event in server.events("call"):
                if event.get("caller") == caller_id(revision) and event["tool"] == "web_search":
                    record.cancel_logged_s = time.monotonic() - closed
            time.sleep(0.01)
    wiki.let_go(held)
    record.after_cancel = ask(message(revision, 7, "tools/list"))
    record.sessions = client.sessions
    return record


Runs = dict[tuple[str, str], Record]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    """Every conversation, run once for the whole module: (transport, revision) -> Record."""
    folder = tmp_path_factory.mktemp("revisions")
    config = folder / "stdio.toml"
    with wiki_standin() as wiki, served(folder, http_config(wiki.base_url), http_env()) as server:
        config.write_text(STDIO_CONFIG.format(shutdown=SHUTDOWN_MS, base_url=wiki.base_url))
        # The children side by side, since a conversation mostly waits on its child or the
        # stand-in; meanwhile the HTTP ones, one after another, because the engine takes
        # one request at a time per process and the listener is one process.
        with ThreadPoolExecutor(len(REVISIONS)) as pool:
            children = {r: pool.submit(stdio_conversation, r, config, wiki) for r in REVISIONS}
            out = {("http", r): http_conversation(server, r, wiki) for r in REVISIONS}
            out.update({("stdio", r): future.result() for r, future in children.items()})
    return out


def each(transports: tuple[str, ...] = ("stdio", "http")) -> Callable[[Any], Any]:
    """Parametrize a test over transport and revision."""
    cases = [pytest.param(t, r, id=f"{t}-{r}") for t in transports for r in REVISIONS]
    return pytest.mark.parametrize(("transport", "revision"), cases)


# ---------------------------------------------------------------------- the tests


@each()
def test_req_test_009_req_mcp_006_each_case_speaks_its_revision(
    runs: Runs, transport: str, revision: str
) -> None:
    run = runs[transport, revision]
    assert run.opening, "the opening request went unanswered"
    assert len(run.results) >= 5 and all(run.results)
    if modern(revision):
        assert revision in run.opening["supportedVersions"]
        assert not run.sessions  # stateless
        # Results are written the way this revision writes them, every one.
        assert all(r.get("resultType") == "complete" for r in run.results)
    else:
        assert run.opening["protocolVersion"] == revision  # negotiated, not a fallback
        assert run.opening["serverInfo"]["name"] == "rypsok"
        assert all("resultType" not in r for r in run.results)
        if transport == "http":
            assert len(run.sessions) == 1  # one session, from initialize to the end


@each()
def test_req_test_009_req_mcp_008_tool_list_and_budget_in_every_revision(
    runs: Runs, transport: str, revision: str
) -> None:
    run = runs[transport, revision]
    served_tools = run.tools["tools"]
    # The same definitions, byte for byte, as the reviewed contract.
    assert served_tools == json.loads(PINNED.read_text(encoding="utf-8"))
    # LIM-I1 counted on what this revision put on the wire (clarifications' counting).
    total = len(run.opening["instructions"])
    for tool in served_tools:
        schema = json.dumps(tool["inputSchema"], separators=(",", ":"), ensure_ascii=False)
        total += len(tool["name"]) + len(tool["description"]) + len(schema)
    assert total <= limits.default("LIM-I1")
    for tool in served_tools:
        properties = tool["inputSchema"]["properties"]
        assert len(properties) <= limits.default("LIM-I2")
        assert all(p["type"] in ("string", "integer", "boolean") for p in properties.values())


@each()
def test_req_test_009_req_mcp_009_annotations_in_every_revision(
    runs: Runs, transport: str, revision: str
) -> None:
    run = runs[transport, revision]
    served_tools = run.tools["tools"]
    assert [t["name"] for t in served_tools] == ["web_search", "web_fetch", "engine_status"]
    for tool in served_tools:
        assert tool["annotations"] == dict(ANNOTATIONS, openWorldHint=OPEN_WORLD[tool["name"]])
    # Not per connection: the list after the cancellation is the same list.
    assert run.after_cancel["tools"] == served_tools


@each()
def test_req_test_009_req_mcp_010_rate_limit_in_every_revision(
    runs: Runs, transport: str, revision: str
) -> None:
    run = runs[transport, revision]
    assert [s.get("isError") for s in run.statuses] == [False, False, True]
    error = run.statuses[2]["structuredContent"]["error"]
    assert error["kind"] == "unavailable" and error["detail"]["reason"] == "rate_limited"
    assert 0 < error["detail"]["retry_after_ms"] <= 60_000


@pytest.mark.parametrize(
    ("transport", "revision"),
    [pytest.param("stdio", r, id=f"stdio-{r}") for r in REVISIONS]
    + [pytest.param("http", r, id=f"http-{r}") for r in REVISIONS],
)
def test_req_test_009_req_mcp_007_cancellation_in_every_revision(
    runs: Runs, transport: str, revision: str
) -> None:
    run = runs[transport, revision]
    # The engine request was aborted and the call ended, within LIM-O2 (plus a margin).
    assert run.cancel_abandoned_s is not None, "the engine request was never aborted"
    assert run.cancel_abandoned_s < CANCEL_BOUND_S
    assert run.cancel_logged_s is not None and run.cancel_logged_s < CANCEL_BOUND_S
    assert run.after_cancel.get("tools"), "serving did not go on after the cancellation"
    if transport == "stdio":
        assert not run.cancel_answered  # no message at all for a cancelled call


@each(("stdio",))
def test_req_test_009_req_mcp_002_stdout_carries_only_protocol_messages_in_every_revision(
    runs: Runs, transport: str, revision: str
) -> None:
    run = runs[transport, revision]
    for _, line in run.stdout:
        got = json.loads(line)  # a stray line fails here
        assert got["jsonrpc"] == "2.0" and ("result" in got or "error" in got)
    assert set(run.answers) == {1, 2, 3, 4, 5, 7, 8}
    # The stray writes happened (one pair per engine_status call) and went to stderr.
    stderr = [raw.decode().rstrip("\n") for _, raw in run.stderr]
    for marker in STRAY:
        assert stderr.count(marker) == 3
    for text in stderr:
        if text not in STRAY:
            json.loads(text)  # otherwise only log objects


@each(("stdio",))
def test_req_test_009_req_mcp_002_end_of_input_in_every_revision(
    runs: Runs, transport: str, revision: str
) -> None:
    run = runs[transport, revision]
    assert run.exit_code == 0
    # Within shutdown_ms, plus the interpreter's exit on a machine shared with four more
    # children; a shutdown that waited for the held call would take HOLD_S.
    assert run.exit_s is not None and run.exit_s < SHUTDOWN_MS / 1000 + 2.0
    # The call in flight answered after the end of input (clarifications: graceful) ...
    answered = [at for at, line in run.stdout if json.loads(line).get("id") == 8]
    assert answered and answered[0] > run.eof_at
    assert run.answers[8]["result"]["isError"] is False
    # ... the one still running at shutdown_ms was aborted, with no answer.
    assert 9 not in run.answers
    assert run.eof_held_abandoned, "the call still running at shutdown_ms was not aborted"
