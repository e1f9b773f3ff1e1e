"""Run the command line in-process (check) or as a child process (python -m rypsok)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tests.support.paths import REPO


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
    from rypsok.commands.check import run_check

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
