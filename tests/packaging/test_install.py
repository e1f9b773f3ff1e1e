"""Installing from the checkout the way a person would (issue 18, item 1).

`pip install .` into a fresh virtual environment, with another version of a
dependency already asked for beside it: pyproject.toml's ranges, not exact pins,
let the resolver agree. The installed command then answers --version, check and
status, none of which reaches the network. The install itself reads the package
registry (the one network CI has).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import venv
from pathlib import Path

import pytest

from tests.support.paths import REPO
from tests.support.run import clean_env

SOURCE = ("rypsok", "pyproject.toml", "README.md", "LICENSE", "LICENSE-MIT", "LICENSE-APACHE")
# Not the lock's 3.5.3: an environment that needs an older release of a shared package.
BESIDE = "charset-normalizer==3.4.0"


def _checkout_copy(tmp_path: Path) -> Path:
    # A copy, so the build's egg-info and build/ never land in the repository.
    tree = tmp_path / "src"
    tree.mkdir()
    for name in SOURCE:
        path = REPO / name
        if path.is_dir():
            shutil.copytree(path, tree / name, ignore=shutil.ignore_patterns("__pycache__"))
        elif path.exists():
            shutil.copy2(path, tree / name)
    return tree


@pytest.mark.slow
def test_issue_18_pip_install_into_a_fresh_venv_beside_other_packages(tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    install = subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            str(_checkout_copy(tmp_path)),
            BESIDE,
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert install.returncode == 0, install.stderr[-2000:]
    frozen = subprocess.run(
        [str(python), "-m", "pip", "freeze"], capture_output=True, text=True, check=True
    ).stdout
    assert BESIDE in frozen.splitlines()
    assert any(line.startswith("mcp==2.3.") for line in frozen.splitlines())
    command = env_dir / "bin" / "rypsok"
    env = clean_env()

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(command), *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=120,
            check=False,
        )

    assert run("--version").stdout.startswith("rypsok ")
    assert run("check").returncode == 0
    status = run("status", "--json")
    assert status.returncode == 0, status.stderr
    assert {e["id"] for e in json.loads(status.stdout)["engines"]} == {
        "brave",
        "searxng",
        "wikipedia",
    }
