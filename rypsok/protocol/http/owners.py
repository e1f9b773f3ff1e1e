"""Which caller from a token opened each session of the handshake revisions.

A configured caller has an SDK session manager of its own, so a session id issued to
one is unknown to every other. Callers from tokens share one manager (their number is
not known in advance), so the gate keeps the owner of each session it saw opened and
answers a request that names another caller's session as the SDK answers an unknown
one (404). At most `capacity` owners are kept, the least recently used dropped first:
a session whose owner was dropped is only asked to start again.
"""

from __future__ import annotations

from collections import OrderedDict

SESSION_HEADER = b"mcp-session-id"


class SessionOwners:
    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._owners: OrderedDict[bytes, str] = OrderedDict()

    def opened(self, session: bytes, caller: str) -> None:
        self._owners[session] = caller
        self._owners.move_to_end(session)
        while len(self._owners) > self._capacity:
            self._owners.popitem(last=False)

    def owned_by(self, session: bytes, caller: str) -> bool:
        owner = self._owners.get(session)
        if owner is None or owner != caller:
            return False
        self._owners.move_to_end(session)
        return True

    def __len__(self) -> int:
        return len(self._owners)


def session_of(headers: list[tuple[bytes, bytes]]) -> bytes | None:
    for name, value in headers:
        if name == SESSION_HEADER:
            return value
    return None
