"""[store]: the backend setting, its URL as a secret by reference, and what check says."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from rypsok.core.config import ConfigError, load
from rypsok.core.config.report import memory_of
from rypsok.core.config.validate_store import NO_CLIENT
from tests.support.paths import REPO
from tests.support.run import check, clean_env

PASSWORD = "s3cret-pass-Zq9"
URL = f"redis://:{PASSWORD}@127.0.0.1:6390/0"


def _write(tmp_path: Path, store: str, more: str = "") -> Path:
    path = tmp_path / "rypsok.toml"
    path.write_text(f"config_version = 1\n{more}\n[store]\n{store}\n", encoding="utf-8")
    return path


def _problems(path: Path, env: dict[str, str]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load(str(path), env)
    return [p.render() for p in caught.value.problems]


def test_the_default_store_is_this_process_and_loads_no_redis_client() -> None:
    # A fresh interpreter: the default configuration and a built core import nothing of
    # the Redis client or the redis backend (nothing new is needed by default).
    code = (
        "import sys\n"
        "from rypsok.core.config import load\n"
        "from rypsok.core.facade import Rypsok\n"
        "c = load(None, {})\n"
        "core = Rypsok(c, tls=__import__('ssl').create_default_context())\n"
        "assert c.store.backend == 'memory', c.store\n"
        "assert core.store.backend == 'memory'\n"
        "bad = [m for m in sys.modules if m == 'redis' or m.startswith('redis.')"
        " or m == 'rypsok.core.store.redis_store']\n"
        "assert not bad, bad\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr


def test_a_redis_store_reads_its_url_from_the_named_variable(tmp_path: Path) -> None:
    path = _write(tmp_path, 'backend = "redis"\nurl_env = "STORE_URL"\nreplicas = 3')
    config = load(str(path), {"STORE_URL": URL})
    st = config.store
    assert (st.backend, st.url_env, st.replicas, st.key_prefix) == (
        "redis",
        "STORE_URL",
        3,
        "rypsok:",
    )
    assert st.url is not None and st.url.reveal() == URL
    assert PASSWORD not in repr(st) and PASSWORD not in str(st)


def test_a_redis_store_reads_its_url_from_a_file(tmp_path: Path) -> None:
    secret = tmp_path / "url"
    secret.write_text(URL + "\n", encoding="utf-8")
    path = _write(tmp_path, f'backend = "redis"\nurl_file = "{secret}"')
    st = load(str(path), {}).store
    assert st.url is not None and st.url.reveal() == URL and st.url_env is None


@pytest.mark.parametrize(
    ("store", "env", "said"),
    [
        ('backend = "redis"', {}, "needs exactly one of url_env and url_file"),
        (
            'backend = "redis"\nurl_env = "A"\nurl_file = "/x"',
            {"A": URL},
            "needs exactly one of url_env and url_file",
        ),
        ('backend = "redis"\nurl_env = "UNSET_ONE"', {}, "UNSET_ONE is unset or empty"),
        ('url_env = "A"', {"A": URL}, 'only backend "redis" reads a URL'),
        ('backend = "disk"', {}, "expected one of memory, redis"),
        ('key_prefix = "has space"', {}, "expected letters, digits"),
        ('key_prefix = "a*"', {}, "expected letters, digits"),
        ("replicas = 0", {}, "expected an integer from 1 to 1000"),
        ("timeout_ms = 500", {}, "expected an integer from 5 to 200"),
    ],
)
def test_store_settings_out_of_their_forms_are_refused(
    tmp_path: Path, store: str, env: dict[str, str], said: str
) -> None:
    problems = _problems(_write(tmp_path, store), env)
    assert any(said in p for p in problems), problems


@pytest.mark.parametrize(
    "url",
    [
        f"http://:{PASSWORD}@127.0.0.1:6379",
        f"redis://:{PASSWORD}@127.0.0.1:notaport",
        f"redis://:{PASSWORD}@/0",
    ],
)
def test_a_bad_store_url_is_refused_without_repeating_any_of_it(tmp_path: Path, url: str) -> None:
    problems = _problems(
        _write(tmp_path, 'backend = "redis"\nurl_env = "STORE_URL"'), {"STORE_URL": url}
    )
    assert problems and all(PASSWORD not in p and "127.0.0.1" not in p for p in problems)
    assert any("store.url_env" in p for p in problems), problems


def test_without_the_redis_client_the_redis_backend_is_refused_with_the_way_to_get_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "redis" else real(name, *a)
    )
    problems = _problems(
        _write(tmp_path, 'backend = "redis"\nurl_env = "STORE_URL"'), {"STORE_URL": URL}
    )
    assert any(NO_CLIENT in p for p in problems), problems
    assert "rypsok[redis]" in NO_CLIENT


def test_check_reports_the_store_without_its_url_and_warns_of_two_risks(tmp_path: Path) -> None:
    remote = f"redis://:{PASSWORD}@redis.internal.example:6379/0"
    path = _write(tmp_path, 'backend = "redis"\nurl_env = "STORE_URL"\nkey_prefix = "team-a:"')
    run = check(path, clean_env(STORE_URL=remote))
    assert run.code == 0, run.err
    assert PASSWORD not in run.err and "redis.internal.example" not in run.err
    assert (
        "rypsok: store: backend=redis url_env=STORE_URL key_prefix=team-a: replicas=1 "
        "timeout_ms=100 max_connections=32"
    ) in run.lines
    warnings = [line for line in run.lines if line.startswith("rypsok: warning: store.")]
    assert [w.split(":")[2].strip() for w in warnings] == ["store.url_env", "store.replicas"]


def test_check_does_not_warn_for_rediss_or_loopback_with_replicas_set(tmp_path: Path) -> None:
    for url in ("rediss://redis.internal.example:6380/0", "redis://127.0.0.1:6379/0"):
        path = _write(tmp_path, 'backend = "redis"\nurl_env = "STORE_URL"\nreplicas = 3')
        run = check(path, clean_env(STORE_URL=url))
        assert run.code == 0, run.err
        assert not [line for line in run.lines if "warning: store." in line], run.lines


def test_the_memory_estimate_leaves_out_a_cache_that_lives_in_redis(tmp_path: Path) -> None:
    cache = "[cache]\nenabled = true\nmax_entries = 10000\nmax_entry_bytes = 65536\n"
    local = load(str(_write(tmp_path, 'backend = "memory"', cache)), {})
    shared = load(
        str(_write(tmp_path, 'backend = "redis"\nurl_env = "STORE_URL"', cache)),
        {"STORE_URL": URL},
    )
    # 10000 x (64 KiB + 4 KiB beside each entry's text) = 664.1 MiB, rounded up.
    assert memory_of(local).cache == 665
    assert memory_of(shared).cache == 0
    assert memory_of(local).total - memory_of(shared).total == 665
