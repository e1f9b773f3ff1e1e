"""The store's fault state on its own (no Redis): a clock the test moves, operations the
test makes fail, hang or succeed."""

from __future__ import annotations

import asyncio
import io
import socket
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from rypsok.core import limits
from rypsok.core.store.guard import TIMEOUTS_TO_FAIL, Away, Guard
from tests.support.clock import FakeClock
from tests.support.store import events

pytestmark = pytest.mark.anyio


class Calls:
    """An operation that counts how often the store was really asked."""

    def __init__(self) -> None:
        self.count = 0
        self.fail = False
        self.gate: anyio.Event | None = None

    async def __call__(self) -> str:
        self.count += 1
        if self.gate is not None:
            await self.gate.wait()
        if self.fail:
            raise ConnectionError("refused by 10.0.0.1:6379 with password hunter2")
        return "answer"


async def test_a_failure_makes_the_store_unavailable_and_operations_rest_locally(
    logs: io.StringIO,
) -> None:
    clock = FakeClock(100.0)
    guard = Guard(timeout_s=0.05, rest_s=1.0, clock=clock)
    calls = Calls()
    assert await guard.run("admit_call", calls) == "answer"
    calls.fail = True
    with pytest.raises(Away):
        await guard.run("admit_call", calls)
    assert not guard.available
    calls.fail = False
    clock.now += 0.999  # still resting: nothing asks the store
    for _ in range(5):
        with pytest.raises(Away):
            await guard.run("reserve", calls)
    assert calls.count == 2
    [line] = events(logs, "store_unavailable")
    assert line["operation"] == "admit_call" and line["error"] == "ConnectionError"
    # The exception's text (it may name the server or carry a secret) is never logged.
    assert "hunter2" not in logs.getvalue() and "10.0.0.1" not in logs.getvalue()


async def test_after_the_rest_one_operation_at_a_time_tries_and_its_success_recovers(
    logs: io.StringIO,
) -> None:
    clock = FakeClock()
    guard = Guard(timeout_s=5.0, rest_s=1.0, clock=clock)
    calls = Calls()
    calls.fail = True
    with pytest.raises(Away):
        await guard.run("slot", calls)
    calls.fail = False
    clock.now += 1.0
    calls.gate = anyio.Event()
    outcomes: list[str] = []

    async def trial() -> None:
        outcomes.append(await guard.run("slot", calls))

    async with anyio.create_task_group() as tg:
        tg.start_soon(trial)
        await anyio.wait_all_tasks_blocked()
        for _ in range(3):  # the trial is in flight: the others answer locally
            with pytest.raises(Away):
                await guard.run("reserve", calls)
        calls.gate.set()
    assert outcomes == ["answer"] and calls.count == 2
    assert guard.available
    assert len(events(logs, "store_recovered")) == 1
    calls.gate = None
    assert await guard.run("reserve", calls) == "answer"
    assert len(events(logs, "store_recovered")) == 1


async def test_a_failed_trial_rests_again_and_logs_nothing_new(logs: io.StringIO) -> None:
    clock = FakeClock()
    guard = Guard(timeout_s=0.05, rest_s=1.0, clock=clock)
    calls = Calls()
    calls.fail = True
    for _ in range(2):
        with pytest.raises(Away):
            await guard.run("hold", calls)
        clock.now += 1.0
    assert calls.count == 2
    clock.now -= 0.5  # half way through the rest that the failed trial began
    calls.fail = False
    with pytest.raises(Away):
        await guard.run("hold", calls)
    assert calls.count == 2
    assert len(events(logs, "store_unavailable")) == 1
    assert events(logs, "store_recovered") == []


async def test_an_operation_already_in_flight_when_another_failed_does_not_recover_the_store(
    logs: io.StringIO,
) -> None:
    guard = Guard(timeout_s=5.0, rest_s=1.0, clock=FakeClock())
    slow, failing = Calls(), Calls()
    slow.gate = anyio.Event()
    failing.fail = True
    outcomes: list[str] = []

    async def in_flight() -> None:
        try:
            outcomes.append(await guard.run("reserve", slow))
        except Away:
            outcomes.append("local")

    async with anyio.create_task_group() as tg:
        tg.start_soon(in_flight)
        await anyio.wait_all_tasks_blocked()
        with pytest.raises(Away):
            await guard.run("admit_call", failing)
        await anyio.wait_all_tasks_blocked()
        slow.gate.set()
    # Once the store is away nothing waits for it: the operation in flight answers locally.
    assert outcomes == ["local"]
    assert not guard.available
    assert events(logs, "store_recovered") == []


async def test_an_operation_that_outlasts_the_timeout_ends_at_it_and_a_run_of_them_fails(
    logs: io.StringIO,
) -> None:
    guard = Guard(timeout_s=0.05, rest_s=1.0)
    hang = Calls()
    hang.gate = anyio.Event()  # never set
    for n in range(1, TIMEOUTS_TO_FAIL + 1):
        started = anyio.current_time()
        with anyio.fail_after(1), pytest.raises(Away):
            await guard.run("cache_get", hang)
        assert anyio.current_time() - started < 0.5
        # One late answer may be this process's own pause: only a run of them fails.
        assert guard.available is (n < TIMEOUTS_TO_FAIL)
    assert hang.count == TIMEOUTS_TO_FAIL
    assert len(events(logs, "store_unavailable")) == 1


