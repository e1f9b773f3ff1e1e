"""The parsing permits (rypsok/core/permits.py): a parse keeps its permit until its worker
thread has really ended, and a caller that stops waiting sets the flag that ends it early
(REQ-SEC-012, REQ-PAGE-008, REQ-AGG-006); then the same through web_search and the
duckduckgo driver, against the local stand-in of its endpoint."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import anyio.to_thread
import pytest

from rypsok.core import permits as permit_module
from rypsok.core.html import tree
from rypsok.core.html.tree import ParsedDocument
from rypsok.core.permits import run_under_permit
from tests.support.ddg_core import core_for
from tests.support.ddg_standin import provider
from tests.support.logs import captured_log

PERMITS = 2


async def eventually(condition: Callable[[], bool], within: float = 3.0) -> None:
    """Wait on the loop (so scheduled releases run) until `condition` holds."""
    until = time.monotonic() + within
    while not condition():
        assert time.monotonic() < until, "condition not reached in time"
        await anyio.sleep(0.01)


class Gauge:
    """Counts the threads inside the work right now, and the most there ever were."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running = 0
        self.peak = 0

    def __enter__(self) -> None:
        with self.lock:
            self.running += 1
            self.peak = max(self.peak, self.running)

    def __exit__(self, *_: object) -> None:
        with self.lock:
            self.running -= 1


# -- the module ---------------------------------------------------------------------------------


def test_req_sec_012_cancelled_callers_do_not_free_a_permit_before_their_thread_ends() -> None:
    """N permits, N parses whose callers were cancelled while their threads still run: a
    further call waits until one of those threads has actually ended."""
    gauge = Gauge()
    gates = [threading.Event() for _ in range(PERMITS)]
    flags: list[bool] = []
    late_started = threading.Event()

    def stuck(gate: threading.Event) -> Callable[[threading.Event], None]:
        def work(cancel: threading.Event) -> None:
            with gauge:
                gate.wait(5)  # a parse that does not look at the flag: the worst case
                flags.append(cancel.is_set())

        return work

    def late(cancel: threading.Event) -> str:
        late_started.set()
        with gauge:
            return "parsed"

    async def main() -> list[str]:
        permits = anyio.CapacityLimiter(PERMITS)
        async with anyio.create_task_group() as group:
            for gate in gates:
                group.start_soon(run_under_permit, permits, stuck(gate))
            await eventually(lambda: gauge.running == PERMITS)
            group.cancel_scope.cancel()
        assert gauge.running == PERMITS  # the callers are gone, their threads are not
        assert permits.borrowed_tokens == PERMITS

        answers: list[str] = []

        async def call() -> None:
            answers.append(await run_under_permit(permits, late))

        async with anyio.create_task_group() as group:
            group.start_soon(call)
            await anyio.sleep(0.3)
            assert not late_started.is_set()  # no permit while both threads still run
            gates[0].set()  # one thread ends: its permit, and only then, goes to the caller
            await eventually(lambda: late_started.is_set())
        gates[1].set()
        await eventually(lambda: permits.borrowed_tokens == 0)
        return answers

    try:
        assert anyio.run(main) == ["parsed"]
    finally:
        for gate in gates:
            gate.set()
    assert gauge.peak == PERMITS  # never PERMITS + 1
    assert flags == [True, True]  # each abandoned thread was told to stop


def test_req_agg_006_the_cancel_flag_is_set_when_the_caller_is_cancelled() -> None:
    seen: dict[str, Any] = {}
    done = threading.Event()

    def work(cancel: threading.Event) -> None:
        seen["before"] = cancel.is_set()
        seen["set"] = cancel.wait(3)  # a parse that stops once it is told to
        seen["ended"] = time.monotonic()
        done.set()

    async def main() -> float:
        permits = anyio.CapacityLimiter(1)
        with anyio.move_on_after(0.1):
            await run_under_permit(permits, work)
        cancelled_at = time.monotonic()
        await eventually(done.is_set)
        return cancelled_at

    cancelled_at = anyio.run(main)
    assert seen["before"] is False  # set on cancellation, not before
    assert seen["set"] is True
    assert seen["ended"] - cancelled_at < 1.0


def test_req_page_008_the_permit_returns_when_the_thread_ends() -> None:
    gate = threading.Event()

    def work(cancel: threading.Event) -> None:
        gate.wait(5)

    async def main() -> tuple[int, int]:
        permits = anyio.CapacityLimiter(1)
        with anyio.move_on_after(0.05):
            await run_under_permit(permits, work)
        await anyio.sleep(0.2)
        while_running = int(permits.borrowed_tokens)
        gate.set()
        await eventually(lambda: permits.borrowed_tokens == 0)
        return while_running, int(permits.borrowed_tokens)

    try:
        assert anyio.run(main) == (1, 0)
    finally:
        gate.set()


def test_req_page_008_a_result_or_an_exception_reaches_a_caller_still_waiting() -> None:
    class Broken(Exception):
        pass

    def fails(cancel: threading.Event) -> None:
        raise Broken

    async def main() -> tuple[str, int]:
        permits = anyio.CapacityLimiter(1)
        answer = await run_under_permit(permits, lambda cancel: "ok")
        with pytest.raises(Broken):
            await run_under_permit(permits, fails)
        return answer, int(permits.borrowed_tokens)

    assert anyio.run(main) == ("ok", 0)


