"""The driver types this build knows, by the name a configuration uses."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rypsok.core.engines import brave, duckduckgo, wikipedia
from rypsok.core.engines.base import (
    Admission,
    Driver,
    EngineFailure,
    EngineQuery,
    HeaderLookup,
    OutboundRequest,
    RawResult,
    SkipReason,
)

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


def built(driver: str) -> bool:
    """Whether this build has the driver of an admitted type."""
    return driver in _DRIVERS


class _NotBuilt:
    """Stands in for an admitted type whose driver this build lacks: the engine is
    configured and asked, and every request fails as request_failure (which opens no
    circuit), so a search reports it instead of the process failing at start."""

    def __init__(self, settings: EngineSettings) -> None:
        self._admission = settings.admission

    @property
    def admission(self) -> Admission:
        return self._admission

    def skip_reason(self, query: EngineQuery) -> SkipReason | None:
        return None

    def request(self, query: EngineQuery) -> OutboundRequest:
        raise EngineFailure("request_failure")

    def parse(self, status: int, header: HeaderLookup, body: bytes) -> list[RawResult]:
        raise EngineFailure("request_failure")  # pragma: no cover - request() never succeeds


def driver_for(settings: EngineSettings) -> Driver:
    """The driver instance of one configured engine (REQ-ENG-004)."""
    factory = _DRIVERS.get(settings.driver)
    if factory is None:
        return _NotBuilt(settings)
    return factory(settings)
