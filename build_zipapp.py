"""Build dist/rypsok.pyz, reproducibly, and dist/SHA256SUMS.

Run it with the dev interpreter (`.venv/bin/python build_zipapp.py`, after
`tools/setup`): it needs pip, setuptools and shiv there. What it does:

1. installs the hashed runtime closure (requirements.lock) into a clean
   temporary folder, wheels only, no dependency resolution of its own;
2. builds the project from a copy of its sources (so the work tree gets no
   build/ or egg-info) and installs it into the same folder;
3. removes what differs from one build to the next (byte code, installer
   records, console scripts whose shebang names this machine's interpreter);
4. runs shiv with --reproducible and a fixed SOURCE_DATE_EPOCH, so two builds
   of one tree give the same bytes, then writes SHA256SUMS.

The pyz carries compiled wheels (pydantic-core, rpds-py, cffi, cryptography),
so it runs on the platform and CPython minor version it was built with.
Standard library only: pip and shiv run as `sys.executable -m ...`.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
LOCK = ROOT / "requirements.lock"
PYZ_NAME = "rypsok.pyz"
ENTRY_POINT = "rypsok.cli:main"
SHEBANG = "/usr/bin/env python3"
# Used when there is no git history to date the build (1980-01-02, the zip
# format's epoch plus a day so that no time zone pushes it before 1980).
FALLBACK_EPOCH = 315619200
# What the project's wheel is built from; everything else stays out.
PROJECT_FILES = ("pyproject.toml", "README.md", "LICENSE", "LICENSE-MIT", "LICENSE-APACHE")
# Files pip writes that name this machine or this moment, not the package.
VOLATILE_DIST_INFO = ("INSTALLER", "REQUESTED", "direct_url.json")


class BuildError(Exception):
    """A step failed; the message says which and why."""


def run(cmd: list[str], what: str, env: dict[str, str] | None = None) -> None:
    """Run a command; its output goes to our stderr, a failure ends the build."""
    try:
        subprocess.run(cmd, check=True, stdout=sys.stderr, env=env)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise BuildError(f"{what} failed: {exc}") from exc


def source_date_epoch() -> int:
    """The last commit's time, so a rebuild of one commit is byte-identical."""
    if "SOURCE_DATE_EPOCH" in os.environ:
        return int(os.environ["SOURCE_DATE_EPOCH"])
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "log", "-1", "--format=%ct"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        return max(int(out), FALLBACK_EPOCH)
    except (OSError, subprocess.CalledProcessError, ValueError):
        return FALLBACK_EPOCH


def copy_project(dest: Path) -> None:
    """Copy the files the wheel is built from, without caches."""
    for name in PROJECT_FILES:
        if (ROOT / name).is_file():
            shutil.copy2(ROOT / name, dest / name)
    shutil.copytree(
        ROOT / "rypsok",
        dest / "rypsok",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo"),
    )


def scrub(site: Path) -> None:
    """Remove everything that varies between two installs of the same files."""
    # Console scripts: their shebang is this interpreter's absolute path.
    shutil.rmtree(site / "bin", ignore_errors=True)
    for cache in sorted(site.rglob("__pycache__"), reverse=True):
        shutil.rmtree(cache)
    for pyc in site.rglob("*.py[co]"):
        pyc.unlink()
    for dist_info in site.glob("*.dist-info"):
        for name in VOLATILE_DIST_INFO:
            (dist_info / name).unlink(missing_ok=True)
        record = dist_info / "RECORD"
        if record.is_file():
            # Keep only the lines for files that are still there.
            kept = []
            for line in record.read_text(encoding="utf-8").splitlines():
                entry = line.rsplit(",", 2)[0].strip('"')
                target = (site / entry).resolve()
                if target.is_relative_to(site.resolve()) and target.is_file():
                    kept.append(line)
            record.write_text("\n".join(sorted(kept)) + "\n", encoding="utf-8")
    # Modes follow the umask at install time; make them independent of it.
    for path in site.rglob("*"):
        if path.is_dir():
            path.chmod(0o755)
        elif path.is_file():
            path.chmod(0o755 if path.stat().st_mode & 0o100 else 0o644)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def build(out_dir: Path) -> Path:
    if not LOCK.is_file():
        raise BuildError(f"{LOCK} is missing")
    for module in ("pip", "shiv", "setuptools"):
        found = subprocess.run(
            [sys.executable, "-c", f"import {module}"], capture_output=True
        ).returncode
        if found != 0:
            raise BuildError(
                f"{module} is not installed for {sys.executable}; "
                "run tools/setup and use .venv/bin/python"
            )

    epoch = source_date_epoch()
    env = dict(os.environ, SOURCE_DATE_EPOCH=str(epoch), PYTHONDONTWRITEBYTECODE="1")
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input"]

    with tempfile.TemporaryDirectory(prefix="rypsok-zipapp-") as tmp:
        work = Path(tmp)
        site = work / "site-packages"
        src = work / "src"
        site.mkdir()
        src.mkdir()

        run(
            [
                *pip,
                "install",
                "-qq",
                "--no-compile",
                "--require-hashes",
                "--no-deps",
                "--only-binary=:all:",
                "--target",
                str(site),
                "-r",
                str(LOCK),
            ],
            "installing requirements.lock",
            env,
        )
        copy_project(src)
        # --no-build-isolation: build with the locked setuptools of this
        # interpreter instead of whatever a fresh isolated build would fetch.
        run(
            [
                *pip,
                "install",
                "-qq",
                "--no-compile",
                "--no-deps",
                "--no-build-isolation",
                "--target",
                str(site),
                str(src),
            ],
            "installing the project",
            env,
        )
        scrub(site)

        staged = work / PYZ_NAME
        run(
            [
                sys.executable,
                "-m",
                "shiv",
                "--reproducible",
                "--compressed",
                "--site-packages",
                str(site),
                "-e",
                ENTRY_POINT,
                "-p",
                SHEBANG,
                "-o",
                str(staged),
            ],
            "shiv",
            env,
        )
        out_dir.mkdir(parents=True, exist_ok=True)
        pyz = out_dir / PYZ_NAME
        shutil.copyfile(staged, pyz)
        pyz.chmod(0o755)

    (out_dir / "SHA256SUMS").write_text(f"{sha256_of(pyz)}  {PYZ_NAME}\n", encoding="ascii")
    return pyz


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build rypsok.pyz reproducibly with shiv.")
    parser.add_argument("--out", type=Path, help="output folder (default: dist in the repo)")
    args = parser.parse_args(argv)
    try:
        pyz = build((args.out or ROOT / "dist").resolve())
    except BuildError as exc:
        print(f"build_zipapp: {exc}", file=sys.stderr)
        return 1
    print(f"build_zipapp: wrote {pyz} ({pyz.stat().st_size} bytes)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
