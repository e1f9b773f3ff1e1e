"""Call rypsok's core from Python, without MCP: one search, printed as the tool's JSON."""

import json
import os

import anyio

from rypsok.core import Rypsok
from rypsok.core.config import load
from rypsok.core.model import ToolError


async def main() -> None:
    # The file, and the environment its keys (api_key_env, token_env) are read from.
    core = Rypsok.from_config(load("rypsok.toml", os.environ))
    try:
        found = await core.search({"query": "rust ownership", "max_results": 3}, "my_caller")
        answer = found.to_json()
    except ToolError as error:
        answer = error.to_json()  # the same error object the tool returns
    print(json.dumps(answer, indent=2, ensure_ascii=False))


anyio.run(main)
