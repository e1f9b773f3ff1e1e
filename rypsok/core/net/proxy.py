"""The engine proxy's address: where engine requests go through an HTTP CONNECT tunnel.

Written by the operator ([egress] proxy), read by the engine client; never used for
agent-directed fetches (REQ-SEC-007). Plain data, so the configuration can hold it without
loading the client.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Proxy:
    host: str
    port: int
