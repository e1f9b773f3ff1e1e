"""Run the fuzz targets under atheris (libFuzzer) and report what each one did.

    python -m fuzz.run --seconds 300                  # every target, one after another
    python -m fuzz.run --seconds 60 --jobs 2 robots_txt egress_url

Each target runs as ``python -m fuzz.targets.<name>`` for the given seconds from
its committed seeds (fuzz/corpus/<name>/, only read) and its working corpus
(fuzz/work/<name>/, where libFuzzer keeps what it found; gitignored, kept between
runs so a later run starts where the last one stopped).

A crash is an exception the target does not expect, a hang (one input running
longer than ``--timeout`` seconds) or memory beyond ``--rss-limit-mb``. libFuzzer
writes the input to fuzz/crashes/<name>/ (gitignored); it replays with
``python -m fuzz.targets.<name> fuzz/crashes/<name>/<file>``. libFuzzer stops at
the first crash; with ``--keep-going`` the target is started again for the time
left, so one run can find several distinct crashes (up to ``--max-crashes``).

The report gives per target: executions, coverage (libFuzzer's ``cov``: edges of
the instrumented code reached) and features (``ft``), the corpus size, and the
crashes with their kind. The exit status is 1 when any target crashed or could
not run, else 0. The whole libFuzzer output of a target is in fuzz/work/<name>.log.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FUZZ = ROOT / "fuzz"
TARGETS_DIR = FUZZ / "targets"
CORPUS = FUZZ / "corpus"
WORK = FUZZ / "work"
CRASHES = FUZZ / "crashes"

# Inputs may grow past the largest seed up to this many bytes. Whole pages need
# room; a header value or a rule does not, and short inputs mean more runs.
MAX_LEN_DEFAULT = 4096
MAX_LEN = {
    "html_document": 16384,
    "duckduckgo_page": 16384,
    "charset_decode": 16384,
    "config_toml": 16384,
    "robots_txt": 16384,
    "content_cleaner": 16384,
    "wikipedia_json": 16384,
    "brave_json": 16384,
    "pdf_document": 65536,
    "pdf_layout": 16384,
}
# libFuzzer dictionaries (fuzz/dicts/): tokens a target's format is made of.
DICTS = {"html_document": "html.dict", "duckduckgo_page": "html.dict"}
# Seconds a target may take to start (imports and instrumentation) and to stop,
# beyond its fuzzing time, before it is killed and reported as stuck.
GRACE_S = 120

_COV = re.compile(rb"cov: (\d+) ft: (\d+) corp: (\d+)")
_STATUS = re.compile(rb"^#(\d+)\s", re.MULTILINE)
_EXECUTED = re.compile(rb"stat::number_of_executed_units: (\d+)")
_PEAK = re.compile(rb"stat::peak_rss_mb:\s+(\d+)")
_ARTIFACT = re.compile(rb"Test unit written to (\S+)")
_PYTHON_EXC = re.compile(rb"=== Uncaught Python exception: ===\n([^\n]*)")
_FRAME = re.compile(rb'File "([^"]+)", line (\d+), in (\S+)')


def all_targets() -> list[str]:
    return sorted(p.stem for p in TARGETS_DIR.glob("*.py") if not p.name.startswith("_"))


@dataclass
class Crash:
    kind: str  # exception, timeout, out-of-memory, other
    summary: str  # exception type and message as the target raised it, or libFuzzer's line
    where: str  # innermost frame of the traceback, when there is one
    input: str  # the saved input, relative to the repository

    @property
    def signature(self) -> str:
        return f"{self.kind}|{self.summary.split(':', 1)[0]}|{self.where}"


@dataclass
class Report:
    target: str
    seconds: float = 0.0
    executions: int = 0
    coverage: int = 0
    features: int = 0
    corpus: int = 0
    peak_rss_mb: int = 0
    starts: int = 0
    crashes: list[Crash] = field(default_factory=list)
    error: str | None = None  # the target could not run at all

    @property
    def ok(self) -> bool:
        return not self.crashes and self.error is None


def _classify(output: bytes, artifact: str) -> Crash:
    name = Path(artifact).name
    where = ""
    frames = _FRAME.findall(output)
    if frames:
        path, line, func = frames[-1]
        where = f"{_short(path.decode(errors='replace'))}:{line.decode()} in {func.decode()}"
    exc = _PYTHON_EXC.search(output)
    if name.startswith("timeout-") or b"ERROR: libFuzzer: timeout" in output:
        return Crash("timeout", "an input ran longer than the per-input timeout", where, artifact)
    if name.startswith("oom-") or b"ERROR: libFuzzer: out-of-memory" in output:
        return Crash("out-of-memory", "memory above the RSS limit", where, artifact)
    if exc is not None:
        return Crash("exception", exc.group(1).decode(errors="replace")[:300], where, artifact)
    return Crash("other", "libFuzzer stopped on this input", where, artifact)


def _short(path: str) -> str:
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return path


def _command(python: str, target: str, seconds: int, args: argparse.Namespace) -> list[str]:
    crashes = CRASHES / target
    extra = [f"-dict={FUZZ / 'dicts' / DICTS[target]}"] if target in DICTS else []
    return [
        python,
        "-m",
        f"fuzz.targets.{target}",
        f"-max_total_time={seconds}",
        f"-timeout={args.timeout}",
        f"-rss_limit_mb={args.rss_limit_mb}",
        f"-max_len={MAX_LEN.get(target, MAX_LEN_DEFAULT)}",
        f"-artifact_prefix={crashes}{os.sep}",
        "-print_final_stats=1",
        *extra,
        str(WORK / target),
        str(CORPUS / target),
    ]


def run_target(target: str, args: argparse.Namespace) -> Report:
    report = Report(target)
    (WORK / target).mkdir(parents=True, exist_ok=True)
    (CRASHES / target).mkdir(parents=True, exist_ok=True)
    log_path = WORK / f"{target}.log"
    started = time.monotonic()
    seen: set[str] = set()
    with log_path.open("wb") as log:
        while True:
            left = args.seconds - int(time.monotonic() - started)
            if left < 1:
                break
            report.starts += 1
            command = _command(args.python, target, left, args)
            try:
                done = subprocess.run(  # noqa: S603 - our own interpreter and arguments
                    command,
                    cwd=ROOT,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    timeout=left + GRACE_S,
                    check=False,
                )
            except subprocess.TimeoutExpired as stuck:
                log.write(stuck.output or b"")
                report.error = f"did not stop within {left + GRACE_S} s"
                break
            output = done.stdout
            log.write(output)
            _account(report, output)
            artifacts = [a.decode() for a in _ARTIFACT.findall(output)]
            if done.returncode == 0 and not artifacts:
                break  # ran its time out
            if not artifacts:
                tail = output.decode(errors="replace").strip().splitlines()[-3:]
                report.error = f"exit {done.returncode}: " + " | ".join(tail)[:300]
                break
            crash = _classify(output, _short(artifacts[-1]))
            if crash.signature not in seen:
                seen.add(crash.signature)
                report.crashes.append(crash)
            # A crash the seeds themselves trigger comes back at every start: the
            # second bound keeps --keep-going from restarting on it until time is up.
            if (
                not args.keep_going
                or len(report.crashes) >= args.max_crashes
                or report.starts >= 2 * args.max_crashes
            ):
                break
    report.seconds = round(time.monotonic() - started, 1)
    return report


def _account(report: Report, output: bytes) -> None:
    executed = _EXECUTED.findall(output)
    if executed:
        report.executions += int(executed[-1])
    else:
        statuses = _STATUS.findall(output)
        if statuses:
            report.executions += int(statuses[-1])
    cov = _COV.findall(output)
    if cov:
        c, f, corp = (int(x) for x in cov[-1])
        report.coverage, report.features = max(report.coverage, c), max(report.features, f)
        report.corpus = max(report.corpus, corp)
    peak = _PEAK.findall(output)
    if peak:
        report.peak_rss_mb = max(report.peak_rss_mb, int(peak[-1]))


def _table(reports: list[Report]) -> str:
    head = (
        f"{'target':<16} {'seconds':>7} {'executions':>11} {'cov':>6} {'ft':>7} "
        f"{'corpus':>6} {'rss MB':>6}  result"
    )
    lines = [head, "-" * len(head)]
    for r in reports:
        if r.error:
            result = f"ERROR {r.error}"
        elif r.crashes:
            result = f"{len(r.crashes)} crash(es)"
        else:
            result = "ok"
        lines.append(
            f"{r.target:<16} {r.seconds:>7} {r.executions:>11} {r.coverage:>6} "
            f"{r.features:>7} {r.corpus:>6} {r.peak_rss_mb:>6}  {result}"
        )
        for c in r.crashes:
            lines.append(f"    {c.kind}: {c.summary}")
            if c.where:
                lines.append(f"      at {c.where}")
            lines.append(f"      input {c.input}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="fuzz/run.py",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("targets", nargs="*", help="targets to run (default: all)")
    parser.add_argument("--seconds", type=int, default=60, help="fuzzing time per target")
    parser.add_argument(
        "--jobs", type=int, choices=(1, 2), default=1, help="targets run at once (default 1)"
    )
    parser.add_argument(
        "--timeout", type=int, default=10, help="seconds one input may take before it is a hang"
    )
    parser.add_argument("--rss-limit-mb", type=int, default=2048, help="memory bound per target")
    parser.add_argument(
        "--keep-going",
        action="store_true",
        help="start a target again after a crash, for the time left",
    )
    parser.add_argument(
        "--max-crashes",
        type=int,
        default=5,
        help="distinct crashes per target before it stops (with --keep-going)",
    )
    parser.add_argument(
        "--fresh", action="store_true", help="forget the working corpus: start from the seeds alone"
    )
    parser.add_argument(
        "--python",
        default=sys.executable,
        help="interpreter with atheris installed (default: this one)",
    )
    parser.add_argument("--json", type=Path, help="also write the report as JSON here")
    parser.add_argument("--list", action="store_true", help="list the targets and exit")
    args = parser.parse_args(argv)

    known = all_targets()
    if args.list:
        sys.stdout.write("\n".join(known) + "\n")
        return 0
    unknown = sorted(set(args.targets) - set(known))
    if unknown:
        parser.error(f"no such target: {', '.join(unknown)} (see --list)")
    targets = args.targets or known
    if args.seconds < 1:
        parser.error("--seconds must be at least 1")
    probe = subprocess.run(  # noqa: S603 - fail early, with one clear line
        [args.python, "-c", "import atheris"],
        capture_output=True,
        check=False,
    )
    if probe.returncode != 0:
        sys.stderr.write(f"fuzz/run.py: atheris cannot be imported by {args.python}\n")
        return 2
    if args.fresh:
        for target in targets:
            shutil.rmtree(WORK / target, ignore_errors=True)

    sys.stderr.write(
        f"fuzz/run.py: {len(targets)} target(s), {args.seconds} s each, {args.jobs} at a time\n"
    )
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        reports = list(pool.map(lambda t: _announce(run_target(t, args)), targets))

    sys.stdout.write(_table(reports) + "\n")
    failed = [r.target for r in reports if not r.ok]
    total = sum(r.executions for r in reports)
    sys.stdout.write(
        f"fuzz: {len(reports)} target(s), {total} executions, "
        f"{len(failed)} failed{': ' + ', '.join(failed) if failed else ''}\n"
    )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps([asdict(r) for r in reports], indent=2) + "\n")
    return 1 if failed else 0


def _announce(report: Report) -> Report:
    state = "ok" if report.ok else ("crashed" if report.crashes else "error")
    sys.stderr.write(f"fuzz/run.py: {report.target}: {report.executions} executions, {state}\n")
    return report


if __name__ == "__main__":
    sys.exit(main())
