"""A ten-second soak of the HTTP listener (bench/soak, issue 7 part 7) in the default run.

`python -m rypsok serve --transport http` of this interpreter takes the soak's mixed
load for 10 s: modern and legacy sessions calling all three tools, fetches of ordinary
and hostile pages on local HTTPS sites, a flaky MediaWiki stand-in, slow, stalled and
silent clients, cancelled calls and wrong tokens. The smaller bounds (1 MiB pages, a
2 s fetch deadline, a 4 s request bound) keep the run short; the bounds the soak
judges by are read from `check` on the same file. About 16 s.

Invariant I7 of the book: a call ends within LIM-S7, LIM-F5 or LIM-S13 with exactly
one outcome (REQ-ERR-001); REQ-SEC-014: nothing external ends the process.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench.soak.load import Call, Record
from bench.soak.report import Ending, Logs, build
from tests.support.paths import REPO

SOAK_TIMEOUT_S = 120
MARGIN_S = 2.0


@pytest.fixture(scope="module")
def soak(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any], str]:
    folder = tmp_path_factory.mktemp("soak")
    out = folder / "report.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.soak",
            "--seconds",
            "10",
            "--from-source",
            "--max-bytes",
            "1048576",
            "--fetch-deadline-ms",
            "2000",
            "--request-timeout-s",
            "4",
            "--margin-s",
            str(MARGIN_S),
            "--json",
            str(out),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=SOAK_TIMEOUT_S,
        check=False,
    )
    assert out.exists(), f"the soak wrote no report (exit {proc.returncode}):\n{proc.stderr}"
    return proc.returncode, json.loads(out.read_text()), proc.stdout


def test_req_err_001_every_call_of_a_mixed_http_load_is_answered_within_its_maximum(
    soak: tuple[int, dict[str, Any], str],
) -> None:
    _code, report, text = soak
    tools = report["tools"]
    # The load was what it claims: every tool, both revisions, slow clients.
    for name in ("web_search", "web_fetch", "engine_status", "initialize"):
        assert tools.get(name, {}).get("sent", 0) > 0, name
    assert {"modern", "legacy", "slow"} <= set(report["channels"]), report["channels"]
    assert len(report["fetch_targets"]) >= 5, report["fetch_targets"]
    assert report["requests"]["lost"] == 0, text
    assert report["requests"]["answered"] == report["requests"]["sent"], text
    maxima = report["config"]["maxima_ms"]
    for name in ("web_search", "web_fetch", "engine_status"):
        assert tools[name]["max_ms"] <= maxima[name] + 1000 * MARGIN_S, (name, tools[name])


def test_req_sec_014_the_server_outlives_hostile_pages_and_clients_and_exits_cleanly(
    soak: tuple[int, dict[str, Any], str],
) -> None:
    code, report, text = soak
    assert report["server"]["crashed_at_s"] is None, text
    assert report["server"]["exit_code"] == 0, text
    assert report["memory"]["peak_hwm_mib"] <= report["memory"]["estimate_mib"], text
    assert report["passed"], text
    assert code == 0, text


def test_the_soak_fails_on_a_lost_answer_a_crash_or_a_peak_above_the_estimate(
    tmp_path: Path,
) -> None:
    """The verdict itself, on made-up records: each of the three must fail the run."""

    def verdict(lost: bool, crashed: bool, hwm_kib: int) -> list[str]:
        call = Call("modern", "web_fetch", "drip", 4000, 6.0, outcome="ok", latency_s=0.1)
        if lost:
            call.latency_s, call.outcome, call.lost = None, "no answer within the bound", True
        record = Record(calls=[call], samples=[(0.0, 80 * 1024, hwm_kib)])
        ending = Ending(None if crashed else 0, 0.5, 8.0, 3.0 if crashed else None)
        report = build(
            record,
            estimate_mib=200,
            memory_line="",
            ending=ending,
            logs=Logs(),
            hits={},
            private_path="/x/private/page",
            margin_s=2.0,
            config={},
        )
        assert report["passed"] == (not report["failures"])
        return report["failures"]

    assert verdict(False, False, 150 * 1024) == []
    assert any("lost" in f for f in verdict(True, False, 150 * 1024))
    assert any("gone" in f for f in verdict(False, True, 150 * 1024))
    assert any("above check's estimate" in f for f in verdict(False, False, 201 * 1024))
