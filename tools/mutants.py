#!/usr/bin/env python3
"""Mutation testing of the security modules with mutmut (REQ-TEST-019).

  python tools/mutants.py                          every group, one after the other
  python tools/mutants.py --module egress          one group (repeat the option for more)
  python tools/mutants.py --max-minutes 60         stop after an hour, report what was checked
  python tools/mutants.py --report out.json        the counts and every survivor, as JSON
  python tools/mutants.py --from-report out.json   judge that run's survivors against the
                                                   exclusion file as it is now (no mutmut run)
  python tools/mutants.py --list                   the groups, their modules and tests

Run it with a Python that has the project, its test dependencies and mutmut
(tools/mutants-requirements.lock pins the version this tool was written for).

Each group is run in its own temporary copy of the work tree, so mutmut's
configuration (written into the copy's pyproject.toml) and its `mutants/`
folder never touch the repository. Only the group's modules are mutated and
only the group's test files are collected; mutmut then runs, for each mutant,
only the collected tests that called the mutated function.

A mutant counts as caught when a test failed or the project's strict mypy
rejects it (killed: either stops it at the CI gate), or when its tests were
stopped for taking too long (timeout; a mutant that loops is noticed, which is
the point). Everything else that ran is a survivor: the tests passed with the
mutant in place, or no collected test reached the function. A survivor listed
in tools/mutants-exclusions.toml (with the reason it cannot change behaviour)
is counted as excluded. Hypothesis runs with a fixed seed, so two runs of one
tree give the same verdicts.

Exit status: 0 when every mutant was caught or excluded; 1 when a survivor is
not excluded; 3 when a group could not run to the end (mutmut failed, or the
time budget ran out). A budget-cut run reports what it checked.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EXCLUSIONS = REPO / "tools" / "mutants-exclusions.toml"


@dataclass(frozen=True)
class Group:
    name: str
    modules: tuple[str, ...]  # paths relative to the repository
    tests: tuple[str, ...]  # the module's own test files; tests/**/test_mutants_<name>*.py join
    # Tests with a wall-clock bound, left out: mutmut's trampolines slow every call of
    # the mutated module (its stats run traces them too), so the bound fails with no
    # mutant in place. Their mutants are then caught by the other tests or reported.
    wall_clock: tuple[str, ...] = ()


# The six security modules of the book's release checks, mapped to this build.
GROUPS: tuple[Group, ...] = (
    Group(
        "egress",
        ("rypsok/core/net/egress.py", "rypsok/core/net/rules.py", "rypsok/core/fetch/intake.py"),
        # the rules' own errors are checked through the configuration, and their
        # width warning through check's report
        (
            "tests/core/net/test_egress.py",
            "tests/core/fetch/test_fetch_intake.py",
            "tests/core/net/test_properties_egress.py",
            "tests/core/config/test_config_values.py",
            "tests/core/config/test_check_report.py",
        ),
    ),
    # The fetch intake is check_url's caller: its tests read the privacy verdicts too.
    Group(
        "privacy",
        (
            "rypsok/core/privacy/views.py",
            "rypsok/core/privacy/detectors.py",
            "rypsok/core/privacy/modes.py",
            "rypsok/core/privacy/urls.py",
        ),
        (
            "tests/core/privacy/test_privacy.py",
            "tests/core/privacy/test_properties_privacy.py",
            "tests/core/fetch/test_fetch_intake.py",
        ),
        (
            "tests/core/privacy/test_privacy.py::test_req_priv_002_long_adversarial_input_is_checked_in_"
            "linear_time",
        ),
    ),
    Group(
        "boundary",
        (
            "rypsok/core/boundary/unicode.py",
            "rypsok/core/boundary/markup.py",
            "rypsok/core/boundary/bounds.py",
            "rypsok/core/boundary/instructions.py",
            "rypsok/core/boundary/clean.py",
        ),
        (
            "tests/core/boundary/test_boundary.py",
            "tests/core/boundary/test_boundary_anchors.py",
            "tests/core/boundary/test_properties_boundary.py",
        ),
    ),
    Group(
        "robots",
        ("rypsok/core/fetch/robots.py", "rypsok/core/store/robots_rules.py"),
        ("tests/core/fetch/test_robots.py", "tests/core/fetch/test_properties_robots.py"),
    ),
    Group(
        "http",
        (
            "rypsok/protocol/http/gate.py",
            "rypsok/protocol/http/refusals.py",
            "rypsok/protocol/http/auth.py",
        ),
        (
            "tests/protocol/http/test_http_listener.py",
            "tests/protocol/http/test_http_hostile.py",
            "tests/protocol/http/test_http_clients.py",
        ),
    ),
    # Sessions and callers: the session bound, and the caller tokens as they
    # are read and held (auth.py, which maps a token to its caller, is above).
    Group(
        "sessions",
        (
            "rypsok/protocol/http/sessions.py",
            "rypsok/protocol/http/session_ledger.py",
            "rypsok/protocol/sdk_private.py",
            "rypsok/core/config/secrets.py",
        ),
        # the session transports' cancellation hook is held by the cancellation tests
        (
            "tests/protocol/http/test_http_listener.py",
            "tests/core/config/test_config_values.py",
            "tests/protocol/test_cancellation_bound.py",
            "tests/protocol/http/test_session_ledger.py",
            "tests/protocol/http/test_lane_modes.py",
        ),
    ),
)
BY_NAME = {g.name: g for g in GROUPS}

# What the copy holds: the package and what its tests read. Not the whole tree:
# other work (fuzz corpora, virtual environments, builds) may be changing there.
_COPY = ("rypsok", "tests", "fixtures", "examples", "docs", "pyproject.toml", "README.md")
_SKIP = {"__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache", ".hypothesis", "mutants"}

# mutmut's exit codes (mutmut.stats.status_by_exit_code), folded into our classes.
_BY_MYPY = 37
_KILLED = {1, 3, _BY_MYPY}  # a test failed, pytest failed internally, mypy failed
_TIMEOUT = {36, 24, -24, 152, 255, -9, -11}  # stopped by the time limit or killed by a signal
_NO_TESTS = {5, 33}  # no collected test reached the mutated function
_SURVIVED = 0  # the tests passed with the mutant in place

# Per-mutant time limit: (time of the covering tests + constant) x multiplier.
# Loose enough that two shared cores do not turn a slow pass into a timeout.
TIMEOUT_MULTIPLIER = 3.0
TIMEOUT_CONSTANT_S = 5.0


# ------------------------------------------------------------------ exclusions


def _norm(text: str) -> str:
    """A source fragment with its whitespace collapsed, so indentation never matters."""
    return " ".join(text.split())


@dataclass(frozen=True)
class Exclusion:
    module: str
    function: str
    line: str | None  # the source line(s) the mutant changes
    mutated: tuple[str, ...]  # what mutmut made of them: one entry per mutant
    mutant: str | None  # or mutmut's own name for the mutant (valid for one run only)
    reason: str

    def matches(self, survivor: Survivor) -> bool:
        if self.module != survivor.module or self.function != survivor.function:
            return False
        if self.mutant is not None:
            return self.mutant == survivor.name
        return _norm(self.line or "") == _norm(survivor.line) and any(
            _norm(m) == _norm(survivor.mutated) for m in self.mutated
        )


class ExclusionError(ValueError):
    pass


def load_exclusions(path: Path) -> list[Exclusion]:
    if not path.exists():
        return []
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    unknown = set(data) - {"exclude"}
    if unknown:
        raise ExclusionError(f"{path.name}: unknown top-level keys {sorted(unknown)}")
    out: list[Exclusion] = []
    for index, entry in enumerate(data.get("exclude", [])):
        at = f"{path.name}: exclude[{index}]"
        extra = set(entry) - {"module", "function", "line", "mutated", "mutant", "reason"}
        if extra:
            raise ExclusionError(f"{at}: unknown keys {sorted(extra)}")
        for key in ("module", "function", "reason"):
            if not isinstance(entry.get(key), str) or not entry[key].strip():
                raise ExclusionError(f"{at}: {key} is required")
        by_text = "line" in entry and "mutated" in entry
        if by_text == ("mutant" in entry):
            raise ExclusionError(f"{at}: give either line and mutated, or mutant")
        mutated = entry.get("mutated", [])
        mutated = [mutated] if isinstance(mutated, str) else mutated
        if not isinstance(mutated, list) or not all(isinstance(m, str) for m in mutated):
            raise ExclusionError(f"{at}: mutated is a line or a list of lines")
        out.append(
            Exclusion(
                entry["module"],
                entry["function"],
                entry.get("line"),
                tuple(mutated),
                entry.get("mutant"),
                entry["reason"],
            )
        )
    return out


# ------------------------------------------------------------------ results


@dataclass
class Survivor:
    name: str  # mutmut's name, valid for this run only
    module: str
    function: str
    status: str  # "survived", "no tests" or "suspicious"
    line: str  # the removed source line(s), joined by newlines
    mutated: str  # the added line(s)
    excluded: str | None = None  # the exclusion's reason

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.module, self.function, _norm(self.line), _norm(self.mutated))


@dataclass
class GroupResult:
    name: str
    modules: list[str]
    tests: list[str]
    mutants: int = 0
    killed: int = 0  # by a test, or by mypy (below)
    by_mypy: int = 0
    timeouts: int = 0
    survived: int = 0  # not excluded
    excluded: int = 0
    not_checked: int = 0
    seconds: float = 0.0
    complete: bool = False
    problem: str | None = None
    survivors: list[Survivor] = field(default_factory=list)

    @property
    def caught(self) -> int:
        return self.killed + self.timeouts


def function_of(mutant: str, module: str) -> str:
    """mutmut's name of a mutant, as the function it lives in: `func` or `Class.method`."""
    dotted = module.removesuffix(".py").replace("/", ".")
    if not mutant.startswith(dotted + "."):
        raise ValueError(f"mutant {mutant} is not in {module}")
    local = mutant[len(dotted) + 1 :]
    local = re.sub(r"__mutmut_\d+$", "", local)
    if local.startswith("xǁ"):  # methods: xǁClassǁmethod
        return local[2:].replace("ǁ", ".")
    if local.startswith("x_"):
        return local[2:]
    return local


