"""What the CONNECT-proxy stand-ins share: reading the tunnel request's head."""

from __future__ import annotations

import socket


def read_head(sock: socket.socket) -> bytes | None:
    """The CONNECT request head, or None when the client closes or sends over 16 KiB.
    The client sends nothing more before our answer, so reading past the blank line
    cannot swallow its TLS handshake."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk or len(data) > 16384:
            return None
        data += chunk
    return data
