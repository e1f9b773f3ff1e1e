"""What both transports do to the process around serving: keep stdout clean, hear the stop
signals, and write the counters every minute (REQ-MCP-002, REQ-OBS-*). stdio.py and
http/listener.py (with http/__init__.py) use these; each keeps its own shutdown policy.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator

import anyio

from rypsok.core.telemetry import counters, log

COUNTERS_EVERY_S = 60.0
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[int]:
    """Point fd 1 at stderr while serving, so a stray write (ours or a dependency's) cannot
    reach stdout; yields a private duplicate of the real stdout, for the one writer that owns
    it (the stdio transport's protocol messages). Restored on the way out."""
    private = os.dup(1)
    os.dup2(2, 1)
    try:
        yield private
    finally:
        os.dup2(private, 1)
        os.close(private)


async def stop_signal() -> signal.Signals:
    """Wait for the first SIGTERM or SIGINT; the handler is in place only while waiting."""
    with anyio.open_signal_receiver(*STOP_SIGNALS) as signals:
        async for received in signals:
            return signal.Signals(received)
    raise RuntimeError("the signal receiver ended")  # pragma: no cover - it never does


async def counters_every_minute() -> None:
    """Write the counters event every minute, until cancelled."""
    while True:
        await anyio.sleep(COUNTERS_EVERY_S)
        counters.emit(log)
