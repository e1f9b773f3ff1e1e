"""The cache switch fits the box (issue 31): with `[cache] enabled = true` and every
other key at its default, check's worst case fits the documented unit, and it is still
above what a process with the cache full was measured to hold."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rypsok.core import limits
from rypsok.core.config import load
from rypsok.core.config.estimate import MIB, estimate
from rypsok.core.config.report import memory_of, warnings
from tests.support.paths import REPO
from tests.support.run import check

# bench/memory.py --fetches --cache --runs 5 --idle-runs 10 --json ...: a process
# with the default configuration plus the cache on at its default bounds, filled by
# distinct searches of four SearXNG engines on a local stand-in until it had stored its
# size and a quarter more, each answer just under max_entry_bytes, then four web_fetch
# calls of 5 MiB pages at once (docs/memory.md, "The cache on").
FIXTURE = REPO / "fixtures" / "memory" / "measured-cpython-linux-cache.json"
CACHE_ON = "[cache]\nenabled = true\n"


def config_file(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "rypsok.toml"
    path.write_text("config_version = 1\n" + CACHE_ON + extra)
    return path


def memory_warnings(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("memory:") or "memory: the" in line]


def measured() -> dict[str, Any]:
    record: dict[str, Any] = json.loads(FIXTURE.read_text())
    return record


def test_cache_switch_fits_the_box_check_with_the_cache_on_at_the_defaults_is_quiet(
    tmp_path: Path,
) -> None:
    path = config_file(tmp_path)
    config = load(str(path), {}, read_tokens=False)
    m = memory_of(config)
    assert m.cache > 0  # the cache is counted...
    assert m.total <= limits.default("LIM-M5")  # ...and the worst case fits the unit
    assert memory_warnings(warnings(config)) == []
    run = check(path)
    assert run.code == 0
    assert memory_warnings(run.err.splitlines()) == []
    assert f"+ cache {m.cache} +" in run.err  # check's memory line counts it


def test_cache_switch_fits_the_box_measured_at_the_defaults_with_the_cache_full() -> None:
    record = measured()
    assert record["mode"] == "fetches"
    assert record["cache"] == {
        "max_entries": limits.default("LIM-K3"),
        "max_entry_bytes": limits.default("LIM-K4"),
    }
    for shape in ("text", "markup", "intl"):
        runs = [r for r in record["peaks"] if r["shape"] == shape and r["page_mib"] == 5]
        assert len(runs) >= 5, shape
    for run in record["peaks"]:
        filled = run["cache"]
        # Full, and a quarter of its size more stored: the oldest entries went too.
        assert filled["entries"] == filled["max_entries"] == limits.default("LIM-K3")
        assert filled["stored"] >= filled["max_entries"] * 5 // 4
        assert all(call["outcome"] != "error" for call in run["calls"])


def test_cache_switch_fits_the_box_estimate_is_above_every_peak_with_the_cache_full() -> None:
    """The configuration measured: four fetches of 5 MiB, two parses, the cache on at
    its defaults, pages kept for continuation as by default, and no HTTP sessions (the
    sessions' share is left out, so the comparison is the stricter one)."""
    record = measured()
    m = estimate(
        fetches_in_flight=limits.default("LIM-C3"),
        max_bytes=5 * MIB,
        parsing_in_flight=limits.default("LIM-C5"),
        max_sessions=limits.default("LIM-H6"),
        legacy_revisions=False,
        cache_enabled=True,
        # The bounds measured (the defaults: the test above).
        cache_max_entries=record["cache"]["max_entries"],
        cache_max_entry_bytes=record["cache"]["max_entry_bytes"],
        continuation_max_bytes=limits.default("LIM-F18"),
        platform="linux",
    )
    assert m.total > max(run["peak_mib"] for run in record["peaks"])
    # The cache's own share too: what filling it added to the process after one search.
    held = [run["cache"]["full_mib"] - run["cache"]["warm_mib"] for run in record["peaks"]]
    assert m.cache > max(held)


@pytest.mark.parametrize(
    "extra",
    [
        f"max_entries = {limits.get('LIM-K3').high}\n",
        f"max_entry_bytes = {limits.get('LIM-K4').high}\n",
    ],
    ids=["max_entries", "max_entry_bytes"],
)
def test_cache_switch_fits_the_box_a_cache_at_its_largest_still_warns(
    tmp_path: Path, extra: str
) -> None:
    path = config_file(tmp_path, extra)
    config = load(str(path), {}, read_tokens=False)
    assert memory_of(config).total > limits.default("LIM-M5")
    (line,) = memory_warnings(check(path).err.splitlines())
    # The warning names the keys that would bring the cache's share down.
    assert "cache.max_entries, cache.max_entry_bytes" in line
