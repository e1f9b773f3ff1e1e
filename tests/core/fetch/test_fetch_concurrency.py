"""web_fetch's concurrency limits, held against a local HTTPS site (REQ-SEC-012,
REQ-PAGE-008, REQ-TEST-006): fetches in flight in the process (LIM-C3, limits.fetches_in_flight),
one fetch at a time per host (LIM-C4), parses in flight (LIM-C5, limits.parsing_in_flight), and
the call that cannot get its turn before its deadline.

The site answers several names (all resolved to 127.0.0.1 by an injected resolver, admitted by
allow rules written in the configuration, REQ-TEST-005) and keeps every request open until the
test opens its gate, counting the requests open at once. Each limit is asserted as reached and
never passed: a limit one too high and one too low both fail.
"""

from __future__ import annotations

import contextlib
import dataclasses
import ipaddress
import ssl
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import pytest

from rypsok.core import limits
from rypsok.core.config import load
from rypsok.core.facade import Rypsok
from rypsok.core.fetch import pipeline
from rypsok.core.html.tree import parse_html
from rypsok.core.model import ToolError
from rypsok.core.net.client import OutboundClient, user_agent
from tests.support.site import CA, ca_context

NAMES = tuple(f"h{i}.test" for i in range(8))
HOLD_MAX_S = 8.0  # a request the test forgot to release still ends
SETTLE_S = 0.3  # time for a fetch beyond the limit to reach the site, were it let through
REACH_S = 3.0  # how long the limit is given to fill up


