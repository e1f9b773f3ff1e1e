"""The memory estimate of rypsok check (LIM-M1 to LIM-M5) against its measurement."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest

from rypsok.core import limits
from rypsok.core.config.estimate import MIB, Constants, estimate
from tests.support.paths import REPO

# The fit of record: four real web_fetch calls at once to four local HTTPS sites
# (bench/memory.py --fetches --defaults).
FIXTURE = REPO / "fixtures" / "memory" / "measured-cpython-linux.json"
# parse_html alone on bodies held in memory (bench/memory.py --defaults), kept for
# comparison; the estimate must be above these peaks too.
PARSES_FIXTURE = REPO / "fixtures" / "memory" / "measured-cpython-linux-parses.json"
BODIES, PARSES = 4, 2  # the delivered concurrency the constants are fitted on


def measured(path: Path = FIXTURE) -> dict[str, Any]:
    record: dict[str, Any] = json.loads(Path(path).read_text())
    return record


def peaks_by_size(path: Path = FIXTURE) -> dict[int, list[float]]:
    by: dict[int, list[float]] = {}
    for run in measured(path)["peaks"]:
        by.setdefault(run["page_mib"], []).append(run["peak_mib"])
    return by


def at_measured_concurrency(
    max_bytes: int, constants: Constants | None = None, platform: str = "linux"
) -> int:
    """Four fetches, two parses, sessions excluded, cache off."""
    return estimate(
        fetches_in_flight=BODIES,
        max_bytes=max_bytes,
        parsing_in_flight=PARSES,
        max_sessions=limits.default("LIM-H6"),
        legacy_revisions=False,
        cache_enabled=False,
        cache_max_entries=limits.default("LIM-K3"),
        cache_max_entry_bytes=limits.default("LIM-K4"),
        platform=platform,
        constants=constants,
    ).total


def test_lim_m_fixture_holds_enough_runs() -> None:
    record = measured()
    assert record["mode"] == "fetches"
    assert len(record["idle_mib"]) >= 10
    assert record["concurrency"] == {"bodies": BODIES, "parses": PARSES}
    # Four sites on four hosts (one fetch at a time reaches a host, LIM-C4), four
    # web_fetch calls in every run.
    assert len(set(record["sites"])) == BODIES
    assert all(len(run["calls"]) == BODIES for run in record["peaks"])
    by = peaks_by_size()
    assert {5, 10} <= set(by)
    shapes = {run["shape"] for run in record["peaks"]}
    for mib in by:
        for shape in shapes:
            runs = [r for r in record["peaks"] if r["page_mib"] == mib and r["shape"] == shape]
            assert len(runs) >= 5, (mib, shape)


@pytest.mark.parametrize("mib", [5, 10])
@pytest.mark.parametrize("path", [FIXTURE, PARSES_FIXTURE], ids=["fetches", "parses"])
def test_lim_m_estimate_is_above_every_measured_peak(mib: int, path: Path) -> None:
    peaks = peaks_by_size(path)[mib]
    assert at_measured_concurrency(mib * MIB) > max(peaks)


def test_lim_m1_base_is_above_every_idle_run() -> None:
    idle = measured()["idle_mib"]
    assert limits.default("LIM-M1") > max(idle)
    # The peak runs' own idle figure (same imports, before the bodies) too.
    assert limits.default("LIM-M1") > max(r["idle_mib"] for r in measured()["peaks"])


def test_lim_m2_m3_are_the_line_through_the_worst_peaks_rounded_up() -> None:
    """The fit rule: worst peak - base - four bodies is two parses, of which what the
    first fetch loads (the parser and charset detection, in each peak once) is counted
    whole in each; the line through the two per-parse points, slope rounded up to
    tenths and the fixed part up to a MiB so that the line is above both points."""
    base = limits.default("LIM-M1")
    first = max(measured()["first_use_mib"])
    per_parse = {
        mib: (max(p) - base - BODIES * mib - first) / PARSES + first
        for mib, p in peaks_by_size().items()
    }
    slope = (per_parse[10] - per_parse[5]) / 5
    tenths = max(0, math.ceil(slope * 10 - 1e-9))
    fixed = max(math.ceil(per_parse[m] - tenths / 10 * m - 1e-9) for m in per_parse)
    assert (limits.default("LIM-M2"), limits.default("LIM-M3")) == (fixed, tenths)
    assert measured()["fit"] == {"LIM-M1": base, "LIM-M2": fixed, "LIM-M3": tenths}


def test_lim_m1_what_the_first_fetch_loads_is_measured_on_every_idle_run() -> None:
    """The parser and charset detection load on the first fetch (not at rest): every idle
    run measured what they add, and it is a real share, counted in each parse."""
    record = measured()
    assert len(record["first_use_mib"]) == len(record["idle_mib"])
    assert all(1 < m < limits.default("LIM-M2") for m in record["first_use_mib"])


@pytest.mark.parametrize("mib", [5, 10])
def test_lim_m2_one_parse_at_a_time_is_estimated_above_what_it_holds(mib: int) -> None:
    """At parsing_in_flight = 1 (the deployed units') the process holds its base, the
    bodies, one parse and what the first fetch loaded; the estimate is above that."""
    first = max(measured()["first_use_mib"])
    base = max(measured()["idle_mib"])
    one_parse = (max(peaks_by_size()[mib]) - base - BODIES * mib - first) / PARSES
    held = base + BODIES * mib + one_parse + first
    assert (
        estimate(
            fetches_in_flight=BODIES,
            max_bytes=mib * MIB,
            parsing_in_flight=1,
            max_sessions=0,
            legacy_revisions=False,
            cache_enabled=False,
            cache_max_entries=limits.default("LIM-K3"),
            cache_max_entry_bytes=limits.default("LIM-K4"),
            platform="linux",
        ).total
        > held
    )


def test_lim_m_formula_by_hand() -> None:
    c = Constants(base_mib=75, parse_fixed_mib=40, parse_tenths=12, session_kib=60)
    m = estimate(
        fetches_in_flight=4,
        max_bytes=5 * MIB,
        parsing_in_flight=2,
        max_sessions=256,
        legacy_revisions=True,
        cache_enabled=True,
        cache_max_entries=1000,
        cache_max_entry_bytes=32768,
        platform="linux",
        constants=c,
    )
    # 4 x 5 = 20; 2 x (1.2 x 5 + 40) = 92; 256 x 60 KiB = 15;
    # 1000 x (32 KiB + 4 KiB for what an entry holds beside its text) = 35.16 -> 36
    assert (m.base, m.bodies, m.parses, m.sessions, m.cache) == (75, 20, 92, 15, 36)
    assert m.total == 75 + 20 + 92 + 15 + 36
    assert m.build == "CPython on Linux" and m.measured_here


def test_lim_m_each_share_is_rounded_up() -> None:
    c = Constants(base_mib=75, parse_fixed_mib=40, parse_tenths=12, session_kib=60)
    m = estimate(
        fetches_in_flight=4,
        max_bytes=1_000_000,
        parsing_in_flight=2,
        max_sessions=3,
        legacy_revisions=True,
        cache_enabled=False,
        cache_max_entries=1000,
        cache_max_entry_bytes=32768,
        platform="linux",
        constants=c,
    )
    # 4e6 B = 3.81 -> 4; 2 x (1.2 x 0.954 + 40) = 82.29 -> 83; 180 KiB -> 1; cache off
    assert (m.bodies, m.parses, m.sessions, m.cache) == (4, 83, 1, 0)


def test_lim_m4_sessions_count_only_while_legacy_revisions_are_on() -> None:
    kwargs: dict[str, Any] = dict(
        fetches_in_flight=4,
        max_bytes=5 * MIB,
        parsing_in_flight=2,
        max_sessions=2048,
        cache_enabled=False,
        cache_max_entries=1000,
        cache_max_entry_bytes=32768,
    )
    assert estimate(legacy_revisions=True, **kwargs).sessions == 2048 * 60 // 1024
    assert estimate(legacy_revisions=False, **kwargs).sessions == 0


def test_lim_m_estimate_reads_the_measured_rows() -> None:
    c = Constants.measured()
    assert c == Constants(
        limits.default("LIM-M1"),
        limits.default("LIM-M2"),
        limits.default("LIM-M3"),
        limits.default("LIM-M4"),
    )
    assert min(c.base_mib, c.parse_fixed_mib, c.session_kib) > 0


def over(total: int, platform: str) -> tuple[int, bool, bool]:
    # base alone carries the total: no bodies, parses, sessions or cache.
    m = estimate(
        fetches_in_flight=0,
        max_bytes=5 * MIB,
        parsing_in_flight=0,
        max_sessions=0,
        legacy_revisions=False,
        cache_enabled=False,
        cache_max_entries=1,
        cache_max_entry_bytes=1024,
        platform=platform,
        constants=Constants(total, 0, 0, 60),
    )
    return m.total, m.over_unit, m.measured_here


def test_lim_m5_warns_only_above_the_unit() -> None:
    unit = limits.default("LIM-M5")
    assert over(unit, "linux") == (unit, False, True)
    assert over(unit + 1, "linux") == (unit + 1, True, True)


def test_lim_m5_no_warning_on_a_platform_that_was_not_measured() -> None:
    unit = limits.default("LIM-M5")
    for platform in ("darwin", "win32", "freebsd14"):
        assert over(unit + 100, platform) == (unit + 100, False, False)


def test_lim_m5_the_deploy_configuration_is_estimated_under_the_unit() -> None:
    """The configuration the units and the image ship (parsing_in_flight = 1) fits the
    documented unit: check prints no memory warning for it."""
    from rypsok.core.config import load
    from rypsok.core.config.report import memory_of

    deployed = memory_of(load(str(REPO / "deploy" / "rypsok.toml"), {}, read_tokens=False))
    assert deployed.measured_here == sys.platform.startswith("linux")
    assert deployed.total <= limits.default("LIM-M5") and not deployed.over_unit


def test_lim_m5_the_defaults_are_estimated_under_the_unit() -> None:
    """The book's defaults, sessions included, fit the documented unit on CPython on
    Linux (issue 17): a default configuration does not warn about itself."""
    from rypsok.core.config import load
    from rypsok.core.config.report import memory_of

    defaults = memory_of(load(None, {}, read_tokens=False))
    if sys.platform.startswith("linux"):
        assert defaults.measured_here
        assert defaults.total <= limits.default("LIM-M5") and not defaults.over_unit
