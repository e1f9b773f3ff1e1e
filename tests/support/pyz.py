"""The release artifact as tests get it: build_zipapp.py loaded as a module (`bz`), and
rypsok.pyz built by it once per build name per test session."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.support.paths import REPO

BUILD_TIMEOUT_S = 300


def _load_build_zipapp() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_zipapp", REPO / "build_zipapp.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["build_zipapp"] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


bz = _load_build_zipapp()


def _build(out: Path, *options: str) -> Path:
    proc = subprocess.run(
        [sys.executable, str(REPO / "build_zipapp.py"), *options, "--out", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
        check=False,
    )
    assert proc.returncode == 0, f"build_zipapp.py failed:\n{proc.stderr}"
    return out / "rypsok.pyz"


# One build per name per test session, shared with the modules that import
# built_pyz (tests/packaging/test_supply_chain.py reads the dist-infos of "build-a").
_BUILT: dict[str, Path] = {}
# The build that also writes the redis kind beside the plain file.
_OPTIONS = {"build-a": ("--with", "redis")}
REDIS_PYZ = "rypsok-redis.pyz"


def built_pyz(tmp_path_factory: pytest.TempPathFactory, name: str = "build-a") -> Path:
    """rypsok.pyz of the named build (built once per session)."""
    if name not in _BUILT:
        _BUILT[name] = _build(tmp_path_factory.mktemp(name), *_OPTIONS.get(name, ()))
    return _BUILT[name]


def built_redis_pyz(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """rypsok-redis.pyz, written beside build-a's rypsok.pyz by the same run."""
    return built_pyz(tmp_path_factory, "build-a").parent / REDIS_PYZ
