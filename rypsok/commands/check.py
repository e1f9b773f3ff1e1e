"""rypsok check: validate like serve does, then say what the settings mean."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TextIO

from rypsok.core.config import ConfigError, load, locate
from rypsok.core.config.report import PREFIX, lines, warnings
from rypsok.core.net.tls import TrustStoreError, client_context
from rypsok.protocol.tools import checked

TRUST_STORE_FAILED = "the HTTP client could not be built"


def run_check(cli_path: str | None, env: Mapping[str, str], err: TextIO) -> int:
    source = locate(cli_path, env)
    try:
        config = checked(load(cli_path, env))
    except ConfigError as exc:
        err.write(f"{PREFIX}configuration from {source.description} is invalid\n")
        for problem in exc.problems:
            err.write(f"{PREFIX}error: {problem.render()}\n")
        return 1
    trust_problem: str | None = None
    try:
        client_context(env)
    except TrustStoreError as exc:
        trust_problem = str(exc)
    if trust_problem is not None:
        err.write(
            f"{PREFIX}configuration from {source.description} is valid, but rypsok cannot start\n"
        )
        err.write(f"{PREFIX}error: trust store: {TRUST_STORE_FAILED}: {trust_problem}\n")
        return 1
    err.write(f"{PREFIX}configuration from {source.description} is valid\n")
    for line in lines(config):
        err.write(f"{PREFIX}{line}\n")
    for warning in warnings(config):
        err.write(f"{PREFIX}warning: {warning}\n")
    err.flush()
    return 0
