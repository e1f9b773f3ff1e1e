"""rypsok's log lines of a block of code, captured at a level the test chooses."""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager

from rypsok.core.telemetry import log


@contextmanager
def captured_log(level: str = "debug") -> Iterator[io.StringIO]:
    stream = io.StringIO()
    previous = log._stream
    log._stream = stream
    log.set_level(level)
    try:
        yield stream
    finally:
        log._stream = previous
        log.set_level("info")
