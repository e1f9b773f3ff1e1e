"""The store's fault state on its own (no Redis): a clock the test moves, operations the
test makes fail, hang or succeed."""

from __future__ import annotations

import io

import anyio
import anyio.lowlevel
import pytest

from rypsok.core import limits
from rypsok.core.store.guard import TIMEOUTS_TO_FAIL, Away, Guard
from tests.conftest import FakeClock
from tests.core.store.support import events

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
    async with anyio.create_task_group() as tg:
        tg.start_soon(guard.run, "reserve", slow)
        await anyio.wait_all_tasks_blocked()
        with pytest.raises(Away):
            await guard.run("admit_call", failing)
        slow.gate.set()
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


async def test_timeouts_while_this_process_is_behind_are_not_held_against_the_store() -> None:
    import time

    guard = Guard(timeout_s=0.05, rest_s=1.0)
    hang = Calls()
    hang.gate = anyio.Event()
    busy = True

    async def hog() -> None:  # every turn of the loop takes 10 ms of this process's CPU
        while busy:
            time.sleep(0.01)
            await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as group:
        group.start_soon(hog)
        for _ in range(TIMEOUTS_TO_FAIL + 2):
            with pytest.raises(Away):
                await guard.run("admit_call", hang)
        assert guard.available  # the lateness was this process's, not the store's
        busy = False
    # The same timeouts on a quiet loop take the store away.
    for _ in range(TIMEOUTS_TO_FAIL):
        with pytest.raises(Away):
            await guard.run("admit_call", hang)
    assert not guard.available
