"""MCP over stdio, with a graceful end of input.

Our own line reader and writer around the SDK's server loop, because:
- at end of input (or SIGTERM) the calls in flight may still answer, until
  [service] shutdown_ms; then they are aborted and the process exits within
  it (the SDK alone cancels them at once, losing answers of a piped file);
- the process leaves as soon as serving ends, without the interpreter's teardown, which
  on a loaded machine took seconds beyond shutdown_ms (process.leave);
- a line above LIM-O3 (16 MiB) is dropped without an answer and reading goes on;
- fd 1 is pointed at stderr while serving, so a stray write cannot corrupt
  the protocol; the protocol writes through a private duplicate.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from typing import IO, Any, NoReturn

import anyio
import anyio.from_thread
import anyio.lowlevel
import mcp_types as types
from mcp.shared.message import SessionMessage

from rypsok.core import limits
from rypsok.core.facade import Rypsok
from rypsok.core.telemetry import counters, log
from rypsok.protocol import sdk_private
from rypsok.protocol.metrics.collect import Service
from rypsok.protocol.metrics.listener import serve_beside
from rypsok.protocol.process import (
    binary_mode,
    counters_every_minute,
    leave,
    stdout_to_stderr,
    stop_signal,
)
from rypsok.protocol.server import build_server, shutdown_grace_s

LINE_MAX = limits.default("LIM-O3")


class _Pending:
    """Requests read but not yet answered (or cancelled), to know when to stop."""

    def __init__(self) -> None:
        self.ids: set[Any] = set()
        self.empty = anyio.Event()
        self.empty.set()

    def add(self, request_id: Any) -> None:
        self.ids.add(request_id)
        self.empty = anyio.Event() if self.empty.is_set() else self.empty

    def discard(self, request_id: Any) -> None:
        self.ids.discard(request_id)
        if not self.ids:
            self.empty.set()


class _LineReader:
    """Lines of at most LINE_MAX bytes from a raw descriptor.

    os.read, not a buffered file: a daemon thread blocked in a buffered read
    would abort the interpreter at exit.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._buffer = bytearray()
        self._eof = False

    def read_line(self) -> tuple[bytes | None, bool]:
        """(line, False); (None, True) for a dropped over-long line; (None, False) at the end."""
        dropping = False
        while True:
            newline = self._buffer.find(b"\n")
            if newline >= 0:
                line = bytes(self._buffer[: newline + 1])
                del self._buffer[: newline + 1]
                if dropping or len(line) > LINE_MAX:
                    return None, True
                return line, False
            if len(self._buffer) > LINE_MAX:
                dropping = True  # keep reading to the newline, holding nothing
                self._buffer.clear()
            if self._eof:
                if dropping:
                    return None, True
                if self._buffer:
                    line = bytes(self._buffer)
                    self._buffer.clear()
                    return line, False
                return None, False
            chunk = os.read(self._fd, 1 << 16)
            if not chunk:
                self._eof = True
            self._buffer += chunk


@contextlib.contextmanager
def _claim_stdout() -> Iterator[IO[bytes]]:
    """The protocol's private stdout; fd 1 itself points at stderr meanwhile."""
    with (
        stdout_to_stderr() as private,
        os.fdopen(private, "wb", buffering=0, closefd=False) as out,
    ):
        binary_mode(private)
        yield out


