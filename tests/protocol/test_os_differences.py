"""What differs on Windows, simulated here (issue 18, item 2): the event loop cannot watch
signals, the standard streams start in text mode, and a file's mode does not say who may
read it. Each guard is exercised with the platform it is for named or faked."""

from __future__ import annotations

import os
import signal
import stat
from typing import Any

import anyio
import pytest

from rypsok.core.config.secrets import readable_by_everyone
from rypsok.protocol import process


def test_issue_18_without_signal_support_serving_waits_instead_of_crashing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def unsupported(*signals: Any) -> Any:
        raise NotImplementedError("asyncio on Windows has no add_signal_handler")

    monkeypatch.setattr(process.anyio, "open_signal_receiver", unsupported)

    async def go() -> bool:
        with anyio.move_on_after(0.2) as scope:
            await process.stop_signal()
        return scope.cancelled_caught

    assert anyio.run(go)  # it waited, to be cancelled; no NotImplementedError


def test_issue_18_a_stop_signal_is_still_heard_where_signals_work() -> None:
    async def go() -> signal.Signals:
        async with anyio.create_task_group() as group:
            got: list[signal.Signals] = []

            async def wait() -> None:
                got.append(await process.stop_signal())

            group.start_soon(wait)
            await anyio.sleep(0.1)
            os.kill(os.getpid(), signal.SIGTERM)
            with anyio.fail_after(5):
                while not got:
                    await anyio.sleep(0.01)
        return got[0]

    assert anyio.run(go) is signal.SIGTERM


def test_issue_18_the_protocol_streams_are_binary_on_windows() -> None:
    calls: list[tuple[int, int]] = []
    process.binary_mode(0, platform="win32", setmode=lambda fd, mode: calls.append((fd, mode)))
    process.binary_mode(7, platform="win32", setmode=lambda fd, mode: calls.append((fd, mode)))
    assert calls == [(0, 0x8000), (7, 0x8000)]  # O_BINARY, as msvcrt.setmode takes it
    process.binary_mode(0, platform="linux", setmode=lambda fd, mode: calls.append((fd, mode)))
    process.binary_mode(0, platform="darwin", setmode=lambda fd, mode: calls.append((fd, mode)))
    assert len(calls) == 2


def test_issue_18_a_token_files_mode_is_judged_only_where_it_means_who_may_read() -> None:
    everyone = stat.S_IFREG | 0o644
    owner = stat.S_IFREG | 0o600
    assert readable_by_everyone(everyone, platform="linux")
    assert readable_by_everyone(everyone, platform="darwin")
    assert not readable_by_everyone(owner, platform="linux")
    # Windows reports 0o666 or 0o444 for every file: the ACL decides, unread here.
    assert not readable_by_everyone(stat.S_IFREG | 0o666, platform="win32")
