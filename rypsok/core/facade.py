"""The Rypsok facade: search, fetch and status, transport-independent.

Protocol adapters call these and nothing below them (REQ-MAIN-002). Each
call runs in a call scope (request_id, caller), is rate-limited per caller,
and ends with a response or a ToolError.
"""

from __future__ import annotations

import time

from rypsok.core.config.settings import Config
from rypsok.core.engines.health import HealthRegistry
from rypsok.core.model import StatusResponse, rate_limited
from rypsok.core.ratelimit import ToolRateLimiter
from rypsok.core.telemetry import call_scope, log

LOCAL_CALLER = "local"


class Rypsok:
    def __init__(self, config: Config) -> None:
        self.config = config
        self.health = HealthRegistry(config)
        lim = config.limits
        self.rate = ToolRateLimiter({
            "web_search": lim.web_search_per_minute,
            "web_fetch": lim.web_fetch_per_minute,
            "engine_status": lim.engine_status_per_minute,
        })

    @classmethod
    def from_config(cls, config: Config) -> Rypsok:
        return cls(config)

    async def status(self, caller: str = LOCAL_CALLER) -> StatusResponse:
        """Every configured engine's state, from memory; never a request (LIM-S13)."""
        with call_scope(caller):
            started = time.monotonic()
            wait_ms = self.rate.try_acquire(caller, "engine_status")
            if wait_ms is not None:
                log.info("call", tool="engine_status", outcome="rate_limited",
                         latency_ms=_ms(started))
                raise rate_limited("engine_status", wait_ms)
            response = StatusResponse(self.health.reports())
            log.info("call", tool="engine_status", outcome=response.outcome,
                     latency_ms=_ms(started))
            return response


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
