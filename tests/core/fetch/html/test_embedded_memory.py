"""Issue 34: a page that is all script data costs no more than the memory estimate
counts for one parse (LIM-M2 + LIM-M3 × page), and is read within the fetch deadline.

Each hostile application shell (bench/memory.py, ``ShellPage``: a blob of prose, the
same with 4-byte characters, deep nesting, over a million tiny strings, the most
short prose strings, the most app-router scripts) is as large as ``fetch.max_bytes``
lets a page be at its default (a larger body is refused before the parse). It goes
through what web_fetch does past the download (decode as read, parse, extract, clean,
in a worker thread) in a process of its own, measured as bench/memory.py measures:
VmHWM less the process at rest (what serve imports) and the body, which the estimate
counts among the bodies (``bench.memory.child_extract``).

Such a page makes almost no tree: what bounds its cost is the script text a parse
keeps (LIM-F24) and the tokens the extraction reads of it (LIM-F26). With LIM-F24
raised to 64 MiB, shell-intl (its data kept at 4 bytes a character) measured 80 MiB,
above the 67.5 MiB it is held to here: this test fails without that bound. shell-rsc
(twenty thousand app-router scripts) took 38 s while the scripts were compared by value.
Ordinary pages measured this way, one alone in a process, grow the resident set by more than the per-parse figure (text 90, intl 128 MiB at 5 MiB): the estimate
is a fit on four fetches at once, not a bound on one parse in isolation. Shells are
held to the per-parse figure all the same: they are far below it."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from bench.memory import CHILD, MIB, SHELL_SHAPES, build_page
from rypsok.core import limits
from rypsok.core.config import load
from tests.support.paths import REPO

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="measured with /proc/self/status (Linux)"
)

# What the child needs beyond the deadline: starting Python and importing what serve
# imports (about a second), with the other children running at the same time.
START_S = 60


def fetch_defaults() -> tuple[int, int]:
    """fetch.max_bytes and fetch.deadline_ms of the default configuration."""
    fetch = load(None, {}, read_tokens=False).fetch
    return fetch.max_bytes, fetch.deadline_ms


def per_parse_mib(page_bytes: int) -> float:
    """One parse's share of the estimate, unrounded."""
    return limits.default("LIM-M2") + limits.default("LIM-M3") / 10 * page_bytes / MIB


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Each shape's figures, from one child a page, all children at once (each
    process's own VmHWM is its peak, whatever the others do)."""
    max_bytes, deadline_ms = fetch_defaults()
    folder = tmp_path_factory.mktemp("shells")
    children: dict[str, subprocess.Popen[str]] = {}
    for shape in SHELL_SHAPES:
        page = folder / f"{shape}.html"
        page.write_bytes(build_page(shape, 0, max_bytes))
        children[shape] = subprocess.Popen(
            [*CHILD, "--child-extract", str(page), str(deadline_ms)],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    out: dict[str, dict[str, Any]] = {}
    for shape, child in children.items():
        stdout, stderr = child.communicate(timeout=deadline_ms / 1000 + START_S)
        assert child.returncode == 0, stderr[-2000:]
        out[shape] = json.loads(stdout.strip().splitlines()[-1])
    return out


@pytest.mark.slow
@pytest.mark.parametrize("shape", SHELL_SHAPES)
def test_issue_34_lim_m2_m3_a_hostile_shell_page_stays_inside_the_estimate_and_deadline(
    shape: str, measured: dict[str, dict[str, Any]]
) -> None:
    max_bytes, deadline_ms = fetch_defaults()
    r = measured[shape]
    assert r["page_bytes"] == max_bytes
    bound = per_parse_mib(max_bytes)
    assert r["parse_mib"] < bound, f"{shape}: {r['parse_mib']:.1f} MiB, estimate {bound:.1f}"
    assert not r["over_deadline"], f"{shape}: not read within {deadline_ms} ms"
    assert r["s"] < deadline_ms / 1000
    # The page is what it is meant to be: a shell whose data is past LIM-F24 (so the
    # bound is what is measured), and whose prose was read from that data.
    assert r["shell"] and r["data_truncated"]
    assert r["blocks"] >= 1 and r["chars"] > 0


def test_issue_34_lim_m2_m3_the_shell_pages_are_what_they_say() -> None:
    """The generator's pages: exactly the size asked, UTF-8, an empty root element."""
    for shape in SHELL_SHAPES:
        page = build_page(shape, 0, 256 * 1024)
        assert len(page) == 256 * 1024
        text = page.decode("utf-8")
        assert '<div id="__next"></div>' in text and text.endswith("</body></html>")
    intl = build_page("shell-intl", 0, 256 * 1024).decode("utf-8")
    assert max(map(ord, intl)) > 0xFFFF  # CPython keeps this data at 4 bytes a character
