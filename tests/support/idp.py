"""A real OpenID provider on 127.0.0.1 for the OAuth tests: `oidc-provider` (node), started
from tests/support/oauth_js/provider.mjs as a child process and stopped at the end.

A real authorization server, not a stand-in, so that what rypsok accepts is what a real one
issues: RFC 9068 JWT access tokens (typ at+jwt, ES256 or RS256, keys made at start) or
opaque ones checked by introspection, resource indicators, dynamic registration, PKCE,
refresh, revocation. Login and consent are automated (account "alice"): following the
authorization URL's redirects ends at the client's redirect URI with a code.

node and the npm packages (tests/support/oauth_js/node_modules) come from `bash tools/setup`;
without them the test fails with that advice (it is not skipped).
"""

from __future__ import annotations

import json
import select
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.support.paths import REPO

OAUTH_JS = REPO / "tests" / "support" / "oauth_js"
SETUP_ADVICE = "run `bash tools/setup` (it installs them with npm ci; it needs node 20+ and npm)"
READY_S = 20.0
STOP_S = 5.0


def node_script(name: str) -> list[str]:
    """The command that runs one of oauth_js's scripts; fails the test when node or the
    npm packages are missing, saying how to get them."""
    # tools/setup's own Node.js (PyPI's wheel) when the machine had none new enough.
    own = REPO / ".venv-node" / "nodejs" / "bin" / "node"
    node = str(own) if own.is_file() else shutil.which("node")
    if node is None:
        pytest.fail(f"node is not on PATH: {SETUP_ADVICE}", pytrace=False)
    if not (OAUTH_JS / "node_modules" / "oidc-provider").is_dir():
        pytest.fail(f"{OAUTH_JS / 'node_modules'} is missing: {SETUP_ADVICE}", pytrace=False)
    return [node, str(OAUTH_JS / name)]


@dataclass
class Idp:
    """A running provider. The endpoints are in its discovery document,
    `<issuer>/.well-known/openid-configuration` (introspection, revocation, jwks, ...)."""

    issuer: str
    port: int
    options: dict[str, Any]
    log: Path  # its stderr: oidc-provider's warnings and the errors it answered with

    def stderr(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


@contextmanager
def start_idp(**options: Any) -> Iterator[Idp]:
    """Start a provider with provider.mjs's options (port, resource, format "jwt"|"opaque",
    alg "ES256"|"RS256", access_ttl_s, scopes, grant_scopes, introspection_client={"id",
    "secret"}); yield it once it listens; stop it (SIGTERM, then SIGKILL) at the end."""
    command = node_script("provider.mjs")
    with tempfile.TemporaryDirectory(prefix="rypsok-idp-") as tmp:
        log = Path(tmp) / "stderr.log"
        # stderr to a file, not a pipe: a provider that logs a lot never blocks on it.
        with log.open("wb") as err:
            process = subprocess.Popen(
                [*command, json.dumps(options)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=err,
                cwd=OAUTH_JS,
            )
        try:
            issuer = _wait_ready(process, log)
            yield Idp(issuer, urlsplit(issuer).port or 0, options, log)
        finally:
            _stop(process)


def _wait_ready(process: subprocess.Popen[bytes], log: Path) -> str:
    """The issuer from the one `READY <issuer>` line, or a failed test with its stderr."""
    assert process.stdout is not None
    deadline = time.monotonic() + READY_S
    while (left := deadline - time.monotonic()) > 0:
        readable, _, _ = select.select([process.stdout], [], [], left)
        if readable:
            line = process.stdout.readline().decode(errors="replace").strip()
            if line.startswith("READY "):
                return line.removeprefix("READY ")
            if not line and process.poll() is not None:
                break  # EOF: it exited
    exited = process.poll() is not None
    _stop(process)
    why = f"exited ({process.returncode})" if exited else f"did not start in {READY_S:g} s"
    pytest.fail(f"oidc-provider {why}; its stderr:\n{log.read_text(errors='replace')}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(STOP_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    if process.stdout is not None:
        process.stdout.close()
