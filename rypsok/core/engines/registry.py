"""The driver types this build knows, by the name a configuration uses.

A driver's module is imported the first time an engine of its type is built
or asked for its endpoint: a process whose configuration names only Wikipedia
never loads the DuckDuckGo driver and its HTML parser.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING

from rypsok.core.config.admission import ADMISSIONS as ADMISSIONS
from rypsok.core.config.admission import admission as admission
from rypsok.core.engines.base import Driver
from rypsok.core.net.egress import EngineEndpoint

if TYPE_CHECKING:
    # Only for annotations: drivers sit above the configuration.
    from rypsok.core.config.settings import EngineSettings


def _wikipedia() -> ModuleType:
    from rypsok.core.engines import wikipedia

    return wikipedia


def _brave() -> ModuleType:
    from rypsok.core.engines import brave

    return brave


def _searxng() -> ModuleType:
    from rypsok.core.engines import searxng

    return searxng


def _duckduckgo() -> ModuleType:
    from rypsok.core.engines import duckduckgo

    return duckduckgo


# Driver type -> (the import of its module, its driver class). Every admitted type has
# one: a driver ships with its admission record (tests/core/test_at_rest.py checks).
DRIVER_MODULES: dict[str, tuple[Callable[[], ModuleType], str]] = {
    "wikipedia": (_wikipedia, "WikipediaDriver"),
    "brave": (_brave, "BraveDriver"),
    "duckduckgo": (_duckduckgo, "DuckDuckGoDriver"),
    "searxng": (_searxng, "SearxngDriver"),
}


def _module(driver: str) -> ModuleType:
    return DRIVER_MODULES[driver][0]()


def endpoint_for(settings: EngineSettings) -> EngineEndpoint:
    """Where the engine's requests may go (REQ-SEC-017): each driver names its endpoint,
    marked configured when the operator wrote it (a base_url)."""
    endpoint: EngineEndpoint = _module(settings.driver).endpoint(settings)
    return endpoint


def driver_for(settings: EngineSettings) -> Driver:
    """The driver instance of one configured engine (REQ-ENG-004).

    The configuration admits only types of ADMISSIONS, each of which has its driver here.
    """
    built: Driver = getattr(_module(settings.driver), DRIVER_MODULES[settings.driver][1])(settings)
    return built
