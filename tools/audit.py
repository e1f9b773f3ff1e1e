#!/usr/bin/env python3
"""Audit the locked runtime closure for known vulnerabilities (REQ-SEC-020, THR-22).

  .venv/bin/python tools/audit.py            audit requirements.lock and
                                             requirements-redis.lock; exit 0 or 1
  .venv/bin/python tools/audit.py --lock F   another lock file (--lock may repeat)

tools/test runs it on every change. It passes only when every package pinned
in the lock was audited and none has a known vulnerability; anything else
fails, with the packages and the reason.

1. pip-audit (pinned in the test extra) reads the locks without installing them
   and asks PyPI's vulnerability feed about each pinned version
   (GET /pypi/NAME/VERSION/json).
2. A package pip-audit skipped (it skips, and passes, when that request
   answers 404, which is how some registry mirrors and gateways answer the
   per-version records; this workplace's does) is looked up in PyPI's project
   record instead (GET /pypi/NAME/json). That record lists the
   vulnerabilities of the latest release only, so it audits the pin exactly
   when the pin is the latest release; otherwise the package is unaudited.
3. An unreachable PyPI, a pip-audit that did not answer and any package
   left unaudited for those reasons fail the run: an audit that could not
   ask is not a clean audit. A pin that is only older than the latest release
   is reported on every run and fails only with --strict (tools/release), so
   a release upstream never turns an unrelated change red.

A vulnerability found is reported, never fixed here: moving a pin is a
reviewed change of the locks (docs/dependencies.md).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# The lock reader and name normal form are the license check's, a sibling script: run as
# a script, this folder is first on the path (tests load licenses before this module).
from licenses import LOCKS, canonical, read_locks

PROJECT_RECORD = "https://pypi.org/pypi/{name}/json"
FETCH_TIMEOUT_S = 30
PIP_AUDIT_TIMEOUT_S = 600
Fetch = Callable[[str], Mapping[str, Any]]


@dataclass(frozen=True)
class Finding:
    """One known vulnerability of one pinned package."""

    package: str
    version: str
    vuln_id: str
    aliases: tuple[str, ...]
    fixed_in: tuple[str, ...]

    def line(self) -> str:
        also = f" ({', '.join(self.aliases)})" if self.aliases else ""
        fix = ", ".join(self.fixed_in) or "no fixed release known"
        return f"{self.package} {self.version}: {self.vuln_id}{also}; fixed in: {fix}"


@dataclass
class Outcome:
    """What the audit learned about every pinned package."""

    by_pip_audit: list[str] = field(default_factory=list)
    by_project_record: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    unaudited: dict[str, str] = field(default_factory=dict)  # package -> why
    # Pins older than PyPI's latest release, whose per-version record this registry does
    # not serve: unaudited here, a warning on every change, a failure with --strict.
    outdated: dict[str, str] = field(default_factory=dict)  # package -> why

    @property
    def clean(self) -> bool:
        return not self.findings and not self.unaudited and not self.outdated


def _strings(value: object) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


class OutdatedPin(ValueError):
    """A newer release exists: the project record cannot speak for the pin."""


def from_project_record(name: str, pinned: str, record: Mapping[str, Any]) -> list[Finding]:
    """The findings for a pin, from PyPI's project record; ValueError if it cannot tell.

    The record's vulnerability list belongs to the release named in
    info.version, so it speaks for the pin only when the two are equal.
    """
    info = record.get("info")
    latest = info.get("version") if isinstance(info, Mapping) else None
    if not isinstance(latest, str):
        raise ValueError("PyPI's project record names no latest release")
    if latest != pinned:
        raise OutdatedPin(
            f"PyPI has no per-version record for {pinned} here, and its project record "
            f"describes {latest} only; audit {pinned} where /pypi/NAME/VERSION/json "
            "answers, or move the pin in a reviewed change"
        )
    vulns = record.get("vulnerabilities")
    if not isinstance(vulns, list):
        raise ValueError("PyPI's project record carries no vulnerability list")
    findings = []
    for vuln in vulns:
        if not isinstance(vuln, Mapping) or vuln.get("withdrawn"):
            continue  # a withdrawn advisory is no advisory (pip-audit skips them too)
        findings.append(
            Finding(
                name,
                pinned,
                str(vuln.get("id", "unnamed")),
                _strings(vuln.get("aliases")),
                _strings(vuln.get("fixed_in")),
            )
        )
    return findings


def merge(pins: Mapping[str, str], report: Mapping[str, Any], fetch: Fetch) -> Outcome:
    """Combine pip-audit's JSON report with the project-record fallback."""
    outcome = Outcome()
    answered: dict[str, Mapping[str, Any]] = {}
    deps = report.get("dependencies")
    for dep in deps if isinstance(deps, list) else []:
        if isinstance(dep, Mapping) and isinstance(dep.get("name"), str):
            answered[canonical(dep["name"])] = dep
    for name, pinned in sorted(pins.items()):
        dep = answered.get(name)
        if dep is None:
            outcome.unaudited[name] = "pip-audit's report does not mention it"
            continue
        if "skip_reason" not in dep:
            if dep.get("version") != pinned:
                outcome.unaudited[name] = f"pip-audit audited {dep.get('version')}, not {pinned}"
                continue
            outcome.by_pip_audit.append(name)
            vulns = dep.get("vulns")
            for vuln in vulns if isinstance(vulns, list) else []:
                if not isinstance(vuln, Mapping):
                    continue
                outcome.findings.append(
                    Finding(
                        name,
                        pinned,
                        str(vuln.get("id", "unnamed")),
                        _strings(vuln.get("aliases")),
                        _strings(vuln.get("fix_versions")),
                    )
                )
            continue
        try:
            outcome.findings.extend(from_project_record(name, pinned, fetch(name)))
        except OutdatedPin as exc:
            outcome.outdated[name] = str(exc)
        except ValueError as exc:
            outcome.unaudited[name] = str(exc)
        except (OSError, json.JSONDecodeError) as exc:
            # urllib's errors are OSErrors; the class says enough (timeout, refused, 5xx).
            why = type(exc).__name__
            outcome.unaudited[name] = f"PyPI's project record could not be read ({why})"
        else:
            outcome.by_project_record.append(name)
    return outcome


