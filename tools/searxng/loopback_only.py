"""Run SearXNG's web app (`python -m searx.webapp`) with no way off 127.0.0.1.

Started by tests/support/searxng.py with .venv-searxng's interpreter. Before SearXNG
is imported, an audit hook refuses every name lookup and every connection that is
not for the loopback: some of SearXNG's loaders fetch from the Internet at start-up
or on first use, and not all of them go through its configured networks, so its
settings alone cannot promise that a test reaches nothing. A refusal raises
OSError where SearXNG made the call (it sees an unreachable network) and prints a
line starting with REFUSED to stderr, which the harness reads back from the log.
"""

from __future__ import annotations

import errno
import ipaddress
import runpy
import socket
import sys
from typing import Any

MARK = "REFUSED"


def _loopback(host: object) -> bool:
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if host is None or host == "localhost":
        return True
    if not isinstance(host, str):
        return False
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
    except ValueError:
        return False  # a name other than localhost: resolving it would ask DNS


def _refuse(what: str) -> None:
    print(f"{MARK} {what}", file=sys.stderr, flush=True)
    raise OSError(errno.ENETUNREACH, f"loopback_only: {what}")


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if event in ("socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyname_ex"):
        if not _loopback(args[0]):
            _refuse(f"{event} {args[0]!r}")
    elif event in ("socket.connect", "socket.sendto", "socket.sendmsg"):
        sock, address = args[0], args[-1]
        if getattr(sock, "family", None) == socket.AF_UNIX:
            return  # a local socket file (a Valkey socket, say)
        host = address[0] if isinstance(address, tuple) and address else address
        if not _loopback(host):
            _refuse(f"{event} {address!r}")


def main() -> None:
    sys.addaudithook(_hook)
    sys.argv = ["searx.webapp"]
    runpy.run_module("searx.webapp", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
