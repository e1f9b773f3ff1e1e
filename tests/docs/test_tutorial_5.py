"""Tutorial 5, the scraping switch, as written, against a local stand-in for DuckDuckGo's HTML
endpoint and Wikipedia's API (REQ-DOC-002 part, REQ-ENG-013, REQ-ENG-014, REQ-CMP-007).

The tutorial's own file (examples/tutorial-5.toml) is used as it stands; the only line a test
adds is `[egress] proxy`, the route to the stand-in (tests/support/ddg_standin.py), and the child
process trusts the stand-in's CA through SSL_CERT_FILE.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio

from rypsok.core.config import load
from rypsok.core.engines.duckduckgo import ADMISSION
from rypsok.core.facade import Rypsok
from rypsok.core.net.client import user_agent
from rypsok.core.store.local.circuit import Circuit
from rypsok.core.store.local.provider import ProviderLimiter
from tests.support.clock import FakeClock
from tests.support.ddg_standin import DDG, WIKI, Provider, Reply, client_tls, page, provider
from tests.support.mcp_lines import answers, call, lines
from tests.support.paths import EXAMPLES
from tests.support.run import check, clean_env, cli

TUTORIAL = EXAMPLES / "tutorial-5.toml"
# The sentence of Tutorial 5, step 1, word for word.
SENTENCE = (
    'engines.ddg: type "duckduckgo" scrapes a human-facing interface; it runs only with '
    "[scraping] enabled = true, at the operator's risk under the provider's terms."
)
BLOCKED = {"code": "engine_unavailable", "engine": "ddg", "reason": "blocked"}


def tutorial_file(folder: Path, standin: Provider, extra: str = "") -> Path:
    path = folder / "tutorial-5.toml"
    path.write_text(
        TUTORIAL.read_text(encoding="utf-8")
        + f'\n[egress]\nproxy = "{standin.proxy_url}"\n'
        + extra,
        encoding="utf-8",
    )
    return path


def serve(folder: Path, standin: Provider, stdin: bytes) -> tuple[int, str, list[dict[str, Any]]]:
    path = tutorial_file(folder, standin)
    env = clean_env(SSL_CERT_FILE=str(standin.write_ca(folder)))
    run = cli("serve", "--config", str(path), env=env, stdin=stdin)
    return run.code, run.out, [json.loads(line) for line in run.lines]


def in_process(
    folder: Path, standin: Provider, extra: str = "", *, lifted: bool = True
) -> tuple[Rypsok, FakeClock]:
    """The tutorial's process in this one. With `lifted`, for tests that ask DuckDuckGo
    several times, its rate (one turn every six seconds) is lifted and its concurrency cap
    kept; the circuit runs on a clock the test moves, so a cooldown passes at once."""
    core = Rypsok(load(str(tutorial_file(folder, standin, extra)), {}), tls=client_tls())
    if lifted:
        cap = int(core.store.limiters["ddg"].slots.total_tokens)
        core.store.limiters["ddg"] = ProviderLimiter(60000, 1000, cap)  # type: ignore[index]
    clock = FakeClock(1000.0)
    r = core.config.resilience
    core.store.circuits["ddg"] = Circuit(  # type: ignore[attr-defined]
        r.failures_to_open, r.first_cooldown_s, r.max_cooldown_s, clock
    )
    return core, clock


def search(core: Rypsok, **arguments: Any) -> dict[str, Any]:
    async def go() -> dict[str, Any]:
        return (await core.search(arguments)).to_json()

    return anyio.run(go)


def status(core: Rypsok) -> dict[str, str]:
    async def go() -> dict[str, Any]:
        return (await core.status()).to_json()

    return {e["id"]: e["state"] for e in anyio.run(go)["engines"]}


# -- 1. Turn the switch on --------------------------------------------------------------------


def test_tutorial_5_step_1_without_the_switch_check_refuses_with_one_sentence(
    tmp_path: Path,
) -> None:
    text = TUTORIAL.read_text(encoding="utf-8")
    assert "[scraping]\nenabled = true\n" in text
    for variant in (
        text.replace("[scraping]\nenabled = true\n", ""),
        text.replace("[scraping]\nenabled = true\n", "[scraping]\nenabled = false\n"),
    ):
        path = tmp_path / "without.toml"
        path.write_text(variant, encoding="utf-8")
        run = cli("check", "--config", str(path))
        assert run.code == 1
        errors = [x for x in run.lines if x.startswith("rypsok: error:")]
        assert len(errors) == 1 and errors[0].startswith(f"rypsok: error: {SENTENCE} (line ")
        served = cli("serve", "--config", str(path))
        assert served.code == 1 and served.out == ""
        assert json.loads(served.err)["message"].startswith(SENTENCE)


def test_tutorial_5_step_1_with_the_switch_check_passes_and_warns(tmp_path: Path) -> None:
    run = check(TUTORIAL)
    assert run.code == 0, run.err
    assert (
        "rypsok: warning: engines.ddg: the engine scrapes a human-facing page, at your risk "
        "under the provider's terms; prefer an engine with an API"
    ) in run.lines


# -- 2. Search --------------------------------------------------------------------------------


def test_tutorial_5_step_2_two_engines_answer(tmp_path: Path) -> None:
    with provider() as standin:
        code, out, events = serve(tmp_path, standin, (EXAMPLES / "first-search.jsonl").read_bytes())
    assert code == 0
    assert len(out.splitlines()) == 2
    result = answers(out)[2]["result"]
    assert result["isError"] is False
    answer = result["structuredContent"]
    assert answer["outcome"] == "ok" and answer["notices"] == []
    urls = {r["url"] for r in answer["results"]}
    assert "https://www.rust-lang.org/" in urls  # from the DuckDuckGo page
    assert "https://en.wikipedia.org/wiki/Rust_%26_Bone" in urls  # from Wikipedia
    # Each engine asked once, with the standard User-Agent.
    [ddg] = standin.to(DDG)
    [wiki] = standin.to(WIKI)
    assert ddg.params["q"] == ["rust programming language"] and ddg.params["kl"] == ["us-en"]
    assert ddg.header("User-Agent") == wiki.header("User-Agent") == user_agent("")
    # Never silent: scraping_enabled with the engine's name at startup.
    started = [e for e in events if e["event"] == "scraping_enabled"]
    assert started == [{**started[0], "level": "warn", "engine": "ddg"}]
    assert events.index(started[0]) < next(i for i, e in enumerate(events) if e["event"] == "call")


def test_tutorial_5_step_2_at_most_ten_a_minute_one_at_a_time(tmp_path: Path) -> None:
    with provider() as standin:
        core, _ = in_process(tmp_path, standin, lifted=False)
        limiter = core.store.limiters["ddg"]
        assert limiter.slots.total_tokens == ADMISSION.concurrency == 1
        assert (ADMISSION.rate_per_minute, ADMISSION.burst) == (10, 1)
        first = search(core, query="rust")
        second = search(core, query="rust")  # the next turn is six seconds away
    assert first["outcome"] == "ok" and first["notices"] == []
    assert second["outcome"] == "ok" and second["results"]  # a skip is not a failure
    assert {"code": "engine_skipped", "engine": "ddg", "reason": "rate_limited"} in (
        second["notices"]
    )
    assert len(standin.to(DDG)) == 1 and len(standin.to(WIKI)) == 2


def test_tutorial_5_step_2_results_are_never_cached(tmp_path: Path) -> None:
    with provider() as standin:
        core, _ = in_process(tmp_path, standin, "[cache]\nenabled = true\n")
        first = search(core, query="rust")
        second = search(core, query="rust")
    assert first["outcome"] == second["outcome"] == "ok"
    assert len(standin.to(DDG)) == 2  # asked again: nothing of DuckDuckGo's was kept
    assert not [n for n in second["notices"] if n.get("engine") == "ddg"]
    # The cache is on and works: Wikipedia, whose record allows storage, was served from it.
    assert {"code": "from_cache", "engine": "wikipedia"} in second["notices"]
    assert len(standin.to(WIKI)) == 1


# -- 3. When the provider says no -------------------------------------------------------------


def test_tutorial_5_step_3_a_challenge_gives_partial_with_the_blocked_notice(
    tmp_path: Path,
) -> None:
    with provider() as standin:
        standin.ddg = Reply(202, page("challenge.html"))
        code, out, events = serve(
            tmp_path,
            standin,
            lines(
                call(1, "web_search", {"query": "rust programming language"}),
                call(2, "engine_status"),
            ),
        )
    assert code == 0
    got = answers(out)
    answer = got[1]["result"]["structuredContent"]
    assert answer["outcome"] == "partial"
    assert answer["notices"] == [BLOCKED]
    assert answer["results"]  # Wikipedia's
    engines = {e["id"]: e for e in got[2]["result"]["structuredContent"]["engines"]}
    assert engines["ddg"]["state"] == "closed"  # one answer is not yet "a few"
    failed = [e for e in events if e["event"] == "engine_failed"]
    assert [(e["engine"], e["class"]) for e in failed] == [("ddg", "blocked")]
    assert "bots use" not in "".join(json.dumps(e) for e in events)
    assert len(standin.to(DDG)) == 1  # the challenge was not answered, nor retried


def test_tutorial_5_step_3_after_a_few_blocks_the_engine_is_open_then_tried_once(
    tmp_path: Path,
) -> None:
    with provider() as standin:
        standin.ddg = Reply(200, page("challenge.html"))
        core, clock = in_process(tmp_path, standin)
        for _ in range(core.config.resilience.failures_to_open):
            answer = search(core, query="rust")
            assert answer["outcome"] == "partial" and BLOCKED in answer["notices"]
        assert status(core)["ddg"] == "open"
        asked = len(standin.to(DDG))
        # Open: rypsok stops asking for a while...
        resting = search(core, query="rust")
        assert {"code": "engine_skipped", "engine": "ddg", "reason": "cooldown"} in (
            resting["notices"]
        )
        assert len(standin.to(DDG)) == asked
        # ...then tries once: the next real request is the probe.
        clock.now += core.config.resilience.first_cooldown_s + 1
        standin.ddg = Reply(200, page("results.html"))
        probe = search(core, query="rust")
        assert len(standin.to(DDG)) == asked + 1
    assert probe["outcome"] == "ok" and probe["notices"] == []
    assert status(core)["ddg"] == "closed"
