"""A page read in parts through the facade: a page in editions of one length, a core
whose page memory runs on a clock the test moves, one call, and what the site was asked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio

from rypsok.core.facade import Rypsok
from tests.support.clock import FakeClock
from tests.support.fetching import ALLOW_LOCAL, make
from tests.support.site import Site

TITLE = "Harbour notes"


def article(edition: int = 1, paragraphs: int = 8, words: str = "") -> bytes:
    """A page whose content is about 140 characters a paragraph; editions 1 to 9 have the
    same length, so that an offset of one is an offset into the other."""
    text = "".join(
        f"<p>Paragraph {i:03d} of edition {edition}: the harbour keeps its boats in rows, "
        f"and each row has a keeper who counts them at dawn and at dusk. {words}</p>"
        for i in range(paragraphs)
    )
    return (
        f"<!doctype html><html><head><title>{TITLE}</title></head><body><main><article>"
        f"<h1>{TITLE}</h1>{text}</article></main></body></html>"
    ).encode()


def service(tmp_path: Path, fetch: str = "") -> tuple[Rypsok, FakeClock]:
    core = make(tmp_path, ALLOW_LOCAL + "[fetch]\n" + fetch)
    clock = FakeClock(1000.0)
    core.fetches.memory.clock = clock
    return core, clock


def call(core: Rypsok, url: str, caller: str = "local", **arguments: Any) -> dict[str, Any]:
    async def go() -> dict[str, Any]:
        return (await core.fetch({"url": url, **arguments}, caller=caller)).to_json()

    return anyio.run(go)


def reads(s: Site, path: str) -> int:
    """How many times the site was asked for the page (robots.txt aside)."""
    return sum(1 for asked, _ in s.requests if asked == path)


def codes(answer: dict[str, Any]) -> list[str]:
    return [n["code"] for n in answer["notices"]]
