"""The driver types this build knows, by the name a configuration uses."""

from __future__ import annotations

from rypsok.core.engines import brave, duckduckgo, wikipedia
from rypsok.core.engines.base import Admission

ADMISSIONS: dict[str, Admission] = {
    a.driver: a for a in (wikipedia.ADMISSION, brave.ADMISSION, duckduckgo.ADMISSION)
}


def admission(driver: str) -> Admission | None:
    return ADMISSIONS.get(driver)
