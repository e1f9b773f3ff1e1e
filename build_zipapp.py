"""Build rypsok.pyz files reproducibly, with a SHA256SUMS beside them.

Run it with the dev interpreter (`.venv/bin/python build_zipapp.py`, after
`tools/setup`): it needs pip, setuptools and shiv there. Two modes:

  build_zipapp.py                 dist/rypsok.pyz for this machine's platform
                                  and CPython, and dist/SHA256SUMS
  build_zipapp.py --platform      the release files, one per target, in
                                  dist/release/: rypsok-X.Y.Z-<python>-<platform>.pyz
                                  for CPython 3.11 to 3.14 on Linux (glibc
                                  and musl; x86_64, aarch64), macOS (arm64,
                                  x86_64) and Windows x86_64, and SHA256SUMS
                                  over all of them
  build_zipapp.py --platform --list   the files --platform would write
  build_zipapp.py --platform aarch64 --python 3.12   a subset of the targets
                                  (a bare CPU is Linux with glibc; else
                                  linux-, musllinux-, macos-, windows-<cpu>)
  build_zipapp.py --with redis    beside each file above, the one that also
                                  carries the redis extra (requirements-redis.lock):
                                  dist/rypsok-redis.pyz, or with --platform
                                  rypsok-redis-X.Y.Z-<python>-<platform>.pyz;
                                  SHA256SUMS then lists both kinds

What a build does:

1. installs the hashed runtime closure (requirements.lock) into a clean
   temporary folder, wheels only, no dependency resolution of its own; for a
   target it asks pip for that target's compiled wheels (pip --platform
   --python-version --implementation cp --abi), so nothing is compiled and
   the build machine's own platform does not matter; a target with no wheel
   for a locked pin takes the pins of its own lock in place of those
   (requirements-macos-arm64.lock, requirements-macos-x86_64.lock; see
   LOCK_OVERRIDES);
2. builds the project from a copy of its sources (so the work tree gets no
   build/ or egg-info) and installs it into the same folder;
3. removes what differs from one build to the next (byte code, installer
   records, console scripts whose shebang names this machine's interpreter);
   for a target, checks that every compiled module and shared library is
   for its CPU;
4. compiles the byte code for the target's interpreter when it is this
   interpreter's minor version (hash-checked mode, hash seed fixed), so the
   first run does not compile what it imports;
5. runs shiv with --reproducible and a fixed SOURCE_DATE_EPOCH, so two builds
   of one tree give the same bytes, then writes SHA256SUMS;
6. with --with redis, after the plain file is packed, installs the extra's
   lock (hash-checked, wheels only, for the same target) into a folder of its
   own, scrubs it, adds it to the same site and packs the second file. The
   plain file is packed before any of this, so it is the same bytes with or
   without --with; the second differs from it by the extra's packages and
   their byte code only.

The pyz carries compiled wheels (pydantic-core, rpds-py, cffi, cryptography,
charset-normalizer, and pypdfium2's PDFium library), so it runs only on the
platform and CPython minor version it was built for; a file says so in one
line when run elsewhere (it carries rypsok/built-for.txt, read by
rypsok/builtfor.py). The Linux glibc files need glibc 2.28 or later (the
manylinux floor below), the musl files musl 1.2.
Standard library only: pip and shiv run as `sys.executable -m ...`.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent
LOCK = ROOT / "requirements.lock"
# Targets for which a locked pin ships no wheel: their lock's pins replace the
# main lock's entries of the same names, hashes and all. It may only replace,
# never add, so the closure stays the one pyproject.toml resolves to.
LOCK_OVERRIDES = {
    "macos-arm64": ROOT / "requirements-macos-arm64.lock",
    "macos-x86_64": ROOT / "requirements-macos-x86_64.lock",
}
# Optional extras a second kind of file carries on top of the runtime closure
# (pyproject.toml's [project.optional-dependencies] of the same name). Each lock
# may only add distributions: a name requirements.lock already pins fails the
# build, so the plain closure is never changed underneath the extra's file.
EXTRAS = {"redis": ROOT / "requirements-redis.lock"}
PYZ_NAME = "rypsok.pyz"
SUMS_NAME = "SHA256SUMS"
ENTRY_POINT = "rypsok.commands.cli:main"
SHEBANG = "/usr/bin/env python3"
# Used when there is no git history to date the build (1980-01-02, the zip
# format's epoch plus a day so that no time zone pushes it before 1980).
FALLBACK_EPOCH = 315619200
# What the project's wheel is built from; everything else stays out.
PROJECT_FILES = ("pyproject.toml", "README.md", "LICENSE", "LICENSE-MIT", "LICENSE-APACHE")
# Files pip writes that name this machine or this moment, not the package.
VOLATILE_DIST_INFO = ("INSTALLER", "REQUESTED", "direct_url.json")

# The release targets (REQ-RUST-002 read as "the platforms of this build"): each
# system with its CPUs, and the CPython minor versions.
SYSTEMS = {
    "linux": ("x86_64", "aarch64"),  # glibc: manylinux
    "musllinux": ("x86_64", "aarch64"),  # musl: Alpine and the like
    # Both take older pins (LOCK_OVERRIDES): pypdfium2's macOS wheels need
    # macOS 12 from 5.10 and 13 from 5.12, and on Intel 11 from 5.0; Intel
    # macs also take an older cryptography, whose macOS wheels from 49 are
    # for arm64 only.
    "macos": ("arm64", "x86_64"),
    "windows": ("x86_64",),
}
# The Linux glibc CPUs keep their bare names on the command line ("x86_64").
ARCHES = SYSTEMS["linux"]
PYTHONS = ("3.11", "3.12", "3.13", "3.14")
# The oldest glibc the target files support: 2.28 (Debian 10, RHEL 8, Ubuntu
# 20.04 have it or newer). Every compiled wheel of the lock exists at or
# below it; cryptography also has 2_34 wheels, which a newer floor would pick.
GLIBC_FLOOR_MINOR = 28
# manylinux2014 is glibc 2.17, the oldest tag the locked wheels use on aarch64;
# x86_64 wheels may go back to manylinux1 (glibc 2.5).
OLDEST_MINOR = {"x86_64": 5, "aarch64": 17}
LEGACY_ALIASES = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}
# musl 1.2 (Alpine 3.13 and later); the locked wheels use 1_1 and 1_2.
MUSL_TAGS = ("musllinux_1_2", "musllinux_1_1")
# macOS: the oldest release the file supports per CPU (the newest floor among
# the locked wheels), and the older tags a wheel may carry below it.
MACOS_FLOOR = {"arm64": (11, 0), "x86_64": (10, 15)}  # 10.15: cffi's wheel
MACOS_OLDEST = (10, 9)
# The CPU field of a compiled module's header: ELF e_machine, Mach-O cputype,
# PE machine. A module for another CPU or system fails the build.
ELF_MACHINE = {"x86_64": 62, "aarch64": 183}
MACHO_CPU = {"arm64": 0x0100000C, "x86_64": 0x01000007}
PE_MACHINE = {"x86_64": 0x8664}
# Compiled files by system: extension modules, and the shared libraries that
# wheels load with ctypes (pypdfium2's PDFium) or vendor beside their modules
# (auditwheel's libgcc_s.so.1, libstdc++.so.6 in *.libs/).
COMPILED = {
    "linux": ("*.so", "*.so.*"),
    "musllinux": ("*.so", "*.so.*"),
    "macos": ("*.so", "*.dylib"),
    "windows": ("*.pyd", "*.dll"),
}
DEFAULT_RELEASE_DIR = "dist/release"
# Locked distributions the server never imports, left out of every pyz. The SDK
# needs them on its client side only: jsonschema (with referencing, rpds-py,
# attrs and the specifications) checks a server's tool output in
# mcp/client/session.py, pyjwt signs client credentials in mcp/client/auth. No
# other module of the closure imports them (tests/packaging/test_zipapp.py
# scans the pyz for it), and an import trace of a session over each transport
# sees none of them (docs/deployment.md, "The zipapp and where it unpacks").
TRIMMED = (
    "jsonschema",
    "jsonschema-specifications",
    "referencing",
    "rpds-py",
    "attrs",
    "pyjwt",
)
BUILT_FOR = "built-for.txt"  # in the pyz's rypsok package: "3.11 linux x86_64"


class BuildError(Exception):
    """A step failed; the message says which and why."""


@dataclass(frozen=True, order=True)
class Target:
    """One release file: a CPython minor version on one system and CPU."""

    python: str  # "3.11"
    arch: str  # "x86_64", "aarch64" or "arm64"
    system: str = "linux"  # a key of SYSTEMS

    @property
    def python_tag(self) -> str:
        return "cp" + self.python.replace(".", "")

    @property
    def label(self) -> str:
        """The name --platform takes: linux-x86_64, macos-arm64, ..."""
        return f"{self.system}-{self.arch}"

    @property
    def platform_tag(self) -> str:
        if self.system == "linux":
            return f"manylinux_2_{GLIBC_FLOOR_MINOR}_{self.arch}"
        if self.system == "musllinux":
            return f"{MUSL_TAGS[0]}_{self.arch}"
        if self.system == "macos":
            major, minor = MACOS_FLOOR[self.arch]
            return f"macosx_{major}_{minor}_{self.arch}"
        return "win_amd64"

    def pip_platforms(self) -> list[str]:
        """Every platform tag the target accepts, newest first.

        pip takes --platform literally: manylinux_2_28 does not imply the older
        manylinux_2_17 of most wheels, so all of them are listed, with the
        legacy aliases (manylinux2014 is manylinux_2_17); likewise for musl and
        macOS. Nothing newer than the target's floor is listed.
        """
        tags: list[str] = []
        if self.system == "linux":
            for minor in range(GLIBC_FLOOR_MINOR, OLDEST_MINOR[self.arch] - 1, -1):
                tags.append(f"manylinux_2_{minor}_{self.arch}")
                if minor in LEGACY_ALIASES:
                    tags.append(f"{LEGACY_ALIASES[minor]}_{self.arch}")
        elif self.system == "musllinux":
            tags = [f"{tag}_{self.arch}" for tag in MUSL_TAGS]
        elif self.system == "macos":
            for major, minor in _macos_releases(MACOS_FLOOR[self.arch]):
                tags.append(f"macosx_{major}_{minor}_{self.arch}")
                tags.append(f"macosx_{major}_{minor}_universal2")
        else:
            tags = ["win_amd64"]
        return tags

    def pip_options(self) -> list[str]:
        """The pip options that select this target's wheels and nothing else."""
        options = [
            "--implementation",
            "cp",
            "--python-version",
            self.python,
            "--abi",
            self.python_tag,
        ]
        for tag in self.pip_platforms():
            options += ["--platform", tag]
        return options


