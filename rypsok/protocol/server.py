"""The MCP server: the SDK's low-level Server wired to the rypsok facade.

Results go out as structuredContent plus the same compact JSON as text (text
alone when [service] structured_content = false); errors as tool execution
errors (isError); an unknown tool as JSON-RPC -32602.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import mcp_types as types
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from rypsok import __version__
from rypsok.core.facade import LOCAL_CALLER, Rypsok
from rypsok.core.model import ToolError
from rypsok.core.telemetry import log
from rypsok.protocol import tools

# Time kept back from shutdown_ms (LIM-O1) on either transport for aborting what still runs
# and leaving the interpreter (about 0.2 s measured on a loaded two-core machine), so that
# the process has exited within shutdown_ms, not just begun to.
EXIT_RESERVE_S = 0.3


def shutdown_grace_s(shutdown_ms: int) -> float:
    """How long calls (and HTTP connections) still running at a stop may go on."""
    return max(0.0, shutdown_ms / 1000 - EXIT_RESERVE_S)


# Tools this build really serves; one is added here when its service lands.
OFFERED: tuple[str, ...] = ("web_search", "web_fetch", "engine_status")

_ANNOTATIONS = {
    True: types.ToolAnnotations(
        read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=True
    ),
    False: types.ToolAnnotations(
        read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    ),
}


def compact(obj: dict[str, Any]) -> str:
    return json.dumps(obj, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def list_tools_result(core: Rypsok) -> types.ListToolsResult:
    return types.ListToolsResult(
        tools=[
            types.Tool(
                name=d.name,
                title=tools.TITLES[d.name],
                description=d.description,
                input_schema=d.input_schema,
                output_schema=d.output_schema,
                annotations=_ANNOTATIONS[d.open_world],
            )
            for d in tools.definitions(core.config, OFFERED)
        ]
    )


def _result(core: Rypsok, obj: dict[str, Any], *, is_error: bool = False) -> types.CallToolResult:
    text: list[types.ContentBlock] = [types.TextContent(type="text", text=compact(obj))]
    if core.config.service.structured_content:
        return types.CallToolResult(content=text, structured_content=obj, is_error=is_error)
    return types.CallToolResult(content=text, is_error=is_error)


def served_revisions(legacy_revisions: bool) -> list[str]:
    """What server/discover lists: the stateless revision, then (when they are served)
    the handshake-based ones, newest first."""
    modern = sorted(MODERN_PROTOCOL_VERSIONS, reverse=True)
    if not legacy_revisions:
        return modern
    return [*modern, *sorted(HANDSHAKE_PROTOCOL_VERSIONS, reverse=True)]


def _always(caller: str) -> Callable[[], str]:
    return lambda: caller


def build_server(
    core: Rypsok,
    caller: str | Callable[[], str] = LOCAL_CALLER,
    *,
    legacy_revisions: bool = True,
) -> Server[Any]:
    """legacy_revisions: whether this transport also serves the handshake-based
    revisions (stdio always does; HTTP per [service.http] legacy_revisions).

    caller: the caller every call is made as, or a function that tells the caller of
    the call being served (the callers from OAuth tokens share one server)."""
    who = _always(caller) if isinstance(caller, str) else caller
    definitions = tools.definitions(core.config, OFFERED)
    served = {d.name for d in definitions}
    # What a modern call's Mcp-Param-* headers are checked against; without it the
    # SDK lists every tool on each call to find the one schema.
    schemas = {d.name: d.input_schema for d in definitions}
    revisions = served_revisions(legacy_revisions)

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return list_tools_result(core)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if params.name not in served:
            raise MCPError(code=INVALID_PARAMS, message="unknown tool")
        arguments = params.arguments or {}
        try:
            if params.name == "web_search":
                found = await core.search(arguments, who())
                return _result(core, found.to_json())
            if params.name == "web_fetch":
                page = await core.fetch(arguments, who())
                return _result(core, page.to_json())
            if params.name == "engine_status":
                response = await core.status(arguments, who())
                return _result(core, response.to_json())
        except ToolError as error:
            return _result(core, error.to_json(), is_error=True)
        except Exception as exc:
            # A defect of ours: the call ends, the process and other calls go on.
            log.error("internal_error", tool=params.name, error_type=type(exc).__name__)
            raise MCPError(code=INTERNAL_ERROR, message="internal error") from None
        raise MCPError(code=INVALID_PARAMS, message="unknown tool")  # pragma: no cover

    server: Server[Any] = Server(
        "rypsok",
        version=__version__,
        instructions=tools.INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=schemas.get,
    )

    async def discover(
        ctx: ServerRequestContext[Any], params: types.RequestParams | None
    ) -> types.DiscoverResult:
        # The SDK's own handler lists 2026-07-28 alone, even while the handshake-based
        # revisions are served beside it.
        return types.DiscoverResult(
            supported_versions=list(revisions),
            capabilities=server.get_capabilities(protocol_version=ctx.protocol_version),
            instructions=server.instructions,
        )

    server.add_request_handler("server/discover", types.RequestParams, discover)
    return server
