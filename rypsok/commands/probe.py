"""rypsok probe: is the configured listener answering? Exit 0 yes, 1 no.

For a container's HEALTHCHECK or a supervisor: it reads the same
configuration as `serve --transport http`, connects to the listener on this
machine and asks `server/discover` over the 2026-07-28 revision, exactly as a
client would (the Host the gate accepts, the first caller's token when there
are callers). So the listener's contract gains no health path of its own.

One line on standard error says what failed; nothing on standard output, and
never a token. The whole exchange is bounded in time and bytes.

With `--health` or `--ready` it asks the operator's listener ([service.metrics]) instead:
/healthz (the event loop turns) or /readyz (the service takes calls, and is not
draining), for an orchestrator's liveness and readiness checks.

With [service.http.oauth] and no configured caller there is no token to send: the
listener's 401 that points at its resource metadata is the answer of a live listener.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Mapping
from typing import TextIO

from rypsok.core.config import ConfigError, load
from rypsok.core.config.settings import MetricsSettings, host_port

EXIT_OK, EXIT_FAILED = 0, 1
TIMEOUT_S = 5.0  # a listener that needs longer to answer discover is not healthy
MAX_REPLY_BYTES = 64 * 1024  # discover's answer is a few hundred bytes
MODERN = "2026-07-28"
# The unspecified addresses: a listener on them is reached on loopback.
_UNSPECIFIED = ("0.0.0.0", "::", "")  # noqa: S104 - compared against, never bound


def run_probe(
    cli_path: str | None, env: Mapping[str, str], err: TextIO, endpoint: str | None = None
) -> int:
    """`endpoint`: None for server/discover on the MCP listener, or "/healthz", "/readyz"."""
    try:
        config = load(cli_path, env, read_tokens=True)
    except ConfigError as exc:
        for problem in exc.problems:
            err.write(f"rypsok probe: the configuration does not load: {problem.render()}\n")
        return EXIT_FAILED
    if endpoint is not None:
        return _operator_probe(config.service.metrics, endpoint, err)
    settings = config.service.http
    # A listener on every address is reached on this machine's loopback.
    host = settings.bind_host
    if host in _UNSPECIFIED:
        host = "::1" if host == "::" else "127.0.0.1"
    port = settings.bind_port
    name = settings.allowed_hosts[0] if settings.allowed_hosts else host_port(host, port)
    headers = {
        "Host": name,
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "server/discover",
    }
    if settings.callers:
        headers["Authorization"] = f"Bearer {settings.callers[0].token.reveal()}"
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "server/discover",
            "params": {
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": MODERN,
                    "io.modelcontextprotocol/clientInfo": {"name": "rypsok-probe", "version": "1"},
                    "io.modelcontextprotocol/clientCapabilities": {},
                }
            },
        }
    )
    where = host_port(host, port)
    connection = http.client.HTTPConnection(host, port, timeout=TIMEOUT_S)
    try:
        connection.request("POST", "/mcp", body=body, headers=headers)
        reply = connection.getresponse()
        status = reply.status
        kind = reply.getheader("Content-Type", "")
        data = reply.read(MAX_REPLY_BYTES + 1)
    except (OSError, http.client.HTTPException) as exc:  # a timeout is an OSError
        err.write(f"rypsok probe: no answer from {where}: {type(exc).__name__}\n")
        return EXIT_FAILED
    finally:
        connection.close()
    if status == 401 and settings.oauth is not None and not settings.callers:
        return EXIT_OK  # the gate's challenge: a live listener that wants a person's token
    if status != 200:
        err.write(f"rypsok probe: {where} answered HTTP {status}\n")
        return EXIT_FAILED
    if len(data) > MAX_REPLY_BYTES or not _discovered(data, kind):
        err.write(f"rypsok probe: {where} did not answer server/discover\n")
        return EXIT_FAILED
    return EXIT_OK


def _operator_probe(metrics: MetricsSettings | None, path: str, err: TextIO) -> int:
    if metrics is None:
        err.write("rypsok probe: --health and --ready need [service.metrics] bind\n")
        return EXIT_FAILED
    host = metrics.bind_host
    if host in _UNSPECIFIED:
        host = "::1" if host == "::" else "127.0.0.1"
    where = host_port(host, metrics.bind_port) + path
    connection = http.client.HTTPConnection(host, metrics.bind_port, timeout=TIMEOUT_S)
    try:
        connection.request("GET", path)
        reply = connection.getresponse()
        status = reply.status
        reply.read(MAX_REPLY_BYTES)
    except (OSError, http.client.HTTPException) as exc:
        err.write(f"rypsok probe: no answer from {where}: {type(exc).__name__}\n")
        return EXIT_FAILED
    finally:
        connection.close()
    if status != 200:
        err.write(f"rypsok probe: {where} answered HTTP {status}\n")
        return EXIT_FAILED
    return EXIT_OK


def _discovered(data: bytes, kind: str) -> bool:
    """The reply holds a JSON-RPC result listing the revisions served."""
    text = data.decode("utf-8", "replace")
    if kind.startswith("text/event-stream"):
        events = [ln[5:] for ln in text.splitlines() if ln.startswith("data:") and ln[5:].strip()]
        text = events[0] if events else ""
    try:
        message = json.loads(text)
    except ValueError:
        return False
    result = message.get("result") if isinstance(message, dict) else None
    return isinstance(result, dict) and bool(result.get("supportedVersions"))
