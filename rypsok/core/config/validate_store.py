"""[store]: where replicas keep the limits, cache and engine health they share."""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Mapping
from urllib.parse import urlsplit

from rypsok.core import limits
from rypsok.core.config import secrets
from rypsok.core.config.positions import Path
from rypsok.core.config.problems import describe
from rypsok.core.config.reader import MISSING, Reader, Table
from rypsok.core.config.settings import MEMORY_STORE, STORE_BACKENDS, StoreSettings
from rypsok.core.config.validate_service import NOT_A_VARIABLE

L = limits.get
KEYS = ("backend", "url_env", "url_file", "key_prefix", "replicas", "timeout_ms", "max_connections")
URL_SCHEMES = ("redis", "rediss", "unix")
# Letters, digits and the separators Redis users put in prefixes; no space, no glob
# character, so that a prefix is safe in a SCAN pattern and readable in redis-cli.
_PREFIX = re.compile(r"[A-Za-z0-9_.:/-]+")
NO_CLIENT = (
    'backend "redis" needs the Redis client, which this build lacks: install '
    "rypsok[redis], or run the release's rypsok-redis pyz"
)


def store_of(r: Reader, doc: Table, env: Mapping[str, str]) -> StoreSettings:
    path: Path = ("store",)
    raw = r.table(doc, (), "store")
    r.unknown(raw, path, KEYS)
    backend = r.choice(raw, path, "backend", STORE_BACKENDS, "memory")
    prefix = r.text(
        raw,
        path,
        "key_prefix",
        MEMORY_STORE.key_prefix,
        f"letters, digits and _ . : / - up to {limits.default('LIM-D6')} characters",
        _prefix,
    )
    replicas = r.integer(raw, path, "replicas", L("LIM-D2"))
    timeout_ms = r.integer(raw, path, "timeout_ms", L("LIM-D1"))
    connections = r.integer(raw, path, "max_connections", L("LIM-D3"))
    if backend == "memory":
        for name in ("url_env", "url_file"):
            if name in raw:
                r.add((*path, name), 'only backend "redis" reads a URL', key=True)
        return StoreSettings("memory", None, None, prefix, replicas, timeout_ms, connections)
    url, url_env = _url(r, raw, path, env)
    if importlib.util.find_spec("redis") is None:
        r.add((*path, "backend"), NO_CLIENT)
    return StoreSettings("redis", url, url_env, prefix, replicas, timeout_ms, connections)


def _prefix(text: str) -> str | None:
    ok = _PREFIX.fullmatch(text) and len(text) <= limits.default("LIM-D6")
    return text if ok else None


def _url(
    r: Reader, raw: Table, path: Path, env: Mapping[str, str]
) -> tuple[secrets.Secret | None, str | None]:
    """The store's URL, by reference; its text is never put in a message (it may hold a
    password), only which reference could not be read and why."""
    url_env, url_file = raw.get("url_env", MISSING), raw.get("url_file", MISSING)
    if (url_env is MISSING) == (url_file is MISSING):
        r.add(path, 'backend "redis" needs exactly one of url_env and url_file', key=True)
        return None, None
    if url_env is not MISSING:
        where: Path = (*path, "url_env")
        if not isinstance(url_env, str):
            r.add(where, f"expected a variable name, found {describe(url_env)}")
            return None, None
        if not secrets.is_variable_name(url_env):
            r.add(where, NOT_A_VARIABLE)
            return None, None
        got = secrets.from_env(url_env, env)
        name: str | None = url_env
    else:
        where = (*path, "url_file")
        if not isinstance(url_file, str) or not url_file:
            r.add(where, f"expected a file path, found {describe(url_file)}")
            return None, None
        got = secrets.from_file(url_file, "url_file")
        name = None
    if got.secret is None:
        r.add(where, got.problem or "the URL cannot be read")
        return None, name
    problem = url_problem(got.secret.reveal())
    if problem is not None:
        r.add(where, problem)
        return None, name
    return got.secret, name


def url_problem(url: str) -> str | None:
    """What is wrong with a store URL, in words that never repeat any part of it."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a port that is not a number in range
    except ValueError:
        return "the URL it names is not a valid URL"
    if parts.scheme not in URL_SCHEMES:
        return "the URL it names must start with redis://, rediss:// or unix://"
    if parts.scheme == "unix" and not parts.path:
        return "the unix:// URL it names has no socket path"
    if parts.scheme != "unix" and not parts.hostname:
        return "the URL it names has no host"
    return None
