"""A clock for the code under test that takes time as a callable."""

from __future__ import annotations


class FakeClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self, start: float = 0.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now
