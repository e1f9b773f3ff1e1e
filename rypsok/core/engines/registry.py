"""The driver types this build knows, by the name a configuration uses."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rypsok.core.engines import brave, duckduckgo, wikipedia
from rypsok.core.engines.base import Admission, Driver

if TYPE_CHECKING:
    # Only for annotations: the configuration imports this module while it validates.
    from rypsok.core.config.settings import EngineSettings

ADMISSIONS: dict[str, Admission] = {
    a.driver: a for a in (wikipedia.ADMISSION, brave.ADMISSION, duckduckgo.ADMISSION)
}

# Driver classes by type. The duckduckgo type is admitted (its record and ADMISSION exist)
# but its driver comes with a later issue: it gets its entry here, and `driver_for` stops
# refusing it, when duckduckgo.DuckDuckGoDriver exists.
_DRIVERS: dict[str, Callable[[EngineSettings], Driver]] = {
    wikipedia.ADMISSION.driver: wikipedia.WikipediaDriver,
    brave.ADMISSION.driver: brave.BraveDriver,
}


def admission(driver: str) -> Admission | None:
    return ADMISSIONS.get(driver)


def driver_for(settings: EngineSettings) -> Driver:
    """The driver instance of one configured engine (REQ-ENG-004).

    Raises ValueError for a type without a driver in this build; validation only lets
    admitted types through, so that means an admitted type whose driver is not written yet.
    """
    factory = _DRIVERS.get(settings.driver)
    if factory is None:
        raise ValueError(f"no driver for engine type {settings.driver!r} in this build")
    return factory(settings)