def _macos_releases(floor: tuple[int, int]) -> list[tuple[int, int]]:
    """macOS releases from floor down to MACOS_OLDEST, newest first: 11.0, 10.16
    (11 as older tools name it), 10.15, ...; a 10.x floor starts at itself."""
    majors = [(major, 0) for major in range(floor[0], 10, -1)]
    top = 16 if floor[0] > 10 else floor[1]
    return majors + [(10, minor) for minor in range(top, MACOS_OLDEST[1] - 1, -1)]


def artifact_name(version: str, target: Target, extra: str | None = None) -> str:
    """rypsok-X.Y.Z-<python>-<platform>.pyz, e.g. rypsok-0.1.0-cp311-manylinux_2_28_x86_64.pyz;
    with an extra, rypsok-<extra>-X.Y.Z-<python>-<platform>.pyz."""
    stem = f"rypsok-{extra}" if extra else "rypsok"
    return f"{stem}-{version}-{target.python_tag}-{target.platform_tag}.pyz"


def host_name(extra: str | None = None) -> str:
    """The host build's file: rypsok.pyz, or rypsok-<extra>.pyz."""
    return f"rypsok-{extra}.pyz" if extra else PYZ_NAME


def all_platforms() -> list[str]:
    return [f"{system}-{arch}" for system, arches in SYSTEMS.items() for arch in arches]


