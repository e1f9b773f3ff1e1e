"""A session at rest holds only what it uses (LIM-M1, issue 17): the HTML parser,
charset detection, the engines' drivers and the two pipelines load with the first
call that needs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from rypsok.core.engines import registry

ROOT = Path(__file__).resolve().parents[2]

# Built as `rypsok serve` builds a stdio session on the default configuration, then
# the names of the modules that are loaded.
_AT_REST = """
import json, sys
from rypsok.commands.serve import prepare
from rypsok.core.facade import Rypsok
from rypsok.protocol.server import build_server
import rypsok.protocol.stdio
config, tls = prepare(None, {"HOME": sys.argv[1]}, "stdio")
core = Rypsok.from_config(config, tls=tls)
build_server(core)
before = sorted(sys.modules)
core.searches, core.fetches
print(json.dumps([before, sorted(sys.modules)]))
"""

_LOADED_ON_USE = (
    "html5lib",
    "charset_normalizer",
    "rypsok.core.html.tree",
    "rypsok.core.html.charset",
    "rypsok.core.fetch.pipeline",
    "rypsok.core.search.pipeline",
    "rypsok.core.engines.wikipedia",
    "rypsok.core.engines.brave",
    "rypsok.core.engines.duckduckgo",
)


def test_lim_m1_a_session_at_rest_loads_no_parser_driver_or_pipeline(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _AT_REST, str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=True,
    )
    before, after = json.loads(done.stdout)
    loaded = [m for m in _LOADED_ON_USE if m in before]
    assert loaded == []
    # Asked for, the pipelines come with the driver of the default engine.
    for name in ("rypsok.core.search.pipeline", "rypsok.core.fetch.pipeline"):
        assert name in after
    assert "rypsok.core.engines.wikipedia" in after


def test_req_eng_004_every_admitted_type_has_its_driver_module() -> None:
    assert set(registry.DRIVER_MODULES) == set(registry.ADMISSIONS)
    for driver, (load, name) in registry.DRIVER_MODULES.items():
        loaded = load()
        assert getattr(loaded, name).__name__ == name
        assert loaded.ADMISSION is registry.ADMISSIONS[driver]
