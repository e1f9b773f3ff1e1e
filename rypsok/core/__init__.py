"""rypsok's core: configuration, engines, pipelines, egress and telemetry.

This package knows nothing of MCP or of any HTTP server; the protocol
adapters in `rypsok.protocol` depend on it, never the reverse.
"""

from typing import Any


def __getattr__(name: str) -> Any:
    # rypsok.core.Rypsok, imported on first use so that `rypsok check` and the
    # configuration modules do not load the pipelines.
    if name == "Rypsok":
        from rypsok.core.facade import Rypsok

        return Rypsok
    raise AttributeError(name)