def _platform(name: str) -> tuple[str, str]:
    """(system, arch) of a --platform name; a bare CPU is Linux with glibc."""
    if name in ARCHES:
        return "linux", name
    system, _, arch = name.partition("-")
    if arch not in SYSTEMS.get(system, ()):
        raise BuildError(f"unknown platform {name!r}; known: {', '.join(all_platforms())}")
    return system, arch


def release_targets(platforms: Sequence[str] = (), pythons: Sequence[str] = ()) -> list[Target]:
    """The targets to build: every pair of the given platforms and versions (all by default)."""
    chosen = [_platform(name) for name in platforms] or [_platform(p) for p in all_platforms()]
    for python in pythons:
        if not re.fullmatch(r"3\.(1[1-9]|[2-9][0-9])", python):
            raise BuildError(f"python version {python!r} is not 3.11 or later as 3.N")
    found = {
        Target(python, arch, system) for system, arch in chosen for python in pythons or PYTHONS
    }
    return sorted(found, key=lambda t: (t.python, t.system, t.arch))


def project_version() -> str:
    """rypsok.__version__, read from the source without importing the package."""
    text = (ROOT / "rypsok" / "__init__.py").read_text(encoding="utf-8")
    found = re.search(r'^__version__ = "([^"]+)"$', text, re.MULTILINE)
    if found is None:
        raise BuildError("no __version__ line in rypsok/__init__.py")
    return found.group(1)


