"""Test modules stand alone (issue 32): what tests share lives in tests/support/, and no module
of tests/, bench/, tools/ or fuzz/ imports a test module, conftest.py included. A helper
kept in a test module ties its importers to that module's tests and fixtures; moved to
tests/support/, it has one home that every user names.

Every import is read from the source, at module level, inside functions and under
`if TYPE_CHECKING:`, relative ones resolved; `importlib.import_module` with a literal name
counts too. bench/, tools/ and fuzz/ run as modules from the repository's root
(`python -m bench.soak`), so none of them edits `sys.path` to find tests/support/.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.paths import REPO
from tests.support.sources import parse_file

FOLDERS = ("tests", "bench", "tools", "fuzz")
# Where the programs are that run beside the tests and may import tests/support/ only.
PROGRAMS = ("bench", "tools", "fuzz")


def python_files(root: Path, folders: tuple[str, ...] = FOLDERS) -> list[Path]:
    """The .py files of the folders, and scripts without a suffix whose first line runs
    python (tools/live-check)."""
    found = []
    for folder in folders:
        for path in sorted((root / folder).rglob("*")):
            if not path.is_file() or "__pycache__" in path.parts:
                continue
            if path.suffix == ".py" or (path.suffix == "" and _runs_python(path)):
                found.append(path)
    return found


def _runs_python(path: Path) -> bool:
    with path.open("rb") as file:
        first = file.readline(200)
    return first.startswith(b"#!") and b"python" in first


def _import_module_name(node: ast.Call) -> str | None:
    """The literal name given to importlib.import_module, if that is the call."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name != "import_module" or not node.args:
        return None
    first = node.args[0]
    return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None


def imports_of(path: Path, root: Path) -> Iterator[tuple[int, str]]:
    """(line, module) of each import in the file, relative ones made absolute; for
    `from package import name`, package.name too (the name may be a module)."""
    tree = parse_file(path)
    package = list(path.relative_to(root).parent.parts)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            yield node.lineno, module
            for alias in node.names:
                yield node.lineno, f"{module}.{alias.name}"
        elif isinstance(node, ast.Call) and (name := _import_module_name(node)):
            yield node.lineno, name


def is_test_module(module: str) -> bool:
    """A module or package of tests/ outside tests/support/: conftest.py is one."""
    parts = module.split(".")
    return parts[0] == "tests" and len(parts) > 1 and parts[1] != "support"


def imports_of_test_modules(root: Path = REPO) -> list[str]:
    found: dict[str, str] = {}
    for path in python_files(root):
        for line, module in imports_of(path, root):
            where = f"{path.relative_to(root)}:{line}"
            if is_test_module(module) and len(module) < len(found.get(where, module + ".")):
                found[where] = module  # one line, one entry: the module, not each name
    return [f"{where}: imports {module}" for where, module in sorted(found.items())]


def _names_sys_path(node: ast.AST) -> bool:
    if isinstance(node, ast.Attribute):
        return node.attr == "path" and isinstance(node.value, ast.Name) and node.value.id == "sys"
    if isinstance(node, ast.ImportFrom):
        return node.module == "sys" and any(a.name == "path" for a in node.names)
    return False


def sys_path_edits(root: Path = REPO) -> list[str]:
    found = []
    for path in python_files(root, PROGRAMS):
        tree = parse_file(path)
        found += [
            f"{path.relative_to(root)}:{getattr(node, 'lineno', 0)}: sys.path"
            for node in ast.walk(tree)
            if _names_sys_path(node)
        ]
    return found


def test_issue_32_no_module_imports_a_test_module() -> None:
    assert imports_of_test_modules() == []


def test_issue_32_bench_tools_and_fuzz_leave_sys_path_alone() -> None:
    assert sys_path_edits() == []


@pytest.mark.parametrize(
    ("where", "source", "caught"),
    [
        ("tests/core/test_b.py", "from tests.core.test_a import helper\n", True),
        ("tests/core/test_b.py", "def f() -> None:\n    import tests.core.test_a\n", True),
        ("tests/core/test_b.py", "from .test_a import helper\n", True),
        ("tests/core/test_b.py", "from . import test_a\n", True),
        ("tests/core/test_b.py", "from tests.conftest import cli\n", True),
        ("tests/core/test_b.py", "from tests import conftest\n", True),
        ("tests/core/test_b.py", "if TYPE_CHECKING:\n    from tests.e2e.x import Y\n", True),
        ("tests/core/test_b.py", "importlib.import_module('tests.docs.test_docs')\n", True),
        ("tests/support/x.py", "from tests.core.test_a import helper\n", True),
        ("bench/x.py", "from tests.e2e.replicas import call\n", True),
        ("tools/x.py", "def f() -> None:\n    from tests.core.fetch.test_fetch import A\n", True),
        ("tests/core/test_b.py", "from tests.support.run import cli\n", False),
        ("tests/core/test_b.py", "from tests.support import paths\n", False),
        ("tests/support/x.py", "from . import paths\n", False),
        ("tests/conftest.py", "from tests.support.lanes import VARIABLE\n", False),
        ("bench/x.py", "from tests.support.replicas import call\n", False),
    ],
)
def test_issue_32_the_layout_check_sees_a_test_module_imported(
    tmp_path: Path, where: str, source: str, caught: bool
) -> None:
    for folder in FOLDERS:
        (tmp_path / folder).mkdir()
    path = tmp_path / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source, encoding="utf-8")
    assert bool(imports_of_test_modules(tmp_path)) is caught


@pytest.mark.parametrize(
    ("source", "caught"),
    [
        ("import sys\nsys.path.insert(0, '.')\n", True),
        ("import sys\nsys.path = ['.']\n", True),
        ("from sys import path\n", True),
        ("import sys\nsys.exit(0)\n", False),
    ],
)
def test_issue_32_the_sys_path_check_sees_an_edit(
    tmp_path: Path, source: str, caught: bool
) -> None:
    for folder in FOLDERS:
        (tmp_path / folder).mkdir()
    (tmp_path / "tools" / "script").write_text("#!/usr/bin/env python3\n" + source)
    assert bool(sys_path_edits(tmp_path)) is caught