def diff_lines(diff: str) -> tuple[str, str]:
    """The removed and the added lines of a unified diff, without the markers."""
    removed: list[str] = []
    added: list[str] = []
    for row in diff.splitlines():
        if row.startswith(("---", "+++")):
            continue
        if row.startswith("-"):
            removed.append(row[1:].strip())
        elif row.startswith("+"):
            added.append(row[1:].strip())
    return "\n".join(removed), "\n".join(added)


def classify(code: int | None) -> str:
    if code is None or code in (2, 34):
        return "not checked"  # not run (budget), interrupted or skipped
    if code in _KILLED:
        return "killed"
    if code in _TIMEOUT:
        return "timeout"
    if code in _NO_TESTS:
        return "no tests"
    if code == _SURVIVED:
        return "survived"
    return "suspicious"  # anything else mutmut reports: looked at like a survivor


def apply_exclusions(survivors: Iterable[Survivor], exclusions: Sequence[Exclusion]) -> None:
    for survivor in survivors:
        for exclusion in exclusions:
            if exclusion.matches(survivor):
                survivor.excluded = exclusion.reason
                break


def unused_exclusions(
    results: Sequence[GroupResult], exclusions: Sequence[Exclusion]
) -> list[Exclusion]:
    """Entries for a fully checked module that no survivor matched: stale, to remove."""
    checked = {m for r in results if r.complete for m in r.modules}
    survivors = [s for r in results for s in r.survivors]
    return [
        e for e in exclusions if e.module in checked and not any(e.matches(s) for s in survivors)
    ]


