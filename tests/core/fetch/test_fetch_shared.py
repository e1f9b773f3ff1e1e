"""Issue 31, item 7: one download for one page. Calls of one caller for one URL that
overlap share one download (rypsok/core/fetch/flights.py); each still passes its own
checks and gets its own part; another caller never shares.

Against local HTTPS sites that count the requests they receive and hold the page until
the test opens a gate, so that the calls overlap for as long as the test needs.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from rypsok.core import limits
from rypsok.core.facade import Rypsok
from rypsok.core.model import ToolError
from tests.support.page_parts import article, call, codes, reads, service
from tests.support.site import Page, site

HOLD_MAX_S = 8.0  # a page the test forgot to release still ends
REACH_S = 5.0  # how long the calls are given to reach the point the test waits for
# (start_char, max_chars) of ten calls at once: parts that overlap, repeat and differ.
WINDOWS = [
    (0, 500),
    (0, 500),
    (500, 500),
    (1000, 700),
    (0, 3000),
    (250, 600),
    (1500, 500),
    (0, 1200),
    (700, 900),
    (2000, 2500),
]


def held(page: Page, gate: threading.Event) -> Callable[[], Page]:
    """The page, answered once the gate opens."""

    def answer() -> Page:
        gate.wait(HOLD_MAX_S)
        return page

    return answer


async def until(probe: Callable[[], bool]) -> None:
    give_up = anyio.current_time() + REACH_S
    while not probe():
        assert anyio.current_time() < give_up, "the calls never got there"
        await anyio.sleep(0.01)


async def fetch(core: Rypsok, url: str, caller: str = "local", **arguments: Any) -> Any:
    """The answer as JSON, or the ToolError."""
    try:
        return (await core.fetch({"url": url, **arguments}, caller=caller)).to_json()
    except ToolError as error:
        return error


def test_issue_31_ten_calls_at_once_for_one_url_make_one_request_and_ten_answers(
    tmp_path: Path,
) -> None:
    gate = threading.Event()
    with site({"/harbour": held(Page(body=article(paragraphs=40)), gate)}) as s:
        core, _ = service(tmp_path)
        url = s.url("/harbour")
        answers: dict[int, Any] = {}

        async def one(i: int, start: int, size: int) -> None:
            answers[i] = await fetch(core, url, start_char=start, max_chars=size)

        async def main() -> ToolError:
            async with anyio.create_task_group() as group:
                for i, (start, size) in enumerate(WINDOWS):
                    group.start_soon(one, i, start, size)
                await until(lambda: core.fetches.downloads.waiting() == len(WINDOWS))
                # A call that fails its own checks is refused at once and joins nothing.
                refused = await fetch(core, url, max_chars=1)
                assert core.fetches.downloads.waiting() == len(WINDOWS)
                gate.set()
            return refused

        refused = anyio.run(main)
        whole = call(core, url, max_chars=20000)  # from memory
        assert reads(s, "/harbour") == 1
        assert [p for p, _ in s.requests] == ["/robots.txt", "/harbour"]
    assert isinstance(refused, ToolError) and refused.kind == "invalid_request"
    text = whole["content"]
    assert len(text) > max(start + size for start, size in WINDOWS)
    for i, (start, size) in enumerate(WINDOWS):
        answer = answers[i]
        end = answer["next_start_char"]  # near start + size, at an edge (issue 36)
        assert start + size * 0.95 <= end <= start + size, (start, size)
        assert answer["content"] == text[start:end] and answer["truncated"]
        assert answer["content_sha256"] == whole["content_sha256"]
        assert answer["url"] == url and codes(answer) == []
    assert len(core.fetches.downloads) == 0


def test_issue_31_calls_of_two_callers_never_share_a_download(tmp_path: Path) -> None:
    gate = threading.Event()
    with site({"/harbour": held(Page(body=article()), gate)}) as s:
        core, _ = service(tmp_path)
        url = s.url("/harbour")
        answers: dict[str, Any] = {}

        async def one(caller: str) -> None:
            answers[caller] = await fetch(core, url, caller, max_chars=500)

        async def main() -> None:
            async with anyio.create_task_group() as group:
                group.start_soon(one, "alice")
                await until(lambda: reads(s, "/harbour") == 1)
                group.start_soon(one, "bob")
                # bob waits for the host's turn (LIM-C4) in a download of his own
                await until(lambda: len(core.fetches.downloads) == 2)
                gate.set()

        anyio.run(main)
        assert reads(s, "/harbour") == 2
    assert answers["alice"]["content"] == answers["bob"]["content"]
    assert 475 <= len(answers["alice"]["content"]) <= 500


def test_issue_31_a_failed_download_gives_every_call_the_same_failure(tmp_path: Path) -> None:
    gate = threading.Event()
    busy = Page(503, b"busy", "text/plain", headers={"Retry-After": "7"})
    with site({"/harbour": held(busy, gate)}) as s:
        core, _ = service(tmp_path)
        url = s.url("/harbour")
        errors: list[Any] = []

        async def one(start: int) -> None:
            errors.append(await fetch(core, url, start_char=start, max_chars=500))

        async def main() -> None:
            async with anyio.create_task_group() as group:
                for start in (0, 500, 1000):
                    group.start_soon(one, start)
                await until(lambda: core.fetches.downloads.waiting() == 3)
                gate.set()

        anyio.run(main)
        assert reads(s, "/harbour") == 1
        again = anyio.run(fetch, core, url)  # a failure is not kept: the next call reads
        assert reads(s, "/harbour") == 2
    assert all(isinstance(e, ToolError) for e in [*errors, again])
    first = errors[0]
    assert first.kind == "unavailable"
    assert first.detail == {"reason": "http_status", "status": 503, "retry_after_ms": 7000}
    assert [(e.kind, e.message, e.detail) for e in errors] == [
        (first.kind, first.message, first.detail)
    ] * 3
    assert len({id(e) for e in errors}) == 3  # each call raised an error of its own


def test_issue_31_a_call_that_ends_does_not_end_the_download_for_the_others(
    tmp_path: Path,
) -> None:
    """The call that started the download is cancelled (as at its own deadline, or by its
    host): the other call still gets the page, from the same single request."""
    gate = threading.Event()
    with site({"/harbour": held(Page(body=article()), gate)}) as s:
        core, _ = service(tmp_path)
        url = s.url("/harbour")
        answers: list[Any] = []

        async def main() -> None:
            first = anyio.CancelScope()

            async def starter() -> None:
                with first:
                    answers.append(await fetch(core, url, max_chars=500))

            async def joiner() -> None:
                answers.append(await fetch(core, url, max_chars=500, start_char=500))

            async with anyio.create_task_group() as group:
                group.start_soon(starter)
                await until(lambda: reads(s, "/harbour") == 1)
                group.start_soon(joiner)
                await until(lambda: core.fetches.downloads.waiting() == 2)
                first.cancel()
                await until(lambda: core.fetches.downloads.waiting() == 1)
                assert len(core.fetches.downloads) == 1  # still under way
                gate.set()

        anyio.run(main)
        assert reads(s, "/harbour") == 1
    assert len(answers) == 1  # the first call ended with no answer
    assert 475 <= len(answers[0]["content"]) <= 500 and answers[0]["url"] == url


def test_issue_31_the_download_ends_when_the_last_call_waiting_for_it_ends(
    tmp_path: Path,
) -> None:
    """Two calls, both cancelled: the download goes with the second, at once and not at
    the fetch deadline, and hands its fetch permit and its host's turn back."""
    gate = threading.Event()
    with site({"/harbour": held(Page(body=article()), gate)}) as s:
        core, _ = service(tmp_path)
        url = s.url("/harbour")

        async def main() -> float:
            scopes = [anyio.CancelScope(), anyio.CancelScope()]

            async def one(scope: anyio.CancelScope) -> None:
                with scope:
                    await fetch(core, url)

            async with anyio.create_task_group() as group:
                for scope in scopes:
                    group.start_soon(one, scope)
                await until(lambda: core.fetches.downloads.waiting() == 2)
                scopes[0].cancel()
                await until(lambda: core.fetches.downloads.waiting() == 1)
                started = time.monotonic()
                scopes[1].cancel()
            took = time.monotonic() - started
            assert len(core.fetches.downloads) == 0
            assert core.fetches.in_flight.borrowed_tokens == 0
            assert not core.fetches._hosts  # the host's turn is given back
            return took

        took = anyio.run(main)
        gate.set()
        answer = anyio.run(fetch, core, url)  # nothing was kept: read again
        assert reads(s, "/harbour") == 2
    assert took < 1.0
    assert answer["url"] == url


