"""The driver types this build knows, by the name a configuration uses."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rypsok.core.engines import brave, duckduckgo, wikipedia
from rypsok.core.engines.admission import ADMISSIONS as ADMISSIONS
from rypsok.core.engines.admission import admission as admission
from rypsok.core.engines.base import Driver
from rypsok.core.net.egress import EngineEndpoint

if TYPE_CHECKING:
    # Only for annotations: drivers sit above the configuration.
    from rypsok.core.config.settings import EngineSettings

# Driver classes by type: every admitted type has one (a driver ships with its record).
_DRIVERS: dict[str, Callable[[EngineSettings], Driver]] = {
    wikipedia.ADMISSION.driver: wikipedia.WikipediaDriver,
    brave.ADMISSION.driver: brave.BraveDriver,
    duckduckgo.ADMISSION.driver: duckduckgo.DuckDuckGoDriver,
}


_ENDPOINTS: dict[str, Callable[[EngineSettings], EngineEndpoint]] = {
    wikipedia.ADMISSION.driver: wikipedia.endpoint,
    brave.ADMISSION.driver: brave.endpoint,
    duckduckgo.ADMISSION.driver: duckduckgo.endpoint,
}


def endpoint_for(settings: EngineSettings) -> EngineEndpoint:
    """Where the engine's requests may go (REQ-SEC-017): each driver names its endpoint,
    marked configured when the operator wrote it (a base_url)."""
    return _ENDPOINTS[settings.driver](settings)


def driver_for(settings: EngineSettings) -> Driver:
    """The driver instance of one configured engine (REQ-ENG-004).

    The configuration admits only types of ADMISSIONS, each of which has its driver here.
    """
    return _DRIVERS[settings.driver](settings)
