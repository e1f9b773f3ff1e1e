"""MCP over Streamable HTTP: our own listener (anyio + h11) and gate in front of
the SDK's session manager (DESIGN decision 7; no uvicorn in this path).

Modules, one job each:
- refusals: the status table as data (status, counter reason, logged or not)
- auth: bearer tokens to caller ids
- gate: the pure decisions on a request's head and body
- sessions: one SDK session manager per caller, the session bound across them
- session_ledger: the sessions counted from outside the SDK, on its public path
- modern: the fast lane of a stateless-revision call, past the SDK's transport
- asgi: one request as an ASGI call, and the contract's fixes on the way out
- connection: one connection's HTTP/1.1 loop, deadlines and replies
- listener: bind, accept, the connection cap, graceful stop
"""

from __future__ import annotations

import anyio

from rypsok.core.facade import Rypsok
from rypsok.core.telemetry import log
from rypsok.protocol.http.listener import HttpListener
from rypsok.protocol.process import leave, stdout_to_stderr

__all__ = ["HttpListener", "run"]


def run(core: Rypsok) -> int:
    listener = HttpListener(core)

    # Nothing is written to stdout in HTTP mode: a stray write lands on stderr.
    async def serve_then_leave() -> None:
        await listener.run()
        # From inside the loop: on the way out it would join its worker threads first,
        # where a name lookup that gets no answer runs until the resolver gives up, and
        # the interpreter's teardown would follow (process.leave).
        leave(0)

    with stdout_to_stderr():
        try:
            anyio.run(serve_then_leave)
        except OSError as exc:
            log.error(
                "startup_failed",
                message=f"could not listen on "
                f"{core.config.service.http.bind}: {exc.strerror or type(exc).__name__}",
            )
            return 1
    return 0
