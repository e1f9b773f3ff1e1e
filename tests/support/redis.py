"""A real redis-server for the store's tests: started on 127.0.0.1 (a free port) or on a
unix socket, with nothing persisted, and stopped at the end.

The binary is `RYPSOK_REDIS_SERVER` when set, else `redis-server` on PATH. Without one the
test fails (it is not skipped): the redis backend is part of what the suite proves.

For fault tests the server can be stopped (terminate, or kill as a crash), restarted on
the same address, and paused (SIGSTOP, then SIGCONT) to look like a Redis that accepts
connections but answers nothing.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

NOT_INSTALLED = (
    "redis-server is not installed: run tools/setup (it installs Debian's redis-server "
    "package as root), or install it yourself (apt-get install redis-server) and put it on "
    "PATH"
)
_READY_S = 10.0
_STOP_S = 5.0


def redis_server_binary() -> str:
    named = os.environ.get("RYPSOK_REDIS_SERVER")
    found = shutil.which(named) if named else shutil.which("redis-server")
    if found is None:
        pytest.fail(NOT_INSTALLED, pytrace=False)
    return found


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RedisServer:
    """One redis-server child process at a fixed address, restartable there."""

    def __init__(
        self,
        binary: str,
        workdir: Path,
        unix_socket: bool = False,
        password: str | None = None,
    ) -> None:
        self.binary = binary
        self.password = password
        self.workdir = workdir
        self.port = 0 if unix_socket else free_port()
        # A short directory of its own: a socket path is limited to about 100 bytes,
        # and pytest's tmp_path can be longer.
        self.socket_path = (
            Path(tempfile.mkdtemp(prefix="rypsok-redis-")) / "s" if unix_socket else None
        )
        self.process: subprocess.Popen[bytes] | None = None
        self._log = workdir / "redis.log"

    @property
    def url(self) -> str:
        auth = f":{self.password}@" if self.password else ""
        if self.socket_path is not None:
            return f"unix://{auth}{self.socket_path}"
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def start(self) -> None:
        args = [
            self.binary,
            "--bind",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(self.workdir),
            "--logfile",
            str(self._log),
        ]
        if self.socket_path is not None:
            args += ["--unixsocket", str(self.socket_path), "--unixsocketperm", "700"]
        if self.password is not None:
            args += ["--requirepass", self.password]
        self.process = subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        self._wait_ready()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + _READY_S
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                err = self.process.stderr.read() if self.process.stderr else b""
                pytest.fail(f"redis-server exited at start: {err.decode(errors='replace')}")
            if self.ping():
                return
            time.sleep(0.02)
        self.stop()
        pytest.fail("redis-server did not answer PING within 10 s")

    def ping(self, timeout_s: float = 0.5) -> bool:
        """Whether the server answers PING now (a plain socket: no client library)."""
        try:
            if self.socket_path is not None:
                conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                conn.settimeout(timeout_s)
                conn.connect(str(self.socket_path))
            else:
                conn = socket.create_connection(("127.0.0.1", self.port), timeout_s)
            with conn:
                conn.settimeout(timeout_s)
                # Without the password a server that wants one still answers PING with
                # an error: that too means it is up.
                conn.sendall(b"PING\r\n")
                return conn.recv(64).startswith((b"+PONG", b"-NOAUTH"))
        except OSError:
            return False

    def stop(self) -> None:
        """Terminate (Redis's own orderly shutdown), then kill if it lingers."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGCONT)  # a paused server cannot act on SIGTERM
        process.terminate()
        try:
            process.wait(_STOP_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(_STOP_S)

    def kill(self) -> None:
        """A crash: SIGKILL, no shutdown."""
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.kill()
            process.wait(_STOP_S)

    def restart(self) -> None:
        """Stop if running, and start again at the same address (empty: nothing saved)."""
        self.stop()
        self.start()

    @contextmanager
    def paused(self) -> Iterator[None]:
        """SIGSTOP for the block: connections are accepted by the kernel, nothing answers."""
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP)
        try:
            yield
        finally:
            if self.process is not None and self.process.poll() is None:
                self.process.send_signal(signal.SIGCONT)


@contextmanager
def redis_server(
    workdir: Path, unix_socket: bool = False, password: str | None = None
) -> Iterator[RedisServer]:
    """A started server; stopped at the end of the block whatever happened in it."""
    server = RedisServer(redis_server_binary(), workdir, unix_socket, password)
    server.start()
    try:
        yield server
    finally:
        server.stop()
        if server.socket_path is not None:
            shutil.rmtree(server.socket_path.parent, ignore_errors=True)


__all__ = ["NOT_INSTALLED", "RedisServer", "free_port", "redis_server", "redis_server_binary"]