def elf_machine(path: Path) -> int | None:
    """The e_machine field of an ELF file (little-endian, both targets), else None."""
    with path.open("rb") as f:
        header = f.read(20)
    if len(header) < 20 or header[:4] != b"\x7fELF":
        return None
    return int.from_bytes(header[18:20], "little")


def macho_cpus(path: Path) -> set[int]:
    """The CPU types of a Mach-O file (each slice of a universal one), else empty."""
    with path.open("rb") as f:
        head = f.read(8 + 20 * 8)
    if head[:4] == b"\xcf\xfa\xed\xfe":  # 64-bit, little-endian
        return {int.from_bytes(head[4:8], "little")}
    if head[:4] == b"\xca\xfe\xba\xbe":  # universal: big-endian table of slices
        count = int.from_bytes(head[4:8], "big")
        return {int.from_bytes(head[8 + 20 * i : 12 + 20 * i], "big") for i in range(min(count, 8))}
    return set()


def pe_machine(path: Path) -> int | None:
    """The Machine field of a PE file (a Windows .pyd or .dll), else None."""
    with path.open("rb") as f:
        dos = f.read(64)
        if len(dos) < 64 or dos[:2] != b"MZ":
            return None
        f.seek(int.from_bytes(dos[60:64], "little"))
        header = f.read(6)
    if len(header) < 6 or header[:4] != b"PE\0\0":
        return None
    return int.from_bytes(header[4:6], "little")


def _fits(path: Path, target: Target) -> bool:
    if target.system in ("linux", "musllinux"):
        return elf_machine(path) == ELF_MACHINE[target.arch]
    if target.system == "macos":
        return MACHO_CPU[target.arch] in macho_cpus(path)
    return pe_machine(path) == PE_MACHINE[target.arch]


