"""Structured logs on stderr (REQ-OBS-005, REQ-PRIV-004)."""

from __future__ import annotations

import io
import json
import re

import anyio

from rypsok.core.telemetry import Logger, call_scope, new_request_id


def records(stream: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_req_obs_005_one_json_object_per_line_with_timestamp_level_event() -> None:
    out = io.StringIO()
    logger = Logger("info", out)
    logger.info("counters", searches=3)
    logger.warn("engine_failed", engine="brave", **{"class": "timeout"})
    first, second = records(out)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", str(first["timestamp"]))
    assert first["level"] == "info" and first["event"] == "counters" and first["searches"] == 3
    assert second["class"] == "timeout"
    assert "request_id" not in first


def test_req_obs_005_levels_filter_events() -> None:
    out = io.StringIO()
    logger = Logger("warn", out)
    logger.info("call")
    logger.debug("call")
    logger.error("startup_failed")
    assert [r["event"] for r in records(out)] == ["startup_failed"]


def test_req_obs_005_every_event_of_a_call_carries_request_id_and_caller() -> None:
    out = io.StringIO()
    logger = Logger("debug", out)

    async def call(caller: str) -> None:
        with call_scope(caller):
            logger.info("engine_failed", engine="wikipedia")
            await anyio.sleep(0.01)
            logger.info("call", tool="web_search")

    async def both() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(call, "ops")
            group.start_soon(call, "mimlys")

    anyio.run(both)
    logger.info("counters")
    found = records(out)
    by_id: dict[object, set[object]] = {}
    for record in found[:-1]:
        by_id.setdefault(record["request_id"], set()).add(record["caller"])
    assert len(by_id) == 2 and all(len(callers) == 1 for callers in by_id.values())
    assert "request_id" not in found[-1]


def test_request_ids_are_unique_and_hexadecimal() -> None:
    ids = {new_request_id() for _ in range(1000)}
    assert len(ids) == 1000
    assert all(re.fullmatch(r"[0-9a-f]{11,}-[0-9a-f]{6,}", i) for i in ids)
