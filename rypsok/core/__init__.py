"""rypsok's core: configuration, engines, pipelines, egress and telemetry.

This package knows nothing of MCP or of any HTTP server; the protocol
adapters in `rypsok.protocol` depend on it, never the reverse.
"""
