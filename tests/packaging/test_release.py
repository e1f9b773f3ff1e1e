"""The release path: per-platform file names, the container recipe and the
systemd units (issue 9; REQ-DEP-004, REQ-DEP-005, REQ-RUST-002 read as the
platforms of this build; DESIGN.md decision 10).

Everything here reads files or calls build_zipapp.py's helpers, except one
test that builds one foreign-platform pyz (one download of its wheels, about
15 s). Building every target twice and running the result in a read-only
root file system is tools/release's job (with tools/rootfs-test).
"""

from __future__ import annotations

import fnmatch
import hashlib
import re
import shlex
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import rypsok
from rypsok.core import limits
from tests.support.paths import REPO
from tests.support.pyz import bz
from tests.support.run import check, clean_env

DEPLOY = REPO / "deploy"
CONFIG_PATH = "/etc/rypsok/rypsok.toml"
PYZ_PATH = "/opt/rypsok/rypsok.pyz"
MEMORY_MAX_MIB = limits.default("LIM-M5")
DIGEST = re.compile(r"@sha256:[0-9a-f]{64}$")


# ---------------------------------------------------------------------------
# build_zipapp.py --platform: names and pip options, no download


def test_req_rust_002_release_files_are_named_per_python_and_platform() -> None:
    """CPython 3.11 to 3.14 on Linux (glibc and musl, x86_64 and aarch64), macOS
    (arm64 and x86_64) and Windows (x86_64): 28 files, one name each."""
    targets = bz.release_targets()
    names = [bz.artifact_name("1.2.3", t) for t in targets]
    assert len(names) == len(set(names)) == 4 * 7
    assert names[:7] == [
        "rypsok-1.2.3-cp311-manylinux_2_28_aarch64.pyz",
        "rypsok-1.2.3-cp311-manylinux_2_28_x86_64.pyz",
        "rypsok-1.2.3-cp311-macosx_11_0_arm64.pyz",
        "rypsok-1.2.3-cp311-macosx_10_15_x86_64.pyz",
        "rypsok-1.2.3-cp311-musllinux_1_2_aarch64.pyz",
        "rypsok-1.2.3-cp311-musllinux_1_2_x86_64.pyz",
        "rypsok-1.2.3-cp311-win_amd64.pyz",
    ]
    assert {t.python for t in targets} == {"3.11", "3.12", "3.13", "3.14"}
    assert bz.project_version() == rypsok.__version__


def test_req_rust_002_a_subset_of_targets_and_refusals() -> None:
    assert bz.release_targets(["aarch64"], ["3.12"]) == [bz.Target("3.12", "aarch64")]
    assert bz.release_targets(["linux-aarch64"], ["3.12"]) == [bz.Target("3.12", "aarch64")]
    assert bz.release_targets(["macos-arm64"], ["3.13"]) == [bz.Target("3.13", "arm64", "macos")]
    assert len(bz.release_targets(["x86_64"])) == 4
    assert bz.release_targets(["macos-x86_64"], ["3.11"]) == [bz.Target("3.11", "x86_64", "macos")]
    for unknown in ("riscv64", "macos-aarch64", "windows-arm64", "freebsd-x86_64"):
        with pytest.raises(bz.BuildError, match="unknown platform"):
            bz.release_targets([unknown])
    for bad in ("3.10", "3", "cp311", "3.11.2"):
        with pytest.raises(bz.BuildError, match=r"3\.11 or later"):
            bz.release_targets([], [bad])


def test_issue_18_each_system_asks_pip_for_its_own_tags_and_nothing_newer() -> None:
    musl = bz.Target("3.13", "x86_64", "musllinux").pip_platforms()
    assert musl == ["musllinux_1_2_x86_64", "musllinux_1_1_x86_64"]
    mac = bz.Target("3.12", "arm64", "macos").pip_platforms()
    assert mac[:2] == ["macosx_11_0_arm64", "macosx_11_0_universal2"]
    assert "macosx_12_0_arm64" not in mac and "macosx_10_9_universal2" in mac
    # Intel macs: from 10.15 (the newest floor among the wheels) down, no 10.16 or 11.
    intel = bz.Target("3.12", "x86_64", "macos").pip_platforms()
    assert intel[:3] == ["macosx_10_15_x86_64", "macosx_10_15_universal2", "macosx_10_14_x86_64"]
    assert not {"macosx_10_16_x86_64", "macosx_11_0_x86_64"} & set(intel)
    assert intel[-1] == "macosx_10_9_universal2"
    assert bz.Target("3.11", "x86_64", "windows").pip_platforms() == ["win_amd64"]


