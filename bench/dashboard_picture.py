"""A picture of the Grafana dashboard's panels on recorded data (issue 38).

Run from the repository root with the dev venv (Debian's prometheus on PATH):

    .venv/bin/python -m bench.dashboard_picture [--seconds N] [--out docs/images/dashboard.svg]

Starts three replicas (`rypsok serve --transport http` with [service.metrics]) and a
Prometheus that scrapes them every second, drives them with a mix of calls for N
seconds (engine_status, web_fetch calls refused for their scheme, requests without
the MCP path), then asks Prometheus, over its query_range API, six of the dashboard's
own queries (deploy/grafana/rypsok-dashboard.json) and draws them as an SVG, one
panel each, one line per series. Grafana itself is not in the registries this project
may use; the queries and their answers are the dashboard's, the drawing is ours.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from tests.support import prometheus
from tests.support.http_harness import (
    caller_env,
    child,
    config_text,
    modern_headers,
    post,
    tool_call,
)
from tests.support.paths import REPO
from tests.support.token_issuer import free_port

DASHBOARD = REPO / "deploy" / "grafana" / "rypsok-dashboard.json"
PANELS = (1, 2, 3, 9, 10, 12)  # calls, latency, refusals, memory, sessions, replicas
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2")
WIDTH, HEIGHT, COLUMNS = 420, 230, 3
# The load is one caller's: the limits of the defaults would refuse most of it.
LIMITS = "[limits]\nengine_status_per_minute = 6000\nweb_fetch_per_minute = 6000\n"


def _drain(process: subprocess.Popen[bytes]) -> None:
    assert process.stderr is not None
    for _ in process.stderr:
        pass


def _queries() -> list[tuple[str, list[tuple[str, str]]]]:
    document = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    out = []
    for panel in document["panels"]:
        if panel["id"] in PANELS:
            targets = [(t["expr"], t.get("legendFormat", "")) for t in panel["targets"]]
            out.append((panel["title"], targets))
    return out


def _range(url: str, expr: str, start: float, end: float) -> list[dict[str, Any]]:
    expression = expr.replace("$__rate_interval", "15s").replace("$instance", ".*")
    query = urllib.parse.urlencode({"query": expression, "start": start, "end": end, "step": "2"})
    with urllib.request.urlopen(f"{url}/api/v1/query_range?{query}", timeout=20) as answer:
        document = json.load(answer)
    return list(document["data"]["result"])


def _legend(template: str, labels: dict[str, str]) -> str:
    text = template
    for key, value in labels.items():
        text = text.replace("{{" + key + "}}", value)
    return text.replace("{{instance}}", "")[:40]


def _panel_svg(
    title: str, series: list[tuple[str, list[tuple[float, float]]]], x: int, y: int
) -> str:
    parts = [
        f'<g transform="translate({x},{y})">',
        f'<rect width="{WIDTH - 10}" height="{HEIGHT - 10}" fill="#fbfbfb" stroke="#ccc"/>',
        f'<text x="8" y="16" font-size="12" font-family="sans-serif">{title}</text>',
    ]
    points = [p for _, values in series for p in values]
    if points:
        t0, t1 = min(p[0] for p in points), max(p[0] for p in points)
        top = max(p[1] for p in points) or 1.0
        plot_w, plot_h = WIDTH - 40, HEIGHT - 90
        for index, (name, values) in enumerate(series[: len(COLOURS)]):
            path = " ".join(
                f"{20 + (t - t0) / max(t1 - t0, 1) * plot_w:.1f},"
                f"{24 + plot_h - v / top * plot_h:.1f}"
                for t, v in values
            )
            colour = COLOURS[index]
            parts.append(
                f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" points="{path}"/>'
            )
            parts.append(
                f'<text x="20" y="{HEIGHT - 58 + 11 * index}" font-size="9" '
                f'font-family="sans-serif" fill="{colour}">{name}</text>'
            )
        parts.append(
            f'<text x="{WIDTH - 20}" y="30" font-size="9" text-anchor="end" '
            f'font-family="sans-serif">max {top:.3g}</text>'
        )
    parts.append("</g>")
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--out", default=str(REPO / "docs" / "images" / "dashboard.svg"))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        replicas, targets = [], []
        for index in range(3):
            folder = Path(tmp) / f"replica-{index}"
            folder.mkdir()
            port = free_port()
            more = f'[service.metrics]\nbind = "127.0.0.1:{port}"\n' + LIMITS
            text = config_text(more=more)
            replica = stack.enter_context(child(folder, text, caller_env()))
            # Its log is read to the end: a full pipe would stop the replica.
            threading.Thread(target=_drain, args=(replica.proc,), daemon=True).start()
            replicas.append(replica)
            targets.append(f"127.0.0.1:{port}")
        prom = stack.enter_context(prometheus.server(targets))
        start = time.time()
        n = 0
        while time.time() - start < args.seconds:
            replica = replicas[n % 3]
            post(replica.port, tool_call("engine_status"), modern_headers())
            if n % 4 == 0:
                refused = tool_call("web_fetch", {"url": f"ftp://x.example/{n}"})
                post(replica.port, refused, modern_headers(name="web_fetch"))
            if n % 9 == 0:
                post(replica.port, None, {"Host": "127.0.0.1"}, method="GET", path="/")
            n += 1
            time.sleep(0.02 * (1 + (n // 200) % 3))  # the load changes over the minute
        end = time.time()
        time.sleep(2)
        svg = [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH * COLUMNS}" '
            f'height="{HEIGHT * 2 + 20}">',
            f'<text x="10" y="14" font-size="12" font-family="sans-serif">rypsok dashboard, '
            f"three replicas, {args.seconds:g} s recorded by Prometheus "
            f"({n} request rounds)</text>",
        ]
        for index, (title, targets_) in enumerate(_queries()):
            series = []
            for expr, legend in targets_:
                for result in _range(prom.url, expr, start, end):
                    values = [(float(t), float(v)) for t, v in result["values"] if v != "NaN"]
                    series.append((_legend(legend, result["metric"]), values))
            x, y = (index % COLUMNS) * WIDTH, 20 + (index // COLUMNS) * HEIGHT
            svg.append(_panel_svg(title, series, x, y))
        svg.append("</svg>")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(svg) + "\n", encoding="utf-8")
    print(f"{out}: {len(_queries())} panels, {n} request rounds over {args.seconds:g} s")


if __name__ == "__main__":
    main()
