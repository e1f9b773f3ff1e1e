"""rypsok/protocol/sdk_private.py: the SDK's private names are taken only from the
version they were read in; with another, nothing private is imported, and stdio
answers the same through anyio's public memory streams."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from typing import Any

import anyio
import pytest

from rypsok.core.config import load
from rypsok.core.facade import Rypsok
from rypsok.protocol import sdk_private
from rypsok.protocol.stdio import serve_stdio
from tests.support.mcp_lines import HANDSHAKE, call, lines, request
from tests.support.paths import REPO
from tests.support.run import clean_env


def test_the_hooks_are_pinned_to_the_sdk_of_the_lock_and_on_with_it() -> None:
    # A new SDK in the lock fails here until its private names are read again and
    # PINNED is moved (docs/dependencies.md, "Taking a new SDK minor").
    lock = (REPO / "requirements.lock").read_text(encoding="utf-8")
    pinned = re.search(r"(?m)^mcp==(\S+)", lock)
    assert pinned is not None and pinned.group(1) == sdk_private.PINNED
    assert sdk_private.INSTALLED == sdk_private.PINNED
    assert sdk_private.AVAILABLE and sdk_private.UNAVAILABLE is None


ANOTHER_VERSION = """
import importlib.metadata
real = importlib.metadata.version
importlib.metadata.version = lambda name: "2.4.0" if name == "mcp" else real(name)
from anyio.streams.memory import MemoryObjectSendStream
from rypsok.protocol import sdk_private
(sender, _), _ = sdk_private.message_streams()
print(sdk_private.AVAILABLE, sdk_private.UNAVAILABLE, sep="|")
print(hasattr(sdk_private, "create_context_streams"), hasattr(sdk_private, "_modern"))
print(isinstance(sender, MemoryObjectSendStream), sdk_private.SSE_HEADERS)
"""


def test_another_sdk_version_imports_nothing_private_and_says_why() -> None:
    run = subprocess.run(
        [sys.executable, "-c", ANOTHER_VERSION],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=clean_env(),
        timeout=60,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        "False|mcp 2.4.0 is installed; the hooks were read in 2.3.0",
        "False False",
        "True []",
    ]


# ------------------------------------------------------------------------ stdio

CONVERSATION: list[dict[str, Any] | bytes] = [
    request(1, "server/discover"),
    request(2, "tools/list"),
    call(3, "engine_status"),
    call(4, "no_such_tool"),
    call(5, "web_search", {"query": 5}),
    b"{not json\n",  # no answer; serving goes on
    HANDSHAKE[0],
    HANDSHAKE[1],
    request(6, "tools/list", modern=False),
    call(7, "engine_status", modern=False),
    request(8, "ping", modern=False),
]


def _stdio_answers() -> list[bytes]:
    """Each line of CONVERSATION sent once the previous one was answered; the answers."""
    core = Rypsok.from_config(load(None, clean_env()))
    read_in, write_in = os.pipe()
    read_out, write_out = os.pipe()
    server = threading.Thread(
        target=anyio.run,
        daemon=True,
        args=(serve_stdio, core, read_in, os.fdopen(write_out, "wb", buffering=0), False),
    )
    server.start()
    got: list[bytes] = []
    with os.fdopen(read_out, "rb") as out:
        try:
            for item in CONVERSATION:
                os.write(write_in, item if isinstance(item, bytes) else lines(item))
                if isinstance(item, dict) and "id" in item:
                    answer = out.readline()
                    assert answer, "the server stopped answering"
                    got.append(answer)
        finally:
            os.close(write_in)
            server.join(timeout=30)
    assert not server.is_alive()
    return got


def test_stdio_answers_the_same_through_the_public_streams(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    through_private = _stdio_answers()
    monkeypatch.setattr(sdk_private, "AVAILABLE", False)
    through_public = _stdio_answers()
    assert through_public == through_private
    assert [json.loads(a).get("id") for a in through_private] == [1, 2, 3, 4, 5, 0, 6, 7, 8]