def test_req_rust_002_pip_is_asked_for_the_target_wheels_only() -> None:
    options = bz.Target("3.12", "aarch64").pip_options()
    pairs = list(zip(options[::2], options[1::2], strict=True))
    assert ("--implementation", "cp") in pairs
    assert ("--python-version", "3.12") in pairs
    assert ("--abi", "cp312") in pairs
    platforms = [value for flag, value in pairs if flag == "--platform"]
    # Newest first, nothing above the glibc floor, the legacy alias of 2.17 kept.
    assert platforms[0] == "manylinux_2_28_aarch64"
    assert "manylinux2014_aarch64" in platforms
    assert all(p.endswith("_aarch64") for p in platforms)
    minors = [int(m.group(1)) for p in platforms if (m := re.match(r"manylinux_2_(\d+)_", p))]
    assert minors[0] == 28 and minors == sorted(minors, reverse=True)
    # x86_64 wheels may be as old as manylinux1; the pip options list them too.
    assert "manylinux1_x86_64" in bz.Target("3.11", "x86_64").pip_platforms()


LOCK_A = """\
#
# header
#
anyio==4.16.0 \\
    --hash=sha256:aaaa
    # via rypsok (pyproject.toml)
cryptography==50.0.2 \\
    --hash=sha256:bbbb \\
    --hash=sha256:cccc
    # via pyjwt
zipp==1.0 \\
    --hash=sha256:dddd
"""


def test_issue_18_an_override_lock_replaces_entries_and_adds_none() -> None:
    override = "# why\ncryptography==48.0.1 \\\n    --hash=sha256:eeee\n    # via pyjwt\n"
    merged = bz.merged_lock(LOCK_A, override)
    assert "cryptography==48.0.1 \\\n    --hash=sha256:eeee" in merged
    assert "50.0.2" not in merged and "bbbb" not in merged and "cccc" not in merged
    assert "anyio==4.16.0 \\\n    --hash=sha256:aaaa" in merged
    assert "zipp==1.0 \\\n    --hash=sha256:dddd" in merged
    with pytest.raises(bz.BuildError, match=r"adds what requirements\.lock lacks: attrs"):
        bz.merged_lock(LOCK_A, "attrs==1.0 \\\n    --hash=sha256:ffff\n")


def test_issue_18_macs_install_their_overrides_and_other_targets_the_lock(
    tmp_path: Path,
) -> None:
    """The Intel mac files take cryptography and pypdfium2 from
    requirements-macos-x86_64.lock, the Apple silicon ones pypdfium2 from
    requirements-macos-arm64.lock (no newer release has a wheel for their macOS
    floors); every other target installs requirements.lock as it is."""
    main = (REPO / "requirements.lock").read_text(encoding="utf-8")
    intel = bz.target_lock(bz.Target("3.12", "x86_64", "macos"), tmp_path)
    arm = bz.target_lock(bz.Target("3.12", "arm64", "macos"), tmp_path)
    for merged, pins in (
        (intel, (r"cryptography==48\.0\.1", r"pypdfium2==4\.30\.0")),
        (arm, (r"cryptography==50\.", r"pypdfium2==5\.9\.0")),
    ):
        assert merged.parent == tmp_path
        text = merged.read_text(encoding="utf-8")
        for pin in pins:
            assert re.search(rf"^{pin}", text, re.MULTILINE), (merged.name, pin)
        assert bz._entries(text).keys() == bz._entries(main).keys()
    for target in (bz.Target("3.12", "x86_64"), bz.Target("3.12", "x86_64", "windows"), None):
        assert bz.target_lock(target, tmp_path) == bz.LOCK
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([arm.name, intel.name])