def test_req_page_008_a_caller_cancelled_before_its_work_started_returns_the_permit() -> None:
    """No worker thread free (anyio's own thread limit held): the call is cancelled while
    its work waits; the work never runs and the permit is back at once."""
    gate = threading.Event()
    ran: list[str] = []

    async def main() -> int:
        anyio.to_thread.current_default_thread_limiter().total_tokens = 1
        permits = anyio.CapacityLimiter(2)
        async with anyio.create_task_group() as group:
            group.start_soon(lambda: anyio.to_thread.run_sync(gate.wait, 5))
            await anyio.sleep(0.05)
            with anyio.move_on_after(0.1):
                await run_under_permit(permits, lambda cancel: ran.append("ran"))
            returned = int(permits.borrowed_tokens)
            gate.set()
        await anyio.sleep(0.05)
        return returned

    try:
        assert anyio.run(main) == 0
    finally:
        gate.set()
    assert ran == []


def test_req_agg_006_handing_back_neither_waits_for_nor_raises_from_a_finished_loop() -> None:
    """The thread's release is scheduled, never awaited: a loop that stopped without closing
    does not hold the thread, and a closed one raises nothing into it."""
    holder, other = object(), object()

    async def take() -> tuple[anyio.lowlevel.EventLoopToken, anyio.CapacityLimiter]:
        permits = anyio.CapacityLimiter(2)
        await permits.acquire_on_behalf_of(holder)
        await permits.acquire_on_behalf_of(other)
        return anyio.lowlevel.current_token(), permits

    def from_thread(borrower: object) -> list[BaseException]:
        raised: list[BaseException] = []
        done = threading.Event()

        def run() -> None:
            try:
                permit_module._hand_back(token, permits, borrower)
            except BaseException as exc:
                raised.append(exc)
            done.set()

        threading.Thread(target=run, daemon=True).start()  # daemon: a hang must not hang pytest
        assert done.wait(2), "the thread waited for a loop that is not running"
        return raised

    loop = asyncio.new_event_loop()
    try:
        token, permits = loop.run_until_complete(take())
        assert from_thread(holder) == []  # the loop is stopped, not closed
        loop.run_until_complete(asyncio.sleep(0))  # running again, it releases as asked
        assert permits.borrowed_tokens == 1
    finally:
        loop.close()
    assert from_thread(other) == []


# -- web_search through the duckduckgo driver ---------------------------------------------------


class SlowParse:
    """Stands in for parse_html in the driver: waits (up to 3 s) for the cancel flag, then
    holds the thread until released, then parses for real with the flag it was given."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()
        self.ended = threading.Event()
        self.flag: threading.Event | None = None
        self.flag_seen = False
        self.raised: str | None = None

    def __call__(self, data: str, *, cancel: threading.Event | None = None) -> ParsedDocument:
        self.flag = cancel
        self.started.set()
        try:
            self.flag_seen = (cancel or threading.Event()).wait(3)
            self.release.wait(3)
            return duckduckgo_parse_html(data, cancel=cancel)
        except BaseException as exc:
            self.raised = type(exc).__name__
            raise
        finally:
            self.ended.set()


# The driver looks the parser up in its module at each page (it loads on first use).
duckduckgo_parse_html = tree.parse_html


def test_req_agg_006_a_cancelled_web_search_stops_its_duckduckgo_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    slow = SlowParse()
    monkeypatch.setattr(tree, "parse_html", slow)

    with provider() as standin, captured_log() as stream:
        core = core_for(tmp_path, standin, f"[limits]\nparsing_in_flight = {PERMITS}\n")
        permits = core.searches.parsing

        async def main() -> tuple[float, int]:
            async with anyio.create_task_group() as group:
                group.start_soon(core.search, {"query": "rust"})
                await eventually(slow.started.is_set)
                cancelled_at = time.monotonic()
                group.cancel_scope.cancel()
            left_after = time.monotonic() - cancelled_at
            held = int(permits.borrowed_tokens)  # the thread has not ended yet
            slow.release.set()
            await eventually(lambda: permits.borrowed_tokens == 0)
            return left_after, held

        try:
            left_after, held = anyio.run(main)
        finally:
            slow.release.set()
        assert slow.ended.wait(2)
    logged = stream.getvalue()
    assert left_after < 0.5  # the call itself ended at once
    assert held == 1  # while its parse still ran, the parse kept the permit
    assert slow.flag is not None and slow.flag_seen  # the driver was handed the flag, set
    assert slow.raised == "ParseCancelled"  # the real parser stopped on it
    assert "driver_error" not in logged
    assert "parse_failure" not in logged


def test_req_agg_006_a_parse_cut_by_the_search_deadline_is_told_to_stop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the deadline the engine counts as timed out, as any late engine does; its parse
    is told to stop, and no driver defect is reported."""
    slow = SlowParse()
    slow.release.set()
    monkeypatch.setattr(tree, "parse_html", slow)

    with provider() as standin, captured_log() as stream:
        core = core_for(
            tmp_path,
            standin,
            "[search]\ndeadline_ms = 700\nengine_timeout_ms = 500\n",
            wikipedia=True,
        )
        permits = core.searches.parsing

        async def main() -> dict[str, Any]:
            answer = (await core.search({"query": "rust"})).to_json()
            await eventually(lambda: permits.borrowed_tokens == 0)
            return answer

        answer = anyio.run(main)
        assert slow.ended.wait(2)
    logged = stream.getvalue()
    assert answer["outcome"] == "partial"
    assert {"code": "engine_unavailable", "engine": "ddg", "reason": "timeout"} in answer["notices"]
    assert slow.flag_seen and slow.raised == "ParseCancelled"
    assert "driver_error" not in logged
    assert "parse_failure" not in logged
