"""The requirement gate: every T requirement of a delivered milestone has a test
named after it (REQ-TEST-001, the requirement coverage step of REQ-TEST-012).

tools/ledger.py does the reading; this module runs its gate on the committed
list of the book's requirements (fixtures/requirements.tsv) and the real tests,
and checks on small made-up books, lists and test folders that the gate can
fail and fails for the right reasons, and that the list is refreshed from a
book given explicitly. Nothing here reads anything outside the repository.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.support.paths import REPO


def _load_ledger() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ledger", REPO / "tools" / "ledger.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["ledger"] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


ledger = _load_ledger()


BOOK = """\
Some prose that mentions REQ-AAA-001 in passing.
REQ-AAA-001 First thing — M1 · T
Text of the first.
REQ-AAA-002 Second thing — M1 · T
REQ-AAA-003 Inspected thing — M1 · I
REQ-BBB-001 Later thing — M8 · T
REQ-BBB-002 Always thing — All · T
| REQ-AAA-001 | a table row, not a heading |
"""

TESTS = """\
def test_req_aaa_001_does_the_first_thing():
    pass

def helper_req_aaa_002_is_not_a_test():
    pass

class TestThings:
    def test_req_bbb_002_and_req_bbb_001_in_one_name(self):
        pass
"""


def _fake(
    tmp_path: Path,
    tests: str = TESTS,
    waivers: str = '[not_yet_delivered]\nM8 = "not yet"\n',
    book: str = BOOK,
) -> tuple[Path, Path, Path]:
    book_path = tmp_path / "book.txt"
    book_path.write_text(book, encoding="utf-8")
    folder = tmp_path / "tests"
    folder.mkdir()
    (folder / "test_things.py").write_text(tests, encoding="utf-8")
    (folder / "helpers.py").write_text(
        "def test_req_aaa_002_not_collected():\n    pass\n", encoding="utf-8"
    )
    waiver_path = tmp_path / "waivers.toml"
    waiver_path.write_text(waivers, encoding="utf-8")
    list_path = tmp_path / "requirements.tsv"
    ledger.refresh(book_path, list_path)
    return list_path, folder, waiver_path


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(REPO / "tools" / "ledger.py"), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


# -- the gate on the real book and the real tests -------------------------------------------


def test_req_test_001_every_t_requirement_of_a_delivered_milestone_has_a_test() -> None:
    rows = ledger.load()
    gaps = ledger.missing(rows)
    assert not gaps, (
        "T requirements of delivered milestones without a test named after them: "
        + ", ".join(f"{r.requirement.id} ({r.requirement.milestone})" for r in gaps)
    )
    # The gate is only as good as its reading: the book has about 160 T requirements.
    assert len(rows) >= 150 and sum(r.required for r in rows) >= 140


def test_req_test_001_the_committed_list_is_the_book_s_headings_as_generated() -> None:
    text = ledger.REQUIREMENTS.read_text(encoding="utf-8")
    requirements = ledger.read_list(text)  # raises on a line it cannot read
    by_id = {r.id: r for r in requirements}
    assert by_id["REQ-PAGE-006"] == ledger.Requirement(
        "REQ-PAGE-006", "Malformed content", "M3", "T"
    )
    assert by_id["REQ-SEC-023"].method == "D" and by_id["REQ-ARCH-004"].milestone == "All"
    assert len(requirements) >= 200
    # Generated, not edited: the list is exactly what --refresh writes for its rows, and
    # it says where it comes from and how to refresh it.
    header = [line for line in text.splitlines() if line.startswith("#")]
    digest = header[3].split("sha256 ")[1].split(")")[0]
    assert text == ledger.render_list(requirements, "rypsok-book.txt", digest)
    assert len(digest) == 64 and "--refresh --book" in "\n".join(header)


# -- the gate can fail, and for the right reasons -------------------------------------------


def test_req_test_001_gate_names_the_t_requirement_without_a_test(tmp_path: Path) -> None:
    book, tests, waivers = _fake(tmp_path)
    rows = ledger.load(book, tests, waivers)
    status = {r.requirement.id: r.status for r in rows}
    # REQ-AAA-003 is I: not in the ledger. REQ-AAA-002 has only a helper and a test in a
    # file pytest does not collect. REQ-BBB-001 is M8: listed with its test, not required.
    assert status == {
        "REQ-AAA-001": "covered",
        "REQ-AAA-002": "MISSING",
        "REQ-BBB-001": "later",
        "REQ-BBB-002": "covered",
    }
    assert [str(t) for t in rows[3].tests] == [
        "test_things.py::TestThings::test_req_bbb_002_and_req_bbb_001_in_one_name"
    ]

    proc = _run(
        "--missing", "--requirements", str(book), "--tests", str(tests), "--waivers", str(waivers)
    )
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[0].startswith("REQ-AAA-002")
    assert "uncovered 1" in proc.stdout

    (tests / "test_more.py").write_text(
        "async def test_req_aaa_002_now():\n    pass\n", encoding="utf-8"
    )
    proc = _run("--requirements", str(book), "--tests", str(tests), "--waivers", str(waivers))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "uncovered 0" in proc.stdout


def test_req_test_001_an_undelivered_milestone_becomes_required_when_its_line_goes(
    tmp_path: Path,
) -> None:
    book, tests, waivers = _fake(
        tmp_path,
        tests="def test_req_aaa_001_a():\n    pass\n"
        "def test_req_aaa_002_b():\n    pass\n"
        "def test_req_bbb_002_c():\n    pass\n",
    )
    assert not ledger.missing(ledger.load(book, tests, waivers))
    waivers.write_text("[not_yet_delivered]\n", encoding="utf-8")
    assert [r.requirement.id for r in ledger.missing(ledger.load(book, tests, waivers))] == [
        "REQ-BBB-001"
    ]


def test_req_test_001_only_whole_ids_in_test_names_count() -> None:
    assert ledger.ids_in("test_req_mcp_001_req_mcp_006_sdk_client") == {
        "REQ-MCP-001",
        "REQ-MCP-006",
    }
    assert ledger.ids_in("test_x_req_sec_001") == {"REQ-SEC-001"}
    assert ledger.ids_in("test_prereq_sec_001_x") == set()
    assert ledger.ids_in("test_req_sec_0011_x") == set()
    assert ledger.ids_in("test_req_sec_01_x") == set()
    assert ledger.ids_in("test_REQ_SEC_001_x") == set()


def test_req_test_001_waivers_must_name_t_requirements_with_a_reason(tmp_path: Path) -> None:
    requirements = ledger.read_requirements(BOOK)
    ok = ledger.read_waivers('[waived]\n"REQ-AAA-002" = "cannot be met in Python"\n', requirements)
    rows = ledger.build(requirements, [], ok)
    assert {r.requirement.id: r.status for r in rows}["REQ-AAA-002"] == "waived"
    for text, complaint in [
        ('[waived]\n"REQ-AAA-003" = "an I requirement"\n', "not a T requirement"),
        ('[waived]\n"REQ-ZZZ-009" = "gone from the book"\n', "not a T requirement"),
        ('[waived]\n"REQ-AAA-001" = " "\n', "needs its reason"),
        ('[not_yet_delivered]\nM9 = "no such milestone"\n', "not a milestone"),
        ('[not_yet_delivered]\nAll = "cannot be postponed"\n', "not a milestone"),
        ('[exempt]\nM1 = "an unknown table"\n', "unknown tables"),
    ]:
        with pytest.raises(ledger.LedgerError, match=complaint):
            ledger.read_waivers(text, requirements)


def test_req_test_001_a_book_it_cannot_read_stops_the_gate() -> None:
    with pytest.raises(ledger.LedgerError, match="no requirement heading"):
        ledger.read_requirements("A page with no requirement on it.\n")
    with pytest.raises(ledger.LedgerError, match="two headings"):
        ledger.read_requirements(BOOK + "REQ-AAA-001 Again — M2 · T\n")
    with pytest.raises(ledger.LedgerError, match="line 2 looks like a requirement heading"):
        ledger.read_requirements("REQ-AAA-001 Fine — M1 · T\nREQ-AAA-002 Drifted — M1 T\n")


def test_ledger_prints_the_table_for_humans() -> None:
    proc = _run()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert any(line.startswith("REQ-PAGE-006   M3  covered") for line in lines)
    assert lines[-1].startswith("T requirements: ")


# -- the list is refreshed from a book given explicitly, and read back as written ----------


def test_req_test_001_refresh_writes_the_list_from_the_book_given(tmp_path: Path) -> None:
    book = tmp_path / "a-book.txt"
    book.write_text(BOOK, encoding="utf-8")
    target = tmp_path / "requirements.tsv"
    proc = _run("--refresh", "--book", str(book), "--requirements", str(target))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "5 requirements written" in proc.stdout
    text = target.read_text(encoding="utf-8")
    rows = [line.split("\t") for line in text.splitlines() if not line.startswith("#")]
    assert rows == [
        ["id", "milestone", "method", "title"],
        ["REQ-AAA-001", "M1", "T", "First thing"],
        ["REQ-AAA-002", "M1", "T", "Second thing"],
        ["REQ-AAA-003", "M1", "I", "Inspected thing"],
        ["REQ-BBB-001", "M8", "T", "Later thing"],
        ["REQ-BBB-002", "All", "T", "Always thing"],
    ]
    assert "(a-book.txt, sha256 " in text and "--refresh --book" in text
    assert ledger.read_list(text) == ledger.read_requirements(BOOK)
    # The list and the book it came from give the same ledger.
    folder, waivers = tmp_path / "tests", tmp_path / "waivers.toml"
    folder.mkdir()
    (folder / "test_x.py").write_text(TESTS, encoding="utf-8")
    waivers.write_text("", encoding="utf-8")
    from_list = ledger.load(target, folder, waivers)
    from_book = ledger.load(tmp_path / "absent.tsv", folder, waivers, book=book)
    assert [(r.requirement, r.status) for r in from_list] == [
        (r.requirement, r.status) for r in from_book
    ]
    # A book that drifted does not overwrite the list.
    book.write_text(BOOK + "REQ-AAA-009 Drifted — M1 T\n", encoding="utf-8")
    proc = _run("--refresh", "--book", str(book), "--requirements", str(target))
    assert proc.returncode == 1 and "looks like a requirement heading" in proc.stderr
    assert target.read_text(encoding="utf-8") == text


def test_req_test_001_refresh_needs_a_book_named_explicitly(tmp_path: Path) -> None:
    target = tmp_path / "requirements.tsv"
    proc = _run("--refresh", "--requirements", str(target))
    assert proc.returncode == 2 and "--refresh needs --book" in proc.stderr
    assert not target.exists()
    source = (REPO / "tools" / "ledger.py").read_text(encoding="utf-8")
    assert "shared" not in source and "/work" not in source


def test_req_test_001_a_list_it_cannot_read_stops_the_gate() -> None:
    good = "# a comment\nid\tmilestone\tmethod\ttitle\nREQ-AAA-001\tM1\tT\tFirst\n"
    assert ledger.read_list(good) == [ledger.Requirement("REQ-AAA-001", "First", "M1", "T")]
    for text, complaint in [
        ("REQ-AAA-001\tM1\tT\tFirst\n", "line 1: expected the column names"),
        (good + "REQ-AAA-002\tM1\tT\n", "line 4: expected four columns"),
        (good + "REQ-AAA-002\tM10\tT\tX\n", "line 4: not an id"),
        (good + "REQ-AAA-2\tM1\tT\tX\n", "line 4: not an id"),
        (good + "REQ-AAA-002\tM1\tTT\tX\n", "line 4: not an id"),
        (good + "REQ-AAA-002\tM1\tT\t \n", "line 4: not an id"),
        (good + "REQ-AAA-001\tM2\tT\tAgain\n", "REQ-AAA-001 is listed twice"),
        ("# only a comment\nid\tmilestone\tmethod\ttitle\n", "holds no requirement"),
    ]:
        with pytest.raises(ledger.LedgerError, match=complaint):
            ledger.read_list(text)
