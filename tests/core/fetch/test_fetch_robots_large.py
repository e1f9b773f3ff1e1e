"""A robots.txt above LIM-F13 (512 KiB) is read up to the bound, while streaming, and the
rules there apply (REQ-CMP-005, LIM-F13; RFC 9309 section 2.5; issue 14, item 7).

The file is served by a local HTTPS site that writes it in pieces and notes how much it
managed to write: a reader that went on past the bound would take the whole 10 MiB.
"""

from __future__ import annotations

import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from rypsok.core import limits
from rypsok.core.fetch.robots import parse_robots_prefix
from tests.support.fetching import ARTICLE, fetch, make, refused
from tests.support.site import CA, Page, site

BOUND = limits.default("LIM-F13")
TEN_MIB = 10 * 1024 * 1024
PIECE = 64 * 1024
FAST = 1024 * 1024  # written at once; past it the site writes slowly


@dataclass
class Served:
    base: str
    written: int = 0
    finished: bool = False
    paths: list[str] = field(default_factory=list)


@contextmanager
def robots_site(robots: bytes) -> Iterator[Served]:
    served = Served("")

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            served.paths.append(self.path)
            body, kind = (
                (robots, "text/plain") if self.path == "/robots.txt" else (ARTICLE, "text/html")
            )
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            try:
                for start in range(0, len(body), PIECE):
                    self.wfile.write(body[start : start + PIECE])
                    self.wfile.flush()
                    if self.path == "/robots.txt":
                        served.written = start + len(body[start : start + PIECE])
                        if served.written >= FAST:
                            time.sleep(0.05)  # the whole file would take some 7 s
                if self.path == "/robots.txt":
                    served.finished = True
            except OSError:
                pass  # the reader hung up
            self.close_connection = True

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    CA.issue_cert("127.0.0.1").configure_cert(context)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    served.base = f"https://127.0.0.1:{server.server_address[1]}"
    try:
        yield served
    finally:
        server.shutdown()
        server.server_close()


def ten_mib(head: bytes, tail_rule: bytes) -> bytes:
    """``head``, comment lines up to the bound, then rules repeated to 10 MiB."""
    filler_line = b"# " + b"x" * 77 + b"\n"
    body = head + filler_line * ((BOUND - len(head)) // len(filler_line))
    body += b"#" * (BOUND - len(body) - 1) + b"\n"
    assert len(body) == BOUND
    return body + tail_rule * ((TEN_MIB - BOUND) // len(tail_rule) + 1)


def test_req_cmp_005_lim_f13_a_10_mib_robots_txt_is_read_up_to_512_kib(tmp_path: Path) -> None:
    robots = ten_mib(b"User-agent: *\nDisallow: /nothing-here\n", b"Disallow: /page\n")
    assert len(robots) > TEN_MIB
    assert parse_robots_prefix(robots).allows("/page")  # by its first 512 KiB
    with robots_site(robots) as s:
        started = time.monotonic()
        answer = fetch(make(tmp_path), url=s.base + "/page")
        took = time.monotonic() - started
        time.sleep(0.3)  # the site notices the hang-up at its next write
    assert answer["title"] == "Rust ownership, in short"
    assert s.paths == ["/robots.txt", "/page"]
    assert not s.finished  # the reader stopped: the site could not write the whole file
    assert s.written < TEN_MIB // 2
    assert took < 5.0


def test_req_cmp_005_lim_f13_the_same_rules_inside_the_bound_apply(tmp_path: Path) -> None:
    """The control: the rules of the 10 MiB file's tail, inside the bound, refuse /page."""
    robots = b"User-agent: *\nDisallow: /nothing-here\n" + b"Disallow: /page\n" * 1000
    with robots_site(robots) as s:
        error = refused(make(tmp_path), url=s.base + "/page")
    assert error.detail == {"reason": "robots_txt"}


@pytest.mark.parametrize("line_end", [b"\n", b"\r\n", b"\r"])
def test_req_cmp_005_lim_f13_a_line_cut_at_the_bound_is_not_read_as_a_shorter_rule(
    tmp_path: Path, line_end: bytes
) -> None:
    """``Disallow: /page-archive`` cut after ``Disallow: /p`` would refuse /page."""
    head = b"User-agent: *" + line_end + b"Allow: /nothing-here" + line_end
    rule = b"Disallow: /page-archive" + line_end
    cut_after = len(b"Disallow: /p")
    filler = b"#" * (BOUND - len(head) - cut_after - len(line_end)) + line_end
    robots = head + filler + rule
    robots += rule * ((TEN_MIB - len(robots)) // len(rule) + 1)
    assert robots[BOUND - cut_after : BOUND] == b"Disallow: /p"
    with robots_site(robots) as s:
        answer = fetch(make(tmp_path), url=s.base + "/page")
        time.sleep(0.3)
        assert not s.finished
    assert answer["title"] == "Rust ownership, in short"
    # A rule whose line end is the bound's last byte is whole, and read as written.
    whole = head + b"#" * (BOUND - len(head) - len(line_end) - len(rule)) + line_end + rule
    assert len(whole) == BOUND
    assert not parse_robots_prefix(whole + rule * 100).allows("/page-archive/1")


def test_req_cmp_005_lim_f13_a_compressed_10_mib_robots_txt_is_read_up_to_512_kib(
    tmp_path: Path,
) -> None:
    """Compressed, the bound counts the bytes inflated: the first 512 KiB of the file."""
    robots = ten_mib(b"User-agent: *\nDisallow: /nothing-here\n", b"Disallow: /page\n")
    pages = {
        "/robots.txt": Page(body=robots, content_type="text/plain", gzip=True),
        "/page": Page(body=ARTICLE),
    }
    with site(pages) as s:
        answer = fetch(make(tmp_path), url=s.url("/page"))
    assert answer["title"] == "Rust ownership, in short"
