"""A script of bench/ loaded as a module, for the tests that read its options or reuse
its fixtures (bench/ is not a package)."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from tests.support.paths import REPO


def load_bench(script: str) -> ModuleType:
    """bench/<script>.py as the module `bench_<script>` (registered, so that its
    dataclasses and pickling find it)."""
    name = f"bench_{script}"
    spec = importlib.util.spec_from_file_location(name, REPO / "bench" / f"{script}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
