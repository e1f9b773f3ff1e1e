"""bench/oauth.py (issue 37) in a few calls: every row it prints is measured (a positive
cost), and a kept token costs less than one checked anew."""

from __future__ import annotations

from pathlib import Path

from bench import oauth as bench


def test_issue_37_the_oauth_bench_measures_every_kind_of_check(tmp_path: Path) -> None:
    rows = dict(bench.validation(20, tmp_path))
    assert set(rows) >= {"static token", "ES256 token, uncached", "ES256 token, kept"}
    assert rows["opaque token, introspected"] > rows["opaque token, kept"]
    assert rows["RS256 token, uncached"] > rows["RS256 token, kept"]
    calls = dict(bench.whole_calls(5, tmp_path))
    assert all(cost > 0 for cost in calls.values())
