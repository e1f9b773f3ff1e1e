"""Local web sites for web_fetch tests: HTTPS (a test CA) or HTTP on 127.0.0.1.

A site is a table of paths to answers; every request is recorded (path and
headers) so a test can assert what was and was not asked.
"""

from __future__ import annotations

import gzip as gzip_module
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import trustme


@dataclass
class Page:
    status: int = 200
    body: bytes = b""
    content_type: str | None = "text/html; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)
    gzip: bool = False
    drip_s: float = 0.0  # seconds between bytes
    declared_length: int | None = None  # a Content-Length that may lie


@dataclass
class Site:
    base: str  # e.g. https://127.0.0.1:4321
    host: str
    port: int
    pages: dict[str, Page | Callable[[], Page]]
    requests: list[tuple[str, dict[str, str]]]

    def url(self, path: str) -> str:
        return self.base + path


CA = trustme.CA()


def ca_context() -> ssl.SSLContext:
    context = ssl.create_default_context()
    CA.configure_trust(context)
    return context


@contextmanager
def site(
    pages: dict[str, Any] | None = None, *, tls: bool = True, host: str = "127.0.0.1"
) -> Iterator[Site]:
    """Serve `pages` on `host` (a loopback address) at a free port until the block ends."""
    table: dict[str, Any] = dict(pages or {})
    requests: list[tuple[str, dict[str, str]]] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            requests.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
            entry = table.get(self.path.split("?")[0] if self.path not in table else self.path)
            if entry is None:
                entry = Page(404, b"not here", "text/plain")
            page = entry() if callable(entry) else entry
            body = gzip_module.compress(page.body) if page.gzip else page.body
            self.send_response(page.status)
            if page.content_type is not None:
                self.send_header("Content-Type", page.content_type)
            if page.gzip:
                self.send_header("Content-Encoding", "gzip")
            length = page.declared_length if page.declared_length is not None else len(body)
            self.send_header("Content-Length", str(length))
            for name, value in page.headers.items():
                self.send_header(name, value)
            self.send_header("Connection", "close")
            self.end_headers()
            try:
                if page.drip_s:
                    for i in range(len(body)):
                        self.wfile.write(body[i : i + 1])
                        self.wfile.flush()
                        time.sleep(page.drip_s)
                else:
                    self.wfile.write(body)
            except OSError:
                pass
            self.close_connection = True

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer((host, 0), Handler)
    server.daemon_threads = True
    if tls:
        cert = CA.issue_cert(host, "localhost")
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        cert.configure_cert(context)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    scheme = "https" if tls else "http"
    try:
        yield Site(f"{scheme}://{host}:{port}", host, port, table, requests)
    finally:
        server.shutdown()
        server.server_close()
