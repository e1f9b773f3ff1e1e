"""The mixed load, and the record of every request it sent.

Who sends what (each on its own connection, all at once, for the whole window):

* `clients` modern clients (2026-07-28, stateless), keep-alive, a short pause
  between calls: web_search (ordinary, long, secret-bearing, time-ranged and
  mixed-script queries), web_fetch (TARGETS of pages.py by weight, each target
  once first), engine_status, tools/list, now and then a call the client gives
  up on after a moment (it closes the connection: a cancellation) and a call with
  a wrong token (401);
* legacy clients: a session of a handshake revision (2025-03-26, 2025-06-18 or
  2025-11-25): initialize, notifications/initialized, a few calls, then DELETE,
  or now and then simply left to expire;
* slow clients: a whole request written a byte at a time over 2 to 5 s (less
  when LIM-H5 leaves less room), on a new connection each;
* a stalled client: half a body, then nothing; the listener owes it a 408 within
  request_timeout_s (only started while that much of the window remains);
* silent connections: opened, never written to; the listener must close each
  within idle_timeout_s, and the holder opens another.

A request is lost when no whole response arrived within its bound: the tool's
stated maximum (check's figures: LIM-S7, LIM-F5; LIM-S13 for engine_status) plus
the margin, measured from the request's last byte; for anything that is not a
tool call, LIM-H5 (request_timeout_s, measured from the first byte) plus the
margin. A connection closed without a response counts as lost too; a request
this process could not even finish writing within that bound is counted apart,
as not judged. When the window ends nothing new starts; what is in flight
finishes or is lost by its own bound.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bench.soak import client
from bench.soak.client import Connection, Gone, Reply
from bench.soak.pages import TARGETS, Target
from bench.soak.server import cpu_seconds, status_kib

THINK_S = 0.6  # the longest pause of a client between two calls
SAMPLE_S = 0.5  # how often the server's resident set is read
PROGRESS_S = 60.0  # how often a long run says how it goes
LAG_TICK_S = 0.1  # the load generator's own lag is measured on sleeps this long
LEGACY_VERSIONS = ("2025-03-26", "2025-06-18", "2025-11-25")
ABANDON_S = (0.3, 1.5)  # a cancelled call is given up after this long
SLOW_SPREAD_S = (2.0, 5.0)  # how long a slow client takes to write its request

_WORDS_TEXT = (
    "lighthouse canal glacier orchard harbour library railway museum meadow "
    "bridge festival quarry archive ferry estuary"
)
_WORDS = tuple(_WORDS_TEXT.split())
_OTHER = ("運河", "灯台", "река", "γέφυρα", "Straße", "نهر")


@dataclass
class Call:
    """One request and what became of it."""

    channel: str  # modern, legacy, slow, stall, cancel, token
    tool: str  # the tool, or the protocol method / HTTP method for the rest
    target: str  # the fetch target or search kind, "" otherwise
    stated_ms: int | None  # the tool's stated maximum; None when only LIM-H5 bounds it
    limit_s: float  # past this, no answer is a lost answer
    started: float = 0.0
    at_s: float = 0.0  # when its first byte went, from the window's start
    latency_s: float | None = None
    outcome: str = ""
    lost: bool = False


@dataclass
class Silent:
    at_s: float  # when it was opened, from the window's start
    open_s: float  # how long it stayed open
    closed_by_server: bool
    late: bool  # still open past idle_timeout_s + the margin


@dataclass
class Record:
    calls: list[Call] = field(default_factory=list)
    silent: list[Silent] = field(default_factory=list)
    samples: list[tuple[float, int, int]] = field(default_factory=list)  # (s, RSS, HWM) KiB
    cpu_s: float | None = None  # the server's CPU over the window
    crashed_at_s: float | None = None  # when the server was seen gone
    own_lag_s: float = 0.0  # the worst lateness of this process's own event loop
    window_s: float = 0.0
    drained_s: float = 0.0  # from the window's end until the last call ended


@dataclass(frozen=True, slots=True)
class Plan:
    port: int
    tokens: tuple[str, ...]
    sites: dict[str, int]  # host -> port
    marker: str
    secret: str
    seconds: float
    margin_s: float
    maxima_ms: dict[str, int]
    request_timeout_s: int
    idle_timeout_s: int
    seed: int
    clients: int = 4
    legacy_clients: int = 1
    slow_clients: int = 1
    stall_clients: int = 1
    silent_connections: int = 6


class Soak:
    def __init__(
        self,
        plan: Plan,
        pid: int,
        alive: Callable[[], bool],
        progress: Callable[[str], None] | None = None,
    ) -> None:
        self.plan = plan
        self.progress = progress
        self.pid = pid
        self.alive = alive
        self.rnd = random.Random(plan.seed)
        self.ids = itertools.count(1)
        self.record = Record()
        self.began = 0.0
        self.end = 0.0
        first = list(TARGETS)
        self.rnd.shuffle(first)
        self.first_targets = deque(first)  # every target once before the weights decide

    # ---------------------------------------------------------------- the run

    def running(self) -> bool:
        return time.monotonic() < self.end and self.record.crashed_at_s is None

    async def run(self) -> Record:
        p = self.plan
        self.began = time.monotonic()
        self.end = self.began + p.seconds
        cpu0 = cpu_seconds(self.pid)
        sampler = asyncio.create_task(self._sample())
        ticker = asyncio.create_task(self._own_lag())
        holders = [asyncio.create_task(self._silent(i)) for i in range(p.silent_connections)]
        workers = [
            *(self._modern(i) for i in range(p.clients)),
            *(self._legacy(i) for i in range(p.legacy_clients)),
            *(self._slow(i) for i in range(p.slow_clients)),
            *(self._stall(i) for i in range(p.stall_clients)),
        ]
        await asyncio.gather(*workers)
        self.record.window_s = min(time.monotonic(), self.end) - self.began
        self.record.drained_s = max(0.0, time.monotonic() - self.end)
        for task in holders:
            task.cancel()
        await asyncio.gather(*holders, return_exceptions=True)
        cpu1 = cpu_seconds(self.pid)
        if cpu0 is not None and cpu1 is not None:
            self.record.cpu_s = cpu1 - cpu0
        for task in (sampler, ticker):
            task.cancel()
        await asyncio.gather(sampler, ticker, return_exceptions=True)
        self._take_sample()
        return self.record

    def _take_sample(self) -> bool:
        status = status_kib(self.pid)
        if not status or not self.alive():
            if self.record.crashed_at_s is None:
                self.record.crashed_at_s = time.monotonic() - self.began
            return False
        self.record.samples.append(
            (time.monotonic() - self.began, status.get("VmRSS", 0), status.get("VmHWM", 0))
        )
        return True

    async def _own_lag(self) -> None:
        """How late this process wakes up: a lost answer must not be the soak's own lag."""
        while True:
            asked = time.monotonic()
            await asyncio.sleep(LAG_TICK_S)
            late = time.monotonic() - asked - LAG_TICK_S
            self.record.own_lag_s = max(self.record.own_lag_s, late)

    async def _sample(self) -> None:
        said = self.began
        while self._take_sample():
            await asyncio.sleep(SAMPLE_S)
            if self.progress is not None and time.monotonic() - said >= PROGRESS_S:
                said = time.monotonic()
                calls = self.record.calls
                rss = self.record.samples[-1][1] / 1024 if self.record.samples else 0.0
                self.progress(
                    f"{said - self.began:.0f} s: {len(calls)} requests, "
                    f"{sum(c.lost for c in calls)} lost, VmRSS {rss:.1f} MiB"
                )

    # ------------------------------------------------------- one exchange

    def _call(self, channel: str, tool: str, target: str = "") -> Call:
        stated = self.plan.maxima_ms.get(tool)
        limit = stated / 1000 if stated is not None else self.plan.request_timeout_s
        call = Call(channel, tool, target, stated, limit + self.plan.margin_s)
        self.record.calls.append(call)
        return call

    async def _exchange(
        self,
        conn: Connection,
        data: bytes,
        call: Call,
        request_id: int | None,
        spread_s: float = 0.0,
    ) -> Reply | None:
        """Write, then wait for the whole response within the call's bound."""
        first_byte = time.monotonic()
        call.at_s = first_byte - self.began
        try:
            await asyncio.wait_for(conn.write(data, spread_s), spread_s + call.limit_s)
        except TimeoutError:
            # The server stopped reading, or this process fell behind: not a lost
            # answer, since the request never went whole, but never hidden either.
            await conn.close()
            call.outcome = "request not written within the bound"
            return None
        except Gone as gone:
            call.outcome, call.lost = gone.kind, True
            return None
        # A tool's maximum runs from the whole request; LIM-H5 from its first byte.
        call.started = time.monotonic() if call.stated_ms is not None else first_byte
        left = call.limit_s - (time.monotonic() - call.started)
        try:
            reply = await asyncio.wait_for(conn.read_reply(), max(0.0, left))
        except TimeoutError:
            await conn.close()
            call.outcome, call.lost = "no answer within the bound", True
            return None
        except Gone as gone:
            call.outcome, call.lost = gone.kind, True
            return None
        call.latency_s = time.monotonic() - call.started
        call.outcome = client.outcome(reply, request_id)
        return reply

    # ----------------------------------------------------------- arguments

    def _search(self) -> tuple[str, dict[str, Any]]:
        r = self.rnd
        words = [*r.sample(_WORDS, r.randint(1, 3)), f"q{self.plan.marker}"]
        kind = r.choices(("words", "long", "secret", "time_range", "mixed"), (80, 4, 4, 4, 8))[0]
        if kind == "long":
            words = words * 40  # past LIM-S1 (400 characters)
        elif kind == "secret":
            words.append(self.plan.secret)
        elif kind == "mixed":
            words.append(r.choice(_OTHER) + "\u200b" + r.choice(_OTHER))
        args: dict[str, Any] = {"query": " ".join(words)}
        if kind == "time_range":
            args["time_range"] = "week"
        if r.random() < 0.3:
            args["max_results"] = r.randint(1, 20)
        if r.random() < 0.1:
            args["category"] = "science"
        return kind, args

    def _target(self) -> Target:
        if self.first_targets:
            return self.first_targets.popleft()
        return self.rnd.choices(TARGETS, [t.weight for t in TARGETS])[0]

    def _fetch(self, target: Target | None = None) -> tuple[str, dict[str, Any]]:
        r, p = self.rnd, self.plan
        target = target or self._target()
        host = r.choice(sorted(p.sites))
        site = f"https://{host}:{p.sites[host]}/{p.marker}/"
        url = {
            "secret": f"{site}article-text-0?key={p.secret}",
            "private_address": f"https://10.255.255.1/{p.marker}/page",
            "closed_port": f"https://closed.invalid:9/{p.marker}/page",
        }.get(target.where, site + target.name)
        args: dict[str, Any] = {"url": url}
        if r.random() < 0.2:
            args["max_chars"] = r.choice((500, 3000, 20000))
        return target.name, args

    def _tool(self) -> tuple[str, str, dict[str, Any]]:
        tool = self.rnd.choices(("web_search", "web_fetch", "engine_status"), (40, 42, 18))[0]
        if tool == "web_search":
            return (tool, *self._search())
        if tool == "web_fetch":
            return (tool, *self._fetch())
        return tool, "", {}

    # ------------------------------------------------------------ the clients

    async def _modern(self, index: int) -> None:
        p, r = self.plan, self.rnd
        token = p.tokens[index % len(p.tokens)]
        conn = Connection(p.port)
        while self.running():
            what = r.choices(("tool", "list", "cancel", "token"), (93, 2, 3, 2))[0]
            if what == "tool":
                tool, target, args = self._tool()
                rid = next(self.ids)
                await self._exchange(
                    conn,
                    client.modern_call(p.port, token, rid, tool, args),
                    self._call("modern", tool, target),
                    rid,
                )
            elif what == "list":
                rid = next(self.ids)
                await self._exchange(
                    conn,
                    client.modern(p.port, token, rid, "tools/list", {}),
                    self._call("modern", "tools/list"),
                    rid,
                )
            elif what == "cancel":
                await self._abandon(token)
            else:
                await self._wrong_token()
            await asyncio.sleep(r.uniform(0, THINK_S))
        await conn.close()

    async def _abandon(self, token: str) -> None:
        """A call the client gives up on: it closes the connection (a cancellation)."""
        p, r = self.plan, self.rnd
        target = next(t for t in TARGETS if t.name == "drip")
        name, args = self._fetch(target) if r.random() < 0.5 else self._search()
        tool = "web_fetch" if "url" in args else "web_search"
        conn = Connection(p.port)
        self.record.calls.append(
            Call("cancel", tool, name, None, 0.0, outcome="given up by the client")
        )
        try:
            await conn.write(client.modern_call(p.port, token, next(self.ids), tool, args))
            await asyncio.sleep(r.uniform(*ABANDON_S))
        except Gone:
            pass
        await conn.close()

    async def _wrong_token(self) -> None:
        p = self.plan
        conn = Connection(p.port)
        rid = next(self.ids)
        await self._exchange(
            conn,
            client.modern_call(p.port, "not-a-token-" + p.marker, rid, "engine_status", {}),
            self._call("token", "engine_status"),
            rid,
        )
        await conn.close()

    async def _legacy(self, index: int) -> None:
        p, r = self.plan, self.rnd
        token = p.tokens[(index + 1) % len(p.tokens)]
        while self.running():
            version = r.choice(LEGACY_VERSIONS)
            conn = Connection(p.port)
            rid = next(self.ids)
            opened = await self._exchange(
                conn,
                client.legacy(p.port, token, client.initialize(rid, version), None, None),
                self._call("legacy", "initialize", version),
                rid,
            )
            session = opened.headers.get("mcp-session-id") if opened else None
            if session is None:
                await conn.close()
                await asyncio.sleep(1.0)
                continue
            note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            await self._exchange(
                conn,
                client.legacy(p.port, token, note, session, version),
                self._call("legacy", "notifications/initialized", version),
                None,
            )
            for _ in range(r.randint(2, 6)):
                if not self.running():
                    break
                rid = next(self.ids)
                if r.random() < 0.1:
                    tool, target, message = (
                        "tools/list",
                        "",
                        {"jsonrpc": "2.0", "id": rid, "method": "tools/list", "params": {}},
                    )
                else:
                    tool, target, args = self._tool()
                    message = {
                        "jsonrpc": "2.0",
                        "id": rid,
                        "method": "tools/call",
                        "params": {"name": tool, "arguments": args},
                    }
                await self._exchange(
                    conn,
                    client.legacy(p.port, token, message, session, version),
                    self._call("legacy", tool, target),
                    rid,
                )
                await asyncio.sleep(r.uniform(0, THINK_S))
            if r.random() < 0.9:  # else left open: the pool must expire it
                await self._exchange(
                    conn,
                    client.legacy(p.port, token, None, session, version, method="DELETE"),
                    self._call("legacy", "DELETE", version),
                    None,
                )
            await conn.close()

    async def _slow(self, index: int) -> None:
        p, r = self.plan, self.rnd
        token = p.tokens[index % len(p.tokens)]
        while self.running():
            tool = r.choice(("engine_status", "web_search"))
            target, args = self._search() if tool == "web_search" else ("", {})
            rid = next(self.ids)
            data = client.modern_call(p.port, token, rid, tool, args)
            conn = Connection(p.port)
            call = self._call("slow", tool, target)
            # Within LIM-H5 with the call's own time: a 408 here would be the client's doing.
            room = (p.request_timeout_s - (call.stated_ms or 0) / 1000) / 2
            spread = max(0.5, min(r.uniform(*SLOW_SPREAD_S), room))
            await self._exchange(conn, data, call, rid, spread_s=spread)
            await conn.close()
            await asyncio.sleep(r.uniform(0, THINK_S))

    async def _stall(self, index: int) -> None:
        p = self.plan
        token = p.tokens[index % len(p.tokens)]
        while self.running():
            if self.end - time.monotonic() < p.request_timeout_s + p.margin_s:
                await asyncio.sleep(min(1.0, max(0.0, self.end - time.monotonic())))
                continue  # not enough window left for the 408 it is owed
            rid = next(self.ids)
            data = client.modern_call(p.port, token, rid, "engine_status", {})
            conn = Connection(p.port)
            call = self._call("stall", "engine_status (half a body)")
            await self._exchange(conn, data[: len(data) - 20], call, rid)
            await conn.close()
            await asyncio.sleep(1.0)

    async def _silent(self, index: int) -> None:
        p = self.plan
        bound = p.idle_timeout_s + p.margin_s
        # Spread the holders over the idle period, so the closes do not come in one burst.
        await asyncio.sleep(index * p.idle_timeout_s / max(1, p.silent_connections))
        while self.running():
            opened = time.monotonic()
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", p.port)
            except OSError:
                await asyncio.sleep(1.0)
                continue
            closed, late = False, False
            try:
                await asyncio.wait_for(reader.read(1), bound)  # b"" when the server closes
                closed = True
            except TimeoutError:
                late = True
            except OSError:
                closed = True
            except asyncio.CancelledError:
                self.record.silent.append(
                    Silent(opened - self.began, time.monotonic() - opened, False, False)
                )
                writer.close()
                raise
            self.record.silent.append(
                Silent(opened - self.began, time.monotonic() - opened, closed, late)
            )
            writer.close()
