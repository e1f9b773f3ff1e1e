#!/usr/bin/env python3
"""The requirement ledger: every requirement the book verifies by test (T), and its tests.

  .venv/bin/python tools/ledger.py                        the table and the counts
  .venv/bin/python tools/ledger.py --missing              required ones without a test
  .venv/bin/python tools/ledger.py --refresh --book PATH  rewrite fixtures/requirements.tsv

The book's requirements are read from fixtures/requirements.tsv, a committed
list of the book's requirement headings (id, milestone, verification method,
short title), so the gate needs nothing beside the repository. The list is
generated, never edited: --refresh reads a copy of the book given explicitly
with --book and rewrites it. A requirement heading of the book reads
"REQ-PAGE-006 Malformed content \u2014 M3 \u00b7 T". A test verifies a requirement
by carrying its id in its name, in lower case with underscores
(test_req_page_006_...; one name may carry several ids). The tests are the
test functions pytest collects from tests/ (test_*.py files; functions and
methods of Test classes whose names start with test), read from the source
without importing it.

The gate (tests/tools/test_ledger.py, so CI runs it) requires at least one test for
every T requirement of a delivered milestone. tools/ledger-waivers.toml says
which milestones are not delivered yet and which requirements this build
cannot meet as written, each with its reason; nothing else is exempt.
Standard library only.
"""

from __future__ import annotations

import argparse
import ast
import gc
import hashlib
import re
import sys
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
WAIVERS = ROOT / "tools" / "ledger-waivers.toml"
REQUIREMENTS = ROOT / "fixtures" / "requirements.tsv"
LIST_COLUMNS = ("id", "milestone", "method", "title")

HEADING = re.compile(r"^(REQ-[A-Z]+-\d{3}) (.+?) \u2014 (M\d|All) \u00b7 ([A-Z])$")
# Looser than HEADING: any line that starts like a heading, so a heading whose
# format drifted is reported instead of silently dropped.
HEADING_LIKE = re.compile(r"^REQ-[A-Z]+-\d+ [^|]*\u2014")
# An id in a test name: whole underscore-separated tokens only (not "prereq_...", not "_0011").
NAME_ID = re.compile(r"(?:(?<=_)|^)req_([a-z]+)_(\d{3})(?=_|$)")
TEST_FILE = re.compile(r"^(test_.*|.*_test)\.py$")


class LedgerError(Exception):
    """The book, the tests or the waivers cannot be read as the ledger needs."""


@dataclass(frozen=True)
class Requirement:
    id: str
    title: str
    milestone: str  # "M0".."M8" or "All"
    method: str  # T, I, D or A


@dataclass(frozen=True)
class TestRef:
    file: str  # relative to the tests folder
    name: str

    def __str__(self) -> str:
        return f"{self.file}::{self.name}"


@dataclass
class Row:
    requirement: Requirement
    tests: list[TestRef] = field(default_factory=list)
    exempt: str = ""  # "", "waived" or "later" (its milestone is not delivered)
    why: str = ""  # the reason of the exemption

    @property
    def required(self) -> bool:
        return not self.exempt

    @property
    def status(self) -> str:
        return self.exempt or ("covered" if self.tests else "MISSING")


@dataclass(frozen=True)
class Waivers:
    not_delivered: Mapping[str, str]  # milestone -> why
    waived: Mapping[str, str]  # requirement id -> why


def read_requirements(text: str) -> list[Requirement]:
    """Every requirement heading of the book, in book order; LedgerError on a malformed one."""
    found: list[Requirement] = []
    seen: set[str] = set()
    for number, line in enumerate(text.splitlines(), 1):
        match = HEADING.match(line)
        if match is None:
            if HEADING_LIKE.match(line):
                raise LedgerError(
                    f"line {number} looks like a requirement heading but does "
                    "not read 'ID Title \u2014 milestone \u00b7 method'"
                )
            continue
        req = Requirement(*match.groups())
        if req.id in seen:
            raise LedgerError(f"{req.id} has two headings (line {number})")
        seen.add(req.id)
        found.append(req)
    if not found:
        raise LedgerError("no requirement heading found: is this the book?")
    return found


