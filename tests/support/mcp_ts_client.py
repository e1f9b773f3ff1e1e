"""The MCP TypeScript SDK's own client, doing the whole OAuth flow against a server, for the
OAuth tests: tests/support/oauth_js/client.mjs, run once per scenario as a child process.

The official SDK, not a client written here, so that the tests prove rypsok works with what
clients really do (discovery through the 401's resource_metadata, dynamic registration,
PKCE, the resource indicator, refresh on 401, step-up on 403). Steps and the report's
fields are described at the top of client.mjs.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from typing import Any

import pytest

from tests.support.idp import OAUTH_JS, node_script

DEADLINE_S = 60.0


def run_client(
    server_url: str, steps: Sequence[str], timeout_s: float = DEADLINE_S, **options: Any
) -> dict[str, Any]:
    """Run the steps against the MCP endpoint `server_url` (e.g. http://127.0.0.1:P/mcp) and
    return client.mjs's report. Options: scope (what to ask the IdP for), client_name.

    A step that fails is in the report (ok false, error), not raised: tests assert on it.
    """
    # The client's own deadline comes first, so that a stuck step still yields a report.
    args = {"server_url": server_url, "steps": list(steps), **options}
    args["timeout_ms"] = int(max(timeout_s - 5, 1) * 1000)
    try:
        proc = subprocess.run(
            [*node_script("client.mjs"), json.dumps(args)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            cwd=OAUTH_JS,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"client.mjs did not finish in {timeout_s:g} s; stderr:\n{e.stderr!r}")
    out = proc.stdout.decode(errors="replace")
    err = proc.stderr.decode(errors="replace")
    try:
        report: dict[str, Any] = json.loads(out)
    except ValueError:
        pytest.fail(
            f"client.mjs exited {proc.returncode} without a report\nstdout:\n{out}\nstderr:\n{err}"
        )
    report["stderr"] = err
    return report
