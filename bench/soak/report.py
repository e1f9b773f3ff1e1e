"""Tallies of a soak, its verdict, the printed report and the same as JSON.

The verdict fails on what the release checks ask (a lost answer, a crash or an
unclean exit of the server, a peak resident set above check's estimate) and on
what the soak can see for free that is a defect as plainly: a silent connection
held past idle_timeout_s, a line on the server's stderr that is not a log record,
an error-level log event (each marks a defect of ours that was contained), a log
line carrying a token, the secret, a query or a URL path of the run, anything on
stdout in HTTP mode, and a request reaching a site for a URL rypsok had to refuse
before any request (the secret-bearing one, the robots.txt-disallowed one).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.soak.load import Call, Record

KIB = 1024


def pct(values: Sequence[float], q: float) -> float:
    """Nearest rank: p50 of 100 values is the 50th smallest."""
    ordered = sorted(values)
    index = max(0, min(len(ordered) - 1, -(-len(ordered) * q // 100) - 1))
    return ordered[int(index)]


@dataclass
class Logs:
    """What the server wrote on stderr and stdout."""

    lines: int = 0
    not_records: int = 0
    events: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)  # error-level events by name
    leaks: int = 0  # lines holding a token, the secret, the marker (queries and paths)
    stdout_bytes: int = 0


def read_logs(log: Path, out: Path, forbidden: Iterable[str]) -> Logs:
    found = Logs(stdout_bytes=out.stat().st_size if out.exists() else 0)
    needles = [n for n in forbidden if n]
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        found.lines += 1
        if any(n in line for n in needles):
            found.leaks += 1
        try:
            record = json.loads(line)
        except ValueError:
            found.not_records += 1
            continue
        if not isinstance(record, dict):
            found.not_records += 1
            continue
        found.events[str(record.get("event"))] += 1
        if record.get("level") == "error":
            found.errors[str(record.get("event"))] += 1
    return found


@dataclass
class Ending:
    """How the server ended."""

    exit_code: int | None  # None: it had to be killed
    exit_s: float
    exit_bound_s: float
    crashed_at_s: float | None  # seen gone during the run


def _tool_rows(calls: list[Call]) -> dict[str, dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    by_tool: dict[str, list[Call]] = defaultdict(list)
    for call in calls:
        by_tool[call.tool].append(call)
    for tool, group in sorted(by_tool.items()):
        times = [c.latency_s * 1000 for c in group if c.latency_s is not None]
        stated = group[0].stated_ms
        rows[tool] = {
            "sent": len(group),
            "answered": len(times),
            "lost": sum(c.lost for c in group),
            "p50_ms": round(pct(times, 50), 1) if times else None,
            "p99_ms": round(pct(times, 99), 1) if times else None,
            "max_ms": round(max(times), 1) if times else None,
            "stated_max_ms": stated,
            "over_stated": sum(1 for t in times if stated is not None and t > stated),
            "outcomes": dict(Counter(c.outcome for c in group).most_common()),
        }
    return rows


def build(
    record: Record,
    *,
    estimate_mib: int,
    memory_line: str,
    ending: Ending,
    logs: Logs,
    hits: dict[str, int],
    private_path: str,
    margin_s: float,
    config: dict[str, Any],
) -> dict[str, Any]:
    sent = [c for c in record.calls if c.channel != "cancel"]
    cancelled = [c for c in record.calls if c.channel == "cancel"]
    channels = {}
    for ch in sorted({c.channel for c in sent}):
        group = [c for c in sent if c.channel == ch]
        times = [c.latency_s * 1000 for c in group if c.latency_s is not None]
        channels[ch] = {
            "sent": len(group),
            "lost": sum(c.lost for c in group),
            "p50_ms": round(pct(times, 50), 1) if times else None,
            "p99_ms": round(pct(times, 99), 1) if times else None,
            "max_ms": round(max(times), 1) if times else None,
        }
    targets: dict[str, Counter[str]] = defaultdict(Counter)
    for c in sent:
        if c.tool == "web_fetch":
            targets[c.target][c.outcome] += 1
    hwm = max((s[2] for s in record.samples), default=0)
    minutes: dict[int, int] = defaultdict(int)
    for t, rss, _hwm in record.samples:
        minutes[int(t // 60)] = max(minutes[int(t // 60)], rss)
    silent_open = [s.open_s for s in record.silent if s.closed_by_server]
    memory = {
        "estimate_mib": estimate_mib,
        "check_line": memory_line,
        "peak_hwm_mib": round(hwm / KIB, 1),
        "rss_first_mib": round(record.samples[0][1] / KIB, 1) if record.samples else None,
        "rss_last_mib": round(record.samples[-1][1] / KIB, 1) if record.samples else None,
        "rss_max_per_minute_mib": [round(minutes[m] / KIB, 1) for m in sorted(minutes)],
        "samples": len(record.samples),
    }
    report: dict[str, Any] = {
        "config": config,
        "window_s": round(record.window_s, 1),
        "drained_s": round(record.drained_s, 1),
        "margin_s": margin_s,
        "requests": {
            "sent": len(sent),
            "answered": sum(c.latency_s is not None for c in sent),
            "lost": sum(c.lost for c in sent),
            "not_judged": sum(c.latency_s is None and not c.lost for c in sent),
            "given_up_by_client": len(cancelled),
        },
        "own_lag_ms": round(record.own_lag_s * 1000, 1),
        "tools": _tool_rows(sent),
        "channels": channels,
        "fetch_targets": {t: dict(c.most_common()) for t, c in sorted(targets.items())},
        "lost": [
            {
                "channel": c.channel,
                "tool": c.tool,
                "target": c.target,
                "outcome": c.outcome,
                "bound_s": round(c.limit_s, 1),
                "at_s": round(c.at_s, 1),
            }
            for c in sent
            if c.lost
        ][:50],
        "silent": {
            "held": len(record.silent),
            "closed_by_server": len(silent_open),
            "late": sum(s.late for s in record.silent),
            "late_at_s": [round(s.at_s, 1) for s in record.silent if s.late][:50],
            "open_p50_s": round(pct(silent_open, 50), 1) if silent_open else None,
            "open_max_s": round(max(silent_open), 1) if silent_open else None,
        },
        "memory": memory,
        "server": {
            "exit_code": ending.exit_code,
            "exit_s": round(ending.exit_s, 2),
            "exit_bound_s": ending.exit_bound_s,
            "crashed_at_s": ending.crashed_at_s,
            "cpu_s": round(record.cpu_s, 1) if record.cpu_s is not None else None,
        },
        "logs": {
            "lines": logs.lines,
            "not_records": logs.not_records,
            "events": dict(logs.events.most_common()),
            "errors": dict(logs.errors),
            "leaking_lines": logs.leaks,
            "stdout_bytes": logs.stdout_bytes,
        },
        "sites": {
            "secret_requests": hits.get("secret", 0),
            "disallowed_requests": hits.get(private_path, 0),
            "requests": sum(hits.values()),
        },
    }
    report["failures"] = failures(report)
    report["passed"] = not report["failures"]
    return report


def failures(report: dict[str, Any]) -> list[str]:
    out = []
    lost = report["requests"]["lost"]
    if lost:
        out.append(f"{lost} lost answers (no whole response within the bound)")
    server = report["server"]
    if server["crashed_at_s"] is not None:
        out.append(f"the server was gone {server['crashed_at_s']:.1f} s into the run")
    elif server["exit_code"] is None:
        out.append(f"the server did not exit within {server['exit_bound_s']:g} s of SIGTERM")
    elif server["exit_code"] != 0:
        out.append(f"the server exited with {server['exit_code']} after SIGTERM")
    memory = report["memory"]
    if memory["peak_hwm_mib"] > memory["estimate_mib"]:
        out.append(
            f"peak resident set {memory['peak_hwm_mib']} MiB is above check's "
            f"estimate of {memory['estimate_mib']} MiB"
        )
    if report["silent"]["late"]:
        out.append(
            f"{report['silent']['late']} silent connections held past idle_timeout_s + the margin"
        )
    logs = report["logs"]
    if logs["not_records"]:
        out.append(f"{logs['not_records']} stderr lines are not log records")
    if logs["errors"]:
        out.append(
            "error-level events: " + ", ".join(f"{k} {v}" for k, v in logs["errors"].items())
        )
    if logs["leaking_lines"]:
        out.append(
            f"{logs['leaking_lines']} log lines carry a token, the secret, a query "
            "or a URL path of the run"
        )
    if logs["stdout_bytes"]:
        out.append(f"{logs['stdout_bytes']} bytes on stdout in HTTP mode")
    sites = report["sites"]
    if sites["secret_requests"] or sites["disallowed_requests"]:
        out.append(
            f"sites got {sites['secret_requests']} requests for the secret-bearing URL "
            f"and {sites['disallowed_requests']} for the disallowed path"
        )
    return out


# -- printing ---------------------------------------------------------------------------------


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    cells = [[str(h) for h in header], *[["-" if c is None else str(c) for c in r] for r in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    out = []
    for n, row in enumerate(cells):
        out.append(
            "  "
            + "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
        )
        if n == 0:
            out.append("  " + "  ".join("-" * w for w in widths))
    return out


def render(report: dict[str, Any]) -> str:
    r, out = report, []
    req, mem, srv = r["requests"], r["memory"], r["server"]
    out.append(
        f"window {r['window_s']} s, then {r['drained_s']} s for the calls in flight; "
        f"margin {r['margin_s']:g} s over each stated maximum"
    )
    out.append(
        f"requests: {req['sent']} sent, {req['answered']} answered, {req['lost']} lost, "
        f"{req['not_judged']} not judged (never written whole); "
        f"{req['given_up_by_client']} more given up by the client on purpose"
    )
    out.append(
        f"load generator: its own event loop woke at worst {r['own_lag_ms']} ms late"
        + (
            " - more than half the margin: a lost answer may be partly the soak's own delay"
            if r["own_lag_ms"] > 500 * r["margin_s"]
            else ""
        )
    )
    out.append("")
    out.append("per tool or request (latency: last request byte to last response byte):")
    out += _table(
        (
            "request",
            "sent",
            "answered",
            "lost",
            "p50 ms",
            "p99 ms",
            "max ms",
            "stated max",
            "over stated",
        ),
        [
            (
                t,
                v["sent"],
                v["answered"],
                v["lost"],
                v["p50_ms"],
                v["p99_ms"],
                v["max_ms"],
                v["stated_max_ms"] or "LIM-H5",
                v["over_stated"],
            )
            for t, v in r["tools"].items()
        ],
    )
    out.append("")
    out.append("outcomes:")
    for tool, row in r["tools"].items():
        out.append(f"  {tool}: " + ", ".join(f"{k} {v}" for k, v in row["outcomes"].items()))
    out.append("")
    out.append("web_fetch by target:")
    for target, outcomes in r["fetch_targets"].items():
        out.append(f"  {target}: " + ", ".join(f"{k} {v}" for k, v in outcomes.items()))
    out.append("")
    out.append("by client (all its requests; latency p50 / p99 / max ms):")
    out += [
        f"  {ch}: {v['sent']} sent, {v['lost']} lost; {v['p50_ms']} / {v['p99_ms']} / {v['max_ms']}"
        for ch, v in r["channels"].items()
    ]
    s = r["silent"]
    out.append(
        f"silent connections: {s['held']} held, {s['closed_by_server']} closed by the "
        f"server after p50 {s['open_p50_s']} s / max {s['open_max_s']} s, "
        f"{s['late']} held too long" + (f" (opened at {s['late_at_s']} s)" if s["late"] else "")
    )
    out.append(
        f"memory: peak (VmHWM) {mem['peak_hwm_mib']} MiB against check's estimate "
        f"{mem['estimate_mib']} MiB; VmRSS first {mem['rss_first_mib']}, last "
        f"{mem['rss_last_mib']} MiB; highest VmRSS per minute "
        f"{mem['rss_max_per_minute_mib']}"
    )
    out.append(f"  check said: {mem['check_line']}")
    out.append(
        f"server: CPU {srv['cpu_s']} s over the window; exit code {srv['exit_code']} "
        f"{srv['exit_s']} s after SIGTERM (bound {srv['exit_bound_s']:g} s)"
    )
    logs = r["logs"]
    out.append(
        f"logs: {logs['lines']} lines, {logs['not_records']} not records, "
        f"{logs['leaking_lines']} leaking, {logs['stdout_bytes']} bytes on stdout; "
        "events " + ", ".join(f"{k} {v}" for k, v in logs["events"].items())
    )
    out.append(
        f"sites: {r['sites']['requests']} requests, {r['sites']['secret_requests']} for "
        f"the secret-bearing URL, {r['sites']['disallowed_requests']} for the "
        "disallowed path"
    )
    if r["lost"]:
        out.append("")
        out.append("lost (at most 50):")
        out += [
            f"  at {c['at_s']} s, {c['channel']} {c['tool']} {c['target']}: "
            f"{c['outcome']} (bound {c['bound_s']} s)"
            for c in r["lost"]
        ]
    out.append("")
    if r["passed"]:
        out.append("soak: PASSED")
    else:
        out.append("soak: FAILED")
        out += [f"  - {f}" for f in r["failures"]]
    return "\n".join(out)