def render_list(requirements: Sequence[Requirement], book_name: str, digest: str) -> str:
    """fixtures/requirements.tsv's text: a header saying where it comes from, then one
    requirement a line, in book order."""
    lines = [
        "# The book's requirement headings, one a line: id, milestone, verification method",
        "# and short title, tab-separated, in the book's order. Read by tools/ledger.py and its",
        "# gate (tests/tools/test_ledger.py).",
        f"# Generated from the book ({book_name}, sha256 {digest}); do not edit by hand.",
        "# Refresh from a copy of the book:",
        "#   .venv/bin/python tools/ledger.py --refresh --book PATH/TO/rypsok-book.txt",
        "\t".join(LIST_COLUMNS),
    ]
    lines += ["\t".join((r.id, r.milestone, r.method, r.title)) for r in requirements]
    return "\n".join(lines) + "\n"


ROW_ID = re.compile(r"REQ-[A-Z]+-\d{3}")
ROW_MILESTONE = re.compile(r"M\d|All")
ROW_METHOD = re.compile(r"[A-Z]")


def read_list(text: str) -> list[Requirement]:
    """The committed list (render_list's form); LedgerError names the first bad line."""
    found: list[Requirement] = []
    seen: set[str] = set()
    header = False
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if not header:
            if tuple(fields) != LIST_COLUMNS:
                raise LedgerError(f"requirements list, line {number}: expected the column names")
            header = True
            continue
        if len(fields) != len(LIST_COLUMNS):
            raise LedgerError(f"requirements list, line {number}: expected four columns")
        req = Requirement(fields[0], fields[3], fields[1], fields[2])
        if not (
            ROW_ID.fullmatch(req.id)
            and ROW_MILESTONE.fullmatch(req.milestone)
            and ROW_METHOD.fullmatch(req.method)
            and req.title.strip()
        ):
            raise LedgerError(f"requirements list, line {number}: not an id, milestone, method")
        if req.id in seen:
            raise LedgerError(f"requirements list, line {number}: {req.id} is listed twice")
        seen.add(req.id)
        found.append(req)
    if not found:
        raise LedgerError("the requirements list holds no requirement")
    return found


def refresh(book: Path, target: Path = REQUIREMENTS) -> list[Requirement]:
    """Rewrite the committed list from a copy of the book; the requirements written."""
    raw = book.read_bytes()
    requirements = read_requirements(raw.decode("utf-8"))
    text = render_list(requirements, book.name, hashlib.sha256(raw).hexdigest())
    target.write_text(text, encoding="utf-8", newline="\n")
    return requirements


def ids_in(name: str) -> set[str]:
    """The requirement ids a test name carries: test_req_mcp_001_req_mcp_006_x -> both."""
    return {f"REQ-{cat.upper()}-{num}" for cat, num in NAME_ID.findall(name)}


FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _tests_of_module(tree: ast.Module) -> Iterable[str]:
    for node in tree.body:
        if isinstance(node, FUNCTIONS) and node.name.startswith("test"):
            yield node.name
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            for item in node.body:
                if isinstance(item, FUNCTIONS) and item.name.startswith("test"):
                    yield f"{node.name}::{item.name}"


def _parse(source: str, filename: str) -> ast.Module:
    """ast.parse with the cyclic collector paused: CPython 3.11.7 raised "AST constructor
    recursion depth mismatch" (SystemError) here once in the whole suite, when a
    collection ran other objects' finalizers while the tree was being built."""
    paused = gc.isenabled()
    gc.disable()
    try:
        return ast.parse(source, filename=filename)
    finally:
        if paused:
            gc.enable()


def collect_tests(folder: Path) -> list[TestRef]:
    """The test functions pytest would collect by name, read from the source."""
    refs: list[TestRef] = []
    for path in sorted(folder.rglob("*.py")):
        if not TEST_FILE.match(path.name):
            continue
        try:
            tree = _parse(path.read_text(encoding="utf-8"), str(path))
        except SyntaxError as exc:
            raise LedgerError(f"{path}: cannot be parsed ({exc.msg}, line {exc.lineno})") from exc
        rel = path.relative_to(folder).as_posix()
        refs += [TestRef(rel, name) for name in _tests_of_module(tree)]
    return refs


