"""The latency of every call is measured: each call's `call` event carries latency_ms, from
the call's start to its answer (REQ-OBS-002).

Calls are made over Streamable HTTP as a host makes them, against an engine and a site
that answer after a known time. The measured latency must be at least that time and at
most the round trip the test itself saw around the request, which bounds it from above
however slow the machine is. The per-engine median that engine_status reports is the
other half of the requirement and has its own tests (test_search_requirements.py).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from tests.support.fetching import ARTICLE
from tests.support.http_harness import (
    Served,
    config_text,
    modern_headers,
    post,
    served,
    sse_json,
    tool_call,
    wiki_engine,
)
from tests.support.site import CA, Page, site
from tests.support.standin import mediawiki

DELAY_S = 0.3


def _slow_page() -> Page:
    time.sleep(DELAY_S)
    return Page(body=ARTICLE)


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Served, str]]:
    """The listener, its one engine answering after DELAY_S, and a page that does too."""
    ca_file = tmp_path / "ca.pem"
    CA.cert_pem.write_to_path(str(ca_file))
    monkeypatch.setenv("SSL_CERT_FILE", str(ca_file))  # read when the service is built
    with ExitStack() as stack:
        wiki = stack.enter_context(mediawiki(delay_s=DELAY_S))
        page = stack.enter_context(site({"/slow": _slow_page}))
        server = stack.enter_context(
            served(tmp_path, config_text(more=wiki_engine(wiki["base_url"])))
        )
        yield server, page.url("/slow")


def _timed_call(
    server: Served, name: str, arguments: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any], float]:
    """The result, the one `call` event the call logged, and the round trip in ms."""
    before = len(server.events("call"))
    started = time.monotonic()
    reply = post(server.port, tool_call(name, arguments), modern_headers(name=name))
    round_trip_ms = (time.monotonic() - started) * 1000
    assert reply.status == 200
    events = server.events("call")
    assert len(events) == before + 1, "one call event per call"
    event = events[-1]
    assert event["tool"] == name
    assert isinstance(event["latency_ms"], int) and not isinstance(event["latency_ms"], bool)
    assert 0 <= event["latency_ms"] <= round_trip_ms, (event, round_trip_ms)
    return sse_json(reply)["result"], event, round_trip_ms


def test_req_obs_002_a_search_that_waits_for_its_engine_logs_that_wait(
    world: tuple[Served, str],
) -> None:
    server, _ = world
    result, event, _ = _timed_call(server, "web_search", {"query": "rust"})
    assert result["structuredContent"]["outcome"] == "ok"
    assert event["outcome"] == "ok"
    assert event["latency_ms"] >= DELAY_S * 1000


def test_req_obs_002_a_fetch_that_waits_for_its_page_logs_that_wait(
    world: tuple[Served, str],
) -> None:
    server, page_url = world
    result, event, _ = _timed_call(server, "web_fetch", {"url": page_url})
    assert result["isError"] is False
    assert event["outcome"] == "ok"
    assert event["latency_ms"] >= DELAY_S * 1000


def test_req_obs_002_status_and_refused_calls_carry_their_latency_too(tmp_path: Path) -> None:
    # None of these reaches the network: the latency is still measured and logged.
    calls = [
        ("engine_status", {}, "ok"),
        ("engine_status", {"verbose": True}, "invalid_request:verbose"),
        ("web_search", {"query": "rust", "max_results": 999}, "invalid_request:max_results"),
        ("web_fetch", {"url": "http://192.168.1.10/admin"}, "denied:egress"),
    ]
    with served(tmp_path, config_text()) as server:
        for name, arguments, outcome in calls:
            _, event, _ = _timed_call(server, name, arguments)
            assert event["outcome"] == outcome
