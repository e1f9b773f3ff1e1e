"""Shared helpers: run the command line in-process or as a child process."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"


class FakeClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self, start: float = 0.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


@dataclass
class Run:
    code: int
    out: str
    err: str

    @property
    def lines(self) -> list[str]:
        return self.err.splitlines()


def clean_env(**extra: str) -> dict[str, str]:
    """A minimal environment: no RYPSOK_CONFIG, no keys, no proxies."""
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "SYSTEMROOT")}
    env.update(extra)
    return env


def check(path: Path | str | None, env: Mapping[str, str] | None = None) -> Run:
    """rypsok check, in-process."""
    from rypsok.checkcmd import run_check

    err = io.StringIO()
    code = run_check(None if path is None else str(path), clean_env() if env is None else env, err)
    return Run(code, "", err.getvalue())


def cli(
    *args: str,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    timeout: float = 60,
) -> Run:
    """python -m rypsok as a child process."""
    proc = subprocess.run(
        [sys.executable, "-m", "rypsok", *args],
        input=stdin if stdin is not None else b"",
        capture_output=True,
        env=dict(clean_env() if env is None else env),
        cwd=REPO,
        timeout=timeout,
        check=False,
    )
    return Run(
        proc.returncode,
        proc.stdout.decode("utf-8", "replace"),
        proc.stderr.decode("utf-8", "replace"),
    )


@pytest.fixture
def write_config(tmp_path: Path):  # type: ignore[no-untyped-def]
    def write(text: str | bytes, name: str = "rypsok.toml") -> Path:
        path = tmp_path / name
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        return path

    return write