async def serve_stdio(
    core: Rypsok,
    stdin: int | None = None,
    stdout: IO[bytes] | None = None,
    install_signals: bool = True,
) -> None:
    sdk_private.warn_if_unavailable("stdio")
    server = build_server(core)
    grace_s = shutdown_grace_s(core.config.service.shutdown_ms)
    pending = _Pending()
    stop_reading = anyio.Event()
    source = stdin if stdin is not None else sys.stdin.fileno()
    if stdin is None:
        binary_mode(source)

    with contextlib.ExitStack() as stack:
        sink = stdout if stdout is not None else stack.enter_context(_claim_stdout())
        (read_writer, read_stream), (write_stream, write_reader) = sdk_private.message_streams()

        lines_in, lines_out = anyio.create_memory_object_stream[tuple[bytes | None, bool]](1)
        token = anyio.lowlevel.current_token()
        threading.Thread(
            target=_pump, args=(source, lines_in, token), daemon=True, name="rypsok-stdin"
        ).start()

        async def reader() -> None:
            async with read_writer, lines_out:
                while not stop_reading.is_set():
                    with anyio.CancelScope() as scope:
                        # Only the read in progress needs cancelling on a signal; keeping
                        # every past scope would grow by one per line for the life of the process.
                        stop_scope[:] = [scope]
                        try:
                            line, dropped = await lines_out.receive()
                        except anyio.EndOfStream:
                            line, dropped = None, False
                    if scope.cancelled_caught:
                        break
                    if dropped:
                        log.warn("stdio_line_dropped", bound_bytes=LINE_MAX)
                        continue
                    if line is None:
                        break
                    if not line.strip():
                        continue
                    await _forward(line, read_writer, pending)
                stop_reading.set()
                log.info("shutdown", reason="end_of_input", in_flight=len(pending.ids))
                with anyio.move_on_after(grace_s):
                    await pending.empty.wait()
                # What is still running is aborted: like a cancelled call, it gets no answer.
                aborted.update(pending.ids)
                if aborted:
                    log.info("shutdown_aborted", calls=len(aborted))

        async def writer() -> None:
            async with write_reader:
                async for message in write_reader:
                    root = message.message
                    if isinstance(root, types.JSONRPCError) and root.id in aborted:
                        continue
                    data = root.model_dump_json(by_alias=True, exclude_unset=True)
                    await anyio.to_thread.run_sync(_write, sink, data.encode("utf-8") + b"\n")
                    if isinstance(root, types.JSONRPCResponse | types.JSONRPCError):
                        pending.discard(root.id)

        stop_scope: list[anyio.CancelScope] = []
        aborted: set[Any] = set()

        async def on_signal() -> None:
            await stop_signal()
            log.info("shutdown", reason="signal", in_flight=len(pending.ids))
            stop_reading.set()
            for scope in stop_scope:
                scope.cancel()

        await core.open()
        async with anyio.create_task_group() as group:
            # The operator's listener, when configured: here too a host's process can be
            # scraped, and it reads not ready once the input has ended.
            service = Service(core, "stdio", draining=stop_reading.is_set)
            await serve_beside(core.config.service.metrics, service, group)
            group.start_soon(writer)
            group.start_soon(counters_every_minute)
            if install_signals:
                group.start_soon(on_signal)
            async with anyio.create_task_group() as inner:
                inner.start_soon(reader)
                await server.run(read_stream, write_stream, server.create_initialization_options())
            await write_stream.aclose()
            with anyio.CancelScope(shield=True):
                await core.close()
            counters.emit(log)
            group.cancel_scope.cancel()


async def _forward(line: bytes, sink: Any, pending: _Pending) -> None:
    try:
        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except Exception as exc:  # the SDK answers a malformed line itself
        await sink.send(exc)
        return
    if isinstance(message, types.JSONRPCRequest):
        pending.add(message.id)
    elif isinstance(message, types.JSONRPCNotification) and (
        message.method == "notifications/cancelled"
    ):
        params = message.params or {}
        request_id = params.get("requestId") if isinstance(params, dict) else None
        if request_id is not None:
            pending.discard(request_id)
    await sink.send(SessionMessage(message))


def _pump(source: int, sink: Any, token: Any) -> None:
    """Read stdin in a daemon thread, so a blocked read never holds the exit."""
    reader = _LineReader(source)
    try:
        while True:
            item = reader.read_line()
            anyio.from_thread.run(sink.send, item, token=token)
            if item == (None, False):
                return
    except Exception:  # the loop is gone or the stream closed: nothing left to feed
        return


def _write(sink: IO[bytes], data: bytes) -> None:
    sink.write(data)
    sink.flush()


def run(core: Rypsok) -> NoReturn:
    """Serve until end of input or a stop signal, then end the process with 0."""

    async def serve_then_leave() -> NoReturn:
        await serve_stdio(core)
        # From inside the loop: on the way out it would join its worker threads first.
        leave(0)

    anyio.run(serve_then_leave)
