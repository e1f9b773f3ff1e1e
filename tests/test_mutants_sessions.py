"""Callers' tokens as they are read and held (REQ-CFG-004, REQ-SEC-020, REQ-SEC-018) and the
session bound (REQ-SEC-024): cases mutation testing found unguarded (tools/mutants.py).

Each test pins a behaviour that a surviving mutant of rypsok/core/config/secrets.py or
rypsok/protocol/http/sessions.py changed while every other test passed.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable
from pathlib import Path

import pytest

from rypsok.core.config.secrets import (
    REDACTED,
    Resolved,
    Secret,
    from_env,
    from_file,
    is_variable_name,
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
