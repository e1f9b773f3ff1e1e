"""The core never imports the protocol stack; stdout carries protocol messages only."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "rypsok"
FORBIDDEN_IN_CORE = (
    "mcp",
    "mcp_types",
    "starlette",
    "uvicorn",
    "sse_starlette",
    "httpx",
    "httpx2",
    "requests",
    "urllib.request",
    "http.client",
)
# The one place that may write to stdout outside the SDK: the --version line.
STDOUT_ALLOWED = {("cli.py", "sys.stdout")}


def _sources(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py"))


def _imports(tree: ast.AST) -> list[str]:
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def test_req_arch_005_core_imports_no_protocol_or_http_server_package() -> None:
    offenders = []
    for path in _sources(PACKAGE / "core"):
        for name in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if any(name == f or name.startswith(f + ".") for f in FORBIDDEN_IN_CORE):
                offenders.append(f"{path.relative_to(PACKAGE)}: {name}")
    assert offenders == []


def test_req_mcp_002_no_print_or_stdout_write_in_the_package() -> None:
    offenders = []
    for path in _sources(PACKAGE):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and (node.func.id == "print")
            ):
                offenders.append(f"{path.name}:{node.lineno}: print(")
            if (
                isinstance(node, ast.Attribute)
                and node.attr in ("stdout", "__stdout__")
                and isinstance(node.value, ast.Name)
                and node.value.id == "sys"
                and (path.name, "sys.stdout") not in STDOUT_ALLOWED
            ):
                offenders.append(f"{path.name}:{node.lineno}: sys.{node.attr}")
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and (
                    node.func.attr == "write"
                    and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "os"
                    and node.args
                    and isinstance(node.args[0], ast.Constant)
                    and node.args[0].value == 1
                )
            ):
                offenders.append(f"{path.name}:{node.lineno}: os.write(1, ...)")
    assert offenders == []


def test_req_mcp_002_the_layering_test_catches_a_forbidden_import(tmp_path: Path) -> None:
    # The walker above must see through `from x import y` and dotted imports.
    tree = ast.parse("import mcp.server\nfrom starlette.requests import Request\n")
    assert _imports(tree) == ["mcp.server", "starlette.requests"]


def test_req_sec_005_one_outbound_component_opens_connections() -> None:
    """Only the engine client (net/client.py) connects anywhere; every other module asks it."""
    connectors = {
        "connect_tcp",
        "create_connection",
        "open_connection",
        "connect_ex",
        "create_default_context",
        "urlopen",
        "getaddrinfo",
    }
    offenders = []
    for path in _sources(PACKAGE):
        if path.relative_to(PACKAGE).as_posix() in ("core/net/client.py", "core/net/tls.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in connectors:
                offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {node.attr}")
    assert offenders == []


def test_req_test_012_the_test_command_runs_lints_types_and_tests() -> None:
    root = PACKAGE.parent
    script = (root / "tools" / "test").read_text(encoding="utf-8")
    assert "ruff check" in script and "mypy" in script and "pytest" in script
    assert (root / ".ci" / "run").read_text(encoding="utf-8").count("tools/test") == 1
    pyproject = (root / "pyproject.toml").read_text(encoding="utf-8")
    assert '"T20"' in pyproject  # the lint that forbids print in project code


def test_req_test_012_the_test_command_checks_formatting_and_the_tree_passes() -> None:
    root = PACKAGE.parent
    script = (root / "tools" / "test").read_text(encoding="utf-8")
    assert 'ruff format --check "${paths[@]}"' in script  # the same paths as the lints
    ruff = Path(sys.executable).parent / "ruff"
    done = subprocess.run(
        [str(ruff), "format", "--check", "--quiet", str(PACKAGE)],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