def wheel_tags(site: Path) -> dict[str, list[str]]:
    """distribution -> the platform tags its WHEEL file gives, for compiled ones."""
    found: dict[str, list[str]] = {}
    for wheel in sorted(site.glob("*.dist-info/WHEEL")):
        tags = [
            line.split(":", 1)[1].strip()
            for line in wheel.read_text(encoding="utf-8").splitlines()
            if line.startswith("Tag:")
        ]
        platforms = sorted({t.rsplit("-", 1)[-1] for t in tags} - {"any"})
        if platforms:
            found[wheel.parent.name.split("-")[0]] = platforms
    return found


def check_machine(site: Path, target: Target) -> int:
    """Fail unless every compiled module and shared library in site is for the
    target's system and CPU, and every compiled wheel carries one of the
    target's platform tags.

    This is what would catch the build machine's own wheels slipping into
    another platform's file. Returns how many files were checked.
    """
    suffixes = COMPILED[target.system]
    modules = sorted({p for suffix in suffixes for p in site.rglob(suffix)})
    wrong = [str(p.relative_to(site)) for p in modules if not _fits(p, target)]
    if wrong:
        raise BuildError(f"compiled modules not for {target.label}: {', '.join(wrong)}")
    if not modules:
        raise BuildError(f"no compiled module found for {target.label}; the lock expects some")
    accepted = set(target.pip_platforms())
    for name, platforms in wheel_tags(site).items():
        if accepted.isdisjoint(platforms):
            raise BuildError(f"{name}'s wheel is for {', '.join(platforms)}, not {target.label}")
    return len(modules)


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


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def trim(site: Path, names: Sequence[str] = TRIMMED) -> int:
    """Remove the named distributions (their RECORD's files and their dist-info) from
    site; returns the bytes removed. A name not installed fails the build: the list
    and the lock have drifted apart."""
    wanted = {_canonical(n) for n in names}
    removed = 0
    found: set[str] = set()
    for dist_info in sorted(site.glob("*.dist-info")):
        name = _canonical(dist_info.name.removesuffix(".dist-info").rsplit("-", 1)[0])
        if name not in wanted:
            continue
        found.add(name)
        record = dist_info / "RECORD"
        for line in record.read_text(encoding="utf-8").splitlines():
            entry = (site / line.rsplit(",", 2)[0].strip('"')).resolve()
            if entry.is_relative_to(site.resolve()) and entry.is_file():
                removed += entry.stat().st_size
                entry.unlink()
        shutil.rmtree(dist_info, ignore_errors=True)
    missing = sorted(wanted - found)
    if missing:
        raise BuildError(f"to leave out but not installed: {', '.join(missing)}")
    # Folders the removed files leave empty (a package's own folder).
    for folder in sorted((p for p in site.rglob("*") if p.is_dir()), reverse=True):
        if not any(folder.iterdir()):
            folder.rmdir()
    return removed


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


# Byte code compiled into the pyz, checked by nothing but its presence: the first run
# unpacks it instead of compiling every module it imports (issue 17: the first run
# within 1.5 s). Hash-seeded so that two builds give the same bytes.
_PRECOMPILE = (
    "import compileall, py_compile, sys\n"
    "compileall.compile_dir(sys.argv[1], ddir='site-packages', quiet=2, workers=1,\n"
    "    invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)\n"
)


def precompile(site: Path, target: Target | None, env: dict[str, str]) -> list[Path]:
    """Byte code for the pyz's interpreter, when it is this one's minor version (byte
    code is per minor version); other targets compile on their first run."""
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    if target is not None and target.python != running:
        return []
    # A file that does not compile (a module for another Python) is compiled, or
    # refused, by the interpreter that imports it, as before.
    subprocess.run(
        [sys.executable, "-c", _PRECOMPILE, str(site)],
        env={**env, "PYTHONHASHSEED": "0"},
        check=False,
        capture_output=True,
    )
    return sorted(site.rglob("__pycache__/*.pyc"), key=str)


