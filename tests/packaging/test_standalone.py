"""A clone of this repository, with nothing beside it, is the whole project (issue 14,
item 11): no test, tool, benchmark, script or doc reads the workplace's shared folder
beside the clone or a path of one machine. Test data is in fixtures/ with its
provenance; a benchmark's external data is named by an argument."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.support.paths import REPO

# A path that only exists on the machine this was written on, or beside the clone.
# Written in pieces; this file, which names them to test the guard, is not walked.
_FORBIDDEN = re.compile(
    "|".join(
        [
            r"\.\./" + "shared",  # the shared folder beside the clone
            r"/" + r"work/(?:shared|main)",  # this workplace's absolute paths
            r"""["']""" + "shared" + r"""["']\s*/""",  # Path(...) / "shared" / ...
            "/".join(("", "tmp", "venv")),  # another machine's virtual environment
        ]
    )
)
_TEXT_SUFFIXES = {".py", ".md", ".toml", ".txt", ".json", ".cfg", ".ini", ".sh", ".tsv", ""}


def _tracked_files() -> list[Path]:
    out = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True
    ).stdout
    return [REPO / name for name in out.decode().split("\0") if name]


def test_req_test_012_nothing_in_the_tree_reads_outside_the_clone() -> None:
    here = Path(__file__).resolve()
    files = [
        p
        for p in _tracked_files()
        if p.suffix in _TEXT_SUFFIXES and p.is_file() and p.resolve() != here
    ]
    assert len(files) > 100  # the walk saw the tree
    found: list[str] = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if _FORBIDDEN.search(line):
                found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()[:120]}")
    assert found == []


def test_req_test_012_the_guard_sees_each_kind_of_outside_path() -> None:
    for line in (
        'BOOK = ROOT.parent / "shared" / "spec"',
        "see ../" + "shared/data for the registries",
        'Path("/' + 'work/shared/bench/extraction")',
        "/".join(("", "tmp", "venv", "bin", "python")) + " bench/search.py",
    ):
        assert _FORBIDDEN.search(line), line
    assert not _FORBIDDEN.search("the shared benchmark, given with --data DIR")
