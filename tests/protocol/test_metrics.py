"""Issue 38, items 1 to 3: /metrics, /healthz and /readyz on the operator's own listener,
checked by Debian's promtool and scraped by a Prometheus server started here."""

from __future__ import annotations

import contextlib
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import pytest

from rypsok.core import telemetry
from rypsok.core.config import load
from rypsok.core.facade import Rypsok
from rypsok.protocol.metrics.collect import Service
from rypsok.protocol.metrics.exposition import Family, escape_label, render
from rypsok.protocol.metrics.listener import MetricsListener
from tests.support import prometheus
from tests.support.fetching import fetch, make
from tests.support.http_harness import (
    TOKEN_A,
    caller_env,
    config_text,
    modern_headers,
    post,
    request_bytes,
    served,
    sse_json,
    tool_call,
    wiki_engine,
)
from tests.support.paths import REPO
from tests.support.run import clean_env
from tests.support.site import Page, site
from tests.support.standin import mediawiki
from tests.support.token_issuer import free_port

METRICS = '[service.metrics]\nbind = "127.0.0.1:0"\n'


def get(port: int, path: str, token: str | None = None) -> tuple[int, str, dict[str, str]]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}")
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return (
                answer.status,
                answer.read().decode(),
                {k.lower(): v for k, v in answer.headers.items()},
            )
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(), {k.lower(): v for k, v in error.headers.items()}


def metrics_port(server: Any, fresh: bool = True) -> int:
    """The metrics listener's port; `fresh`: every scrape renders anew (no reuse)."""
    assert server.listener.metrics is not None
    if fresh:
        server.listener.metrics.reuse_s = 0.0
    port = server.listener.metrics.port
    assert isinstance(port, int)
    return port


def grew(before: str, after: str, name: str, **labels: str) -> float:
    """How much a counter grew between two scrapes (the process's counters are shared by
    every test that ran before)."""
    return (sample(after, name, **labels) or 0.0) - (sample(before, name, **labels) or 0.0)