def fetch_project_record(name: str) -> Mapping[str, Any]:
    request = urllib.request.Request(
        PROJECT_RECORD.format(name=name), headers={"Accept": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=FETCH_TIMEOUT_S) as response:
        data = json.load(response)
    if not isinstance(data, Mapping):
        raise json.JSONDecodeError("not an object", "", 0)
    return data


class PipAuditError(Exception):
    """pip-audit gave no report; the message says what it said instead."""


def run_pip_audit(locks: Sequence[Path]) -> Mapping[str, Any]:
    """pip-audit's JSON report on the locks together, asked afresh (no cached answers)."""
    with tempfile.TemporaryDirectory(prefix="rypsok-audit-") as tmp:
        out = Path(tmp) / "report.json"
        cmd = [
            sys.executable,
            "-m",
            "pip_audit",
            *(arg for lock in locks for arg in ("--requirement", str(lock))),
            "--require-hashes",
            "--disable-pip",
            "--progress-spinner",
            "off",
            "--cache-dir",
            str(Path(tmp) / "cache"),
            "--format",
            "json",
            "--output",
            str(out),
        ]
        try:
            proc = subprocess.run(
                cmd, capture_output=True, text=True, timeout=PIP_AUDIT_TIMEOUT_S, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise PipAuditError(f"pip-audit did not run: {type(exc).__name__}") from exc
        if not out.is_file():
            said = (proc.stderr.strip().splitlines() or ["no message"])[-1]
            raise PipAuditError(f"pip-audit gave no report (exit {proc.returncode}): {said}")
        report = json.loads(out.read_text(encoding="utf-8"))
    if not isinstance(report, Mapping):
        raise PipAuditError("pip-audit's report is not a JSON object")
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Audit the locked runtime closure.")
    parser.add_argument(
        "--lock",
        type=Path,
        action="append",
        help=f"a lock file, one or more times (default: {' and '.join(p.name for p in LOCKS)})",
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="fail when a pin is older than PyPI's latest release and could "
        "not be audited (tools/release uses it)",
    )
    args = parser.parse_args(argv)
    locks: list[Path] = args.lock or list(LOCKS)
    pins, clashes = read_locks(locks)
    if clashes:
        print(f"audit: FAILED: the locks disagree: {'; '.join(clashes)}", file=sys.stderr)
        return 1
    if not pins:
        named = ", ".join(str(p) for p in locks)
        print(f"audit: FAILED: no pinned requirement in {named}", file=sys.stderr)
        return 1
    try:
        report = run_pip_audit(locks)
    except PipAuditError as exc:
        print(f"audit: FAILED, nothing was audited: {exc}", file=sys.stderr)
        return 1
    outcome = merge(pins, report, fetch_project_record)
    for finding in outcome.findings:
        print(f"audit: VULNERABLE {finding.line()}", file=sys.stderr)
    for name, why in sorted(outcome.unaudited.items()):
        print(f"audit: NOT AUDITED {name} {pins[name]}: {why}", file=sys.stderr)
    for name, why in sorted(outcome.outdated.items()):
        print(f"audit: NOT AUDITED (outdated pin) {name} {pins[name]}: {why}", file=sys.stderr)
    summary = (
        f"{len(pins)} pinned packages; {len(outcome.by_pip_audit)} audited by pip-audit, "
        f"{len(outcome.by_project_record)} from PyPI's project records, "
        f"{len(outcome.unaudited) + len(outcome.outdated)} not audited; "
        f"{len(outcome.findings)} known vulnerabilities"
    )
    if outcome.clean:
        print(f"audit: ok: {summary}", file=sys.stderr)
        return 0
    # A release upstream must not turn every change red (no check on a timer); a pin that
    # fell behind is reported on each run and stops the release (--strict in tools/release).
    if not args.strict and not outcome.findings and not outcome.unaudited:
        print(f"audit: ok with warnings: {summary}; move the outdated pins", file=sys.stderr)
        return 0
    print(f"audit: FAILED: {summary}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