def read_waivers(text: str, requirements: Sequence[Requirement]) -> Waivers:
    """The waiver file, checked against the book: a stale or vague entry is an error."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise LedgerError(f"tools/ledger-waivers.toml: {exc}") from exc
    unknown = set(data) - {"not_yet_delivered", "waived"}
    if unknown:
        raise LedgerError(f"tools/ledger-waivers.toml: unknown tables {sorted(unknown)}")
    milestones = {r.milestone for r in requirements}
    t_ids = {r.id for r in requirements if r.method == "T"}
    not_delivered = data.get("not_yet_delivered", {})
    waived = data.get("waived", {})
    for key, why in [*not_delivered.items(), *waived.items()]:
        if not isinstance(why, str) or not why.strip():
            raise LedgerError(f"tools/ledger-waivers.toml: {key} needs its reason as text")
    for milestone in not_delivered:
        if milestone not in milestones or milestone == "All":
            raise LedgerError(
                f"tools/ledger-waivers.toml: {milestone} is not a milestone "
                "the book's requirements name"
            )
    for req_id in waived:
        if req_id not in t_ids:
            raise LedgerError(
                f"tools/ledger-waivers.toml: {req_id} is not a T requirement "
                "of the book: remove the waiver"
            )
    return Waivers(dict(not_delivered), dict(waived))


def build(
    requirements: Sequence[Requirement], tests: Sequence[TestRef], waivers: Waivers
) -> list[Row]:
    """One row per T requirement, with its tests and whether the gate requires it."""
    by_id: dict[str, list[TestRef]] = {}
    for ref in tests:
        for req_id in ids_in(ref.name.rsplit("::", 1)[-1]):
            by_id.setdefault(req_id, []).append(ref)
    rows = []
    for req in requirements:
        if req.method != "T":
            continue
        row = Row(req, by_id.get(req.id, []))
        if req.id in waivers.waived:
            row.exempt, row.why = "waived", waivers.waived[req.id]
        elif req.milestone in waivers.not_delivered:
            row.exempt, row.why = "later", waivers.not_delivered[req.milestone]
        rows.append(row)
    return rows


def missing(rows: Iterable[Row]) -> list[Row]:
    return [row for row in rows if row.status == "MISSING"]


def load(
    requirements_list: Path = REQUIREMENTS,
    tests: Path = TESTS,
    waivers: Path = WAIVERS,
    *,
    book: Path | None = None,
) -> list[Row]:
    """The ledger's rows: the requirements from the committed list, or from a book."""
    if book is not None:
        requirements = read_requirements(book.read_text(encoding="utf-8"))
    else:
        requirements = read_list(requirements_list.read_text(encoding="utf-8"))
    return build(
        requirements,
        collect_tests(tests),
        read_waivers(waivers.read_text(encoding="utf-8"), requirements),
    )


def counts(rows: Sequence[Row]) -> str:
    required = [r for r in rows if r.required]
    waived = [r for r in rows if r.status == "waived"]
    later = [r for r in rows if r.status == "later"]
    return (
        f"T requirements: {len(rows)}; required now: {len(required)}, "
        f"covered {len(required) - len(missing(rows))}, uncovered {len(missing(rows))}; "
        f"waived {len(waived)}; later milestones {len(later)}"
    )


def table(rows: Sequence[Row]) -> list[str]:
    lines = []
    for row in rows:
        req = row.requirement
        first = str(row.tests[0]) if row.tests else (row.why or "-")
        more = f" (+{len(row.tests) - 1})" if len(row.tests) > 1 else ""
        lines.append(
            f"{req.id:14} {req.milestone:3} {row.status:8} {len(row.tests):3}  "
            f"{req.title[:40]:40}  {first}{more}"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="T requirements of the book and their tests.")
    parser.add_argument(
        "--missing",
        action="store_true",
        help="list only the required T requirements that have no test",
    )
    parser.add_argument(
        "--refresh",
        action="store_true",
        help="rewrite fixtures/requirements.tsv from the book given with --book",
    )
    parser.add_argument(
        "--book",
        type=Path,
        help="a copy of the book's text: with --refresh, the source of the list; "
        "without, read instead of the list",
    )
    parser.add_argument("--requirements", type=Path, default=REQUIREMENTS, help=argparse.SUPPRESS)
    parser.add_argument("--tests", type=Path, default=TESTS, help=argparse.SUPPRESS)
    parser.add_argument("--waivers", type=Path, default=WAIVERS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.refresh and args.book is None:
        parser.error("--refresh needs --book PATH, a copy of the book")
    try:
        if args.refresh:
            written = refresh(args.book, args.requirements)
            print(f"ledger: {len(written)} requirements written to {args.requirements}")
            return 0
        rows = load(args.requirements, args.tests, args.waivers, book=args.book)
    except (LedgerError, OSError) as exc:
        print(f"ledger: {exc}", file=sys.stderr)
        return 1
    gaps = missing(rows)
    for line in table(gaps if args.missing else rows):
        print(line)
    print(counts(rows))
    return 1 if gaps else 0


if __name__ == "__main__":
    sys.exit(main())
