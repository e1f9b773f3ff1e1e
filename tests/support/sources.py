"""Reading this repository's Python files into syntax trees, for the tests that check
what the code imports or writes.

CPython 3.11 keeps the recursion depth of its AST conversion in interpreter-wide state:
an `ast.parse` that overlaps another thread's compile can fail with "SystemError: AST
constructor recursion depth mismatch" (seen once in a full run, never alone). The file
is unchanged, so it is parsed again, once; a second failure is raised.
"""

from __future__ import annotations

import ast
from pathlib import Path


def parse_file(path: Path) -> ast.Module:
    text = path.read_text(encoding="utf-8")
    try:
        return ast.parse(text, str(path))
    except SystemError:
        return ast.parse(text, str(path))
