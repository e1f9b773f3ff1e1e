"""A facade whose engine client reaches the duckduckgo stand-in (tests/support/ddg_standin.py)
through `[egress] proxy`, with the scraping switch on."""

from __future__ import annotations

from pathlib import Path

from rypsok.core.config import load
from rypsok.core.facade import Rypsok
from tests.support.ddg_standin import Provider, client_tls


def core_for(
    tmp_path: Path, standin: Provider, body: str = "", *, wikipedia: bool = False, engines: str = ""
) -> Rypsok:
    """A facade whose engine client reaches the stand-in through `[egress] proxy`."""
    tables = (
        engines or '[engines.ddg]\ntype = "duckduckgo"\ncategories = ["general"]\npreference = 20\n'
    )
    if wikipedia:
        tables += (
            '[engines.wikipedia]\ntype = "wikipedia"\ncategories = ["general"]\npreference = 10\n'
        )
    path = tmp_path / "rypsok.toml"
    path.write_text(
        f'config_version = 1\n[egress]\nproxy = "{standin.proxy_url}"\n'
        f"[scraping]\nenabled = true\n{body}{tables}",
        encoding="utf-8",
    )
    return Rypsok(load(str(path), {}), tls=client_tls())
