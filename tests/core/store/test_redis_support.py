"""The test support's redis-server: found, or the test fails with the setup sentence."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.redis import NOT_INSTALLED, redis_server, redis_server_binary


def test_without_redis_server_the_test_fails_with_the_setup_sentence(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("RYPSOK_REDIS_SERVER", str(tmp_path / "no-such-redis-server"))
    with pytest.raises(pytest.fail.Exception) as failed:
        redis_server_binary()
    assert str(failed.value) == NOT_INSTALLED
    monkeypatch.delenv("RYPSOK_REDIS_SERVER")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(pytest.fail.Exception):
        redis_server_binary()


def test_a_stopped_server_restarts_at_the_same_address_and_a_paused_one_does_not_answer(
    tmp_path: Path,
) -> None:
    with redis_server(tmp_path) as server:
        url = server.url
        assert server.ping()
        with server.paused():
            assert not server.ping(timeout_s=0.2)
        assert server.ping()
        server.kill()
        assert not server.ping()
        server.restart()
        assert server.url == url and server.ping()
    assert not server.ping()
