"""Issue 38, items 3 and 4: the alerting rules and the Grafana dashboard of deploy/, checked
by promtool, and a Prometheus server that scrapes three replicas (child processes) and
answers every query the dashboard makes."""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path
from typing import Any

import anyio

from rypsok.core.config import load
from rypsok.core.facade import Rypsok
from rypsok.protocol.metrics.collect import Service, families
from tests.support import prometheus
from tests.support.http_harness import caller_env, child, config_text
from tests.support.paths import REPO
from tests.support.token_issuer import free_port

RULES = REPO / "deploy" / "prometheus" / "rypsok-alerts.yml"
RULE_TESTS = REPO / "deploy" / "prometheus" / "rypsok-alerts.test.yml"
DASHBOARD = REPO / "deploy" / "grafana" / "rypsok-dashboard.json"
_METRIC = re.compile(r"\brypsok_[a-z_]+\b")


def dashboard_queries() -> list[str]:
    document = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    return [target["expr"] for panel in document["panels"] for target in panel["targets"]]


def served_names() -> set[str]:
    core = Rypsok.from_config(load(None, {}))
    rendered = anyio.run(families, Service(core, "http", sessions=lambda: 0, connections=lambda: 0))
    return {f.name for f in rendered}


def _family(name: str) -> str:
    for suffix in ("_bucket", "_sum", "_count"):
        if name.endswith(suffix) and name.startswith("rypsok_tool_call_duration_seconds"):
            return name.removesuffix(suffix)
    return name


def test_issue_38_the_alerting_rules_pass_promtool_and_their_unit_tests() -> None:
    checked = prometheus.promtool("check", "rules", str(RULES))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "SUCCESS: 7 rules found" in checked.stdout
    tested = prometheus.promtool("test", "rules", str(RULE_TESTS))
    assert tested.returncode == 0, tested.stdout + tested.stderr


def test_issue_38_every_metric_the_rules_and_the_dashboard_name_is_served() -> None:
    named = set(_METRIC.findall(RULES.read_text(encoding="utf-8")))
    for query in dashboard_queries():
        named |= set(_METRIC.findall(query))
    served = served_names()
    assert {_family(n) for n in named} <= served, {_family(n) for n in named} - served
    # The dashboard shows the families an operator asks for first.
    assert {
        "rypsok_tool_calls_total",
        "rypsok_tool_call_duration_seconds_bucket",
        "rypsok_engine_circuit_state",
        "rypsok_process_resident_memory_bytes",
        "rypsok_memory_estimate_bytes",
    } <= named


def test_issue_38_prometheus_scrapes_three_replicas_with_the_rules_loaded(
    tmp_path: Path,
) -> None:
    ports = [free_port() for _ in range(3)]
    with contextlib.ExitStack() as stack:
        for index, port in enumerate(ports):
            folder = tmp_path / f"replica-{index}"
            folder.mkdir()
            text = config_text(more=f'[service.metrics]\nbind = "127.0.0.1:{port}"\n')
            stack.enter_context(child(folder, text, caller_env()))
        targets = [f"127.0.0.1:{port}" for port in ports]
        with prometheus.server(targets, rules=RULES) as prom:
            up = prom.wait_for('count(up{job="rypsok"} == 1) == 3')
            replicas = prom.wait_for("count(rypsok_build_info)")
            answers: dict[str, Any] = {}
            for query in dashboard_queries():
                expression = query.replace("$__rate_interval", "1m").replace("$instance", ".*")
                answers[query] = prom.query(expression)  # asserts the query is valid
            rules = prom.rules()
    assert float(up[0]["value"][1]) == 3
    assert float(replicas[0]["value"][1]) == 3
    memory = [q for q in answers if q.startswith("rypsok_process_resident_memory_bytes")]
    assert len(answers[memory[0]]) == 3  # one series per replica
    assert len(rules) == 7 and all(rule["health"] == "ok" for rule in rules)