class Counting:
    """What the site saw: requests open at once, in all and per host, and the highest counts.

    A request stops counting before its answer is written, so the site never counts one
    fetch that has ended together with the next one that its permit let in."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.gate = threading.Event()
        self.open: Counter[str] = Counter()
        self.peak = 0
        self.peak_per_host: Counter[str] = Counter()
        self.seen: list[str] = []

    def enter(self, host: str) -> None:
        with self.lock:
            self.open[host] += 1
            self.seen.append(host)
            self.peak = max(self.peak, sum(self.open.values()))
            self.peak_per_host[host] = max(self.peak_per_host[host], self.open[host])

    def leave(self, host: str) -> None:
        with self.lock:
            self.open[host] -= 1

    def now_open(self) -> int:
        with self.lock:
            return sum(self.open.values())


def page(host: str) -> bytes:
    return (
        f"<!doctype html><html><head><title>Page of {host}</title></head><body><main>"
        f"<p>This page is served for {host} by the test site. It has enough words in one "
        "paragraph to be taken as the main content of the document by the extractor.</p>"
        "</main></body></html>"
    ).encode()


@contextmanager
def held_site() -> Iterator[tuple[int, Counting]]:
    counting = Counting()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            host = (self.headers.get("Host") or "").rsplit(":", 1)[0]
            counting.enter(host)
            try:
                counting.gate.wait(HOLD_MAX_S)
            finally:
                counting.leave(host)
            body = page(host)
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            with contextlib.suppress(OSError):  # the call ended first: nothing to tell it
                self.wfile.write(body)
            self.close_connection = True

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    CA.issue_cert(*NAMES).configure_cert(context)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    # a short poll so that shutdown does not wait half a second
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield server.server_address[1], counting
    finally:
        counting.gate.set()
        server.shutdown()
        server.server_close()


async def loopback(host: str, port: int) -> list[Any]:
    return [ipaddress.ip_address("127.0.0.1")]


def make(tmp_path: Path, *, fetch: str = "", limit: str = "") -> Rypsok:
    """A service that reaches the site's names only through allow rules, robots.txt off so
    that every request the site counts is a page."""
    allow = ", ".join(f'"{name}"' for name in NAMES)
    path = tmp_path / "c.toml"
    path.write_text(
        f"config_version = 1\n[egress]\nallow = [{allow}]\n"
        f"[fetch]\nrobots_txt = false\n{fetch}"
        # more calls in a few seconds than the default per-minute budget of one caller
        f"[limits]\nweb_fetch_per_minute = 600\n{limit}"
    )
    config = load(str(path), {})
    client = OutboundClient(tls=ca_context(), user_agent=user_agent(""), resolver=loopback)
    return Rypsok(config, tls=ca_context(), fetch_client=client)


Outcome = dict[str, Any] | ToolError


async def call(core: Rypsok, url: str, into: dict[str, Outcome]) -> None:
    try:
        into[url] = (await core.fetch({"url": url})).to_json()
    except ToolError as error:
        into[url] = error


async def reached(probe: Callable[[], bool], settle_s: float = SETTLE_S) -> bool:
    """Whether *probe* came true within REACH_S; then waits *settle_s* for any excess to show."""
    give_up = anyio.current_time() + REACH_S
    while not probe():
        if anyio.current_time() > give_up:
            return False
        await anyio.sleep(0.02)
    await anyio.sleep(settle_s)
    return True


def url(port: int, host: str, path: str = "/") -> str:
    return f"https://{host}:{port}{path}"


def assert_read(outcomes: dict[str, Outcome], urls: list[str]) -> None:
    """Every call ended, with one outcome each: the page of its own host."""
    assert sorted(outcomes) == sorted(urls)
    for address, outcome in outcomes.items():
        assert isinstance(outcome, dict), (address, outcome)
        host = address.split("//", 1)[1].split(":", 1)[0]
        assert outcome["outcome"] == "ok" and host in outcome["content"]


# -- LIM-C3: fetches in flight in the process ---------------------------------------------------


@pytest.mark.parametrize("limit", [2, 3])
def test_req_sec_012_fetches_in_flight_never_exceed_the_process_limit(
    tmp_path: Path, limit: int
) -> None:
    with held_site() as (port, counting):
        core = make(tmp_path, limit=f"fetches_in_flight = {limit}\n")
        urls = [url(port, name) for name in NAMES[:7]]  # seven hosts, no host twice
        outcomes: dict[str, Outcome] = {}

        async def main() -> bool:
            async with anyio.create_task_group() as group:
                for address in urls:
                    group.start_soon(call, core, address, outcomes)
                full = await reached(lambda: counting.now_open() >= limit)
                held_peak = counting.peak
                counting.gate.set()
            return full and held_peak == limit

        assert anyio.run(main), f"while held: peak {counting.peak}, limit {limit}"
    assert counting.peak == limit
    assert sorted(counting.seen) == sorted(NAMES[:7])
    assert_read(outcomes, urls)


# -- LIM-C4: one fetch at a time per host ----------------------------------------------------------


def test_req_sec_012_one_fetch_at_a_time_per_host(tmp_path: Path) -> None:
    """More calls to one host than the process has permits (default 4): they go one by one,
    and a call to another host is not held up behind them. (A call used to take its process
    permit before its host's turn, so the queue of one host held every permit.)"""
    busy_host, other_host = NAMES[0], NAMES[1]
    with held_site() as (port, counting):
        core = make(tmp_path)
        assert core.config.limits.fetches_in_flight == 4
        same = [url(port, busy_host, f"/{i}") for i in range(6)]
        other = url(port, other_host)
        outcomes: dict[str, Outcome] = {}

        async def main() -> tuple[bool, bool]:
            async with anyio.create_task_group() as group:
                for address in same:
                    group.start_soon(call, core, address, outcomes)
                started = await reached(lambda: counting.open[busy_host] >= 1)
                group.start_soon(call, core, other, outcomes)
                overlapped = await reached(lambda: counting.open[other_host] >= 1)
                counting.gate.set()
            return started, overlapped

        started, overlapped = anyio.run(main)
    assert started
    assert counting.peak_per_host[busy_host] == 1
    # the other host's fetch ran while one of the first host's was held open
    assert overlapped and counting.peak == 2
    assert counting.seen.count(busy_host) == 6 and counting.seen.count(other_host) == 1
    assert_read(outcomes, [*same, other])


# -- LIM-C5: parses in flight, off the event loop (REQ-PAGE-008) -----------------------------------


@pytest.mark.parametrize("permits", [2, 3])  # the default, and one more
def test_req_page_008_parses_of_web_fetch_never_exceed_parsing_in_flight(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, permits: int
) -> None:
    """Six pages on six hosts, each parse held in its worker thread until released: exactly
    parsing_in_flight parse at once, none on the event loop's thread, and the network part
    of the other calls goes on meanwhile (the fetch permits are not held while parsing)."""
    parsing: Counter[str] = Counter()
    parse_gate = threading.Event()
    threads: set[int] = set()
    lock = threading.Lock()
    real = parse_html

    def held_parse(text: str, **options: Any) -> Any:
        with lock:
            parsing["now"] += 1
            parsing["peak"] = max(parsing["peak"], parsing["now"])
            threads.add(threading.get_ident())
        try:
            parse_gate.wait(HOLD_MAX_S)
            return real(text, **options)
        finally:
            with lock:
                parsing["now"] -= 1

    monkeypatch.setattr(pipeline, "parse_html", held_parse)
    hosts = NAMES[:6]
    with held_site() as (port, counting):
        counting.gate.set()  # pages answer at once; only the parses are held
        core = make(tmp_path, limit=f"parsing_in_flight = {permits}\n")
        urls = [url(port, name) for name in hosts]
        outcomes: dict[str, Outcome] = {}

        async def main() -> tuple[bool, int, bool]:
            loop_thread = threading.get_ident()
            async with anyio.create_task_group() as group:
                for address in urls:
                    group.start_soon(call, core, address, outcomes)
                full = await reached(lambda: parsing["now"] >= permits)
                held_peak = parsing["peak"]
                fetched = await reached(lambda: len(counting.seen) == len(hosts), 0)
                parse_gate.set()
            return full and fetched, held_peak, loop_thread in threads

        full_and_fetched, held_peak, on_loop = anyio.run(main)
    assert full_and_fetched, f"parses at once {parsing['peak']}, pages read {counting.seen}"
    assert held_peak == permits and parsing["peak"] == permits
    assert not on_loop
    assert_read(outcomes, urls)


# -- waiting past the deadline: unavailable ------------------------------------------------------


def _shorter_deadline(core: Rypsok, deadline_ms: int) -> None:
    """Calls started from now get *deadline_ms*: one already running keeps its longer one,
    so it holds its permit past the new calls' deadline."""
    config = core.fetches.config
    core.fetches.config = dataclasses.replace(
        config, fetch=dataclasses.replace(config.fetch, deadline_ms=deadline_ms)
    )


def _waits_then_busy(tmp_path: Path, holder_host: str, waiter_host: str, limit: str) -> None:
    with held_site() as (port, counting):
        core = make(tmp_path, fetch="deadline_ms = 5000\n", limit=limit)
        holder = url(port, holder_host, "/holder")
        waiter = url(port, waiter_host, "/waiter")
        after = url(port, waiter_host, "/after")
        outcomes: dict[str, Outcome] = {}
        short_ms = 1000

        async def main() -> tuple[float, list[str]]:
            async with anyio.create_task_group() as group:
                group.start_soon(call, core, holder, outcomes)
                assert await reached(lambda: counting.now_open() == 1, 0)
                _shorter_deadline(core, short_ms)
                started = time.monotonic()
                with anyio.fail_after((short_ms + limits.default("LIM-F5")) / 1000 + 1):
                    await call(core, waiter, outcomes)
                waited = time.monotonic() - started
                seen = list(counting.seen)
                counting.gate.set()
            # the permit and the host's turn were given back: the next call reads its page
            await call(core, after, outcomes)
            return waited, seen

        waited, seen_while_held = anyio.run(main)
    error = outcomes.pop(waiter)
    assert isinstance(error, ToolError)
    assert error.kind == "unavailable" and error.detail == {"reason": "busy"}
    assert waiter_host not in error.message and "/waiter" not in error.message
    # it waited for its turn up to its deadline, and no longer than LIM-F5 past it
    assert short_ms / 1000 - 0.05 <= waited <= (short_ms + limits.default("LIM-F5")) / 1000
    assert seen_while_held == [holder_host]  # the waiting call sent nothing
    assert counting.peak == 1
    assert_read(outcomes, [holder, after])
    assert core.fetches.in_flight.borrowed_tokens == 0


def test_req_sec_012_a_call_without_a_fetch_permit_by_its_deadline_is_unavailable(
    tmp_path: Path,
) -> None:
    _waits_then_busy(tmp_path, NAMES[0], NAMES[1], "fetches_in_flight = 1\n")


def test_req_sec_012_a_call_without_its_host_turn_by_its_deadline_is_unavailable(
    tmp_path: Path,
) -> None:
    _waits_then_busy(tmp_path, NAMES[0], NAMES[0], "")


def test_req_sec_012_a_parse_cut_by_its_deadline_keeps_its_permit_until_its_thread_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """parsing_in_flight = 1 and an extraction that does not stop when asked: the first call
    ends at its deadline, yet the next call's parse waits until that thread has really ended
    (a thread cannot be killed, so the permit stays with it; LIM-C5 counts threads)."""
    running: Counter[str] = Counter()
    gate = threading.Event()
    lock = threading.Lock()
    real = pipeline.extract_blocks

    def stubborn_extract(*args: Any, **kwargs: Any) -> Any:
        with lock:
            running["now"] += 1
            running["started"] += 1
            running["peak"] = max(running["peak"], running["now"])
        try:
            gate.wait(HOLD_MAX_S)
            return real(*args, **kwargs)
        finally:
            with lock:
                running["now"] -= 1

    monkeypatch.setattr(pipeline, "extract_blocks", stubborn_extract)
    with held_site() as (port, counting):
        counting.gate.set()  # pages answer at once; only the extraction is held
        core = make(tmp_path, fetch="deadline_ms = 1000\n", limit="parsing_in_flight = 1\n")
        first, second = url(port, NAMES[0]), url(port, NAMES[1])
        outcomes: dict[str, Outcome] = {}

        async def main() -> tuple[bool, bool]:
            await call(core, first, outcomes)  # ends at its deadline, its thread still runs
            _shorter_deadline(core, 5000)  # the next call has time to wait for the permit
            async with anyio.create_task_group() as group:
                group.start_soon(call, core, second, outcomes)
                fetched = await reached(lambda: len(counting.seen) == 2)
                held_back = running["started"] == 1 and running["now"] == 1
                gate.set()
            return fetched, held_back

        fetched, held_back = anyio.run(main)
    error = outcomes.pop(first)
    assert isinstance(error, ToolError) and error.detail == {"reason": "deadline"}
    assert fetched and held_back, f"extractions: {dict(running)}"
    assert running["peak"] == 1 and running["started"] == 2
    assert_read(outcomes, [second])
    assert core.fetches.parsing.borrowed_tokens == 0
