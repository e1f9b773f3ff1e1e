"""The core never imports the protocol stack; stdout carries protocol messages only; the
package's layers point one way (REQ-ARCH-001, issue 15).

The layer order, lowest first (`LAYERS` below is the table the test reads):

0. foundation: the limits table, the tag vocabulary (pure data), telemetry, URL disposal.
1. words and text: the caller-facing vocabulary (model), argument checks, the boundary and
   privacy checks on external text, the permits (parse threads, outbound requests).
2. net: host names, operator rules, the proxy's address, the egress policy, the client.
3. html: reading a page, shared by web_fetch and the scraping drivers (the charset and the
   legacy encodings, the bounded tree and its tokenizer; its vocabulary is foundation).
4. engine admission records (what a driver type may do; data only), below the rest of config.
5. config: reading, validating and reporting the configuration.
6. store: the state replicas share, and the values that cross its interface.
7. engines: the drivers and their health.
8. pipelines: fetch and search (extraction is fetch's own).
9. facade: `Rypsok`, which builds the pipelines and the egress policy from the configuration.
10. protocol: the MCP adapters (stdio, HTTP).
11. commands: the command line.

Every import is checked, at module level and inside functions. An import under
`if TYPE_CHECKING:` is exempt and may point anywhere: it is only read by the type checker,
for annotations, and never runs (a driver names `EngineSettings` that way, for example).

Packages form no cycle either, even within one layer: a directory of rypsok/core (with its
subpackages), a module at its top, and each package and module at the top of rypsok, with
the same imports; a package that imports another is never imported back, directly or around
a loop.
"""

from __future__ import annotations

import ast
import importlib.util
import itertools
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from tests.support.sources import parse_file

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "rypsok"
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
# The PDF reader's worker writes its answer to its own stdout, a pipe to the server
# (fetch/pdf/reader.py), never the protocol's channel: it runs in a process of its own.
STDOUT_ALLOWED = {("cli.py", "sys.stdout"), ("worker.py", "sys.stdout")}


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
        for name in _imports(parse_file(path)):
            if any(name == f or name.startswith(f + ".") for f in FORBIDDEN_IN_CORE):
                offenders.append(f"{path.relative_to(PACKAGE)}: {name}")
    assert offenders == []


def test_req_mcp_002_no_print_or_stdout_write_in_the_package() -> None:
    offenders = []
    for path in _sources(PACKAGE):
        tree = parse_file(path)
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
        for node in ast.walk(parse_file(path)):
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


# -- the layer order (REQ-ARCH-001) -------------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent

# Module name (or package prefix: the entry covers its submodules) -> layer. The longest
# matching entry wins, so `rypsok.core.config.admission` sits below the rest of config and
# `rypsok.core.html.vocabulary` below the rest of html.
LAYERS: dict[str, int] = {
    "rypsok": 0,  # the package itself: its version and project URL
    "rypsok.core.limits": 0,
    "rypsok.core.html.vocabulary": 0,
    "rypsok.core.telemetry": 0,
    "rypsok.core.disposal": 0,
    "rypsok.core.model": 1,
    "rypsok.core.arguments": 1,
    "rypsok.core.boundary": 1,
    "rypsok.core.privacy": 1,
    "rypsok.core.permits": 1,
    "rypsok.core.net": 2,
    "rypsok.core.html": 3,
    "rypsok.core.config.admission": 4,
    "rypsok.core.config": 5,
    "rypsok.core.store": 6,  # its values and robots rules too: drivers and pipelines read them
    "rypsok.core.oauth": 6,  # the resource server: the operator's identity provider, like the store
    "rypsok.core.engines": 7,
    "rypsok.core.fetch": 8,
    "rypsok.core.search": 8,
    "rypsok.core": 9,  # the package's own __init__ hands out Rypsok lazily
    "rypsok.core.facade": 9,
    "rypsok.protocol": 10,
    "rypsok.commands": 11,
    "rypsok.builtfor": 0,  # reads one file beside it; imports nothing of rypsok
    "rypsok.__main__": 11,
}