async def test_an_answer_in_time_ends_a_run_of_late_ones() -> None:
    guard = Guard(timeout_s=0.05, rest_s=1.0)
    calls = Calls()
    for _ in range(3):
        for _ in range(TIMEOUTS_TO_FAIL - 1):
            calls.gate = anyio.Event()
            with pytest.raises(Away):
                await guard.run("admit_call", calls)
        calls.gate = None
        assert await guard.run("admit_call", calls) == "answer"
    assert guard.available


async def test_an_error_fails_at_once_unlike_a_timeout() -> None:
    guard = Guard(timeout_s=0.05, rest_s=1.0)
    calls = Calls()
    calls.fail = True
    with pytest.raises(Away):
        await guard.run("admit_call", calls)
    assert not guard.available


async def test_a_wait_never_outlasts_the_calls_own_time_less_what_answering_locally_needs() -> None:
    guard = Guard(timeout_s=5.0, rest_s=1.0)
    hang = Calls()
    hang.gate = anyio.Event()
    reserve = limits.default("LIM-D7") / 1000
    with anyio.move_on_after(0.1) as scope:
        started = anyio.current_time()
        with pytest.raises(Away):
            await guard.run("circuit_states", hang)
        waited = anyio.current_time() - started
    assert not scope.cancelled_caught  # the call still had its time to answer locally
    assert 0.1 - reserve - 0.01 <= waited < 0.1
    # With no time left at all, the store is not asked and nothing counts against it.
    with anyio.move_on_after(reserve / 2):
        with pytest.raises(Away):
            await guard.run("circuit_states", hang)
    assert hang.count == 1 and guard.available


async def test_a_cancelled_trial_lets_the_next_operation_try() -> None:
    clock = FakeClock()
    guard = Guard(timeout_s=5.0, rest_s=1.0, clock=clock)
    calls = Calls()
    calls.fail = True
    with pytest.raises(Away):
        await guard.run("slot", calls)
    clock.now += 1.0
    calls.fail = False
    calls.gate = anyio.Event()
    # Cancelled by its caller (not by a deadline, which the guard would see coming).
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as group:

            async def cancel_soon() -> None:
                await anyio.sleep(0.02)
                scope.cancel()

            group.start_soon(cancel_soon)
            await guard.run("slot", calls)
    assert scope.cancelled_caught and not guard.available
    calls.gate = None
    assert await guard.run("slot", calls) == "answer"
    assert guard.available


class Echo:
    """A store on a socket: a thread answers each request byte within 5 ms, as Redis
    does, whatever this process's event loop is doing; or, once `silent`, never."""

    def __init__(self) -> None:
        self.ours, self._theirs = socket.socketpair()
        self.ours.setblocking(False)
        self.silent = False
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while self._theirs.recv(1) == b"?":
            time.sleep(0.005)  # well within any timeout, but never before the loop waits
            if not self.silent:
                self._theirs.sendall(b"!")

    async def __call__(self) -> str:
        """Two exchanges with a turn of the loop between, as a client's new connection
        (its handshake, then its setup) and then the command."""
        loop = asyncio.get_running_loop()
        for _ in range(2):
            await loop.sock_sendall(self.ours, b"?")
            await loop.sock_recv(self.ours, 1)
            await anyio.lowlevel.checkpoint()
        return "answer"

    def close(self) -> None:
        self.ours.close()  # the thread's recv sees the end
        self._thread.join(1)
        self._theirs.close()


def hog(turn_s: float) -> Callable[[], Coroutine[Any, Any, None]]:
    """A task that holds the event loop for `turn_s` at each of its turns, until cancelled:
    this process's own CPU-bound work."""

    async def run() -> None:
        while True:
            end = time.perf_counter() + turn_s
            while time.perf_counter() < end:  # a core busy, as well as the loop
                pass
            await anyio.lowlevel.checkpoint()

    return run


async def test_an_answer_that_came_in_time_is_not_late_however_late_the_loop_reads_it() -> None:
    guard = Guard(timeout_s=0.05, rest_s=1.0)
    echo = Echo()
    try:
        async with anyio.create_task_group() as group:
            # Each turn of the hog is two store timeouts long: every answer waits in the
            # socket, long after it came, for the loop to read it.
            group.start_soon(hog(0.1))
            await anyio.lowlevel.checkpoint()  # the hog has begun
            for _ in range(TIMEOUTS_TO_FAIL + 1):
                started = anyio.current_time()
                assert await guard.run("admit_call", echo) == "answer"
                assert anyio.current_time() - started > guard.timeout_s
            group.cancel_scope.cancel()
    finally:
        echo.close()
    assert guard.available


async def test_a_store_that_never_answers_is_late_even_while_this_process_is_behind(
    logs: io.StringIO,
) -> None:
    guard = Guard(timeout_s=0.05, rest_s=1.0)
    echo = Echo()
    echo.silent = True
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(hog(0.015))  # every turn of the loop at least 15 ms
            for n in range(1, TIMEOUTS_TO_FAIL + 1):
                started = anyio.current_time()
                with pytest.raises(Away):
                    await guard.run("admit_call", echo)
                assert anyio.current_time() - started < 0.5
                assert guard.available is (n < TIMEOUTS_TO_FAIL)
            group.cancel_scope.cancel()
    finally:
        echo.close()
    [line] = events(logs, "store_unavailable")
    assert line["error"] == "TimeoutError"
