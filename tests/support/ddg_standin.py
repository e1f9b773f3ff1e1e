"""A local stand-in for DuckDuckGo's HTML endpoint (and Wikipedia's API), on 127.0.0.1.

The duckduckgo driver has a fixed endpoint, https://html.duckduckgo.com/html/ (its record
gives it no base_url), so the stand-in is reached the way a network would be: through the
operator's `[egress] proxy`. It is an HTTP CONNECT proxy that answers the tunnel itself
with TLS under a throwaway trustme CA, for the provider's own host names, and serves the
request that comes through it. The process under test runs unchanged: real engine client,
real TLS with host-name checks (the client trusts the CA by `tls=` in-process, or by
SSL_CERT_FILE for a child process), real driver and pipeline.

Every request is recorded with the tunnel's host and the headers exactly as they arrived, in
order, so a test can assert what was sent and what was never asked.
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
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import trustme

from tests.support import paths
from tests.support.connect import read_head
from tests.support.standin import SAMPLE

FIXTURES = paths.FIXTURES / "engines" / "duckduckgo"
DDG = "html.duckduckgo.com"
WIKI = "en.wikipedia.org"
HOSTS = (DDG, WIKI, "duckduckgo.com", "elsewhere.example")
CA = trustme.CA()
_SERVER_CERT = CA.issue_cert(*HOSTS)


def page(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    content_type: str | None = "text/html; charset=UTF-8"
    headers: dict[str, str] = field(default_factory=dict)


def results_page(name: str = "results.html", status: int = 200) -> Reply:
    return Reply(status, page(name))


@dataclass
class Seen:
    """One request that came through the tunnel."""

    host: str  # the CONNECT target's host
    path: str
    params: dict[str, list[str]]
    headers: list[tuple[str, str]]  # as received, names as sent

    def header_names(self) -> list[str]:
        return [name.lower() for name, _ in self.headers]

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)


Answer = Reply | Callable[[Seen], Reply]


@dataclass
class Provider:
    proxy_url: str
    seen: list[Seen]
    # What html.duckduckgo.com answers: one reply for every request, or a function.
    ddg: Answer = field(default_factory=results_page)
    # Wikipedia hits: (title, snippet, timestamp), as tests.support.standin serves them.
    wikipedia: list[tuple[str, str, str]] = field(default_factory=lambda: list(SAMPLE))
    # Called, when set, while a request is being answered (before the reply is written).
    during: Callable[[Seen], None] | None = None

    def to(self, host: str) -> list[Seen]:
        return [s for s in self.seen if s.host == host]

    def write_ca(self, folder: Path) -> Path:
        """The CA as a PEM file, for SSL_CERT_FILE of a child process."""
        path = folder / "standin-ca.pem"
        CA.cert_pem.write_to_path(str(path))
        return path


def client_tls() -> ssl.SSLContext:
    """A verifying client context that trusts the stand-in's CA (and nothing else)."""
    context = ssl.create_default_context()
    context.load_verify_locations(cadata=CA.cert_pem.bytes().decode())
    return context


def _answer(provider: Provider, seen: Seen) -> Reply:
    if seen.host == DDG and seen.path == "/html/":
        chosen = provider.ddg
        return chosen(seen) if callable(chosen) else chosen
    if seen.host == WIKI and seen.path == "/w/api.php":
        hits = [
            {"ns": 0, "title": t, "pageid": i, "snippet": s, "timestamp": d}
            for i, (t, s, d) in enumerate(provider.wikipedia)
        ]
        body = {
            "requestid": seen.params.get("requestid", ["en"])[0],
            "batchcomplete": "",
            "query": {"search": hits},
        }
        return Reply(200, json.dumps(body).encode(), "application/json")
    return Reply(404, b"not here", "text/plain")


def _site_handler(provider: Provider, host: str) -> type[BaseHTTPRequestHandler]:
    class Site(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            seen = Seen(host, parts.path, parse_qs(parts.query), list(self.headers.items()))
            provider.seen.append(seen)
            if provider.during is not None:
                provider.during(seen)
            reply = _answer(provider, seen)
            self.send_response(reply.status)
            if reply.content_type is not None:
                self.send_header("Content-Type", reply.content_type)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(reply.body)))
            self.send_header("Connection", "close")
            self.end_headers()
            with suppress(OSError):  # the client gave up (a bound, a deadline)
                self.wfile.write(reply.body)
            self.close_connection = True

        def log_message(self, *args: Any) -> None:
            pass

    return Site


@contextmanager
def provider() -> Iterator[Provider]:
    """Run the stand-in; yields the Provider whose `proxy_url` goes in `[egress] proxy`."""
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    _SERVER_CERT.configure_cert(tls)
    state = Provider(proxy_url="", seen=[])

    class Tunnel(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            sock: socket.socket = self.request
            head = read_head(sock)
            if head is None:
                return
            method, target, *_ = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ")
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
                with suppress(OSError):
                    _site_handler(state, host)(wrapped, self.client_address, self.server)
            finally:
                with suppress(OSError):
                    wrapped.close()

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Tunnel)
    server.daemon_threads = True
    # A short poll: shutdown() waits for the loop to look, once per interval.
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    state.proxy_url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
