"""The accept loop: bind, bound the connections, hand each to HttpConnection, stop.

Start: one SDK session manager per caller is entered (their lifespans), the
socket is bound, and the first line of the log says `listening` with the
address really bound (port 0 picks one) and the number of callers (after
`sdk_hooks_unavailable`, when the installed SDK is not the one the fast lane and
the session hooks were read in: then its public path serves, with the same answers).
Stop (SIGTERM, SIGINT, or request_stop()): accepting ends at once, waiting
connections close, requests in flight may finish until [service] shutdown_ms,
then whatever remains is cancelled and the sessions end with the managers.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import anyio
import anyio.abc
from anyio.abc import SocketAttribute

from rypsok.core.config.settings import host_port
from rypsok.core.facade import Rypsok
from rypsok.core.telemetry import counters, log
from rypsok.protocol import sdk_private
from rypsok.protocol.http.asgi import ASGIApp
from rypsok.protocol.http.auth import OAUTH_APP, Authenticator, token_caller
from rypsok.protocol.http.connection import Context, HttpConnection, TransportCallbacks
from rypsok.protocol.http.gate import Policy
from rypsok.protocol.http.modern import ModernLane
from rypsok.protocol.http.owners import SessionOwners
from rypsok.protocol.http.refusals import note
from rypsok.protocol.http.sessions import SessionPool
from rypsok.protocol.metrics.collect import Service
from rypsok.protocol.metrics.listener import MetricsListener, serve_beside
from rypsok.protocol.process import counters_every_minute, stop_signal
from rypsok.protocol.server import build_server, shutdown_grace_s

ACCEPT_RETRY_S = 0.1
ACCEPT_LOG_EVERY_S = 10.0


def _attribute(obj: anyio.TypedAttributeProvider, attribute: Any) -> Any:
    return obj.extra(attribute, None)  # noqa: S610 - anyio's typed attributes, not Django


def _family(sock: socket.socket) -> str:
    return "ipv6" if sock.family == socket.AF_INET6 else "ipv4"


class HttpListener:
    """Streamable HTTP on [service.http].bind; run() until stopped."""

    def __init__(self, core: Rypsok, *, install_signals: bool = True) -> None:
        self._settings = core.config.service.http
        self._core = core
        self._shutdown_s = shutdown_grace_s(core.config.service.shutdown_ms)
        self._install_signals = install_signals
        oauth_settings = self._settings.oauth
        contact = core.config.service.user_agent_contact
        oauth = None
        if oauth_settings is not None:
            # Loaded only here: cryptography's import is paid only when OAuth is on.
            from rypsok.core.oauth.resource import resource_server

            oauth = resource_server(oauth_settings, contact)
        auth = Authenticator(self._settings.callers, oauth)
        # The fast lane and the session hooks reach into the SDK's private parts:
        # only while they are there and the operator has not turned the lane off.
        self.fast_lane = self._settings.fast_lane and sdk_private.AVAILABLE
        self._pool = SessionPool(self._settings.max_sessions, hooked=self.fast_lane)
        for caller in auth.caller_ids:
            # One Server per caller: its tools call the facade as that caller, so
            # the rate limits are the caller's own (REQ-SEC-019).
            server = build_server(core, caller, legacy_revisions=self._settings.legacy_revisions)
            self._pool.add(caller, server, self._settings.max_request_bytes)
        if oauth is not None:
            # Every caller from a token shares one server; its tools read the caller of
            # each request (auth.TOKEN_CALLER), and the gate keeps sessions apart.
            server = build_server(
                core, token_caller, legacy_revisions=self._settings.legacy_revisions
            )
            self._pool.add(OAUTH_APP, server, self._settings.max_request_bytes)
        self._policy = Policy(
            auth=auth,
            allowed_hosts=tuple(h.lower() for h in self._settings.allowed_hosts),
            bind_host=self._settings.bind_host,
            allowed_origins=self._settings.allowed_origins,
            max_request_bytes=self._settings.max_request_bytes,
            legacy_revisions=self._settings.legacy_revisions,
        )
        self._connections: set[HttpConnection] = set()
        self._stop: anyio.Event | None = None
        self._last_accept_log = -ACCEPT_LOG_EVERY_S
        self.port: int | None = None
        self.metrics: MetricsListener | None = None

    def request_stop(self) -> None:
        """Begin the graceful stop; call on the listener's event loop."""
        if self._stop is not None:
            self._stop.set()

    async def run(
        self,
        *,
        task_status: anyio.abc.TaskStatus[int] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        self._stop = anyio.Event()
        shutting_down = anyio.Event()
        multi = await anyio.create_tcp_listener(
            local_host=self._settings.bind_host, local_port=self._settings.bind_port
        )
        listeners = [s for s in multi.listeners if isinstance(s, anyio.abc.SocketListener)]
        self.port = port = int(_attribute(listeners[0], SocketAttribute.local_port))
        host = self._settings.bind_host
        address = host_port(host, port)
        sdk_private.warn_if_unavailable("http")
        await self._core.open()
        try:
            await self._listen(multi, listeners, (host, port), address, shutting_down, task_status)
        finally:
            with anyio.CancelScope(shield=True):
                await self._core.close()
        counters.emit(log)

    async def _listen(
        self,
        multi: anyio.abc.Listener[anyio.abc.SocketStream],
        listeners: list[anyio.abc.SocketListener],
        server: tuple[str, int],
        address: str,
        shutting_down: anyio.Event,
        task_status: anyio.abc.TaskStatus[int],
    ) -> None:
        async with self._pool.running() as managers:
            apps: dict[str, ASGIApp] = {c: self._pool.app(c) for c in managers}
            ctx = Context(
                policy=self._policy,
                apps=apps,
                lanes={c: ModernLane(m) for c, m in managers.items()} if self.fast_lane else {},
                pool=self._pool,
                owners=SessionOwners(self._settings.max_sessions),
                idle_s=float(self._settings.idle_timeout_s),
                request_s=float(self._settings.request_timeout_s),
                server=server,
                shutting_down=shutting_down,
            )
            async with anyio.create_task_group() as background:
                service = Service(
                    self._core,
                    "http",
                    sessions=self._pool.live,
                    connections=lambda: len(self._connections),
                    draining=shutting_down.is_set,
                )
                # Up until the connections have drained: /readyz says so meanwhile.
                self.metrics = await serve_beside(
                    self._core.config.service.metrics, service, background
                )
                log.info(
                    "listening",
                    address=address,
                    callers=len(self._settings.callers),
                    oauth=self._settings.oauth is not None,
                    legacy_revisions=self._settings.legacy_revisions,
                )
                task_status.started(server[1])
                background.start_soon(counters_every_minute)
                if self._install_signals:
                    background.start_soon(self._on_signal)
                async with anyio.create_task_group() as connections:
                    with anyio.CancelScope() as accepting:
                        async with anyio.create_task_group() as acceptors:
                            for sock in listeners:
                                acceptors.start_soon(self._accept, sock, ctx, connections)
                            acceptors.start_soon(self._cancel_on_stop, accepting)
                    await multi.aclose()
                    shutting_down.set()
                    log.info("shutdown", reason="stop", connections=len(self._connections))
                    for connection in list(self._connections):
                        if connection.idle_scope is not None:
                            connection.idle_scope.cancel()
                    with anyio.move_on_after(self._shutdown_s):
                        while self._connections:
                            await anyio.sleep(0.02)
                    if self._connections:
                        log.info("shutdown_aborted", connections=len(self._connections))
                    connections.cancel_scope.cancel()
                background.cancel_scope.cancel()

    async def _cancel_on_stop(self, scope: anyio.CancelScope) -> None:
        assert self._stop is not None
        await self._stop.wait()
        scope.cancel()

    async def _accept(
        self, sock: anyio.abc.SocketListener, ctx: Context, group: anyio.abc.TaskGroup
    ) -> None:
        """Accept on the bound socket itself and hand each connection to an asyncio
        transport of its own (HttpConnection's TransportCallbacks): the event loop's callbacks
        deliver its bytes, with no read call per request."""
        limit = self._settings.max_connections
        loop = asyncio.get_running_loop()
        raw: socket.socket = _attribute(sock, SocketAttribute.raw_socket)
        while True:
            try:
                accepted, remote = await loop.sock_accept(raw)
            except OSError as exc:
                if raw.fileno() < 0:
                    return  # the listener was closed
                # Out of descriptors, most likely: wait, and say so at most every 10 s.
                now = anyio.current_time()
                if now - self._last_accept_log >= ACCEPT_LOG_EVERY_S:
                    self._last_accept_log = now
                    log.warn("accept_failed", error=type(exc).__name__)
                await anyio.sleep(ACCEPT_RETRY_S)
                continue
            family = _family(accepted)
            if len(self._connections) >= limit:
                note("too_many_connections", family, logged=True)
                accepted.close()
                continue
            try:
                transport, callbacks = await loop.connect_accepted_socket(
                    TransportCallbacks, accepted
                )
            except OSError:
                accepted.close()  # gone between accept and its transport
                continue
            assert isinstance(transport, asyncio.Transport)
            client = (str(remote[0]), int(remote[1])) if isinstance(remote, tuple) else None
            connection = HttpConnection(transport, callbacks, ctx, family, client)
            self._connections.add(connection)
            group.start_soon(self._serve, connection)

    async def _serve(self, connection: HttpConnection) -> None:
        try:
            await connection.serve()
        finally:
            self._connections.discard(connection)

    async def _on_signal(self) -> None:
        received = await stop_signal()
        log.info("shutdown", reason="signal", signal=received.name)
        self.request_stop()