# ------------------------------------------------------------------ running


def tests_of(group: Group, root: Path) -> list[str]:
    own = sorted(
        p.relative_to(root).as_posix()
        for p in (root / "tests").rglob(f"test_mutants_{group.name}*.py")
    )
    return [t for t in group.tests if (root / t).exists()] + own


def copy_tree(source: Path, target: Path) -> None:
    """Copy _COPY from *source*, skipping caches; a file that vanishes meanwhile is skipped."""
    for name in _COPY:
        top = source / name
        if top.is_file():
            target.mkdir(parents=True, exist_ok=True)
            shutil.copy2(top, target / name)
            continue
        for root, dirs, files in os.walk(top):
            dirs[:] = [d for d in dirs if d not in _SKIP]
            into = target / Path(root).relative_to(source)
            into.mkdir(parents=True, exist_ok=True)
            for file in files:
                if file.endswith(".pyc"):
                    continue
                try:
                    shutil.copy2(Path(root) / file, into / file)
                except FileNotFoundError:
                    continue


def mutmut_config(group: Group, tests: Sequence[str], extra_pytest: Sequence[str]) -> str:
    def toml_list(items: Iterable[str]) -> str:
        return "[" + ", ".join(json.dumps(i) for i in items) + "]"

    deselect = [arg for test in group.wall_clock for arg in ("--deselect", test)]
    # A fixed seed: a property must catch the same mutants on every run.
    pytest_args = ["-p", "no:cacheprovider", "--hypothesis-seed=0", *deselect, *extra_pytest]
    # mutmut looks for the word "mypy" among the arguments to read its JSON output. Its
    # generated lines carry "type: ignore", which strict mode would call unused.
    mypy = [
        sys.executable,
        "-m",
        "mypy",
        "--output",
        "json",
        "--no-warn-unused-ignores",
        *group.modules,
    ]

    return "\n".join(
        [
            "",
            "[tool.mutmut]",
            'source_paths = ["rypsok"]',
            # mutmut runs the tests inside mutants/: what they read beside the package too
            f"also_copy = {toml_list(c for c in _COPY if c not in ('rypsok', 'tests'))}",
            f"only_mutate = {toml_list(group.modules)}",
            f"pytest_add_cli_args_test_selection = {toml_list(tests)}",
            # no cache: a failed test must not reorder the next mutant's run
            f"pytest_add_cli_args = {toml_list(pytest_args)}",
            # A mutant the project's strict mypy rejects cannot pass the CI gate: caught.
            f"type_check_command = {toml_list(mypy)}",
            "use_git_change_detection = false",  # the copy has no .git
            f"timeout_multiplier = {TIMEOUT_MULTIPLIER}",
            f"timeout_constant = {TIMEOUT_CONSTANT_S}",
            "",
        ]
    )