def sample(text: str, name: str, **labels: str) -> float | None:
    for line in text.splitlines():
        if not line.startswith(name + "{") and not line.startswith(name + " "):
            continue
        if all(f'{k}="{v}"' in line for k, v in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    return None


def test_issue_38_metrics_follow_the_calls_and_pass_promtool(tmp_path: Path) -> None:
    with served(tmp_path, config_text(more=METRICS)) as server:
        port = metrics_port(server)
        before = get(port, "/metrics")[1]
        for _ in range(3):
            reply = post(server.port, tool_call("engine_status"), modern_headers())
            assert sse_json(reply)["result"]["isError"] is False
        post(
            server.port,
            tool_call("web_fetch", {"url": "ftp://x.example/"}),
            modern_headers(name="web_fetch"),
        )
        post(server.port, None, {"Host": "127.0.0.1"}, method="GET", path="/other")
        status, text, headers = get(port, "/metrics")
    assert status == 200
    assert headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    assert grew(before, text, "rypsok_tool_calls_total", tool="engine_status", outcome="ok") == 3
    assert grew(before, text, "rypsok_tool_refusals_total", tool="web_fetch", reason="scheme") == 1
    assert grew(before, text, "rypsok_tool_call_duration_seconds_count", tool="engine_status") == 3
    assert (
        grew(
            before,
            text,
            "rypsok_tool_call_duration_seconds_bucket",
            tool="engine_status",
            le="+Inf",
        )
        == 3
    )
    assert grew(before, text, "rypsok_http_refusals_total", reason="not_found") == 1
    assert sample(text, "rypsok_engine_circuit_state", engine="wikipedia", state="closed") == 1
    assert sample(text, "rypsok_process_resident_memory_bytes") > 10 * 1024 * 1024  # type: ignore[operator]
    assert sample(text, "rypsok_memory_estimate_bytes") == 250 * 1024 * 1024
    assert sample(text, "rypsok_ready") == 1
    checked = prometheus.promtool("check", "metrics", stdin=text.encode())
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_issue_38_no_query_host_path_or_caller_becomes_a_label(tmp_path: Path) -> None:
    with served(tmp_path, config_text(more=METRICS, callers=True), caller_env()) as server:
        before = get(metrics_port(server), "/metrics")[1]
        post(
            server.port,
            tool_call("web_fetch", {"url": "https://127.0.0.1:4433/secret-path/page"}),
            modern_headers(name="web_fetch", token=TOKEN_A),
        )
        post(
            server.port,
            tool_call("web_search", {"query": "zebra-unique-query-words"}),
            modern_headers(name="web_search", token=TOKEN_A),
        )
        _, scraped, _ = get(metrics_port(server), "/metrics")
    fetch_refused = grew(
        before, scraped, "rypsok_tool_refusals_total", tool="web_fetch", reason="network"
    )
    assert fetch_refused == 1
    assert sample(scraped, "rypsok_tool_calls_total", tool="web_search") is not None
    for leak in ("secret-path", "zebra-unique", "127.0.0.1", "4433", "mimlys", TOKEN_A):
        assert leak not in scraped, leak


def test_issue_38_pages_and_bytes_are_counted_by_kind(tmp_path: Path) -> None:
    body = b"<html><body><article><p>" + b"A harbour keeps its boats in rows. " * 20
    body += b"</p></article></body></html>"
    before = telemetry.counters.totals()
    with site(
        {
            "/page": Page(body=body),
            "/notes.txt": Page(body=b"plain words " * 30, content_type="text/plain"),
        }
    ) as s:
        core = make(tmp_path)
        fetch(core, url=s.url("/page"))
        fetch(core, url=s.url("/notes.txt"))
    after = telemetry.counters.totals()

    def grown(key: tuple[str, str, str]) -> int:
        return after.get(key, 0) - before.get(key, 0)

    assert grown(("fetch", "pages", "html")) == 1
    assert grown(("fetch", "pages", "text")) == 1
    assert grown(("fetch", "bytes", "html")) == len(body)


def test_issue_38_health_and_readiness(tmp_path: Path) -> None:
    with served(tmp_path, config_text(more=METRICS)) as server:
        port = metrics_port(server)
        assert get(port, "/healthz")[:2] == (200, "ok\n")
        assert get(port, "/readyz")[:2] == (200, "ready\n")
        assert get(port, "/nothing")[0] == 404
    config = load(None, {})
    core = Rypsok.from_config(config)
    draining = threading.Event()
    listener = MetricsListener(_settings(tmp_path), Service(core, "http", draining=draining.is_set))

    async def scenario() -> list[tuple[int, str]]:
        seen = []
        async with anyio.create_task_group() as group:
            port = await group.start(lambda task_status: listener.run(task_status=task_status))
            seen.append((await anyio.to_thread.run_sync(get, port, "/readyz"))[:2])
            draining.set()
            seen.append((await anyio.to_thread.run_sync(get, port, "/readyz"))[:2])
            # An event loop that does not turn for longer than LIM-T4: /healthz says so.
            listener.heartbeat.lag_s = 3.0
            seen.append((await anyio.to_thread.run_sync(get, port, "/healthz"))[:2])
            group.cancel_scope.cancel()
        return seen

    assert anyio.run(scenario) == [
        (200, "ready\n"),
        (503, "draining\n"),
        (503, "the event loop is behind\n"),
    ]


def _settings(tmp_path: Path, extra: str = "") -> Any:
    path = tmp_path / "m.toml"
    path.write_text("config_version = 1\n" + METRICS + extra)
    settings = load(str(path), {"RYPSOK_METRICS_TOKEN": "m" * 40}).service.metrics
    assert settings is not None
    return settings


def test_issue_38_a_token_guards_metrics_but_not_health(tmp_path: Path) -> None:
    extra = 'token_env = "RYPSOK_METRICS_TOKEN"\n'
    text = config_text(more=METRICS + extra)
    env = {**caller_env(), "RYPSOK_METRICS_TOKEN": "m" * 40}
    with served(tmp_path, text, env) as server:
        port = metrics_port(server)
        assert get(port, "/metrics")[0] == 401
        assert get(port, "/metrics", "x" * 40)[0] == 401
        assert get(port, "/metrics", "m" * 40)[0] == 200
        assert get(port, "/healthz")[0] == 200  # a liveness check carries no token


def test_issue_38_a_scrape_flood_renders_once_a_second_and_bounds_connections(
    tmp_path: Path,
) -> None:
    with served(tmp_path, config_text(more=METRICS)) as server:
        port = metrics_port(server, fresh=False)
        listener = server.listener.metrics
        assert listener is not None
        before = listener.scrapes
        results: list[int] = []

        def scrape() -> None:
            results.append(get(port, "/metrics")[0])

        threads = [threading.Thread(target=scrape) for _ in range(40)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(20)
        # Every scrape that was let in got the same rendering; past LIM-T2 at once,
        # connections were closed unanswered (the scraper's error, not a 5xx).
        assert listener.scrapes - before <= 2
        assert results.count(200) >= 4
        held = [socket.create_connection(("127.0.0.1", port)) for _ in range(4)]
        try:
            extra = socket.create_connection(("127.0.0.1", port), timeout=5)
            extra.settimeout(5)
            assert extra.recv(100) == b""  # closed at once, nothing read
            extra.close()
        finally:
            for sock in held:
                sock.close()


def test_issue_38_caller_labels_are_escaped_and_bounded() -> None:
    text = render([_family_with('a"b\\c\nd')]).decode()
    assert 'caller="a\\"b\\\\c\\nd"' in text
    assert escape_label('x"y') == 'x\\"y'
    calls = telemetry.CallerCalls()
    calls.configure(True, 100)
    for n in range(10_000):
        calls.add(f"oauth:user-{n}", "web_search")
    counts, dropped = calls.snapshot()
    assert len(counts) == 100 and dropped == 9_900
    checked = prometheus.promtool("check", "metrics", stdin=text.encode())
    assert checked.returncode == 0, checked.stdout + checked.stderr


def _family_with(caller: str) -> Family:
    family = Family("rypsok_caller_calls_total", "counter", "Tool calls per caller.")
    family.add(1, caller=caller, tool="web_search")
    return family


def test_issue_38_per_caller_counts_only_when_asked(tmp_path: Path) -> None:
    more = METRICS + "per_caller = true\n"
    with served(tmp_path, config_text(more=more, callers=True), caller_env()) as server:
        post(server.port, tool_call("engine_status"), modern_headers(token=TOKEN_A))
        _, text, _ = get(metrics_port(server), "/metrics")
    assert sample(text, "rypsok_caller_calls_total", caller="mimlys", tool="engine_status") == 1
    telemetry.caller_calls.configure(False, 0)
    with served(tmp_path, config_text(more=METRICS, callers=True), caller_env()) as server:
        post(server.port, tool_call("engine_status"), modern_headers(token=TOKEN_A))
        _, text, _ = get(metrics_port(server), "/metrics")
    assert "rypsok_caller_calls_total" not in text


def test_issue_38_a_prometheus_server_scrapes_a_running_replica(tmp_path: Path) -> None:
    with served(tmp_path, config_text(more=METRICS)) as server:
        port = metrics_port(server)
        before = (
            sample(
                get(port, "/metrics")[1],
                "rypsok_tool_calls_total",
                tool="engine_status",
                outcome="ok",
            )
            or 0
        )
        for _ in range(2):
            post(server.port, tool_call("engine_status"), modern_headers())
        with prometheus.server([f"127.0.0.1:{port}"]) as prom:
            found = prom.wait_for('rypsok_tool_calls_total{tool="engine_status",outcome="ok"}')
            up = prom.wait_for('up{job="rypsok"}')
    assert float(found[0]["value"][1]) == before + 2
    assert float(up[0]["value"][1]) == 1
    assert re.fullmatch(r"127\.0\.0\.1:\d+", found[0]["metric"]["instance"])


def test_issue_38_a_stdio_process_serves_the_operator_listener_too(tmp_path: Path) -> None:
    port = free_port()
    path = tmp_path / "stdio.toml"
    path.write_text(f'config_version = 1\n[service.metrics]\nbind = "127.0.0.1:{port}"\n')
    process = subprocess.Popen(
        [sys.executable, "-m", "rypsok", "serve", "--config", str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=clean_env(),
        cwd=REPO,
    )
    try:
        deadline = time.monotonic() + 20
        status = 0
        while time.monotonic() < deadline and status != 200:
            with contextlib.suppress(OSError):
                status = get(port, "/readyz")[0]
            time.sleep(0.1)
        assert status == 200
        _, text, _ = get(port, "/metrics")
        assert 'rypsok_build_info{version="' in text and 'transport="stdio"' in text
        assert "rypsok_http_sessions" not in text  # no HTTP listener in this mode
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.wait(20)
        assert process.stdout is not None
        out = process.stdout.read()
    assert out == b""  # the protocol's stdout holds nothing of the operator's listener


def test_issue_38_while_draining_readyz_is_503_and_metrics_still_answer(tmp_path: Path) -> None:
    with mediawiki(delay_s=1.5) as wiki:
        text = config_text(more=METRICS + wiki_engine(wiki["base_url"]))
        with served(tmp_path, text) as server:
            port = metrics_port(server)
            data = request_bytes(
                tool_call("web_search", {"query": "rust"}), modern_headers(name="web_search")
            )
            with socket.create_connection(("127.0.0.1", server.port)) as sock:
                sock.sendall(data)
                time.sleep(0.3)  # the call waits for the slow engine
                anyio.from_thread.run_sync(server.listener.request_stop, token=server.token)
                time.sleep(0.2)
                during = get(port, "/readyz")[:2]
                scraped = get(port, "/metrics")
                alive = get(port, "/healthz")[0]
    assert during == (503, "draining\n")
    assert scraped[0] == 200 and "rypsok_ready 0" in scraped[1]
    assert alive == 200


def test_issue_38_made_up_parameter_names_add_no_counter(tmp_path: Path) -> None:
    with served(tmp_path, config_text(more=METRICS)) as server:
        for n in range(50):
            call = tool_call("engine_status", {f"made_up_{n}": 1})
            post(server.port, call, modern_headers())
        _, text, _ = get(metrics_port(server), "/metrics")
    keys = [k for k in telemetry.counters.totals() if k[0] == "refused"]
    assert not [k for k in keys if "made_up" in k[2]]
    assert "made_up" not in text
    assert (
        sample(text, "rypsok_tool_refusals_total", tool="engine_status", kind="invalid_request")
        or 0
    ) >= 50


def test_issue_38_resident_memory_is_left_out_where_it_cannot_be_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Windows has neither /proc nor the resource module: the metric is left out, and the
    module still imports (the pyz is built for Windows too)."""
    from rypsok.protocol.metrics import collect

    assert collect.resident_bytes() is not None  # this machine: Linux

    def no_proc(*args: object, **kwargs: object) -> object:
        raise OSError("no /proc here")

    monkeypatch.setattr("builtins.open", no_proc)
    monkeypatch.setitem(sys.modules, "resource", None)  # import resource fails
    assert collect.resident_bytes() is None
