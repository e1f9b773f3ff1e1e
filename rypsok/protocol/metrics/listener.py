"""The operator's listener ([service.metrics] bind): /metrics for Prometheus, /healthz for
the orchestrator's liveness check, /readyz for the load balancer's.

Apart from the MCP listener, so that a scrape never competes with callers' connections
and never needs their tokens. One request per connection, answered and closed, each
bounded: LIM-T2 connections at once (more are closed unanswered), a head of 8 KiB read
within 5 s. A scrape renders at most once per LIM-T3 however many scrapers ask, so a
flood of scrapes costs one rendering a second.

/healthz answers 503 when the event loop fell behind by more than LIM-T4 (a heartbeat
measures it), /readyz answers 503 before the service has opened and while it drains.
"""

from __future__ import annotations

import hmac
import time
from http import HTTPStatus

import anyio
import anyio.abc
import h11

from rypsok.core import limits
from rypsok.core.config.settings import MetricsSettings
from rypsok.core.telemetry import caller_calls, log
from rypsok.protocol.metrics.collect import Service, families
from rypsok.protocol.metrics.exposition import CONTENT_TYPE, render

MAX_CONNECTIONS = limits.default("LIM-T2")
RENDER_REUSE_S = limits.default("LIM-T3") / 1000
LAG_BOUND_S = limits.default("LIM-T4") / 1000
HEAD_BYTES = 8 * 1024
HEAD_S = 5.0
BEAT_S = 0.25


class Heartbeat:
    """How far the event loop falls behind: a task that sleeps BEAT_S and notes how late
    it woke, and when it last did."""

    def __init__(self) -> None:
        self.lag_s = 0.0
        self.last = time.monotonic()

    async def run(self) -> None:
        while True:
            before = time.monotonic()
            await anyio.sleep(BEAT_S)
            now = time.monotonic()
            self.lag_s = max(0.0, now - before - BEAT_S)
            self.last = now

    def alive(self) -> bool:
        late = time.monotonic() - self.last - BEAT_S
        return self.lag_s <= LAG_BOUND_S and late <= LAG_BOUND_S


class MetricsListener:
    def __init__(self, settings: MetricsSettings, service: Service) -> None:
        self._settings = settings
        self._service = service
        self._token = settings.token.reveal().encode() if settings.token is not None else None
        self._slots = anyio.Semaphore(MAX_CONNECTIONS)
        self._render_lock = anyio.Lock()
        self._rendered: tuple[float, bytes] | None = None
        self.heartbeat = Heartbeat()
        self.port: int | None = None
        self.scrapes = 0  # renderings made: read by tests and the bench
        self.reuse_s = RENDER_REUSE_S  # a test that scrapes twice in a row sets 0

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[int] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        listener = await anyio.create_tcp_listener(
            local_host=self._settings.bind_host, local_port=self._settings.bind_port
        )
        async with listener, anyio.create_task_group() as group:
            sockets = [s for s in listener.listeners if isinstance(s, anyio.abc.SocketListener)]
            self.port = int(sockets[0].extra(anyio.abc.SocketAttribute.local_port))  # noqa: S610 - anyio's typed attributes
            group.start_soon(self.heartbeat.run)
            log.info("metrics_listening", port=self.port, token=self._token is not None)
            task_status.started(self.port)
            await listener.serve(self._connection, task_group=group)

    async def _connection(self, stream: anyio.abc.SocketStream) -> None:
        async with stream:
            if self._slots.value == 0:
                return  # at the bound: closed unanswered, the scraper tries again
            async with self._slots:
                with anyio.move_on_after(HEAD_S):
                    request = await _read_head(stream)
                    if request is None:
                        return
                    status, kind, body = await self._answer(request)
                    await stream.send(_response(status, kind, body))

    async def _answer(self, request: h11.Request) -> tuple[HTTPStatus, bytes, bytes]:
        path = request.target.split(b"?", 1)[0]
        if request.method != b"GET":
            return _text(HTTPStatus.METHOD_NOT_ALLOWED, "Method Not Allowed")
        if path == b"/healthz":
            if self.heartbeat.alive():
                return _text(HTTPStatus.OK, "ok")
            return _text(HTTPStatus.SERVICE_UNAVAILABLE, "the event loop is behind")
        if path == b"/readyz":
            if self._service.ready():
                return _text(HTTPStatus.OK, "ready")
            state = "draining" if self._service.draining() else "starting"
            return _text(HTTPStatus.SERVICE_UNAVAILABLE, state)
        if path != b"/metrics":
            return _text(HTTPStatus.NOT_FOUND, "Not Found: /metrics, /healthz, /readyz")
        if self._token is not None and not self._authorized(request):
            return _text(HTTPStatus.UNAUTHORIZED, "Unauthorized")
        return HTTPStatus.OK, CONTENT_TYPE, await self.rendered()

    def _authorized(self, request: h11.Request) -> bool:
        assert self._token is not None
        values = [v for k, v in request.headers if k == b"authorization"]
        if len(values) != 1:
            return False
        scheme, _, presented = values[0].partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(presented.strip(), self._token)

    async def rendered(self) -> bytes:
        async with self._render_lock:  # one rendering at a time; the others reuse it
            now = time.monotonic()
            if self._rendered is not None and now - self._rendered[0] < self.reuse_s:
                return self._rendered[1]
            body = render(await families(self._service))
            self.scrapes += 1
            self._rendered = (time.monotonic(), body)
            return body


async def _read_head(stream: anyio.abc.SocketStream) -> h11.Request | None:
    conn = h11.Connection(h11.SERVER, max_incomplete_event_size=HEAD_BYTES)
    while True:
        try:
            event = conn.next_event()
        except h11.RemoteProtocolError:
            return None
        if isinstance(event, h11.Request):
            return event
        if event is h11.NEED_DATA:
            try:
                data = await stream.receive(HEAD_BYTES)
            except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
                return None
            conn.receive_data(data)
            continue
        return None


def _text(status: HTTPStatus, words: str) -> tuple[HTTPStatus, bytes, bytes]:
    return status, b"text/plain; charset=utf-8", words.encode("ascii") + b"\n"


def _response(status: HTTPStatus, content_type: bytes, body: bytes) -> bytes:
    head = [
        b"HTTP/1.1 %d %s" % (status.value, status.phrase.encode("ascii")),
        b"content-type: " + content_type,
        b"content-length: %d" % len(body),
        b"cache-control: no-store",
        b"connection: close",
    ]
    return b"\r\n".join(head) + b"\r\n\r\n" + body


async def serve_beside(
    settings: MetricsSettings | None,
    service: Service,
    group: anyio.abc.TaskGroup,
) -> MetricsListener | None:
    """Start the listener in `group` when [service.metrics] asks for one."""
    if settings is None:
        return None
    caller_calls.configure(settings.per_caller, limits.default("LIM-T1"))
    listener = MetricsListener(settings, service)
    await group.start(_run, listener)
    return listener


async def _run(
    listener: MetricsListener,
    *,
    task_status: anyio.abc.TaskStatus[int] = anyio.TASK_STATUS_IGNORED,
) -> None:
    await listener.run(task_status=task_status)


__all__ = ["Heartbeat", "MetricsListener", "serve_beside"]