def add_byte_code(pyz: Path, site: Path, compiled: Sequence[Path], env: dict[str, str]) -> None:
    """Append the byte code to the pyz shiv wrote (shiv leaves .pyc out), in a fixed
    order with the build's fixed date, so the bytes stay reproducible. shiv's first
    run unpacks everything under site-packages/, these files with the rest."""
    if not compiled:
        return
    moment = time.gmtime(int(env["SOURCE_DATE_EPOCH"]))[0:6]
    with zipfile.ZipFile(pyz, "a", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in compiled:
            info = zipfile.ZipInfo(f"site-packages/{path.relative_to(site).as_posix()}", moment)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o100644 << 16
            archive.writestr(info, path.read_bytes())


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def sums_text(files: Iterable[Path]) -> str:
    """SHA256SUMS in the format `sha256sum --check` reads, sorted by name."""
    return "".join(f"{sha256_of(p)}  {p.name}\n" for p in sorted(files, key=lambda p: p.name))


def check_tools(extras: Sequence[str] = ()) -> None:
    """The locks are there (an extra's adding to requirements.lock only), and so are
    the tools; checked before anything is built."""
    for lock in (LOCK, *(extra_lock(name) for name in extras)):
        if not lock.is_file():
            raise BuildError(f"{lock} is missing")
    main = LOCK.read_text(encoding="utf-8")
    for name in extras:
        # An override lock only replaces pins, so one check against the main lock
        # holds for every target.
        check_extra_lock(main, extra_lock(name).read_text(encoding="utf-8"), name)
    for module in ("pip", "shiv", "setuptools"):
        found = subprocess.run(
            [sys.executable, "-c", f"import {module}"], capture_output=True
        ).returncode
        if found != 0:
            raise BuildError(
                f"{module} is not installed for {sys.executable}; "
                "run tools/setup and use .venv/bin/python"
            )


def build_env() -> dict[str, str]:
    return dict(os.environ, SOURCE_DATE_EPOCH=str(source_date_epoch()), PYTHONDONTWRITEBYTECODE="1")


PIP = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input"]


def _entries(text: str) -> dict[str, str]:
    """Canonical name -> one lock entry (its pin line, hashes and comments)."""
    entries: dict[str, str] = {}
    for block in re.split(r"\n(?=[^\s#])", text):
        head = block.split(" ", 1)[0]
        if "==" in head:
            entries[_canonical(head.split("==")[0])] = block.rstrip("\n")
    return entries


def merged_lock(main: str, override: str) -> str:
    """The main lock with the override's entries in place of its own of the same
    names. An override entry the main lock lacks fails the build."""
    replacing = _entries(override)
    kept = _entries(main)
    extra = sorted(set(replacing) - set(kept))
    if extra:
        raise BuildError(f"the override lock adds what requirements.lock lacks: {', '.join(extra)}")
    kept.update(replacing)
    return "\n".join(kept[name] for name in sorted(kept)) + "\n"


def target_lock(target: Target | None, work: Path) -> Path:
    """The lock to install for the target: requirements.lock, or its merge with
    the target's override written into work."""
    override = LOCK_OVERRIDES.get(target.label) if target else None
    if target is None or override is None:
        return LOCK
    if not override.is_file():
        raise BuildError(f"{override} is missing; {target.label} needs it")
    merged = work / f"requirements-{target.label}.lock"
    text = merged_lock(LOCK.read_text(encoding="utf-8"), override.read_text(encoding="utf-8"))
    merged.write_text(text, encoding="utf-8")
    return merged


def extra_lock(name: str) -> Path:
    """The lock of an extra of EXTRAS; an unknown name fails the build."""
    if name not in EXTRAS:
        raise BuildError(f"unknown extra {name!r}; known: {', '.join(sorted(EXTRAS))}")
    return EXTRAS[name]


def check_extra_lock(main: str, extra: str, name: str) -> None:
    """An extra's lock adds distributions and pins nothing requirements.lock pins."""
    added = _entries(extra)
    if not added:
        raise BuildError(f"the {name} lock pins nothing")
    shared = sorted(set(added) & set(_entries(main)))
    if shared:
        raise BuildError(
            f"the {name} lock pins what requirements.lock already pins: {', '.join(shared)}"
        )


def add_site(extra_site: Path, site: Path) -> int:
    """Copy the extra's scrubbed files into site; a file that is there already fails the
    build (the extra would replace part of the runtime closure). Returns the file count."""
    files = sorted(p for p in extra_site.rglob("*") if p.is_file())
    clashes = [
        str(p.relative_to(extra_site)) for p in files if (site / p.relative_to(extra_site)).exists()
    ]
    if clashes:
        raise BuildError(f"the extra's files are already in the site: {', '.join(clashes[:5])}")
    for path in files:
        dest = site / path.relative_to(extra_site)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, dest)
    return len(files)


