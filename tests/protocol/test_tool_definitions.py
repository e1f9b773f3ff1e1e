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
from tests.support.examples import materialize
from tests.support.paths import EXAMPLES, FIXTURES

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
    path, env = materialize(example, tmp_path)
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


# -- issue 20: described parameters, honest schemas, the budget -------------------------------

EVERY_TYPE = """config_version = 1
[search]
languages = ["en", "ja"]
[scraping]
enabled = true
[engines.w]
type = "wikipedia"
categories = ["general", "science"]
[engines.b]
type = "brave"
categories = ["general", "news"]
api_key_env = "K"
[engines.d]
type = "duckduckgo"
categories = ["general"]
[engines.s]
type = "searxng"
categories = ["general", "news", "science", "code"]
base_url = "http://127.0.0.1:8888"
"""


def _every_type(tmp_path: Path) -> list[tools.ToolDefinition]:
    path = tmp_path / "every.toml"
    path.write_text(EVERY_TYPE, encoding="utf-8")
    return tools.definitions(load(str(path), {"K": "k" * 32}), tools.ORDER)


def test_issue_20_every_parameter_is_described(tmp_path: Path) -> None:
    for definitions in (tools.definitions(load(None, {}), tools.ORDER), _every_type(tmp_path)):
        for tool in definitions:
            for name, schema in tool.input_schema["properties"].items():
                assert schema.get("description"), (tool.name, name)
    [search] = [t for t in _every_type(tmp_path) if t.name == "web_search"]
    category = search.input_schema["properties"]["category"]["description"]
    # Each served category is said in words an agent can choose by.
    for served in ("general", "news", "science", "code"):
        assert f"{served}: " in category
    [fetch] = [t for t in _every_type(tmp_path) if t.name == "web_fetch"]
    assert "next_start_char" in fetch.input_schema["properties"]["start_char"]["description"]


def test_issue_20_the_budget_holds_with_two_languages_and_every_engine_type(
    tmp_path: Path,
) -> None:
    definitions = _every_type(tmp_path)
    names = {t.name: set(t.input_schema["properties"]) for t in definitions}
    assert {"language", "time_range"} <= names["web_search"]
    assert tools.budget_characters(definitions) <= limits.default("LIM-I1")


def test_issue_20_time_range_is_offered_only_when_an_active_engine_honours_it() -> None:
    def offered(env: dict[str, str]) -> bool:
        [search] = [
            t for t in tools.definitions(load(None, env), tools.ORDER) if t.name == "web_search"
        ]
        return "time_range" in search.input_schema["properties"]

    assert not offered({})  # Wikipedia alone: it cannot filter by time
    assert offered({"BRAVE_API_KEY": "k" * 32})
    assert offered({"SEARXNG_URL": "http://127.0.0.1:8888"})


def test_issue_20_a_language_list_over_the_budget_is_refused_by_check_naming_the_key(
    tmp_path: Path,
) -> None:
    from tests.support.run import cli

    tags = ", ".join(f'"{a}{b}"' for a in "abcdefgh" for b in "abcd")  # 32 tags
    path = tmp_path / "many.toml"
    path.write_text(
        EVERY_TYPE.replace('languages = ["en", "ja"]', f"languages = [{tags}]"), encoding="utf-8"
    )
    run = cli("check", "--config", str(path), env={"K": "k" * 32})
    assert run.code == 1
    assert "rypsok: error: search.languages: the tool definitions would take" in run.err
    assert "LIM-I1" in run.err
    served = cli("serve", "--config", str(path), env={"K": "k" * 32})
    assert served.code == 1 and served.out == ""
    assert '"event":"config_invalid"' in served.err and "search.languages" in served.err


def test_issue_20_web_fetch_says_how_parts_relate_with_the_memory_on_or_off(
    tmp_path: Path,
) -> None:
    def described(text: str) -> str:
        path = tmp_path / "c.toml"
        path.write_text("config_version = 1\n" + text, encoding="utf-8")
        [fetch] = [
            t for t in tools.definitions(load(str(path), {}), tools.ORDER) if t.name == "web_fetch"
        ]
        return fetch.description

    assert "come from memory" in described("") and "content_sha256" in described("")
    off = described("[fetch]\ncontinuation_ttl_s = 0\n")
    assert "fetched again for each call" in off and "memory" not in off
