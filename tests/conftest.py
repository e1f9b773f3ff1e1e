"""Fixtures every test may ask for by name. Shared helpers are modules of tests/support/:
no test module imports another one (tests/test_test_layout.py)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def write_config(tmp_path: Path):  # type: ignore[no-untyped-def]
    def write(text: str | bytes, name: str = "rypsok.toml") -> Path:
        path = tmp_path / name
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        return path

    return write


@pytest.fixture(params=["lane", "public"])
def both_lanes(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run the test with [service.http] fast_lane on, then off (the SDK's public path):
    the HTTP harness's config writer reads the switch (tests/support/lanes.py)."""
    from tests.support.lanes import VARIABLE

    monkeypatch.setenv(VARIABLE, "true" if request.param == "lane" else "false")
    return str(request.param)