def test_issue_31_a_shared_download_still_ends_at_the_fetch_deadline(tmp_path: Path) -> None:
    """The call that started it has gone; the one left waits no longer than the download's
    own deadline (fetch.deadline_ms), and hears it as a deadline."""
    gate = threading.Event()
    deadline_ms = limits.get("LIM-F4").low or 1000
    with site({"/harbour": held(Page(body=article()), gate)}) as s:
        core, _ = service(tmp_path, f"deadline_ms = {deadline_ms}\n")
        url = s.url("/harbour")
        outcomes: list[Any] = []

        async def main() -> float:
            first = anyio.CancelScope()

            async def starter() -> None:
                with first:
                    await fetch(core, url)

            async def joiner() -> None:
                outcomes.append(await fetch(core, url, start_char=500, max_chars=500))

            async with anyio.create_task_group() as group:
                started = time.monotonic()
                group.start_soon(starter)
                await until(lambda: reads(s, "/harbour") == 1)
                group.start_soon(joiner)
                await until(lambda: core.fetches.downloads.waiting() == 2)
                first.cancel()
            return time.monotonic() - started

        took = anyio.run(main)
        gate.set()
    assert took <= deadline_ms / 1000 + 0.5
    (error,) = outcomes
    assert isinstance(error, ToolError) and error.detail == {"reason": "deadline"}
    assert len(core.fetches.downloads) == 0


@pytest.mark.parametrize("ttl", ["continuation_ttl_s = 0\n", ""])
def test_issue_31_calls_share_a_download_with_the_memory_on_or_off(
    tmp_path: Path, ttl: str
) -> None:
    """Sharing is of the download, not the memory: with nothing kept, overlapping calls
    still make one request (and a later call reads again)."""
    gate = threading.Event()
    with site({"/harbour": held(Page(body=article()), gate)}) as s:
        core, _ = service(tmp_path, ttl)
        url = s.url("/harbour")
        answers: list[Any] = []

        async def one(start: int) -> None:
            answers.append(await fetch(core, url, start_char=start, max_chars=500))

        async def main() -> None:
            async with anyio.create_task_group() as group:
                for start in (0, 500):
                    group.start_soon(one, start)
                await until(lambda: core.fetches.downloads.waiting() == 2)
                gate.set()

        anyio.run(main)
        assert reads(s, "/harbour") == 1
        call(core, url)
        assert reads(s, "/harbour") == (2 if ttl else 1)
    assert all(475 <= len(a["content"]) <= 500 for a in answers)  # parts end at edges
    assert answers[0]["content"] != answers[1]["content"]
