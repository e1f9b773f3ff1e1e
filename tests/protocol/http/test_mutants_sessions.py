"""Callers' tokens as they are read and held (REQ-CFG-004, REQ-SEC-020, REQ-SEC-018) and the
session bound (REQ-SEC-024): cases mutation testing found unguarded (tools/mutants.py).

Each test pins a behaviour that a surviving mutant of rypsok/core/config/secrets.py or
rypsok/protocol/http/sessions.py changed while every other test passed.
"""

from __future__ import annotations

import os
import pickle
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rypsok.core.config import secrets
from rypsok.core.config.secrets import (
    REDACTED,
    Resolved,
    Secret,
    from_env,
    from_file,
    is_variable_name,
)
from rypsok.protocol.http import sessions
from tests.support.http_harness import (
    LEGACY,
    config_text,
    legacy_headers,
    legacy_initialize,
    post,
    served,
)

BOUND = 64 * 1024  # LIM-X2


def test_req_sec_020_a_secret_shows_nothing_and_compares_only_to_itself() -> None:
    secret = Secret("hunter2-token")
    assert secret.reveal() == "hunter2-token"
    assert repr(secret) == str(secret) == f"{secret}" == f"{secret:>40}" == REDACTED
    with pytest.raises(TypeError, match=r"^a Secret cannot be pickled$"):
        pickle.dumps(secret)
    assert secret == secret
    assert secret != Secret("hunter2-token")  # no comparison by value (no timing oracle)
    assert secret != "hunter2-token"
    with pytest.raises(TypeError):
        hash(secret)


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("RYPSOK_TOKEN", True),
        ("_X", True),
        ("A" * 128, True),
        ("A" * 129, False),
        ("rypsok_token", False),
        ("1TOKEN", False),
        ("TOKEN-A", False),
        ("", False),
        ("TOKEN\n", False),
    ],
)
def test_req_cfg_004_a_token_variable_is_named_like_one(name: str, ok: bool) -> None:
    assert is_variable_name(name) is ok


def test_req_cfg_004_a_variable_is_read_trimmed_and_never_empty() -> None:
    resolved = from_env("TOK", {"TOK": "  s3cret-value \n"})
    assert resolved.secret is not None and resolved.secret.reveal() == "s3cret-value"
    assert (resolved.problem, resolved.world_readable) == (None, False)
    for env in ({}, {"TOK": ""}, {"TOK": " \t\n"}):
        assert from_env("TOK", env) == Resolved(None, "environment variable TOK is unset or empty")


def _file(tmp_path: Path, data: bytes, mode: int = 0o600) -> str:
    path = tmp_path / "token"
    path.write_bytes(data)
    os.chmod(path, mode)
    return str(path)


def test_req_cfg_004_a_file_is_read_trimmed_up_to_its_bound(tmp_path: Path) -> None:
    resolved = from_file(_file(tmp_path, b"\n s3cret-value \n"), "token_file")
    assert resolved.secret is not None and resolved.secret.reveal() == "s3cret-value"
    assert (resolved.problem, resolved.world_readable) == (None, False)
    at_bound = from_file(_file(tmp_path, b"x" * BOUND), "token_file")
    assert at_bound.secret is not None and len(at_bound.secret.reveal()) == BOUND
    assert from_file(_file(tmp_path, b"x" * (BOUND + 1)), "token_file") == Resolved(
        None, "the file named by token_file is larger than 64 KiB"
    )


