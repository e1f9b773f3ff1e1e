"""web_search through the facade on the fake engine client: the core the pipeline's tests
build (Wikipedia and Brave, Brave keyed), one call and its refusal, and a core whose engine
timeout lies beyond the search deadline."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from rypsok.core.config import load
from rypsok.core.facade import Rypsok
from rypsok.core.model import ToolError
from rypsok.core.store.values import EngineQuery
from tests.support.fake_engines import FakeClient

WIKI = "en.wikipedia.org"
BRAVE = "api.search.brave.com"
KEY = "brave-test-key-0123456789"


def make(
    tmp_path: Path, body: str = "", client: FakeClient | None = None, key: bool = True
) -> tuple[Rypsok, FakeClient]:
    path = tmp_path / "c.toml"
    path.write_text(
        "config_version = 1\n"
        + body
        + (
            ""
            if "[engines." in body
            else '[engines.wikipedia]\ntype = "wikipedia"\ncategories = ["general", "science"]\n'
            'preference = 10\n[engines.brave]\ntype = "brave"\ncategories = ["general", "news"]\n'
            'preference = 20\napi_key_env = "BRAVE_API_KEY"\n'
        )
    )
    config = load(str(path), {"BRAVE_API_KEY": KEY} if key else {})
    fake = client or FakeClient()
    return Rypsok(config, client=fake), fake  # type: ignore[arg-type]


# Far above any deadline the tests set: when an engine request ends, the search deadline
# ended it, not the engine timeout.
BEYOND_DEADLINE_MS = 60_000


def engine_timeout_beyond_deadline(core: Rypsok, fake: FakeClient) -> Rypsok:
    """`core` rebuilt with search.engine_timeout_ms above search.deadline_ms. Configuration
    refuses that (the timeout must leave the reserve inside the deadline), so the validated
    settings are altered here: a test of the deadline must not be passed by the timeout."""
    search = dataclasses.replace(core.config.search, engine_timeout_ms=BEYOND_DEADLINE_MS)
    config = dataclasses.replace(core.config, search=search)
    return Rypsok(config, client=fake)  # type: ignore[arg-type]


class EndsRecorded(FakeClient):
    """The fake client that also notes when each host's request ended, however it ended."""

    def __init__(self) -> None:
        super().__init__()
        self.ended: dict[str, float] = {}

    async def get(self, url: str, **kwargs: Any) -> Any:
        try:
            return await super().get(url, **kwargs)
        finally:
            host = url.split("/")[2]
            self.ended[host] = time.monotonic()


def engine_query(**changes: Any) -> EngineQuery:
    """One engine's share of a search for "rust", in English, with these fields changed."""
    base = EngineQuery(
        query="rust",
        category="general",
        language="en",
        region="US",
        safe_search="moderate",
        time_range=None,
        count=10,
    )
    return dataclasses.replace(base, **changes)


def run_search(core: Rypsok, **arguments: Any) -> dict[str, Any]:
    async def go() -> dict[str, Any]:
        return (await core.search(arguments)).to_json()

    return anyio.run(go)


def run_error(core: Rypsok, **arguments: Any) -> ToolError:
    with pytest.raises(ToolError) as info:
        run_search(core, **arguments)
    return info.value
