"""A provider that misbehaves costs that engine and nothing else, through the real engine
client, and its text never reaches a response, an error or a log line at info
(issue 3, "Bad input and faults"; REQ-AGG-007, REQ-SEC-010, REQ-SEC-011, REQ-SEC-017)."""

from __future__ import annotations

import json

import pytest

from tests.support.mcp_lines import answers, call, lines
from tests.support.run import cli
from tests.support.standin import mediawiki

EXPECTED = {
    "garbage": "parse_failure",
    "html": "parse_failure",
    "huge": "parse_failure",
    "trickle": "timeout",
    "redirect": "request_failure",
    "close": "request_failure",
}


@pytest.mark.parametrize("how", sorted(EXPECTED))
def test_a_misbehaving_provider_costs_only_its_engine(write_config, how: str) -> None:
    with mediawiki() as good, mediawiki(hostile=how) as bad:
        path = write_config(
            'config_version = 1\n[egress]\nallow = ["127.0.0.1"]\n[search]\n'
            "engine_timeout_ms = 1000\n"
            '[engines.good]\ntype = "wikipedia"\ncategories = ["general"]\n'
            f'base_url = "{good["base_url"]}"\n'
            '[engines.bad]\ntype = "wikipedia"\ncategories = ["general"]\n'
            f'base_url = "{bad["base_url"]}"\n'
        )
        run = cli(
            "serve", "--config", str(path), stdin=lines(call(1, "web_search", {"query": "rust"}))
        )
    result = answers(run.out)[1]["result"]
    answer = result["structuredContent"]
    assert answer["outcome"] == "partial", answer
    assert answer["notices"] == [
        {"code": "engine_unavailable", "engine": "bad", "reason": EXPECTED[how]}
    ]
    assert len(answer["results"]) == 2
    assert "PROVIDER-TEXT" not in run.out and "PROVIDER-TEXT" not in run.err
    assert "elsewhere.example" not in run.out + run.err
    events = [json.loads(line) for line in run.err.splitlines()]
    assert {"engine": "bad", "class": EXPECTED[how]}.items() <= next(
        e for e in events if e["event"] == "engine_failed"
    ).items()
