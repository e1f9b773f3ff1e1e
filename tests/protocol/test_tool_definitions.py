"""The tool list: pinned text, budget and shape (REQ-MCP-008, REQ-MCP-009, REQ-TEST-009)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rypsok.core import limits
from rypsok.core.config import load
from rypsok.core.facade import Rypsok
from rypsok.protocol import tools
from rypsok.protocol.server import OFFERED, list_tools_result
from tests.conftest import EXAMPLES
from tests.docs.test_examples import _materialize
from tests.support.paths import FIXTURES

PINNED = FIXTURES / "protocol" / "tools-list.json"


def listing(config_path: Path | None, env: dict[str, str] | None = None) -> list[dict[str, object]]:
    core = Rypsok(load(None if config_path is None else str(config_path), env or {}))
    dumped = list_tools_result(core).model_dump(by_alias=True, exclude_none=True, mode="json")
    return list(dumped["tools"])


def test_req_mcp_008_whole_tool_list_is_pinned_at_the_defaults() -> None:
    # A change of any name, description, schema or annotation is a contract change:
    # regenerate the fixture only through review.
    assert listing(None) == json.loads(PINNED.read_text(encoding="utf-8"))


@pytest.mark.parametrize("example", sorted(EXAMPLES.glob("*.toml")), ids=lambda p: p.name)
def test_req_mcp_008_definitions_within_lim_i1_for_every_example(
    example: Path, tmp_path: Path
) -> None:
    path, env = _materialize(example, tmp_path)
    config = load(str(path), dict(env, BRAVE_API_KEY="k"))
    definitions = tools.definitions(config, (*OFFERED, "web_fetch"))
    assert tools.budget_characters(definitions) <= limits.default("LIM-I1")


def test_req_mcp_008_two_languages_add_the_language_parameter_within_budget(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('config_version = 1\n[search]\nlanguages = ["en", "ja", "pt-BR", "zh-Hans"]\n')
    config = load(str(path), {"BRAVE_API_KEY": "k"})
    definitions = tools.definitions(config, OFFERED)
    search = definitions[0].input_schema
    assert search["properties"]["language"]["enum"] == ["en", "ja", "pt-BR", "zh-Hans"]
    assert tools.budget_characters(definitions) <= limits.default("LIM-I1")
    one = load(None, {})
    assert "language" not in tools.definitions(one, OFFERED)[0].input_schema["properties"]


def test_lim_i2_i3_flat_schemas_with_at_most_five_parameters(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('config_version = 1\n[search]\nlanguages = ["en", "ja"]\n')
    for definition in tools.definitions(load(str(path), {}), OFFERED):
        properties = definition.input_schema["properties"]
        assert len(properties) <= limits.default("LIM-I2")
        assert definition.input_schema["additionalProperties"] is False
        for schema in properties.values():
            assert schema["type"] in ("string", "integer", "boolean")


def test_req_search_002_category_enum_lists_only_served_categories(tmp_path: Path) -> None:
    search = listing(None)[0]
    assert search["inputSchema"]["properties"]["category"]["enum"] == ["general", "science"]  # type: ignore[index]
    with_brave = listing(None, {"BRAVE_API_KEY": "k"})[0]
    assert with_brave["inputSchema"]["properties"]["category"]["enum"] == [  # type: ignore[index]
        "general",
        "news",
        "science",
    ]
