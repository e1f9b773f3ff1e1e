"""Issue 31, item 6: nothing heavy on the event loop. Every step of web_fetch that reads
the page's text (parsing, cleaning, hashing, telling a page that is not content, cutting
the part and scanning it for instruction-like text) runs in a worker thread.

A probe task yields to the loop again and again while a large page is fetched from a
local site, and records the largest span between two of its turns: one turn of the loop,
with everything else that ran in it. It measures the loop thread's CPU time over that
span, not the wall clock: that is the time the loop spent running something else, which
is what holds every other call up. Waiting for the interpreter lock held by a parse
thread, or for a core the machine gave to another process, uses no CPU time of the loop's
thread, so a shared machine does not fail the test. (A probe that sleeps 0.5 ms between
turns adds up every turn within its sleep: on a loop busy reading a page that is close to
1 ms with no step above 0.35 ms.) The smallest largest span of up to five runs counts:
on a loaded machine one run in a few has a turn of 1 to 2 ms in which no callback took
more than 0.7 ms (time the machine charged to the thread, not a step of the fetch), while
a step of the fetch on the loop is in every run.

The site is plain HTTP: the TLS handshake takes 0.7 to 0.9 ms of the loop here, and it is
the outbound client's, the same for a page of any size; the page's own steps are what this
test holds.
"""

from __future__ import annotations

import gc
import time
from pathlib import Path
from typing import Any

import anyio

from rypsok.core.facade import Rypsok
from tests.support.fetching import make
from tests.support.site import Page, site

# A turn of more than this much CPU time on the loop fails (issue 31: "a CPU step of a
# fetch over 1 ms"). Telling a page that is not content took 1.8 to 2.7 ms on the loop; the
# largest turn left is about 0.35 ms.
BOUND_S = 0.001
RUNS = 5  # at most: the first run under the bound ends the test
PART = 100_000  # the highest max_chars_ceiling: the part scanned is as large as it can be
CONFIG = (
    '[egress]\nallow = ["127.0.0.1"]\nallow_http = true\n'
    f"[fetch]\nmax_chars_ceiling = {PART}\n"
    "[limits]\nweb_fetch_per_minute = 600\n"
)


def large_page(paragraphs: int = 2000) -> bytes:
    """About 340 KB of HTML, 330,000 characters of content in ordinary prose and links."""
    text = "".join(
        f"<p>Paragraph {i:05d}: the harbour keeps its boats in rows, and each row has a "
        f"keeper who counts them at dawn and at dusk, with <a href='/notes/{i}'>notes</a> "
        f"on the <em>weather</em> and the tides.</p>"
        for i in range(paragraphs)
    )
    return (
        "<!doctype html><html><head><title>Harbour log</title></head><body><main><article>"
        f"<h1>Harbour log</h1>{text}</article></main></body></html>"
    ).encode()


class Probe:
    """The largest CPU time of the loop's thread between two turns of a task that only
    yields, and the largest wall-clock gap (reported, not asserted)."""

    def __init__(self) -> None:
        self.cpu_s = 0.0
        self.wall_s = 0.0
        self.running = True

    async def run(self) -> None:
        wall, cpu = time.perf_counter(), time.thread_time()
        while self.running:
            await anyio.sleep(0)
            now_wall, now_cpu = time.perf_counter(), time.thread_time()
            self.cpu_s = max(self.cpu_s, now_cpu - cpu)
            self.wall_s = max(self.wall_s, now_wall - wall)
            wall, cpu = now_wall, now_cpu


def probed_fetches(core: Rypsok, url: str, caller: str) -> tuple[Probe, list[dict[str, Any]]]:
    """A first part read from the site, then the next one from memory, under the probe."""

    async def main() -> tuple[Probe, list[dict[str, Any]]]:
        probe = Probe()
        answers = []
        async with anyio.create_task_group() as group:
            group.start_soon(probe.run)
            await anyio.sleep(0.01)
            for start in (0, PART):
                # Calls come in apart, as from a host: the end of one and the start of the
                # next (0.3 ms each) do not share a turn of the loop.
                await anyio.sleep(0.001)
                arguments = {"url": url, "max_chars": PART, "start_char": start}
                answers.append((await core.fetch(arguments, caller=caller)).to_json())
            probe.running = False
        return probe, answers

    gc.collect()  # a collection owed by earlier tests does not fall into the measure
    return anyio.run(main)


def test_issue_31_no_cpu_step_of_a_fetch_over_1_ms_runs_on_the_event_loop(
    tmp_path: Path,
) -> None:
    with site({"/log": Page(body=large_page())}, tls=False) as s:
        core = make(tmp_path, CONFIG)
        # The first fetch of a process loads the parser and charset detection (LIM-M1).
        probed_fetches(core, s.url("/log"), "warm-up")
        probes: list[Probe] = []
        for run in range(RUNS):
            probe, answers = probed_fetches(core, s.url("/log"), f"caller-{run}")
            probes.append(probe)
            # Parts end at a block's edge in their last 5 % (issue 36).
            assert all(PART * 0.95 <= len(a["content"]) <= PART for a in answers)
            assert answers[0]["truncated"] and answers[0]["notices"] == []
            if probe.cpu_s < BOUND_S:
                break
    cpu_ms = sorted(round(p.cpu_s * 1000, 2) for p in probes)
    wall_ms = sorted(round(p.wall_s * 1000, 2) for p in probes)
    assert min(p.cpu_s for p in probes) < BOUND_S, f"loop CPU {cpu_ms} ms, wall {wall_ms} ms"
