"""A local stand-in for a MediaWiki API, on 127.0.0.1, for end-to-end runs of serve.

Plain HTTP on loopback, reached through an engine's base_url (the operator may
configure plain HTTP for a loopback host only).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

SAMPLE = [
    (
        "Rust (programming language)",
        '<span class="searchmatch">Rust</span> is a '
        "general-purpose programming language emphasizing performance, type safety, and "
        "concurrency.",
        "2026-09-01T10:00:00Z",
    ),
    ("Rust & Bone", "Rust and Bone is a 2012 romantic drama film", "2026-07-19T10:00:00Z"),
]


def _misbehave(handler: BaseHTTPRequestHandler, how: str) -> None:
    """Answers a provider should not give; each must cost its engine only."""
    if how == "close":  # nothing at all
        handler.close_connection = True
        return
    if how == "redirect":
        handler.send_response(302)
        handler.send_header("Location", "https://elsewhere.example/w/api.php")
        handler.send_header("Content-Length", "0")
        handler.end_headers()
        return
    if how == "huge":
        body = (
            b'{"query": {"search": ['
            + b'{"title": "PROVIDER-TEXT", "snippet": "x"},' * (2 * 1024 * 1024 // 40)
            + b"]}}"
        )
    elif how == "html":
        body = (
            b"<html><body><h1>PROVIDER-TEXT: are you a robot?</h1>"
            b"<form action='/challenge'></form></body></html>"
        )
    elif how == "garbage":
        body = bytes(range(256)) * 64
    elif how == "trickle":
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", "1000")
        handler.end_headers()
        for _ in range(100):
            handler.wfile.write(b" ")
            handler.wfile.flush()
            time.sleep(0.2)
        return
    else:
        raise ValueError(how)
    handler.send_response(200)
    handler.send_header("Content-Type", "text/html" if how == "html" else "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


@contextmanager
def mediawiki(
    results: list[tuple[str, str, str]] | None = None,
    delay_s: float = 0.0,
    hostile: str | None = None,
) -> Iterator[dict[str, Any]]:
    """Serve /w/api.php; yields {"base_url": ..., "queries": [...]}."""
    state: dict[str, Any] = {"queries": [], "user_agents": []}
    rows = SAMPLE if results is None else results

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            params = parse_qs(parts.query)
            state["queries"].append(params.get("srsearch", [""])[0])
            state["user_agents"].append(self.headers.get("User-Agent"))
            if delay_s:
                time.sleep(delay_s)
            if parts.path != "/w/api.php":
                self.send_error(404)
                return
            if hostile is not None:
                _misbehave(self, hostile)
                return
            search = [
                {"ns": 0, "title": t, "pageid": i, "snippet": s, "timestamp": d}
                for i, (t, s, d) in enumerate(rows)
            ]
            body = json.dumps(
                {
                    "requestid": params.get("requestid", ["en"])[0],
                    "batchcomplete": "",
                    "query": {"search": search},
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state["base_url"] = f"http://127.0.0.1:{server.server_address[1]}/w"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
