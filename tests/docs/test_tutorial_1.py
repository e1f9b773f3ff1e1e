"""Tutorial 1 as written, against a local stand-in for Wikipedia (REQ-DOC-002 part,
REQ-MCP-001, REQ-DEP-001)."""

from __future__ import annotations

import json

from tests.support.examples import tutorial_1_config
from tests.support.mcp_lines import answers, call, lines
from tests.support.paths import EXAMPLES
from tests.support.run import cli
from tests.support.standin import mediawiki


def test_tutorial_1_piped_file_gives_two_answer_lines_and_exits(write_config) -> None:
    with mediawiki() as wiki:
        path = write_config(tutorial_1_config(wiki["base_url"]))
        # The tutorial's own file, piped as the tutorial pipes it.
        run = cli(
            "serve", "--config", str(path), stdin=(EXAMPLES / "first-search.jsonl").read_bytes()
        )
    assert run.code == 0
    assert len(run.out.splitlines()) == 2
    got = answers(run.out)
    assert got[1]["result"]["supportedVersions"][0] == "2026-07-28"
    result = got[2]["result"]
    assert result["isError"] is False
    answer = result["structuredContent"]
    assert answer["outcome"] == "ok" and answer["notices"] == []
    assert [r["title"] for r in answer["results"]] == ["Rust (programming language)", "Rust & Bone"]
    assert answer["results"][0]["date"] == "2026-09-01"
    assert answer["results"][1]["url"].endswith("/wiki/Rust_%26_Bone")
    assert "<span" not in answer["results"][0]["snippet"]
    assert json.loads(result["content"][0]["text"]) == answer
    assert wiki["queries"] == ["rust programming language"]
    assert wiki["user_agents"][0].startswith("rypsok/")


def test_req_obs_005_engine_failure_is_logged_with_engine_and_class(write_config) -> None:
    path = write_config(tutorial_1_config("http://127.0.0.1:9/w"))  # nothing listens on port 9
    run = cli(
        "serve", "--config", str(path), stdin=lines(call(1, "web_search", {"query": "zebracorn"}))
    )
    error = answers(run.out)[1]["result"]["structuredContent"]["error"]
    assert error["kind"] == "unavailable" and error["detail"]["reason"] == "all_failed"
    events = [json.loads(line) for line in run.err.splitlines()]
    failed = [e for e in events if e["event"] == "engine_failed"]
    assert failed and failed[0]["engine"] == "wikipedia" and failed[0]["class"]
    call_event = next(e for e in events if e["event"] == "call")
    assert call_event["request_id"] == failed[0]["request_id"]
    assert "zebracorn" not in run.err  # REQ-PRIV-004: no query text at the default level


def test_req_ops_002_end_of_input_aborts_what_is_still_running_after_shutdown_ms(
    write_config,
) -> None:
    import time

    with mediawiki(delay_s=8) as wiki:
        path = write_config(
            tutorial_1_config(wiki["base_url"]) + "[service]\nshutdown_ms = 500\n"
            "[search]\ndeadline_ms = 10000\nengine_timeout_ms = 9000\n"
        )
        started = time.monotonic()
        run = cli(
            "serve", "--config", str(path), stdin=lines(call(1, "web_search", {"query": "slow"}))
        )
        elapsed = time.monotonic() - started
    assert run.code == 0
    assert run.out == ""  # the call was aborted at shutdown: no answer
    assert elapsed < 5.0  # start-up plus 0.5 s: long before the engine (8 s) or the deadline