def _fake_elf(path: Path, machine: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x7fELF\x02\x01\x01" + bytes(11) + machine.to_bytes(2, "little") + bytes(44))


def test_req_rust_002_a_compiled_module_for_another_cpu_fails_the_build(tmp_path: Path) -> None:
    site = tmp_path / "site"
    with pytest.raises(bz.BuildError, match="no compiled module"):
        bz.check_machine(site, bz.Target("3.11", "aarch64"))
    _fake_elf(site / "pkg" / "a.cpython-311-aarch64-linux-gnu.so", 183)
    assert bz.check_machine(site, bz.Target("3.11", "aarch64")) == 1
    _fake_elf(site / "pkg" / "b.abi3.so", 62)  # an x86_64 module slipped in
    with pytest.raises(bz.BuildError, match=r"not for linux-aarch64: pkg/b\.abi3\.so"):
        bz.check_machine(site, bz.Target("3.11", "aarch64"))


def _fake_macho(path: Path, cpu: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\xcf\xfa\xed\xfe" + cpu.to_bytes(4, "little") + bytes(56))


def _fake_universal(path: Path, cpus: list[int]) -> None:
    """A universal Mach-O: big-endian header, then one 20-byte entry per slice."""
    path.parent.mkdir(parents=True, exist_ok=True)
    slices = b"".join(cpu.to_bytes(4, "big") + bytes(16) for cpu in cpus)
    path.write_bytes(b"\xca\xfe\xba\xbe" + len(cpus).to_bytes(4, "big") + slices)


def _fake_pe(path: Path, machine: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    dos = b"MZ" + bytes(58) + (64).to_bytes(4, "little")
    path.write_bytes(dos + b"PE\0\0" + machine.to_bytes(2, "little") + bytes(20))


def _fake_wheel(site: Path, name: str, tag: str) -> None:
    info = site / f"{name}-1.0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "WHEEL").write_text(f"Wheel-Version: 1.0\nTag: cp312-cp312-{tag}\n", encoding="utf-8")


def test_issue_18_modules_and_wheels_are_checked_against_the_targets_system(tmp_path: Path) -> None:
    mac = bz.Target("3.12", "arm64", "macos")
    site = tmp_path / "mac"
    _fake_macho(site / "pkg" / "a.cpython-312-darwin.so", 0x0100000C)
    _fake_wheel(site, "pkg", "macosx_11_0_arm64")
    assert bz.check_machine(site, mac) == 1
    _fake_elf(site / "pkg" / "b.so", 183)  # a Linux module in a macOS file
    with pytest.raises(bz.BuildError, match=r"not for macos-arm64: pkg/b\.so"):
        bz.check_machine(site, mac)
    intel = bz.Target("3.12", "x86_64", "macos")
    site = tmp_path / "intel"
    _fake_universal(site / "pkg" / "a.abi3.so", [0x01000007, 0x0100000C])
    _fake_wheel(site, "pkg", "macosx_10_9_universal2")
    assert bz.check_machine(site, intel) == 1  # a universal2 module carries both CPUs
    _fake_macho(site / "pkg" / "b.cpython-312-darwin.so", 0x0100000C)
    with pytest.raises(bz.BuildError, match=r"not for macos-x86_64: pkg/b\.cpython"):
        bz.check_machine(site, intel)  # an Apple silicon module in an Intel file
    win = bz.Target("3.12", "x86_64", "windows")
    site = tmp_path / "win"
    _fake_pe(site / "pkg" / "a.cp312-win_amd64.pyd", 0x8664)
    _fake_wheel(site, "pkg", "win_amd64")
    assert bz.check_machine(site, win) == 1
    # Shared libraries too (pypdfium2 loads PDFium's with ctypes; auditwheel vendors
    # libgcc_s.so.1 beside modules): one for another CPU fails the build.
    _fake_pe(site / "lib" / "pdfium.dll", 0x8664)
    assert bz.check_machine(site, win) == 2
    _fake_pe(site / "lib" / "other.dll", 0xAA64)  # an arm64 Windows library
    with pytest.raises(bz.BuildError, match=r"not for windows-x86_64: lib/other\.dll"):
        bz.check_machine(site, win)
    site = tmp_path / "mac-lib"
    _fake_macho(site / "pkg" / "a.abi3.so", 0x0100000C)
    _fake_macho(site / "lib" / "libpdfium.dylib", 0x01000007)  # Intel's PDFium
    with pytest.raises(bz.BuildError, match=r"not for macos-arm64: lib/libpdfium\.dylib$"):
        bz.check_machine(site, mac)
    linux = tmp_path / "linux"
    _fake_elf(linux / "pkg" / "a.abi3.so", 62)
    _fake_elf(linux / "pkg.libs" / "libgcc_s-0cd532bd.so.1", 183)
    with pytest.raises(bz.BuildError, match=r"pkg\.libs/libgcc_s-0cd532bd\.so\.1"):
        bz.check_machine(linux, bz.Target("3.12", "x86_64"))
    musl = bz.Target("3.12", "x86_64", "musllinux")
    site = tmp_path / "musl"
    _fake_elf(site / "pkg" / "a.so", 62)
    _fake_wheel(site, "pkg", "manylinux_2_17_x86_64")  # the right CPU, glibc's wheel
    with pytest.raises(bz.BuildError, match="pkg's wheel is for manylinux_2_17_x86_64"):
        bz.check_machine(site, musl)


def test_req_dep_005_sha256sums_lists_every_file_for_sha256sum(tmp_path: Path) -> None:
    files = [tmp_path / "rypsok-b.pyz", tmp_path / "rypsok-a.pyz"]
    for i, f in enumerate(files):
        f.write_bytes(bytes([i]) * 1000)
    text = bz.sums_text(files)
    assert text.splitlines() == [
        f"{hashlib.sha256(files[1].read_bytes()).hexdigest()}  rypsok-a.pyz",
        f"{hashlib.sha256(files[0].read_bytes()).hexdigest()}  rypsok-b.pyz",
    ]
    (tmp_path / "SHA256SUMS").write_text(text, encoding="ascii")
    proc = subprocess.run(
        ["sha256sum", "--check", "--strict", "SHA256SUMS"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    files[0].write_bytes(b"changed")
    proc = subprocess.run(
        ["sha256sum", "--check", "SHA256SUMS"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1 and "rypsok-b.pyz: FAILED" in proc.stdout


def test_issue_21_the_redis_kind_is_named_apart_from_the_default_one() -> None:
    target = bz.Target("3.11", "x86_64")
    assert bz.artifact_name("1.2.3", target) == "rypsok-1.2.3-cp311-manylinux_2_28_x86_64.pyz"
    assert (
        bz.artifact_name("1.2.3", target, "redis")
        == "rypsok-redis-1.2.3-cp311-manylinux_2_28_x86_64.pyz"
    )
    assert (bz.host_name(), bz.host_name("redis")) == ("rypsok.pyz", "rypsok-redis.pyz")
    # tools/release reads the CPython version and platform from the name, for both kinds.
    pattern = re.compile(r"^rypsok-.*-cp3([0-9]*)-(.*)\.pyz$")
    for extra in (None, "redis"):
        found = pattern.match(bz.artifact_name("1.2.3", bz.Target("3.13", "arm64", "macos"), extra))
        assert found and found.groups() == ("13", "macosx_11_0_arm64")


def test_issue_21_list_names_both_kinds_of_every_target_with_redis(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert bz.main(["--platform", "aarch64", "--python", "3.12", "--list"]) == 0
    version = rypsok.__version__
    plain = f"linux-aarch64 3.12 rypsok-{version}-cp312-manylinux_2_28_aarch64.pyz"
    assert capsys.readouterr().out.splitlines() == [plain]
    assert bz.main(["--platform", "--with", "redis", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 * 4 * 7
    assert lines[:2] == [
        f"linux-aarch64 3.11 rypsok-{version}-cp311-manylinux_2_28_aarch64.pyz",
        f"linux-aarch64 3.11 rypsok-redis-{version}-cp311-manylinux_2_28_aarch64.pyz",
    ]
    with pytest.raises(SystemExit) as exc:
        bz.main(["--with", "postgres"])
    assert exc.value.code == 2
    assert "invalid choice: 'postgres'" in capsys.readouterr().err


def test_issue_21_an_extra_lock_may_only_add_to_the_runtime_lock(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    bz.check_extra_lock(LOCK_A, "redis==8.1.0 \\\n    --hash=sha256:ffff\n", "redis")
    with pytest.raises(bz.BuildError, match=r"already pins: anyio"):
        bz.check_extra_lock(LOCK_A, "anyio==4.0.0 \\\n    --hash=sha256:ffff\n", "redis")
    with pytest.raises(bz.BuildError, match="pins nothing"):
        bz.check_extra_lock(LOCK_A, "# nothing\n", "redis")
    # The real locks: the redis one adds to requirements.lock and to the macs' merges.
    redis = bz.extra_lock("redis").read_text(encoding="utf-8")
    main = bz.LOCK.read_text(encoding="utf-8")
    macs = [bz.merged_lock(main, o.read_text(encoding="utf-8")) for o in bz.LOCK_OVERRIDES.values()]
    for runtime in (main, *macs):
        bz.check_extra_lock(runtime, redis, "redis")
    assert sorted(bz._entries(redis)) == ["async-timeout", "redis"]
    with pytest.raises(bz.BuildError, match="unknown extra"):
        bz.extra_lock("postgres")
    # A build refuses such a lock before it builds anything.
    bz.check_tools(["redis"])
    overlapping = tmp_path / "requirements-redis.lock"
    overlapping.write_text(redis + "anyio==4.0.0 \\\n    --hash=sha256:ffff\n", encoding="utf-8")
    monkeypatch.setitem(bz.EXTRAS, "redis", overlapping)
    monkeypatch.setattr(bz, "build_one", lambda *a, **k: pytest.fail("built anyway"))
    with pytest.raises(bz.BuildError, match=r"already pins: anyio"):
        bz.build(tmp_path / "out", ["redis"])


def test_issue_21_an_extras_file_may_not_replace_one_of_the_site(tmp_path: Path) -> None:
    site, extra = tmp_path / "site", tmp_path / "extra"
    (site / "pkg").mkdir(parents=True)
    (site / "pkg" / "__init__.py").write_text("kept\n", encoding="utf-8")
    (extra / "redis").mkdir(parents=True)
    (extra / "redis" / "__init__.py").write_text("added\n", encoding="utf-8")
    assert bz.add_site(extra, site) == 1
    assert (site / "redis" / "__init__.py").read_text(encoding="utf-8") == "added\n"
    (extra / "pkg").mkdir()
    (extra / "pkg" / "__init__.py").write_text("replaced\n", encoding="utf-8")
    (site / "redis" / "__init__.py").unlink()
    with pytest.raises(bz.BuildError, match=r"already in the site: pkg/__init__\.py"):
        bz.add_site(extra, site)
    assert (site / "pkg" / "__init__.py").read_text(encoding="utf-8") == "kept\n"


def test_issue_21_release_builds_and_smoke_tests_both_kinds() -> None:
    """tools/release builds every target with the redis kind beside it, and its smoke
    runs check a redis store configuration against both kinds."""
    text = (REPO / "tools" / "release").read_text(encoding="utf-8")
    builds = re.findall(r"build_zipapp\.py --platform[^\n]*", text)
    code = [b for b in builds if "--out" in b]
    assert code and all("--with redis" in b for b in code), code
    assert 'backend = "redis"' in text and "rypsok[redis]" in text
    assert "rypsok-redis-*)" in text


def test_build_zipapp_python_needs_platform(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        bz.main(["--python", "3.12"])
    assert exc.value.code == 2
    assert "--python and --list need --platform" in capsys.readouterr().err


@pytest.mark.slow
def test_req_rust_002_foreign_platform_pyz_carries_that_platform_wheels(tmp_path: Path) -> None:
    """One real --platform build for a CPU and CPython this machine is not."""
    proc = subprocess.run(
        [
            sys.executable,
            str(REPO / "build_zipapp.py"),
            "--platform",
            "aarch64",
            "--python",
            "3.12",
            "--out",
            str(tmp_path),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    name = f"rypsok-{rypsok.__version__}-cp312-manylinux_2_28_aarch64.pyz"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["SHA256SUMS", name]
    pyz = tmp_path / name
    sums = (tmp_path / "SHA256SUMS").read_text(encoding="ascii")
    assert sums == f"{hashlib.sha256(pyz.read_bytes()).hexdigest()}  {name}\n"
    with zipfile.ZipFile(pyz) as archive:
        modules = [n for n in archive.namelist() if n.endswith(".so")]
        machines = {n: int.from_bytes(archive.read(n)[18:20], "little") for n in modules}
        names = set(archive.namelist())
    # pydantic-core, cffi, charset-normalizer (2) and cryptography, and PDFium's
    # library (pypdfium2 loads it with ctypes); rpds-py is left out with the SDK's
    # client-side distributions (build_zipapp.TRIMMED).
    assert len(modules) >= 6
    assert not any("rpds" in n for n in modules)
    assert set(machines.values()) == {183}, machines
    pdfium = "site-packages/pypdfium2_raw/libpdfium.so"
    assert pdfium in modules
    assert all("cpython-312-aarch64" in n or n.endswith(".abi3.so") for n in modules if n != pdfium)
    assert "site-packages/rypsok/commands/cli.py" in names
    # Run here (another CPU, maybe another CPython), it says so in one line, exit 1,
    # before anything compiled is imported (issue 18, bad input).
    run = subprocess.run(
        [sys.executable, str(pyz), "--version"],
        capture_output=True,
        text=True,
        env={**clean_env(), "SHIV_ROOT": str(tmp_path / "shiv")},
        timeout=120,
        check=False,
    )
    assert run.returncode == 1 and run.stdout == ""
    assert run.stderr.startswith("rypsok: this file is for CPython 3.12 on linux-aarch64, ")
    assert len(run.stderr.splitlines()) == 1 and "Traceback" not in run.stderr


# ---------------------------------------------------------------------------
# The systemd units


def _unit(name: str) -> dict[str, dict[str, list[str]]]:
    """section -> key -> values, in order (systemd allows a key more than once)."""
    sections: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] | None = None
    for raw in (DEPLOY / name).read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], {})
            continue
        assert current is not None, f"{name}: {line!r} before any section"
        key, sep, value = line.partition("=")
        assert sep, f"{name}: {line!r} is not key=value"
        current.setdefault(key.strip(), []).append(value.strip())
    return sections


def _one(service: dict[str, list[str]], key: str) -> str:
    values = service.get(key)
    assert values is not None and len(values) == 1, f"{key}: {values}"
    return values[0]


SERVICES = {
    "rypsok-http.service": f"{PYZ_PATH} serve --transport http --config {CONFIG_PATH}",
    "rypsok-stdio@.service": f"{PYZ_PATH} serve --transport stdio --config {CONFIG_PATH}",
}
HARDENING = {
    "NoNewPrivileges": "yes",
    "ProtectSystem": "strict",
    "ProtectHome": "yes",
    "PrivateTmp": "yes",
    "PrivateDevices": "yes",
    "ProtectKernelTunables": "yes",
    "ProtectKernelModules": "yes",
    "ProtectControlGroups": "yes",
    "ProtectProc": "invisible",
    "ProcSubset": "pid",
    "RestrictNamespaces": "yes",
    "RestrictSUIDSGID": "yes",
    "LockPersonality": "yes",
    "MemoryDenyWriteExecute": "yes",
    "SystemCallFilter": "@system-service",
    "SystemCallArchitectures": "native",
    "CapabilityBoundingSet": "",
    "AmbientCapabilities": "",
    "UMask": "077",
    "MemoryMax": f"{MEMORY_MAX_MIB}M",
    "MemorySwapMax": "0",
    "TasksMax": "64",
    "DynamicUser": "yes",
}


@pytest.mark.parametrize("unit", sorted(SERVICES))
def test_req_dep_004_unit_runs_the_pyz_with_plain_python(unit: str) -> None:
    service = _unit(unit)["Service"]
    assert _one(service, "ExecStart") == f"/usr/bin/python3 {SERVICES[unit]}"


@pytest.mark.parametrize("unit", sorted(SERVICES))
def test_req_dep_004_unit_hardening_lines(unit: str) -> None:
    service = _unit(unit)["Service"]
    for key, want in HARDENING.items():
        assert _one(service, key) == want, key
    # CPython's event loop needs AF_UNIX (socketpair); fetches need both IPs.
    assert set(_one(service, "RestrictAddressFamilies").split()) == {
        "AF_INET",
        "AF_INET6",
        "AF_UNIX",
    }
    # max_connections (64) + 64 descriptors at least (LIM-H1 and the book).
    assert int(_one(service, "LimitNOFILE")) >= 128
    assert _one(service, "User") not in ("root", "0")


@pytest.mark.parametrize("unit", sorted(SERVICES))
def test_req_dep_004_unit_shiv_root_is_its_own_state_directory(unit: str) -> None:
    """ProtectSystem=strict leaves the state directory as the one writable place."""
    service = _unit(unit)["Service"]
    env = dict(v.split("=", 1) for v in service.get("Environment", []))
    assert env["SHIV_ROOT"] == f"/var/lib/{_one(service, 'StateDirectory')}"
    assert "ReadWritePaths" not in service


def test_req_dep_001_stdio_service_speaks_on_the_socket_and_logs_to_the_journal() -> None:
    socket = _unit("rypsok-stdio.socket")["Socket"]
    assert _one(socket, "Accept") == "yes"
    assert _one(socket, "ListenStream").startswith("/run/")
    assert _one(socket, "SocketMode") == "0600"
    service = _unit("rypsok-stdio@.service")["Service"]
    assert _one(service, "StandardInput") == "socket"
    assert _one(service, "StandardOutput") == "socket"
    # Standard output is protocol only: the logs must never share it.
    assert _one(service, "StandardError") == "journal"


def _worst_case_mib(err: str) -> int:
    found = re.search(r"memory: worst case about (\d+) MiB", err)
    assert found, err
    return int(found.group(1))


def test_req_dep_004_units_configuration_fits_memory_max() -> None:
    """check's estimate for deploy/rypsok.toml stays under the units' MemoryMax."""
    run = check(DEPLOY / "rypsok.toml")
    assert run.code == 0, run.err
    assert "warning" not in run.err, run.err
    assert _worst_case_mib(run.err) <= MEMORY_MAX_MIB


def test_req_dep_004_container_configuration_fits_its_memory_flag() -> None:
    run = check(DEPLOY / "rypsok-container.toml", clean_env(RYPSOK_TOKEN_MIMLYS="t" * 44))
    assert run.code == 0, run.err
    assert "warning: memory" not in run.err, run.err
    assert _worst_case_mib(run.err) <= MEMORY_MAX_MIB
    assert "bind=0.0.0.0:8737 callers=1" in run.err


# ---------------------------------------------------------------------------
# The container recipe


def _dockerfile() -> list[tuple[str, str]]:
    """(instruction, arguments), continuation lines joined, comments dropped."""
    text = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    text = re.sub(
        r"\\\n", " ", "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("#"))
    )
    out = []
    for line in text.splitlines():
        if line.strip():
            word, _, rest = line.strip().partition(" ")
            out.append((word.upper(), " ".join(rest.split())))
    return out


def _stages() -> list[list[tuple[str, str]]]:
    stages: list[list[tuple[str, str]]] = []
    for instruction in _dockerfile():
        if instruction[0] == "FROM":
            stages.append([])
        assert stages, "an instruction before the first FROM"
        stages[-1].append(instruction)
    return stages


def test_req_dep_005_image_bases_are_pinned_by_digest() -> None:
    stages = _stages()
    assert len(stages) == 3
    for stage in stages:
        image = stage[0][1].split()
        image = [w for w in image if not w.startswith("--") and w != "AS"]
        assert DIGEST.search(image[0]), stage[0]
    assert stages[2][0][1].startswith("gcr.io/distroless/python3-debian12:nonroot@sha256:")
    assert [stage[0][1].split()[-1] for stage in stages[:2]] == ["build", "unpack"]


def test_issue_18_the_image_builds_from_a_clean_clone() -> None:
    """The first stage builds the target's release file from the hashed locks; nothing
    of dist/ is needed, and the build context holds only what the stage copies."""
    build, unpack, _ = _stages()
    copies = [args for i, args in build if i == "COPY"]
    assert copies == [
        "pyproject.toml README.md build_zipapp.py requirements.lock requirements-test.lock ./",
        "rypsok/ rypsok/",
    ]
    run = " ".join(args for i, args in build if i == "RUN")
    assert "pip install -q --disable-pip-version-check --require-hashes -r requirements.lock" in run
    assert "--require-hashes -r requirements-test.lock" in run
    built = re.search(r"build_zipapp\.py --platform \"\$arch\" --python (\S+) --out (\S+)", run)
    assert built and built[1] == "3.11" and built[2] == "/release"
    assert ("COPY", "--from=build /release/ /release/") in unpack
    assert not any("dist/" in args for i, args in build + unpack if i == "COPY")
    ignore = (DEPLOY / "Dockerfile.dockerignore").read_text(encoding="utf-8").split()
    sent = {
        "pyproject.toml",
        "README.md",
        "build_zipapp.py",
        "requirements.lock",
        "requirements-test.lock",
        "rypsok/",
        "deploy/rypsok-container.toml",
    }
    assert "*" in ignore and {w[1:] for w in ignore if w.startswith("!")} == sent


def test_issue_18_the_image_checks_its_health_with_probe() -> None:
    *_, final = _stages()
    [check] = [args for i, args in final if i == "HEALTHCHECK"]
    assert check.endswith(f'CMD ["/usr/bin/python3", "{PYZ_PATH}", "probe"]')
    assert "probe" in rypsok_cli_commands()


def rypsok_cli_commands() -> set[str]:
    from rypsok.commands.cli import _parser

    actions = [a for a in _parser()._actions if a.dest == "command"]
    return set(actions[0].choices or ())


def test_req_dep_004_image_runs_as_non_root_from_a_read_only_shiv_root() -> None:
    _, unpack, final = _stages()
    # The runtime image has no shell: nothing may RUN there.
    assert [i for i, _ in final].count("RUN") == 0
    users = [args for i, args in final if i == "USER"]
    assert len(users) == 1
    uid, _, gid = users[0].partition(":")
    assert uid.isdigit() and int(uid) != 0 and gid.isdigit() and int(gid) != 0
    env = " ".join(args for i, args in final if i == "ENV")
    assert "SHIV_ROOT=/opt/rypsok/shiv" in env.split()
    assert f"RYPSOK_CONFIG={CONFIG_PATH}" in env.split()
    assert ("COPY", "--from=unpack /opt/rypsok /opt/rypsok") in final
    assert ("COPY", f"deploy/rypsok-container.toml {CONFIG_PATH}") in final
    assert ("ENTRYPOINT", f'["/usr/bin/python3", "{PYZ_PATH}"]') in final
    # The unpack stage fills that same SHIV_ROOT from that same file name
    # (shiv names the folder after it) and compiles it.
    run = " ".join(args for i, args in unpack if i == "RUN")
    assert f"SHIV_ROOT=/opt/rypsok/shiv SHIV_INTERPRETER=1 python3 {PYZ_PATH} -c pass" in run
    assert "compileall -q --invalidation-mode unchecked-hash /opt/rypsok/shiv" in run
    assert "sha256sum --check" in run


def test_req_dep_005_image_takes_the_cp311_release_file_of_its_cpu() -> None:
    """The Dockerfile's pattern picks exactly the file build_zipapp.py names."""
    run = " ".join(args for i, args in _stages()[1] if i == "RUN")
    found = re.search(r"cp (/release/\S+) " + re.escape(PYZ_PATH), run)
    assert found, run
    pattern = found.group(1).replace('"$arch"', "{arch}").removeprefix("/release/")
    for arch in bz.ARCHES:
        names = [bz.artifact_name(rypsok.__version__, t) for t in bz.release_targets()]
        wanted = bz.artifact_name(rypsok.__version__, bz.Target("3.11", arch))
        assert fnmatch.filter(names, pattern.format(arch=arch)) == [wanted]


# ---------------------------------------------------------------------------
# The docs


def test_req_dep_004_docs_give_the_docker_run_line_and_the_units() -> None:
    doc = (REPO / "docs" / "deployment.md").read_text(encoding="utf-8")
    runs = [block for block in re.findall(r"```sh\n(.*?)```", doc, re.S) if "docker run" in block]
    assert runs, "no docker run line in docs/deployment.md"
    words = shlex.split(runs[0].replace("\\\n", " "), comments=True)
    for flag in (
        "--read-only",
        "--cap-drop",
        "--security-opt",
        "--memory",
        "--memory-swap",
        "--pids-limit",
    ):
        assert flag in words, flag
    assert words[words.index("--cap-drop") + 1] == "ALL"
    assert words[words.index("--security-opt") + 1] == "no-new-privileges"
    assert words[words.index("--memory") + 1] == f"{MEMORY_MAX_MIB}m"
    assert words[words.index("--memory-swap") + 1] == f"{MEMORY_MAX_MIB}m"
    assert words[words.index("--pids-limit") + 1] == "64"
    for name in (
        "deploy/Dockerfile",
        "rypsok-http.service",
        "rypsok-stdio.socket",
        "rypsok-stdio@.service",
        "sha256sum --check",
        "tools/release",
        "tools/rootfs-test",
    ):
        assert name in doc, name


def test_release_tools_are_executable() -> None:
    for tool in ("tools/release", "tools/rootfs-test"):
        assert (REPO / tool).stat().st_mode & 0o111, tool
