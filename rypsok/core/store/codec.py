"""Redis keys and values of the shared store.

Every key starts with the configured prefix. Caller, engine and tool names may stand in
a key as written (they are rypsok's own identifiers); a query, a URL or an origin never
does: those are reduced to a SHA-256 hex digest first.

Values are compact JSON: a cached answer is a list of result arrays, robots rules a list
of (allow, normalised pattern) pairs. A value that does not decode is read as absent.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Sequence
from typing import Any

from rypsok.core.store.robots_rules import RobotsRules
from rypsok.core.store.values import CacheKey, RawResult

# ASCII only: a stray surrogate in provider text travels as an escape, never as bytes
# the Redis client would refuse to encode.
_COMPACT = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"))


def digest(text: str) -> str:
    # surrogatepass: a stray surrogate hashes as its bytes instead of failing.
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class Keys:
    """The key names under one prefix."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.cache_entry = prefix + "cache:"
        self.cache_index = prefix + "index:cache"
        self.robots_entry = prefix + "robots:"
        self.robots_index = prefix + "index:robots"
        self.returned = prefix + "returned"

    def calls(self, caller: str, tool: str) -> str:
        # The tool first: tool names are fixed words, so a caller id holding ":" cannot
        # make two pairs share a key.
        return f"{self.prefix}calls:{tool}:{caller}"

    def rate(self, engine: str) -> str:
        return f"{self.prefix}rate:{engine}"

    def slots(self, engine: str) -> str:
        return f"{self.prefix}slots:{engine}"

    def circuit(self, engine: str) -> str:
        return f"{self.prefix}circuit:{engine}"

    def robots(self, origin: str) -> tuple[str, str]:
        """(key, index member) of an origin's rules; origins compare case-insensitively."""
        member = digest(origin.lower())
        return self.robots_entry + member, member


def cache_member(key: CacheKey) -> str:
    """The digest naming one cache entry: every field of the request takes part (a new
    field of EngineQuery joins without a change here), each with its name, in a JSON
    array, so no two different keys encode alike."""
    request = [[f.name, getattr(key.request, f.name)] for f in dataclasses.fields(key.request)]
    return digest(_COMPACT.encode([key.engine, key.caller, request]))


def encode_results(results: Sequence[RawResult]) -> str:
    return _COMPACT.encode(
        [[r.url, r.title, r.snippet, r.date, r.markup, list(r.sources)] for r in results]
    )


def decode_results(raw: bytes | str) -> tuple[RawResult, ...] | None:
    try:
        rows = json.loads(raw)
        return tuple(_result(row) for row in rows)
    except (ValueError, TypeError):
        return None


def _result(row: Any) -> RawResult:
    url, title, snippet, date, markup, sources = row
    texts = (url, title, snippet)
    if not all(isinstance(t, str) for t in texts) or not isinstance(markup, bool):
        raise ValueError("not a stored result")
    if date is not None and not isinstance(date, str):
        raise ValueError("not a stored date")
    if not isinstance(sources, list) or not all(isinstance(s, str) for s in sources):
        raise ValueError("not stored sources")
    return RawResult(url, title, snippet, date, markup, tuple(sources))


def encode_robots(rules: RobotsRules) -> str:
    return _COMPACT.encode([[1 if allow else 0, pattern] for allow, pattern in rules.pairs()])


def decode_robots(raw: bytes | str) -> RobotsRules | None:
    """The rules as they were stored: already normalised and in priority order, so
    they are rebuilt as they are, not parsed again."""
    try:
        pairs = json.loads(raw)
        if not all(allow in (0, 1) and isinstance(pattern, str) for allow, pattern in pairs):
            return None
        return RobotsRules.from_pairs((allow == 1, pattern) for allow, pattern in pairs)
    except (ValueError, TypeError):
        return None


__all__ = [
    "Keys",
    "cache_member",
    "decode_results",
    "decode_robots",
    "digest",
    "encode_results",
    "encode_robots",
]
