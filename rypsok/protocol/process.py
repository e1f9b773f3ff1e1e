"""What both transports do to the process around serving: keep stdout clean, hear the stop
signals, write the counters every minute (REQ-MCP-002, REQ-OBS-*), and leave at once when
serving is over. stdio.py and http/listener.py (with http/__init__.py) use these; each keeps
its own shutdown policy.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Callable, Iterator
from typing import NoReturn

import anyio

from rypsok.core.telemetry import counters, log

COUNTERS_EVERY_S = 60.0
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
_O_BINARY = 0x8000  # os.O_BINARY, which exists on Windows only


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
    """Wait for the first SIGTERM or SIGINT; the handler is in place only while waiting.

    Where the event loop cannot watch signals (asyncio on Windows), this waits until
    cancelled: stdio still ends at end of input, HTTP at Ctrl-C (KeyboardInterrupt) or
    when its process is ended."""
    with contextlib.ExitStack() as stack:
        try:
            signals = stack.enter_context(anyio.open_signal_receiver(*STOP_SIGNALS))
        except NotImplementedError:
            await anyio.sleep_forever()  # until cancelled
            raise RuntimeError("sleep_forever returned") from None  # pragma: no cover
        async for received in signals:
            return signal.Signals(received)
    raise RuntimeError("the signal receiver ended")  # pragma: no cover - it never does


def binary_mode(
    fd: int, platform: str = sys.platform, setmode: Callable[[int, int], object] | None = None
) -> None:
    """Windows opens the standard streams in text mode, where reading turns CR LF into LF
    and stops at Ctrl-Z, and writing turns LF into CR LF: the protocol's lines must pass
    as bytes. Elsewhere a file descriptor has no mode and nothing is done."""
    if platform != "win32":
        return
    if setmode is None:
        if sys.platform == "win32":
            import msvcrt

            setmode = msvcrt.setmode
        else:  # a simulated Windows (tests) names its own setmode
            return
    setmode(fd, _O_BINARY)


async def counters_every_minute() -> None:
    """Write the counters event every minute, until cancelled."""
    while True:
        await anyio.sleep(COUNTERS_EVERY_S)
        counters.emit(log)


def leave(code: int) -> NoReturn:
    """End the process now, skipping the event loop's and the interpreter's teardown.

    Call it once serving is over: every protocol line and log line is written by then, and
    what the teardown would still do only holds the exit past shutdown_ms (LIM-O1). It
    frees every object of the SDK and its dependencies (about 0.3 s of CPU, 2 to 3 s on a
    loaded two-core machine), and it joins the loop's worker threads, where a name lookup
    that gets no answer runs until the resolver gives up. Nothing is registered to run at
    exit that matters here (logging's and multiprocessing's hooks have nothing to do)."""
    # The protocol's own writer flushes every message; stdout is stderr while serving.
    with contextlib.suppress(OSError, ValueError):  # closed or broken: nothing to keep
        sys.stderr.flush()
    os._exit(code)
