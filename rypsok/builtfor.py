"""Is this pyz for this machine? Checked before anything compiled is imported.

A release pyz carries compiled modules for one CPython minor version on one
system and CPU, and build_zipapp.py writes which into `built-for.txt` beside
this module ("3.12 linux x86_64"). Run elsewhere, the first import of a
compiled module would fail with a traceback, or worse, load; instead the
command line says in one line what the file is for and what this machine is.
A source checkout or an installed package has no such file: nothing to check.
"""

from __future__ import annotations

import platform
import sys
from pathlib import Path

BUILT_FOR = Path(__file__).resolve().parent / "built-for.txt"
_CPUS = {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64", "aarch64": "aarch64"}


def this_machine() -> tuple[str, str, str]:
    """(CPython minor version, system, CPU) in build_zipapp.py's words."""
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    cpu = platform.machine().lower()
    if sys.platform == "darwin":
        return python, "macos", "arm64" if cpu in ("arm64", "aarch64") else cpu
    if sys.platform == "win32":
        return python, "windows", _CPUS.get(cpu, cpu)
    libc, _ = platform.libc_ver()
    return python, "linux" if libc == "glibc" else "musllinux", _CPUS.get(cpu, cpu)


def mismatch(path: Path | None = None) -> str | None:
    """The one line to print when this file is not for this machine, else None."""
    try:
        words = (path or BUILT_FOR).read_text(encoding="ascii").split()
    except (OSError, UnicodeDecodeError):
        return None
    if len(words) != 3:
        return None
    here = this_machine()
    if tuple(words) == here:
        return None
    python, system, cpu = words
    return (
        f"rypsok: this file is for CPython {python} on {system}-{cpu}, and this is "
        f"CPython {here[0]} on {here[1]}-{here[2]}: take the release file for this machine"
    )
