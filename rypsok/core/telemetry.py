"""Structured logs: one JSON object per line on standard error.

Every event of a tool call carries `request_id` and `caller`, taken from
context variables that the call's scope sets, so no event names them itself.
Callers pass only rypsok's own values (names, classes, counts, timings):
never query text, a URL path, page or provider text, or a secret.
"""

from __future__ import annotations

import contextvars
import itertools
import json
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, Final, TextIO

LEVELS = {"error": 40, "warn": 30, "info": 20, "debug": 10}

_request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("request_id", default=None)
_caller: contextvars.ContextVar[str | None] = contextvars.ContextVar("caller", default=None)
_sequence = itertools.count(1)
# Built once: json.dumps with arguments builds an encoder for every line.
_ENCODE = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"), default=str).encode


Tap = Callable[[str, str, dict[str, Any]], None]
"""Sees every event (level, event, fields) whatever the level, before it is written."""


class Logger:
    """Writes events at or above its level; thread-safe, never raises.

    `json` lines are the contract of `serve`; `text` is one short line a person reads
    (the one-call commands at a terminal). A floor keeps the level at or above itself
    whatever the configuration says, and a tap lets a command see events it does not
    print (the engines' failures behind a failed search)."""

    def __init__(self, level: str = "info", stream: TextIO | None = None) -> None:
        self._floor = LEVELS["debug"]
        self._threshold = LEVELS[level]
        self._stream = stream
        self._lock = threading.Lock()
        self._text = False
        self._tap: Tap | None = None

    def set_level(self, level: str) -> None:
        self._threshold = max(LEVELS[level], self._floor)

    def set_floor(self, level: str) -> None:
        self._floor = LEVELS[level]
        self._threshold = max(self._threshold, self._floor)

    def set_format(self, form: str) -> None:
        """`json` (the default) or `text`."""
        self._text = form == "text"

    def set_tap(self, tap: Tap | None) -> None:
        self._tap = tap

    def enabled(self, level: str) -> bool:
        return LEVELS[level] >= self._threshold

    def log(self, level: str, event: str, **fields: Any) -> None:
        tap = self._tap
        if tap is not None:  # our own code, which only records
            tap(level, event, fields)
        if LEVELS[level] < self._threshold:
            return
        if self._text:
            line = _text_line(level, event, fields)
        else:
            record: dict[str, Any] = {"timestamp": _now(), "level": level, "event": event}
            request_id, caller = _request_id.get(), _caller.get()
            if request_id is not None:
                record["request_id"] = request_id
                record["caller"] = caller
            record.update(fields)
            try:
                line = _ENCODE(record)
            except (TypeError, ValueError):
                line = json.dumps(
                    {"timestamp": record["timestamp"], "level": level, "event": event}
                )
        with self._lock:
            stream = self._stream or sys.stderr
            try:
                stream.write(line + "\n")
                stream.flush()
            except (OSError, ValueError):
                pass  # a closed stderr must not end a call

    def error(self, event: str, **fields: Any) -> None:
        self.log("error", event, **fields)

    def warn(self, event: str, **fields: Any) -> None:
        self.log("warn", event, **fields)

    def info(self, event: str, **fields: Any) -> None:
        self.log("info", event, **fields)

    def debug(self, event: str, **fields: Any) -> None:
        self.log("debug", event, **fields)


def _text_line(level: str, event: str, fields: dict[str, Any]) -> str:
    """`rypsok: warning: scraping_enabled: engine=duckduckgo`; a `message` field is the
    sentence itself. The fields are rypsok's own words, as in the JSON form."""
    words = {"warn": "warning"}.get(level, level)
    message = fields.get("message")
    rest = " ".join(f"{k}={v}" for k, v in fields.items() if k != "message")
    tail = "; ".join(str(x) for x in (message, rest) if x)
    return f"rypsok: {words}: {event}{f': {tail}' if tail else ''}"


# The last whole second and its text, swapped as one tuple (threads log too).
_second: tuple[int, str] = (-1, "")


def _now() -> str:
    """UTC, to the millisecond: 2026-01-31T12:00:00.123Z (strftime once a second)."""
    global _second
    seconds, nanos = divmod(time.time_ns(), 1_000_000_000)
    second = _second
    if second[0] != seconds:
        second = _second = (seconds, time.strftime("%Y-%m-%dT%H:%M:%S.", time.gmtime(seconds)))
    return f"{second[1]}{nanos // 1_000_000:03d}Z"


