"""The two ways the HTTP listener serves (rypsok/protocol/sdk_private.py): through the
fast lane and the session hooks, or through the SDK's public path.

The harness's config writer (config_text) adds `fast_lane = false` to [service.http]
while RYPSOK_TEST_FAST_LANE is "false". The `both_lanes` fixture of tests/conftest.py
runs a test once each way; the whole suite runs the public path with

    RYPSOK_TEST_FAST_LANE=false .venv/bin/python -m pytest tests/protocol

(docs/dependencies.md: taking a new SDK minor).
"""

from __future__ import annotations

import os

VARIABLE = "RYPSOK_TEST_FAST_LANE"
MODES = ("lane", "public")


def fast_lane_on() -> bool:
    value = os.environ.get(VARIABLE, "true").strip().lower()
    if value not in ("true", "false"):
        raise ValueError(f"{VARIABLE} is {value!r}: true or false")
    return value == "true"


def http_lines(http: str) -> str:
    """[service.http]'s lines as a test gave them, with the lane's switch when it is off."""
    return http if fast_lane_on() else "\n".join(filter(None, (http, "fast_lane = false")))
