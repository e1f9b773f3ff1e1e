"""rypsok serve: validate exactly as check does, build the client, then serve."""

from __future__ import annotations

import ssl
import sys
from collections.abc import Mapping

from rypsok.core.config import Config, ConfigError, load
from rypsok.core.net.tls import TrustStoreBuild, TrustStoreError, client_context
from rypsok.core.telemetry import log
from rypsok.protocol.tools import checked

TRUST_STORE_FAILED = "the HTTP client could not be built"
SWITCH_INTERVAL_S = 0.001  # the interpreter lock's switch interval while serving


def prepare(
    cli_path: str | None,
    env: Mapping[str, str],
    transport: str = "http",
    trust: TrustStoreBuild | None = None,
) -> tuple[Config, ssl.SSLContext] | None:
    """The configuration, with start-up events logged; None when serve must stop.

    Over stdio there is one caller, the process at the other end of the pipe: the HTTP
    callers' tokens are not read, so a file shared with network mode starts without them.
    `trust`: the trust store already being built (else it is built here).
    """
    try:
        config = checked(load(cli_path, env, read_tokens=transport == "http"))
    except ConfigError as exc:
        for problem in exc.problems:
            log.error("config_invalid", message=problem.render())
        return None
    try:
        tls = trust.result() if trust is not None else client_context(env)
    except TrustStoreError as exc:
        log.error("startup_failed", message=f"{TRUST_STORE_FAILED}: {exc}")
        return None
    log.set_level(config.logging.level)
    for engine in config.engines:
        if engine.inactive_reason is not None:
            log.info("engine_inactive", engine=engine.id, reason=engine.inactive_reason)
        if engine.enabled and engine.admission.scraping:
            log.warn("scraping_enabled", engine=engine.id)
    if config.logging.log_queries:
        log.warn(
            "log_queries_enabled",
            message="query text is written to debug events; turn it off after diagnosis",
        )
    return config, tls


def run_serve(
    cli_path: str | None,
    transport: str,
    env: Mapping[str, str],
    trust: TrustStoreBuild | None = None,
) -> int:
    prepared = prepare(cli_path, env, transport, trust)
    if prepared is None:
        return 1
    config, tls = prepared
    # Parses run in worker threads that hold the interpreter lock; at the default 5 ms
    # switch interval a loaded machine starved the event loop for seconds, so deadlines,
    # idle closes and engine_status answered late (bench/soak). 1 ms gives the loop
    # its turn far more often for a few per cent of parse throughput.
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    from rypsok.core.facade import Rypsok

    if transport == "http":
        from rypsok.protocol.http import run as run_http

        return run_http(Rypsok.from_config(config, tls=tls))
    from rypsok.protocol.stdio import run

    return run(Rypsok.from_config(config, tls=tls))
