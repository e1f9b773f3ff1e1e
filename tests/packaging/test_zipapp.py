"""The release artifact: build_zipapp.py gives a reproducible rypsok.pyz that
runs with nothing but the base python3 (DESIGN.md, decision 10; REQ-OPS-001).

The builds go to temporary folders, never to the repo's dist/. One pair of
builds serves every test in this module: "build-a" with `--with redis` (so it
also writes rypsok-redis.pyz, the file that carries the Redis store's client),
"build-b" without. Their rypsok.pyz must be the same bytes: the option adds a
file and changes nothing in the default one.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

import rypsok
from tests.support.paths import REPO
from tests.support.pyz import REDIS_PYZ, built_pyz, built_redis_pyz

pytestmark = pytest.mark.slow

RUN_TIMEOUT_S = 120


def _is_venv_python(exe: Path) -> bool:
    """A venv's interpreter has pyvenv.cfg one or two levels above it."""
    return any((p / "pyvenv.cfg").is_file() for p in (exe.parent, exe.parent.parent))


def _base_python() -> str:
    """The interpreter beneath any venv, of the same version as this one.

    The pyz carries compiled wheels for this CPython version, so the base
    interpreter of the running one is the right one to try it with.
    """
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    candidates = [
        getattr(sys, "_base_executable", None),
        str(Path(sysconfig.get_config_var("BINDIR") or "/nonexistent") / version),
        shutil.which(version),
        shutil.which("python3"),
    ]
    for candidate in candidates:
        if candidate and Path(candidate).is_file() and not _is_venv_python(Path(candidate)):
            return candidate
    pytest.fail(f"no {version} outside a venv found among {candidates}")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def two_builds(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return built_pyz(tmp_path_factory, "build-a"), built_pyz(tmp_path_factory, "build-b")


def _run_pyz(pyz: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the pyz as an operator would: base python3, no venv, bare environment."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {
        "PATH": os.defpath,
        "HOME": str(home),
        "SHIV_ROOT": str(tmp_path / "shiv"),
    }
    return subprocess.run(
        [_base_python(), str(pyz), *args],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )


def test_req_ops_001_pyz_build_is_reproducible_and_checksummed(
    two_builds: tuple[Path, Path],
) -> None:
    first, second = two_builds
    # The first was built with --with redis: the option leaves the default file alone.
    assert _sha256(first) == _sha256(second), "two builds of one tree differ"
    redis = first.parent / REDIS_PYZ
    assert (first.parent / "SHA256SUMS").read_text(encoding="ascii") == (
        f"{_sha256(redis)}  {REDIS_PYZ}\n{_sha256(first)}  rypsok.pyz\n"
    )
    assert sorted(p.name for p in second.parent.iterdir()) == ["SHA256SUMS", "rypsok.pyz"]
    sums = (second.parent / "SHA256SUMS").read_text(encoding="ascii")
    assert sums == f"{_sha256(second)}  rypsok.pyz\n"


def test_req_ops_001_pyz_sha256sums_passes_sha256sum_check(
    two_builds: tuple[Path, Path],
) -> None:
    assert shutil.which("sha256sum") is not None, "coreutils' sha256sum is needed"
    pyz = two_builds[0]
    proc = subprocess.run(
        ["sha256sum", "--check", "SHA256SUMS"],
        cwd=pyz.parent,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines() == [f"{REDIS_PYZ}: OK", "rypsok.pyz: OK"]


def test_req_ops_001_pyz_runs_version_and_check_with_plain_python(
    two_builds: tuple[Path, Path], tmp_path: Path
) -> None:
    pyz = two_builds[0]

    # First run unpacks under SHIV_ROOT; the later ones reuse it.
    version = _run_pyz(pyz, tmp_path, "--version")
    assert version.returncode == 0, version.stderr
    assert version.stdout == f"rypsok {rypsok.__version__}\n"
    assert (tmp_path / "shiv").is_dir(), "shiv did not unpack under SHIV_ROOT"

    no_config = _run_pyz(pyz, tmp_path, "check")
    assert no_config.returncode == 0, no_config.stderr
    assert no_config.stdout == ""

    invalid = tmp_path / "invalid.toml"
    invalid.write_text("[service\nthis is not = = toml\n", encoding="utf-8")
    refused = _run_pyz(pyz, tmp_path, "check", "--config", str(invalid))
    assert refused.returncode == 1, refused.stderr
    assert refused.stdout == ""
    assert refused.stderr.strip(), "check refused the file without saying why"


def test_req_mcp_002_pyz_serves_mcp_on_stdio_with_plain_python(
    two_builds: tuple[Path, Path], tmp_path: Path
) -> None:
    import json

    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    lines = "".join(
        json.dumps(m) + "\n"
        for m in (
            {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}},
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "engine_status", "arguments": {}, "_meta": meta},
            },
        )
    )
    home = tmp_path / "home"
    home.mkdir()
    proc = subprocess.run(
        [_base_python(), str(two_builds[0]), "serve"],
        cwd=tmp_path,
        input=lines,
        env={"PATH": os.defpath, "HOME": str(home), "SHIV_ROOT": str(tmp_path / "shiv")},
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    answers = {m["id"]: m for m in map(json.loads, proc.stdout.splitlines())}
    assert answers[1]["result"]["supportedVersions"][0] == "2026-07-28"
    assert answers[2]["result"]["structuredContent"]["outcome"] == "ok"


def test_req_doc_002_tutorial_1_runs_end_to_end_from_the_pyz(
    two_builds: tuple[Path, Path], tmp_path: Path
) -> None:
    """Tutorial 1 as a reader with only the pyz follows it: `check`, then the piped
    first-search.jsonl, against the stand-in the recorded answers came from (the same code
    as tools/record_examples.py). Both must be what the tutorial shows."""
    from tools import record_examples as RECORD

    command = [_base_python(), str(two_builds[0])]
    env = {"SHIV_ROOT": str(tmp_path / "shiv")}
    [check_run] = [c for c in RECORD.CHECKS if c.answer == "check-tutorial-1.txt"]
    [scenario] = [s for s in RECORD.SCENARIOS if s.name == "tutorial-1"]
    fresh = {
        **RECORD.run_check(check_run, command, env),
        **RECORD.run_scenario(scenario, command, env),
    }
    assert sorted(fresh) == [
        "check-tutorial-1.txt",
        "tutorial-1-discover.json",
        "tutorial-1-search.json",
    ]
    for name, text in fresh.items():
        assert text == (RECORD.ANSWERS / name).read_text(encoding="utf-8"), name


def test_req_perf_005_the_pyz_carries_byte_code_for_its_interpreter(
    two_builds: tuple[Path, Path],
) -> None:
    """The first run unpacks byte code instead of compiling what it imports: every
    module of rypsok and of the SDK has its .pyc, hash-based and unchecked (valid
    whatever the unpacked files' times), compiled under a fixed name."""
    first, _ = two_builds
    tag = f"cpython-{sys.version_info.major}{sys.version_info.minor}"
    with zipfile.ZipFile(first) as archive:
        names = set(archive.namelist())
        for module in ("rypsok/commands/cli", "rypsok/core/facade", "mcp/server/lowlevel/server"):
            head, _, stem = module.rpartition("/")
            pyc = f"site-packages/{head}/__pycache__/{stem}.{tag}.pyc"
            assert pyc in names, pyc
            data = archive.read(pyc)
            assert int.from_bytes(data[4:8], "little") == 0b01  # hash-based, unchecked
            code = marshal.loads(data[16:])
            assert code.co_filename == f"site-packages/{module}.py"
        sources = [n for n in names if n.startswith("site-packages/rypsok/") and n.endswith(".py")]
        for source in sources:
            head, _, name = source.rpartition("/")
            assert f"{head}/__pycache__/{name[:-3]}.{tag}.pyc" in names, source


# ---------------------------------------------------------------------------
# The trimmed pyz (issue 18, item 6)

# The top-level modules of the distributions build_zipapp.py leaves out.
_TRIMMED_MODULES = (
    "jsonschema",
    "jsonschema_specifications",
    "referencing",
    "rpds",
    "attr",
    "attrs",
    "jwt",
)


def test_issue_18_the_pyz_leaves_out_what_only_the_sdks_client_imports(
    two_builds: tuple[Path, Path],
) -> None:

    with zipfile.ZipFile(two_builds[0]) as archive:
        names = archive.namelist()
        tops = {n.split("/")[1] for n in names if n.startswith("site-packages/")}
        assert tops.isdisjoint(_TRIMMED_MODULES), tops & set(_TRIMMED_MODULES)
        assert not any(
            re.match(r"site-packages/(jsonschema|referencing|rpds_py|attrs|pyjwt)[-_]", n)
            for n in names
        )
        # Nothing kept imports them, but the SDK's client side (never run by a server).
        pattern = re.compile(
            rb"^\s*(?:import|from)\s+(" + "|".join(_TRIMMED_MODULES).encode() + rb")\b", re.M
        )
        importers = sorted(
            n
            for n in names
            if n.endswith(".py")
            and not n.startswith("site-packages/mcp/client/")
            and pattern.search(archive.read(n))
        )
    assert importers == []


def test_issue_18_the_trimmed_pyz_fetches_and_searches(
    two_builds: tuple[Path, Path], tmp_path: Path
) -> None:
    """The paths a trace of a bare session does not reach: a page parsed (html5lib,
    charset detection), a PDF read in its worker process (PDFium, from the pyz's own
    unpacked site), and engines asked, from the pyz, through the call commands."""
    from tests.support import engine_standin, pdfs, site
    from tests.support.engine_standin import tunnel
    from tests.support.moths import ARTICLE, ca_file, moth_results

    env_base = {"PATH": os.defpath, "HOME": str(tmp_path), "SHIV_ROOT": str(tmp_path / "shiv")}

    def call(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [_base_python(), str(two_builds[0]), *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            check=False,
        )

    with site.site(
        {
            "/moths": site.Page(body=ARTICLE.replace(b"utf-8", b"")),
            "/latin": site.Page(
                body="<p>Caf\u00e9 cr\u00e8me br\u00fbl\u00e9e, na\u00efve fa\u00e7ade.</p>".encode(
                    "latin-1"
                )
                * 20,
                content_type="text/html",
            ),
            "/review.pdf": site.Page(
                body=pdfs.headings_lists_table(), content_type="application/pdf"
            ),
        }
    ) as s:
        config = tmp_path / "fetch.toml"
        config.write_text('config_version = 1\n[egress]\nallow = ["127.0.0.1"]\n')
        env = {**env_base, "SSL_CERT_FILE": ca_file(tmp_path, site.CA)}
        for path, want in (
            ("/moths", "pollinators of flowers"),
            ("/latin", "crème brûlée"),
            ("/review.pdf", "| Lantern | 12 | 4.50 |"),
        ):
            run = call(env, "fetch", s.url(path), "--config", str(config))
            assert run.returncode == 0 and want in run.stdout, run.stderr
    with tunnel(moth_results) as standin:
        config = tmp_path / "search.toml"
        config.write_text(
            f'config_version = 1\n[egress]\nproxy = "{standin.url}"\n'
            '[engines.wikipedia]\ntype = "wikipedia"\ncategories = ["general"]\n'
        )
        env = {**env_base, "SSL_CERT_FILE": ca_file(tmp_path, engine_standin.CA)}
        run = call(env, "search", "moths", "--json", "--config", str(config))
    assert run.returncode == 0, run.stderr
    assert "https://en.wikipedia.org/wiki/Moth" in run.stdout


# ---------------------------------------------------------------------------
# The redis kind (issue 21): the default file carries no Redis client, the
# rypsok-redis one carries requirements-redis.lock's and nothing else more.

# Top-level folders of the distributions requirements-redis.lock adds.
_REDIS_TOPS = {"redis", "async_timeout"}
_STORE_CONFIG = 'config_version = 1\n[store]\nbackend = "redis"\nurl_env = "RYPSOK_STORE_URL"\n'
# A URL check reads and judges, never connects to: nothing listens on port 1.
_STORE_URL = "redis://127.0.0.1:1/0"


def _redis_lock_pins() -> dict[str, str]:
    text = (REPO / "requirements-redis.lock").read_text(encoding="utf-8")
    return {m[1].lower(): m[2] for m in re.finditer(r"^([A-Za-z0-9._-]+)==(\S+)", text, re.M)}


def _tops(archive: zipfile.ZipFile) -> set[str]:
    return {n.split("/")[1] for n in archive.namelist() if n.startswith("site-packages/")}


def test_the_pyz_carries_both_license_texts_of_the_project(
    two_builds: tuple[Path, Path],
) -> None:
    with zipfile.ZipFile(two_builds[0]) as archive:
        names = archive.namelist()
        for text in ("LICENSE-MIT", "LICENSE-APACHE"):
            [name] = [
                n for n in names if re.search(rf"/rypsok-[^/]+\.dist-info/licenses/{text}$", n)
            ]
            assert archive.read(name) == (REPO / text).read_bytes()


def test_issue_21_the_default_pyz_carries_no_redis_client(
    two_builds: tuple[Path, Path],
) -> None:
    for pyz in two_builds:
        with zipfile.ZipFile(pyz) as archive:
            tops = _tops(archive)
        assert tops.isdisjoint(_REDIS_TOPS), tops & _REDIS_TOPS
        assert not [t for t in tops if re.match(r"(redis|async_timeout)-.*\.dist-info$", t)]


def test_issue_21_the_redis_pyz_is_the_default_one_plus_the_redis_lock(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Every entry of the default file is in the redis file with the same bytes (but
    shiv's environment.json, whose build id hashes the contents); what it adds is the
    redis lock's distributions, at the locked versions, with their byte code."""
    plain = built_pyz(tmp_path_factory, "build-a")
    redis = built_redis_pyz(tmp_path_factory)
    with zipfile.ZipFile(plain) as a, zipfile.ZipFile(redis) as b:
        crc_a = {i.filename: i.CRC for i in a.infolist()}
        crc_b = {i.filename: i.CRC for i in b.infolist()}
        added = sorted(set(crc_b) - set(crc_a))
        assert set(crc_a) <= set(crc_b)
        assert [n for n in crc_a if crc_a[n] != crc_b[n]] == ["environment.json"]
        tops = {n.split("/")[1] for n in added}
        found = [re.fullmatch(r"(.+)-([^-]+)\.dist-info", t) for t in tops]
        versions = {m[1].replace("_", "-").lower(): m[2] for m in found if m}
        tag = f"cpython-{sys.version_info.major}{sys.version_info.minor}"
        assert f"site-packages/redis/asyncio/__pycache__/client.{tag}.pyc" in added
        assert any(n.startswith("site-packages/redis-8.") and "/licenses/" in n for n in added)
    assert all(n.startswith("site-packages/") for n in added)
    assert tops - {t for t in tops if t.endswith(".dist-info")} == _REDIS_TOPS
    assert versions == _redis_lock_pins()
    assert redis.stat().st_size > plain.stat().st_size


def test_issue_21_a_redis_store_configuration_needs_the_redis_pyz(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """check accepts [store] backend = "redis" from the redis file and refuses it from
    the default one, naming rypsok[redis]; the client imports from the redis file."""
    config = tmp_path / "store.toml"
    config.write_text(_STORE_CONFIG, encoding="utf-8")
    plain = built_pyz(tmp_path_factory, "build-a")
    redis = built_redis_pyz(tmp_path_factory)

    def run(pyz: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        home = tmp_path / "home"
        home.mkdir(exist_ok=True)
        return subprocess.run(
            [_base_python(), str(pyz), *args],
            cwd=tmp_path,
            env={
                "PATH": os.defpath,
                "HOME": str(home),
                "SHIV_ROOT": str(tmp_path / "shiv"),
                "RYPSOK_STORE_URL": _STORE_URL,
                **env,
            },
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            check=False,
        )

    version = run(redis, "--version")
    assert (version.returncode, version.stdout) == (0, f"rypsok {rypsok.__version__}\n")
    accepted = run(redis, "check", "--config", str(config))
    assert accepted.returncode == 0, accepted.stderr
    assert "is valid" in accepted.stderr
    refused = run(plain, "check", "--config", str(config))
    assert refused.returncode == 1, refused.stderr
    assert "rypsok[redis]" in refused.stderr
    assert "store.backend" in refused.stderr
    # The client and its asyncio side import from the unpacked file (SHIV_INTERPRETER
    # makes the pyz a Python with its site on the path, as deploy/Dockerfile uses it).
    probe = run(
        redis,
        "-c",
        "import redis, redis.asyncio, async_timeout; print(redis.__version__)",
        SHIV_INTERPRETER="1",
    )
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout == f"{_redis_lock_pins()['redis']}\n"