NAMES = (
    "foundation",
    "words and text",
    "net",
    "html",
    "admission records",
    "config",
    "store",
    "engines",
    "pipelines",
    "facade",
    "protocol",
    "commands",
)


def layer_of(module: str) -> int:
    """The layer of a module: its longest entry in LAYERS. Every module has one (the root
    entry `rypsok` catches a new top-level module, which must then be placed)."""
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        layer = LAYERS.get(".".join(parts[:end]))
        if layer is not None:
            return layer
    raise AssertionError(f"{module} is outside the package")


def module_name(path: Path) -> str:
    relative = path.relative_to(ROOT).with_suffix("")
    parts = list(relative.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_module(name: str) -> bool:
    """Whether `name` is a module of the package (a file or a package directory)."""
    base = ROOT.joinpath(*name.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _walk(node: ast.AST) -> Iterator[ast.AST]:
    """Every node below `node`, skipping the bodies of `if TYPE_CHECKING:` (their `else`
    branches run, so they are walked)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _type_checking_only(child):
            for other in child.orelse:
                yield other
                yield from _walk(other)
            continue
        yield child
        yield from _walk(child)


def imports_of(path: Path, name: str | None = None) -> Iterator[tuple[int, str]]:
    """(line, module) for every import of a `rypsok` module that can run, in functions too.

    `name` is the module the file is (by default, from its place in the tree).
    `from a.b import c` names the module a.b.c when c is a module, otherwise a.b."""
    name = name or module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = parse_file(path)
    for node in _walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "rypsok":
                    yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            if source.split(".")[0] != "rypsok":
                continue
            for alias in node.names:
                candidate = f"{source}.{alias.name}"
                yield node.lineno, candidate if _is_module(candidate) else source


def arrows_from(path: Path, importer: str) -> list[str]:
    """The imports of one file (the module `importer`) that point up the order."""
    here = layer_of(importer)
    return [
        f"{path.name}:{line}: {importer} ({NAMES[here]}) imports {imported} "
        f"({NAMES[layer_of(imported)]})"
        for line, imported in imports_of(path, importer)
        if layer_of(imported) > here
    ]


def arrows_against() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "__pycache__" not in path.parts:
            found += arrows_from(path, module_name(path))
    return found


def test_req_arch_001_every_import_points_down_the_layer_order() -> None:
    assert arrows_against() == []


def test_req_arch_001_the_walk_sees_an_arrow_against_the_order(tmp_path: Path) -> None:
    # The check itself, on a copy of net/egress.py read as that module: an import up the
    # order is caught at module level, in a function and by a relative import; one under
    # TYPE_CHECKING is not.
    target = PACKAGE / "core" / "net" / "egress.py"
    source = target.read_text(encoding="utf-8")
    importer = "rypsok.core.net.egress"
    assert arrows_from(target, importer) == []
    copy = tmp_path / "egress.py"
    cases = {
        "from rypsok.core.config.settings import Config\n": True,
        "def _up() -> None:\n    from rypsok.core.config import settings\n": True,
        "def _up() -> None:\n    from ..engines import base\n": True,
        "import rypsok.protocol.stdio\n": True,
        "if TYPE_CHECKING:\n    from rypsok.core.facade import Rypsok\n": False,
        "from rypsok.core.net import hostname\nfrom rypsok.core import limits\n": False,
    }
    for added, caught in cases.items():
        copy.write_text(f"{source}\n\n{added}", encoding="utf-8")
        assert bool(arrows_from(copy, importer)) is caught, added


def test_req_arch_001_every_top_level_module_has_a_layer() -> None:
    # A new subpackage inherits its parent's layer; a new top-level module falls to the
    # root entry and would then be checked as foundation, so list it here on purpose.
    top = {module_name(p) for p in PACKAGE.glob("*.py")} | {
        module_name(p / "__init__.py") for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()
    }
    assert top <= set(LAYERS), sorted(top - set(LAYERS))


# -- no cycle between packages (issue 32) ---------------------------------------------------


def package_of(module: str) -> str:
    """The package a module counts in: a directory of rypsok/core with its subpackages, or a
    module at its top; likewise one level up, for rypsok's own (protocol, commands)."""
    parts = module.split(".")
    return ".".join(parts[:3] if parts[:2] == ["rypsok", "core"] else parts[:2])


def package_graph(files: Iterable[tuple[Path, str]] | None = None) -> dict[str, dict[str, str]]:
    """Package -> each package it imports -> where (file:line, the first such import). The
    imports are those of the layer check: module level and in functions, TYPE_CHECKING
    exempt. `files` are (path, module) pairs, by default every module of the package."""
    if files is None:
        files = [
            (path, module_name(path))
            for path in sorted(PACKAGE.rglob("*.py"))
            if "__pycache__" not in path.parts
        ]
    graph: dict[str, dict[str, str]] = {}
    for path, importer in files:
        here = package_of(importer)
        arrows = graph.setdefault(here, {})
        for line, imported in imports_of(path, importer):
            there = package_of(imported)
            if there != here:
                arrows.setdefault(there, f"{path.name}:{line}")
                graph.setdefault(there, {})
    return graph


def cycles(graph: dict[str, dict[str, str]]) -> list[str]:
    """One line per loop of imports between packages, with the import behind each arrow: for
    every package in a group that import each other around (a strongly connected component
    of more than one), the shortest loop through it, each loop once."""

    def reach(start: str) -> set[str]:
        seen, todo = {start}, [start]
        while todo:
            for there in graph[todo.pop()]:
                if there not in seen:
                    seen.add(there)
                    todo.append(there)
        return seen

    def shortest_loop(start: str, group: set[str]) -> list[str]:
        # Breadth first inside the group, back to start.
        before: dict[str, str] = {}
        layer = [start]
        while start not in before:
            step = []
            for here in layer:
                for there in sorted(graph[here]):
                    if there in group and there not in before:
                        before[there] = here
                        step.append(there)
            layer = step
        loop, here = [start], before[start]
        while here != start:
            loop.append(here)
            here = before[here]
        return [start, *reversed(loop)]

    reached = {package: reach(package) for package in graph}
    loops: dict[tuple[str, ...], None] = {}
    for start in sorted(graph):
        group = {p for p in reached[start] if start in reached[p]}
        if len(group) > 1:
            loop = shortest_loop(start, group)
            first = loop.index(min(loop))  # the same loop from any of its packages
            loops[tuple(loop[first:] + loop[1 : first + 1])] = None
    return [
        " -> ".join([loop[0], *(f"{b} ({graph[a][b]})" for a, b in itertools.pairwise(loop))])
        for loop in loops
    ]


def test_req_arch_001_no_cycle_between_packages() -> None:
    assert cycles(package_graph()) == []


def test_req_arch_001_the_cycle_check_names_a_loop(tmp_path: Path) -> None:
    assert package_of("rypsok.core.fetch.extraction.prune") == "rypsok.core.fetch"
    assert package_of("rypsok.core.limits") == "rypsok.core.limits"
    assert package_of("rypsok.protocol.http.gate") == "rypsok.protocol"
    assert package_of("rypsok.__main__") == "rypsok.__main__"
    # The cycle this check was written for: the settings naming a driver's module while the
    # drivers read the settings. Read as config/settings.py, a copy with that one import.
    target = PACKAGE / "core" / "config" / "settings.py"
    importer = "rypsok.core.config.settings"
    files = [
        (path, name)
        for path in sorted(PACKAGE.rglob("*.py"))
        if "__pycache__" not in path.parts and (name := module_name(path)) != importer
    ]
    copy = tmp_path / "settings.py"
    copy.write_text(
        target.read_text(encoding="utf-8")
        + "\n\ndef _up() -> None:\n    from rypsok.core.engines import base\n",
        encoding="utf-8",
    )
    found = cycles(package_graph([*files, (copy, importer)]))
    named = r"rypsok\.core\.config -> rypsok\.core\.engines \(settings\.py:\d+\) -> "
    named += r"rypsok\.core\.config \(\w+\.py:\d+\)"
    assert any(re.fullmatch(named, loop) for loop in found), found
    # A loop is named once, from its first package; two loops through one package are two.
    three = {"a": {"b": "a.py:1"}, "b": {"c": "b.py:2"}, "c": {"a": "c.py:3", "d": "c.py:4"}}
    assert cycles({**three, "d": {}}) == ["a -> b (a.py:1) -> c (b.py:2) -> a (c.py:3)"]
    two = {"a": {"b": "a.py:1"}, "b": {"a": "b.py:1", "c": "b.py:2"}, "c": {"b": "c.py:1"}}
    assert cycles(two) == ["a -> b (a.py:1) -> a (b.py:1)", "b -> c (b.py:2) -> b (c.py:1)"]
    assert cycles({"a": {"b": "a.py:1"}, "b": {}}) == []


@pytest.mark.parametrize(
    "module",
    ["rypsok.core.config", "rypsok.core.config.settings", "rypsok.core.config.admission"],
)
def test_req_arch_001_reading_the_configuration_loads_no_parser_and_no_driver(module: str) -> None:
    # A fresh interpreter: the test run has loaded everything already.
    probe = f"import sys, {module}\nprint('\\n'.join(sorted(sys.modules)))\n"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    )
    loaded = set(done.stdout.split())
    assert module in loaded
    heavy = {m for m in loaded if m.split(".")[0] in ("html5lib", "charset_normalizer")}
    drivers = {
        m for m in loaded if m == "rypsok.core.engines" or m.startswith("rypsok.core.engines.")
    }
    # The tag vocabulary is pure data any layer may read (html's __init__ imports nothing).
    data = {"rypsok.core.html", "rypsok.core.html.vocabulary"}
    pipelines = {
        m
        for m in loaded
        if m.startswith(("rypsok.core.fetch", "rypsok.core.search", "rypsok.core.html"))
    } - data
    assert (heavy, drivers, pipelines) == (set(), set(), set())
    assert importlib.util.find_spec("rypsok.core.engines.wikipedia") is not None


def test_only_sdk_private_imports_a_private_name_of_the_sdk() -> None:
    # Issue 32: one module holds every private part of mcp the code reaches for, checked
    # against the SDK's version at import (rypsok/protocol/sdk_private.py). Tests may
    # still reach into the SDK to compare with it; the package and its tools may not.
    def private(source: str) -> list[str]:
        found = []
        for node in ast.walk(ast.parse(source)):
            named: list[str] = []
            if isinstance(node, ast.Import):
                named = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                named = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            for name in named:
                parts = name.split(".")
                if parts[0] in ("mcp", "mcp_types") and any(p.startswith("_") for p in parts):
                    found.append(name)
        return found

    assert private("from mcp.server._streamable_http_modern import handle_modern_request")
    assert private("import mcp.shared._context_streams")
    assert private("from mcp.server.streamable_http import _x")
    assert not private("from mcp.server.streamable_http import MCP_SESSION_ID_HEADER")
    allowed = PACKAGE / "protocol" / "sdk_private.py"
    sources = [*_sources(PACKAGE), ROOT / "build_zipapp.py"]
    for folder in (ROOT / "bench", ROOT / "tools", ROOT / "fuzz"):
        sources += _sources(folder) if folder.is_dir() else []
    for script in (ROOT / "tools").iterdir():  # tools' scripts without .py
        if script.is_file() and not script.suffix and b"python" in script.read_bytes()[:80]:
            sources.append(script)
    offenders = {
        str(path.relative_to(ROOT)): names
        for path in sources
        if path != allowed and (names := private(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}
