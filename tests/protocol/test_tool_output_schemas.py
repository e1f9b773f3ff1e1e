"""Real results conform to the output schema their tool declares (REQ-MCP-011).

As a host would: the tools are listed over Streamable HTTP, each tool's outputSchema is
taken from that list, every tool is called for real (web_search against local MediaWiki
stand-ins, web_fetch against a local HTTPS site, engine_status), and structuredContent
is validated with jsonschema, the validator the SDK's own client uses. The pinned
fixture (test_tool_definitions.py) fixes what the schemas say; this fixes that the
answers keep to them.

A tool execution error is not a response: its structuredContent is the error object of
the book's section on errors (REQ-ERR-002, REQ-ERR-003), which the declared schemas do
not describe and which the SDK's client does not check against them. Error results are
validated against that object's shape, written down below from the book.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from jsonschema.validators import validator_for

from rypsok.core import limits
from tests.support.fetching import ARTICLE
from tests.support.http_harness import (
    Served,
    config_text,
    envelope,
    modern_headers,
    post,
    served,
    sse_json,
    tool_call,
)
from tests.support.site import CA, Page, site
from tests.support.standin import mediawiki

ERROR_KINDS = [
    "invalid_request",
    "denied",
    "unavailable",
    "redirected",
    "unsupported_content",
    "too_large",
]
# The error object of the book's section 4 (external design): one kind from the fixed six,
# a message of at most LIM-I4 characters, a detail object; nothing else.
ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "error": {
            "type": "object",
            "properties": {
                "kind": {"type": "string", "enum": ERROR_KINDS},
                "message": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": limits.default("LIM-I4"),
                },
                "detail": {"type": "object"},
            },
            "required": ["kind", "message", "detail"],
            "additionalProperties": False,
        }
    },
    "required": ["error"],
    "additionalProperties": False,
}


def _engines(good: str, failing: str, empty: str) -> str:
    # science reaches only the good engine (ok), general also the failing one (partial,
    # with an engine_unavailable notice), code only the engine with no results (empty).
    # The environment of the harness holds no BRAVE_API_KEY.
    return (
        "[search]\nengine_attribution = true\n"
        '[engines.wikipedia]\ntype = "wikipedia"\ncategories = ["general", "science"]\n'
        f'base_url = "{good}"\n'
        '[engines.wikibroken]\ntype = "wikipedia"\ncategories = ["general"]\n'
        f'base_url = "{failing}"\n'
        '[engines.wikiempty]\ntype = "wikipedia"\ncategories = ["code"]\n'
        f'base_url = "{empty}"\n'
        # Without its key: reported as disabled, with the reason the schema enumerates.
        '[engines.brave]\ntype = "brave"\ncategories = ["news"]\n'
        'api_key_env = "BRAVE_API_KEY"\n'
    )


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Served, str]]:
    """The listener with three stand-in engines, and the URL of a page on a local site."""
    ca_file = tmp_path / "ca.pem"
    CA.cert_pem.write_to_path(str(ca_file))
    monkeypatch.setenv("SSL_CERT_FILE", str(ca_file))  # read when the service is built
    with ExitStack() as stack:
        good = stack.enter_context(mediawiki())
        failing = stack.enter_context(mediawiki(hostile="garbage"))
        empty = stack.enter_context(mediawiki(results=[]))
        page = stack.enter_context(site({"/rust-ownership": Page(body=ARTICLE)}))
        text = config_text(more=_engines(good["base_url"], failing["base_url"], empty["base_url"]))
        server = stack.enter_context(served(tmp_path, text))
        yield server, page.url("/rust-ownership")


def _declared(server: Served) -> dict[str, dict[str, Any]]:
    reply = post(
        server.port, envelope("tools/list"), modern_headers(method="tools/list", name=None)
    )
    assert reply.status == 200
    tools = sse_json(reply)["result"]["tools"]
    return {tool["name"]: tool.get("outputSchema") for tool in tools}


def _call(server: Served, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    reply = post(server.port, tool_call(name, arguments), modern_headers(name=name))
    assert reply.status == 200
    result: dict[str, Any] = sse_json(reply)["result"]
    # The text is the same response: what was validated is what a text-only host reads.
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    return result


def _violations(instance: Any, schema: dict[str, Any]) -> list[str]:
    cls = validator_for(schema)
    cls.check_schema(schema)  # the declared schema is itself a valid JSON Schema
    return sorted(
        f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}"
        for e in cls(schema).iter_errors(instance)
    )


def test_req_mcp_011_every_real_result_conforms_to_its_declared_output_schema(
    world: tuple[Served, str],
) -> None:
    server, page_url = world
    declared = _declared(server)
    assert set(declared) == {"web_search", "web_fetch", "engine_status"}
    for name, schema in declared.items():
        assert isinstance(schema, dict), f"{name} declares no output schema"
        # A schema that accepts anything would make the checks below empty.
        assert _violations({}, schema), f"{name}: its schema accepts an empty object"

    short = limits.get("LIM-F1").low
    calls = {
        "search ok": ("web_search", {"query": "rust ownership", "category": "science"}, "ok"),
        "search partial": (
            "web_search",
            {"query": "rust borrow", "category": "general"},
            "partial",
        ),
        "search empty": ("web_search", {"query": "rust lifetimes", "category": "code"}, "empty"),
        "fetch whole": ("web_fetch", {"url": page_url}, "ok"),
        "fetch part": ("web_fetch", {"url": page_url, "max_chars": short, "start_char": 100}, "ok"),
        "status": ("engine_status", {}, "ok"),
    }
    seen: dict[str, Any] = {}
    for label, (name, arguments, outcome) in calls.items():
        result = _call(server, name, arguments)
        assert result["isError"] is False, (label, result["structuredContent"])
        content = result["structuredContent"]
        assert content["outcome"] == outcome, label
        assert _violations(content, declared[name]) == [], label
        seen[label] = content

    # The calls reached the optional parts of the schemas, not only the required ones.
    found = seen["search ok"]["results"]
    assert found and all("date" in r and r["engines"] == ["wikipedia"] for r in found)
    notice = seen["search partial"]["notices"][0]
    assert {"code": "engine_unavailable", "engine": "wikibroken"}.items() <= notice.items()
    assert seen["search empty"]["results"] == []
    assert seen["fetch part"]["truncated"] is True and "next_start_char" in seen["fetch part"]
    engines = {e["id"]: e for e in seen["status"]["engines"]}
    assert isinstance(engines["wikipedia"]["latency_ms"], int)  # measured, not only nulls
    assert engines["brave"]["reason"] == "no_credential"


def test_req_mcp_011_error_results_carry_the_error_object(tmp_path: Path) -> None:
    calls = [
        ("web_search", {"query": "rust", "max_results": 999}, "invalid_request"),
        ("web_search", {"query": "   "}, "invalid_request"),
        ("web_fetch", {"url": "http://192.168.1.10/admin"}, "denied"),
        ("web_fetch", {"url": "ftp://127.0.0.1/file"}, "denied"),
        ("engine_status", {"verbose": True}, "invalid_request"),
    ]
    with served(tmp_path, config_text()) as server:  # every call is refused before a request
        for name, arguments, kind in calls:
            result = _call(server, name, arguments)
            assert result["isError"] is True, (name, arguments)
            content = result["structuredContent"]
            assert _violations(content, ERROR_SCHEMA) == [], (name, arguments)
            assert content["error"]["kind"] == kind, (name, arguments)