def test_req_cfg_004_a_world_readable_file_is_flagged(tmp_path: Path) -> None:
    resolved = from_file(_file(tmp_path, b"s3cret-value", 0o644), "token_file")
    assert resolved.secret is not None and resolved.world_readable
    assert from_file(_file(tmp_path, b"s3cret-value", 0o640), "token_file").world_readable is False
    empty = from_file(_file(tmp_path, b" \n", 0o604), "key_file")
    assert empty == Resolved(None, "the file named by key_file is empty", True)


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        (lambda p: str(p / "absent"), "cannot be read"),
        (lambda p: str(p), "is not a regular file"),
        (lambda p: _file(p, b"\xff\xfe token"), "is not UTF-8 text"),
    ],
)
def test_req_cfg_004_an_unreadable_file_names_the_key_not_the_path(
    tmp_path: Path, make: Callable[[Path], str], problem: str
) -> None:
    path = make(tmp_path)
    resolved = from_file(path, "token_file")
    assert resolved.secret is None
    assert resolved.problem == f"the file named by token_file {problem}"
    assert str(tmp_path) not in (resolved.problem or "")


def test_req_cfg_004_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    # Opened without O_NONBLOCK, a named pipe would block startup until someone writes.
    fifo = tmp_path / "token"
    os.mkfifo(fifo)
    assert from_file(str(fifo), "token_file") == Resolved(
        None, "the file named by token_file is not a regular file"
    )


def test_req_cfg_004_a_regular_file_that_fails_to_read_names_the_key() -> None:
    # /proc/self/mem is a regular file whose first page is never mapped: reading it at
    # offset 0 fails (EIO) after open and fstat succeeded.
    assert from_file("/proc/self/mem", "token_file") == Resolved(
        None, "the file named by token_file cannot be read"
    )


def test_req_cfg_004_a_secret_file_is_opened_close_on_exec_and_without_blocking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Close-on-exec: no child process (a hook, a shell) inherits the descriptor of a token
    # file; non-blocking: a FIFO cannot hold startup (the test above shows that one).
    flags_seen: list[int] = []
    real_open = os.open

    def recording_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        flags_seen.append(flags)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(secrets.os, "open", recording_open)
    token = tmp_path / "token"
    token.write_text("a-token-of-some-length\n")
    resolved = from_file(str(token), "token_file")
    assert resolved.secret is not None and resolved.secret.reveal() == "a-token-of-some-length"
    assert flags_seen and all(f & os.O_CLOEXEC and f & os.O_NONBLOCK for f in flags_seen)
    assert all(f & (os.O_WRONLY | os.O_RDWR | os.O_CREAT) == 0 for f in flags_seen)


def _session_alive(port: int, session: str, request_id: int) -> int:
    reply = post(
        port,
        {"jsonrpc": "2.0", "id": request_id, "method": "tools/list"},
        legacy_headers(**{"Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY}),
    )
    return reply.status


@pytest.mark.usefixtures("both_lanes")
def test_req_sec_024_a_session_without_traffic_expires_and_frees_its_slot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # LIM-H6T (300 s) shortened: the session manager must be given the expiry, else the
    # SDK's own default (30 min) or none at all would keep an idle session and its slot.
    monkeypatch.setattr(sessions, "SESSION_EXPIRY_S", 0.5)
    with served(tmp_path, config_text("max_sessions = 1")) as server:
        opened = post(server.port, legacy_initialize(), legacy_headers())
        assert opened.status == 200
        session = opened.headers["mcp-session-id"]
        assert _session_alive(server.port, session, 2) == 200
        assert post(server.port, legacy_initialize(3), legacy_headers()).status == 503  # bound full
        give_up = time.monotonic() + 5
        while _session_alive(server.port, session, 4) == 200:
            assert time.monotonic() < give_up, "an idle session did not expire"
            time.sleep(0.6)
        assert post(server.port, legacy_initialize(5), legacy_headers()).status == 200


@pytest.mark.usefixtures("both_lanes")
def test_req_mcp_007_handshake_sessions_answer_as_event_streams(tmp_path: Path) -> None:
    # SSE mode: a call's answer is a stream, so a client that closes it cancels the call;
    # in the SDK's JSON mode the call would run on unseen.
    with served(tmp_path, config_text()) as server:
        opened = post(server.port, legacy_initialize(), legacy_headers())
        assert opened.status == 200
        assert opened.headers["content-type"].startswith("text/event-stream")
