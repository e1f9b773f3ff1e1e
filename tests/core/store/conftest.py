"""Fixtures of the store's tests: a real redis-server per test, captured log lines."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest

from rypsok.core.telemetry import LEVELS, log
from tests.support.redis import RedisServer, redis_server


@pytest.fixture
def anyio_backend() -> str:
    # redis.asyncio runs on asyncio only, as serve does.
    return "asyncio"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RedisServer]:
    with redis_server(tmp_path) as started:
        yield started


@pytest.fixture
def logs(monkeypatch: pytest.MonkeyPatch) -> io.StringIO:
    """Every rypsok log line of the test, as written."""
    stream = io.StringIO()
    monkeypatch.setattr(log, "_stream", stream)
    monkeypatch.setattr(log, "_threshold", LEVELS["info"])
    return stream
