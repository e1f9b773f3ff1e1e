"""The Wikipedia and Brave drivers built from settings alone, as the registry would build
them, with a fixture key for Brave."""

from __future__ import annotations

from rypsok.core.config.secrets import Secret
from rypsok.core.config.settings import EngineSettings
from rypsok.core.engines import brave, wikipedia
from rypsok.core.engines.base import Admission
from rypsok.core.engines.brave import BraveDriver
from rypsok.core.engines.wikipedia import WikipediaDriver

TOKEN = "fixture-token-0123456789abcdef"  # not a real key


def settings(
    admission: Admission,
    *,
    endpoint: str | None = None,
    base_url: str | None = None,
    credential: Secret | None = None,
) -> EngineSettings:
    return EngineSettings(
        id=admission.driver,
        admission=admission,
        enabled=True,
        categories=("general",),
        preference=0,
        api_key_env="BRAVE_API_KEY" if admission.keyed else None,
        api_key_file_set=False,
        endpoint=endpoint,
        base_url=base_url,
        credential=credential,
        credential_problem=None,
    )


def wiki(base_url: str | None = None) -> WikipediaDriver:
    return WikipediaDriver(settings(wikipedia.ADMISSION, base_url=base_url))


def brave_driver(endpoint: str = "web", credential: Secret | None = None) -> BraveDriver:
    return BraveDriver(
        settings(brave.ADMISSION, endpoint=endpoint, credential=credential or Secret(TOKEN))
    )
