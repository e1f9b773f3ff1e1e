"""Local stand-ins for engine providers over TLS, on 127.0.0.1, for searches end to end.

Two ways in, both through the production engine client (real TLS with host-name checks
against a throwaway trustme CA, real driver, real pipeline):

* `tunnel()`: an HTTP CONNECT proxy for `[egress] proxy`, answering the tunnel itself for
  the provider's own host names (Brave's fixed endpoint, api.search.brave.com:443, is
  reached this way, as tests/support/ddg_standin.py reaches DuckDuckGo's).
* `site()`: a TLS server on 127.0.0.1 with a certificate for names such as
  wiki.corp.example, reached through an injected resolver (a private wiki's base_url).

Every connection and every request is recorded, so a test can assert that nothing was
asked, and what was sent.
"""

from __future__ import annotations

import json
import socket
import socketserver
import ssl
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

import trustme

from tests.support.connect import read_head

BRAVE = "api.search.brave.com"
WIKI = "en.wikipedia.org"
MIRROR = "wiki.corp.example"
ELSEWHERE = "elsewhere.example"
HOSTS = (BRAVE, WIKI, MIRROR, ELSEWHERE)
CA = trustme.CA()
_CERT = CA.issue_cert(*HOSTS)


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    content_type: str | None = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Seen:
    """One request that arrived."""

    host: str  # the tunnel's target host, or the Host header for a direct site
    path: str
    params: dict[str, list[str]]
    headers: list[tuple[str, str]]

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)


def brave_results(urls: list[str]) -> Reply:
    results = [
        {"title": f"Page {i}", "url": u, "description": f"Text {i}"} for i, u in enumerate(urls)
    ]
    body = {"type": "search", "web": {"type": "search", "results": results}}
    return Reply(200, json.dumps(body).encode())


def wiki_results(seen: Seen, titles: list[str]) -> Reply:
    """A MediaWiki search answer; the edition comes back in requestid, as the API does."""
    hits = [
        {"ns": 0, "title": t, "pageid": i, "snippet": f"About {t}", "timestamp": "2026-09-01"}
        for i, t in enumerate(titles)
    ]
    body: dict[str, Any] = {"batchcomplete": "", "query": {"search": hits}}
    if "requestid" in seen.params:
        body["requestid"] = seen.params["requestid"][0]
    return Reply(200, json.dumps(body).encode())


@dataclass
class Standin:
    answer: Callable[[Seen], Reply]
    url: str = ""  # the proxy URL (tunnel) or https://<name>:<port> (site)
    port: int = 0
    connections: list[str] = field(default_factory=list)  # CONNECT targets, or peers
    seen: list[Seen] = field(default_factory=list)


def client_tls() -> ssl.SSLContext:
    """A verifying client context that trusts the stand-in's CA (and nothing else)."""
    context = ssl.create_default_context()
    context.load_verify_locations(cadata=CA.cert_pem.bytes().decode())
    return context


def _server_tls() -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    _CERT.configure_cert(context)
    return context


def _serve(state: Standin, sock: ssl.SSLSocket, host: str | None, peer: Any, server: Any) -> None:
    class Site(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            name = host or (self.headers.get("Host") or "").rsplit(":", 1)[0]
            seen = Seen(name, parts.path, parse_qs(parts.query), list(self.headers.items()))
            state.seen.append(seen)
            reply = state.answer(seen)
            self.send_response(reply.status)
            if reply.content_type is not None:
                self.send_header("Content-Type", reply.content_type)
            for key, value in reply.headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(reply.body)))
            self.send_header("Connection", "close")
            self.end_headers()
            with suppress(OSError):  # the client gave up (a bound, a deadline)
                self.wfile.write(reply.body)
            self.close_connection = True

        def log_message(self, *args: Any) -> None:
            pass

    with suppress(OSError):
        Site(sock, peer, server)


@contextmanager
def _running(handler: type[socketserver.BaseRequestHandler]) -> Iterator[int]:
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def tunnel(answer: Callable[[Seen], Reply]) -> Iterator[Standin]:
    """A CONNECT proxy that serves HOSTS on port 443 itself; its URL goes in [egress] proxy."""
    state = Standin(answer)
    tls = _server_tls()

    class Tunnel(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            sock: socket.socket = self.request
            head = read_head(sock)
            if head is None:
                return
            method, target, *_ = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ")
            state.connections.append(target)
            host, _, port = target.rpartition(":")
            if method != "CONNECT" or port != "443" or host not in HOSTS:
                sock.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
                return
            sock.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            try:
                wrapped = tls.wrap_socket(sock, server_side=True)
            except (ssl.SSLError, OSError):
                return
            try:
                _serve(state, wrapped, host, self.client_address, self.server)
            finally:
                with suppress(OSError):
                    wrapped.close()

    with _running(Tunnel) as port:
        state.port = port
        state.url = f"http://127.0.0.1:{port}"
        yield state


@contextmanager
def site(answer: Callable[[Seen], Reply], name: str = MIRROR) -> Iterator[Standin]:
    """A TLS server on 127.0.0.1 whose certificate names HOSTS; `url` names it by *name*."""
    state = Standin(answer)
    tls = _server_tls()

    class Direct(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            state.connections.append(str(self.client_address[0]))
            try:
                wrapped = tls.wrap_socket(self.request, server_side=True)
            except (ssl.SSLError, OSError):
                return
            try:
                _serve(state, wrapped, None, self.client_address, self.server)
            finally:
                with suppress(OSError):
                    wrapped.close()

    with _running(Direct) as port:
        state.port = port
        state.url = f"https://{name}:{port}"
        yield state