def new_request_id() -> str:
    """Start time in milliseconds and a sequence number, in hexadecimal."""
    return f"{int(time.time() * 1000):011x}-{next(_sequence):06x}"


class call_scope:  # lower case: used like the function it replaced
    """Every event logged inside carries this call's request_id and caller (a class,
    not a generator: it runs on every call)."""

    __slots__ = ("_caller", "_rid", "_tokens")

    def __init__(self, caller: str, request_id: str | None = None) -> None:
        self._caller = caller
        self._rid = request_id or new_request_id()

    def __enter__(self) -> str:
        self._tokens = (_request_id.set(self._rid), _caller.set(self._caller))
        return self._rid

    def __exit__(self, *exc: object) -> None:
        token_id, token_caller = self._tokens
        _request_id.reset(token_id)
        _caller.reset(token_caller)


# The process-wide logger; serve sets its level from [logging] level.
log = Logger("info")


class Counters:
    """Counts since the last `counters` event: calls by tool and outcome, refusals by
    tool and reason (REQ-OBS-007), engine requests and errors by engine and class
    (REQ-OBS-003). Keys are rypsok's own words only; memory is bounded by them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._groups: dict[str, dict[str, dict[str, int]]] = {}
        # The same counts since the process started, never reset: what /metrics serves
        # (a Prometheus counter only grows).
        self._totals: dict[tuple[str, str, str], int] = {}

    def add(self, group: str, key: str, sub: str, amount: int = 1) -> None:
        with self._lock:
            bucket = self._groups.setdefault(group, {}).setdefault(key, {})
            bucket[sub] = bucket.get(sub, 0) + amount
            total = (group, key, sub)
            self._totals[total] = self._totals.get(total, 0) + amount

    def totals(self) -> dict[tuple[str, str, str], int]:
        """(group, key, sub) -> count since the process started."""
        with self._lock:
            return dict(self._totals)

    def snapshot(self, reset: bool = False) -> dict[str, dict[str, dict[str, int]]]:
        with self._lock:
            copy = {g: {k: dict(v) for k, v in keys.items()} for g, keys in self._groups.items()}
            if reset:
                self._groups = {}
            return copy

    def emit(self, logger: Logger) -> None:
        """One `counters` event with what was counted since the last one."""
        logger.info("counters", **self.snapshot(reset=True))


counters = Counters()

# Upper bounds of the call duration histogram, in seconds: from an answer out of memory to
# the longest web_fetch the limits allow (LIM-F4's ceiling plus its margin).
DURATION_BUCKETS_S: Final = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class Durations:
    """How long tool calls took, as a cumulative histogram per tool (/metrics)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, list[int]] = {}  # tool -> one count per bucket, and +Inf
        self._sums: dict[str, float] = {}

    def observe(self, tool: str, seconds: float) -> None:
        with self._lock:
            counts = self._counts.get(tool)
            if counts is None:
                counts = self._counts[tool] = [0] * (len(DURATION_BUCKETS_S) + 1)
                self._sums[tool] = 0.0
            for index, bound in enumerate(DURATION_BUCKETS_S):
                if seconds <= bound:
                    counts[index] += 1
                    break
            else:
                counts[-1] += 1
            self._sums[tool] += seconds

    def snapshot(self) -> dict[str, tuple[list[int], float]]:
        """tool -> (counts per bucket, not cumulative; their sum of seconds)."""
        with self._lock:
            return {tool: (list(c), self._sums[tool]) for tool, c in self._counts.items()}


durations = Durations()


class CallerCalls:
    """Calls per caller and tool, only when the operator asks for them ([service.metrics]
    per_caller): at most `capacity` callers get a count of their own; the calls of the
    others are counted as dropped, so the number of series stays bounded."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.enabled = False
        self.capacity = 0
        self._counts: dict[tuple[str, str], int] = {}
        self._callers: set[str] = set()
        self.dropped = 0

    def configure(self, enabled: bool, capacity: int) -> None:
        with self._lock:
            self.enabled, self.capacity = enabled, capacity

    def add(self, caller: str, tool: str) -> None:
        if not self.enabled:
            return
        with self._lock:
            if caller not in self._callers:
                if len(self._callers) >= self.capacity:
                    self.dropped += 1
                    return
                self._callers.add(caller)
            self._counts[(caller, tool)] = self._counts.get((caller, tool), 0) + 1

    def snapshot(self) -> tuple[dict[tuple[str, str], int], int]:
        with self._lock:
            return dict(self._counts), self.dropped


caller_calls = CallerCalls()