def prepare(group: Group, workdir: Path, extra_pytest: Sequence[str]) -> list[str]:
    copy_tree(REPO, workdir)
    tests = tests_of(group, workdir)
    pyproject = workdir / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    if "[tool.mutmut]" in text:
        raise SystemExit("pyproject.toml has its own [tool.mutmut]; this tool writes one per group")
    pyproject.write_text(text + mutmut_config(group, tests, extra_pytest), encoding="utf-8")
    return tests


def mutmut_command() -> list[str]:
    # mutmut's console-script entry, run by this interpreter (not `python -m mutmut`,
    # which mutmut warns loads its own module twice).
    if importlib.util.find_spec("mutmut") is None:
        raise SystemExit(
            "mutmut is not installed for this Python "
            "(pip install --require-hashes -r tools/mutants-requirements.lock)"
        )
    return [sys.executable, "-c", "from mutmut.__main__ import cli; cli()"]


def run_mutmut(workdir: Path, jobs: int, deadline: float | None) -> tuple[bool, str | None]:
    """Run mutmut to the end or the deadline; (finished, problem)."""
    log_path = workdir / "mutmut.log"
    with log_path.open("wb") as log_file:
        proc = subprocess.Popen(
            [*mutmut_command(), "run", "--max-children", str(jobs)],
            cwd=workdir,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            while proc.poll() is None:
                if deadline is not None and time.monotonic() > deadline:
                    _stop(proc)
                    return False, "the time budget ran out"
                time.sleep(1.0)
        except KeyboardInterrupt:
            _stop(proc)
            raise
    if proc.returncode != 0:
        tail = log_path.read_bytes()[-2000:].decode("utf-8", "replace")
        return False, f"mutmut exited {proc.returncode}: ...{_last_lines(tail)}"
    return True, None


def _last_lines(text: str, count: int = 6) -> str:
    # mutmut redraws its progress line with carriage returns: split on both.
    rows = [r.strip() for r in re.split(r"[\r\n]+", text) if r.strip()]
    return " | ".join(rows[-count:])


def _stop(proc: subprocess.Popen[bytes]) -> None:
    # mutmut forks its workers into the session we gave it: stop that group only.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


# One child for every diff of a group: `mutmut show` per survivor costs a start each.
_DIFFS = """
import json, sys
from mutmut.mutation.diff_apply import get_diff_for_mutant
wanted = json.load(sys.stdin)
json.dump({name: get_diff_for_mutant(name, path=path) for name, path in wanted}, sys.stdout)
"""


def diffs(workdir: Path, wanted: Sequence[tuple[str, str]]) -> dict[str, str]:
    """mutmut's diff of each (mutant, module), read in the group's work tree."""
    if not wanted:
        return {}
    proc = subprocess.run(
        [sys.executable, "-c", _DIFFS],
        cwd=workdir,
        input=json.dumps(list(wanted)).encode("utf-8"),
        capture_output=True,
        timeout=600,
        check=True,
    )
    found: dict[str, str] = json.loads(proc.stdout)
    return found


def collect(group: Group, workdir: Path, result: GroupResult) -> None:
    open_ones: list[tuple[str, str, str]] = []  # (name, module, status)
    for module in group.modules:
        meta = workdir / "mutants" / (module + ".meta")
        if not meta.exists():
            continue
        codes: Mapping[str, int | None] = json.loads(meta.read_text(encoding="utf-8"))[
            "exit_code_by_key"
        ]
        for name, code in sorted(codes.items()):
            result.mutants += 1
            status = classify(code)
            if status == "killed":
                result.killed += 1
                result.by_mypy += code == _BY_MYPY
            elif status == "timeout":
                result.timeouts += 1
            elif status == "not checked":
                result.not_checked += 1
            else:
                open_ones.append((name, module, status))
    text = diffs(workdir, [(name, module) for name, module, _ in open_ones])
    for name, module, status in open_ones:
        line, mutated = diff_lines(text[name])
        result.survivors.append(
            Survivor(name, module, function_of(name, module), status, line, mutated)
        )


def run_group(
    group: Group, jobs: int, deadline: float | None, keep: bool, extra_pytest: Sequence[str]
) -> GroupResult:
    started = time.monotonic()
    workdir = Path(tempfile.mkdtemp(prefix=f"rypsok-mutants-{group.name}-")) / "tree"
    result = GroupResult(group.name, list(group.modules), [])
    try:
        result.tests = prepare(group, workdir, extra_pytest)
        _say(f"{group.name}: mutating {', '.join(group.modules)}")
        _say(f"{group.name}: with {', '.join(result.tests)}")
        finished, result.problem = run_mutmut(workdir, jobs, deadline)
        collect(group, workdir, result)
        result.complete = finished and result.not_checked == 0
        if finished and result.not_checked:
            result.problem = f"{result.not_checked} mutants were not checked"
    finally:
        result.seconds = round(time.monotonic() - started, 1)
        if keep:
            _say(f"{group.name}: work tree kept at {workdir}")
        else:
            shutil.rmtree(workdir.parent, ignore_errors=True)
    return result


# ------------------------------------------------------------------ output


def _say(text: str) -> None:
    print(f"mutants: {text}", file=sys.stderr, flush=True)


def table(results: Sequence[GroupResult]) -> str:
    head = (
        "group",
        "mutants",
        "killed",
        "(by mypy)",
        "timeouts",
        "survived",
        "excluded",
        "unchecked",
        "seconds",
    )
    rows = [head] + [
        (
            r.name,
            str(r.mutants),
            str(r.killed),
            str(r.by_mypy),
            str(r.timeouts),
            str(r.survived),
            str(r.excluded),
            str(r.not_checked),
            f"{r.seconds:.0f}",
        )
        for r in results
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    return "\n".join(
        "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in rows
    )


def survivor_text(s: Survivor) -> str:
    return (
        f"  {s.module} {s.function} ({s.status}; mutmut name {s.name})\n"
        f"    - {s.line.replace(chr(10), chr(10) + '      ')}\n"
        f"    + {s.mutated.replace(chr(10), chr(10) + '      ')}"
    )


def report_json(results: Sequence[GroupResult], stale: Sequence[Exclusion], seconds: float) -> str:
    groups = []
    for r in results:
        entry = asdict(r)
        entry["caught"] = r.caught
        groups.append(entry)
    return (
        json.dumps(
            {
                "seconds": round(seconds, 1),
                "groups": groups,
                "unused_exclusions": [asdict(e) for e in stale],
            },
            indent=2,
            ensure_ascii=False,
        )
        + "\n"
    )


# ------------------------------------------------------------------ main


def judge(result: GroupResult, exclusions: Sequence[Exclusion]) -> None:
    for survivor in result.survivors:
        survivor.excluded = None
    apply_exclusions(result.survivors, exclusions)
    result.excluded = sum(1 for s in result.survivors if s.excluded is not None)
    result.survived = len(result.survivors) - result.excluded


def run_groups(names: Sequence[str], args: argparse.Namespace, started: float) -> list[GroupResult]:
    deadline = None if args.max_minutes is None else started + args.max_minutes * 60
    results: list[GroupResult] = []
    for name in dict.fromkeys(names):
        group = BY_NAME[name]
        if deadline is not None and time.monotonic() >= deadline:
            results.append(
                GroupResult(
                    name, list(group.modules), [], problem="not started: the time budget ran out"
                )
            )
            continue
        result = run_group(group, args.jobs, deadline, args.keep, args.pytest_arg)
        results.append(result)
        _say(
            f"{name}: {result.mutants} mutants, {result.caught} caught, "
            f"{len(result.survivors)} not caught in {result.seconds:.0f} s"
            + (f" ({result.problem})" if result.problem else "")
        )
    return results


def load_report(path: Path, only: Sequence[str] | None) -> list[GroupResult]:
    """The groups of a report written by --report, survivors not yet judged."""
    data = json.loads(path.read_text(encoding="utf-8"))
    results: list[GroupResult] = []
    for entry in data["groups"]:
        if only and entry["name"] not in only:
            continue
        fields = {
            k: v
            for k, v in entry.items()
            if k in GroupResult.__dataclass_fields__ and k != "survivors"
        }
        result = GroupResult(**fields)
        result.survivors = [Survivor(**s) for s in entry["survivors"]]
        results.append(result)
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Mutation testing of rypsok's security modules (mutmut)."
    )
    parser.add_argument(
        "--module",
        action="append",
        choices=sorted(BY_NAME),
        help="a group to run (repeatable; default: all, in the listed order)",
    )
    parser.add_argument(
        "--max-minutes",
        type=float,
        default=None,
        help="stop after this many minutes; what ran is reported",
    )
    parser.add_argument("--report", type=Path, help="write the results as JSON here")
    parser.add_argument("--exclusions", type=Path, default=EXCLUSIONS)
    parser.add_argument(
        "--jobs",
        type=int,
        default=min(2, os.cpu_count() or 1),
        help="mutants tested at once (default: 2)",
    )
    parser.add_argument(
        "--keep",
        action="store_true",
        help="keep each group's work tree (to inspect with mutmut show)",
    )
    parser.add_argument(
        "--pytest-arg",
        action="append",
        default=[],
        help="an extra pytest argument for every run (repeatable)",
    )
    parser.add_argument("--list", action="store_true", help="print the groups and stop")
    parser.add_argument(
        "--from-report",
        type=Path,
        help="judge the survivors of an earlier --report against the "
        "exclusion file as it is now, without running mutmut",
    )
    args = parser.parse_args(argv)

    if args.list:
        for g in GROUPS:
            print(f"{g.name}: {' '.join(g.modules)}\n    tests: {' '.join(tests_of(g, REPO))}")
        return 0
    try:
        exclusions = load_exclusions(args.exclusions)
    except (ExclusionError, tomllib.TOMLDecodeError) as exc:
        _say(f"cannot use the exclusion file: {exc}")
        return 3
    started = time.monotonic()
    if args.from_report is not None:
        results = load_report(args.from_report, args.module)
    else:
        results = run_groups(args.module or [g.name for g in GROUPS], args, started)
    for result in results:
        judge(result, exclusions)
    seconds = sum(r.seconds for r in results) if args.from_report else (time.monotonic() - started)
    stale = unused_exclusions(results, exclusions)

    print(table(results))
    open_survivors = [s for r in results for s in r.survivors if s.excluded is None]
    if open_survivors:
        print("\nsurvivors (kill with a test, or exclude with the reason):")
        print("\n".join(survivor_text(s) for s in open_survivors))
    if stale:
        print("\nexclusions that matched no survivor (remove them):")
        print("\n".join(f"  {e.module} {e.function}: {e.line or e.mutant}" for e in stale))
    incomplete = [r for r in results if not r.complete]
    for r in incomplete:
        print(f"\n{r.name}: incomplete: {r.problem}")
    print(f"\nwall time {seconds:.0f} s")
    if args.report is not None:
        args.report.write_text(report_json(results, stale, seconds), encoding="utf-8")
    if open_survivors:
        return 1
    return 3 if incomplete else 0


if __name__ == "__main__":
    sys.exit(main())