def install_closure(
    site: Path, target: Target | None, env: dict[str, str], lock: Path = LOCK
) -> None:
    """The locked closure, hash-checked, wheels only; for a target, its wheels."""
    what = f"installing {lock.name}" + (f" for {target}" if target else "")
    run(
        [
            *PIP,
            "install",
            "-qq",
            "--no-compile",
            "--require-hashes",
            "--no-deps",
            "--only-binary=:all:",
            *(target.pip_options() if target else []),
            "--target",
            str(site),
            "-r",
            str(lock),
        ],
        what,
        env,
    )


def install_project(site: Path, src: Path, env: dict[str, str]) -> None:
    """The project itself: pure Python, so the same files for every target."""
    copy_project(src)
    # --no-build-isolation: build with the locked setuptools of this
    # interpreter instead of whatever a fresh isolated build would fetch.
    run(
        [
            *PIP,
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


def pack(site: Path, staged: Path, env: dict[str, str]) -> None:
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


def finish(site: Path, work: Path, dest: Path, target: Target | None, env: dict[str, str]) -> Path:
    """Compile, pack and copy one pyz from a complete site."""
    compiled = precompile(site, target, env)
    staged = work / dest.name
    pack(site, staged, env)
    add_byte_code(staged, site, compiled, env)
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(staged, dest)
    dest.chmod(0o755)
    return dest


def build_one(
    dest: Path,
    target: Target | None,
    env: dict[str, str],
    extras: Mapping[str, Path] | None = None,
) -> list[Path]:
    """Build one pyz (the host's when target is None) and copy it to dest; then, for each
    extra of extras (name -> its file's path), the same site with the extra's lock added.

    The plain file is packed before any extra is installed, so it does not depend on
    whether extras were asked for. Returns the files written, the plain one first."""
    with tempfile.TemporaryDirectory(prefix="rypsok-zipapp-") as tmp:
        work = Path(tmp)
        site = work / "site-packages"
        src = work / "src"
        site.mkdir()
        src.mkdir()
        install_closure(site, target, env, target_lock(target, work))
        trimmed = trim(site)
        print(
            f"build_zipapp: left out {len(TRIMMED)} client-side distributions "
            f"({trimmed} bytes unpacked)",
            file=sys.stderr,
        )
        install_project(site, src, env)
        scrub(site)
        if target is not None:
            check_machine(site, target)
            # What the file is for, read by rypsok.commands.cli before anything compiled is
            # imported: a file run elsewhere says so in one line (rypsok/builtfor.py).
            (site / "rypsok" / BUILT_FOR).write_text(
                f"{target.python} {target.system} {target.arch}\n", encoding="ascii"
            )
        built = [finish(site, work, dest, target, env)]
        for name, extra_dest in (extras or {}).items():
            lock = extra_lock(name)
            # Each extra on a fresh copy of the plain site: extras do not pile up.
            extra_site = work / f"site-{name}"
            shutil.copytree(site, extra_site, ignore=shutil.ignore_patterns("__pycache__"))
            alone = work / f"only-{name}"
            alone.mkdir()
            install_closure(alone, target, env, lock)
            scrub(alone)
            added = add_site(alone, extra_site)
            print(f"build_zipapp: added the {name} extra ({added} files)", file=sys.stderr)
            if target is not None:
                check_machine(extra_site, target)
            built.append(finish(extra_site, work, extra_dest, target, env))
    return built


def build(out_dir: Path, extras: Sequence[str] = ()) -> list[Path]:
    """The host build: out_dir/rypsok.pyz (and rypsok-<extra>.pyz for each extra) and a
    SHA256SUMS naming them alone."""
    check_tools(extras)
    dests = {name: out_dir / host_name(name) for name in extras}
    built = build_one(out_dir / PYZ_NAME, None, build_env(), dests)
    (out_dir / SUMS_NAME).write_text(sums_text(built), encoding="ascii")
    return built


def build_platforms(
    out_dir: Path, targets: Sequence[Target], extras: Sequence[str] = ()
) -> list[Path]:
    """One pyz per target (and per target and extra) in out_dir, and a SHA256SUMS over
    all of them."""
    check_tools(extras)
    env = build_env()
    version = project_version()
    built = []
    for target in targets:
        names = [
            artifact_name(version, target),
            *(artifact_name(version, target, e) for e in extras),
        ]
        print(f"build_zipapp: building {', '.join(names)}", file=sys.stderr)
        dests = {e: out_dir / artifact_name(version, target, e) for e in extras}
        built += build_one(out_dir / names[0], target, env, dests)
    (out_dir / SUMS_NAME).write_text(sums_text(built), encoding="ascii")
    return built


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build rypsok.pyz reproducibly with shiv.")
    parser.add_argument(
        "--out",
        type=Path,
        help=f"output folder (default: dist, or {DEFAULT_RELEASE_DIR} with --platform)",
    )
    parser.add_argument(
        "--platform",
        nargs="*",
        metavar="NAME",
        help="build the release files for these platforms "
        f"({', '.join(all_platforms())}; a bare x86_64 or aarch64 is linux-; all when "
        "none is named) instead of dist/rypsok.pyz for this machine",
    )
    parser.add_argument(
        "--python",
        nargs="+",
        metavar="X.Y",
        help=f"with --platform: the CPython versions (default: {' '.join(PYTHONS)})",
    )
    parser.add_argument(
        "--with",
        dest="extras",
        action="append",
        choices=sorted(EXTRAS),
        default=[],
        metavar="EXTRA",
        help="also build, beside each plain file, the one that carries this extra of "
        f"pyproject.toml ({', '.join(sorted(EXTRAS))}): rypsok-EXTRA.pyz, or "
        "rypsok-EXTRA-X.Y.Z-<python>-<platform>.pyz with --platform",
    )
    parser.add_argument(
        "--list",
        action="store_true",
        help="with --platform: print the file each target would be, and build nothing",
    )
    args = parser.parse_args(argv)
    if (args.python or args.list) and args.platform is None:
        parser.error("--python and --list need --platform")
    extras: list[str] = list(dict.fromkeys(args.extras))
    try:
        if args.platform is None:
            for pyz in build((args.out or ROOT / "dist").resolve(), extras):
                print(f"build_zipapp: wrote {pyz} ({pyz.stat().st_size} bytes)", file=sys.stderr)
            return 0
        targets = release_targets(args.platform, args.python or ())
        if args.list:
            version = project_version()
            for target in targets:
                for extra in (None, *extras):
                    print(f"{target.label} {target.python} {artifact_name(version, target, extra)}")
            return 0
        out = (args.out or ROOT / DEFAULT_RELEASE_DIR).resolve()
        for pyz in build_platforms(out, targets, extras):
            print(f"build_zipapp: wrote {pyz} ({pyz.stat().st_size} bytes)", file=sys.stderr)
    except BuildError as exc:
        print(f"build_zipapp: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
