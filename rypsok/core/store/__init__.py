"""The store: where the state that replicas share is kept ([store] backend).

`memory` (the default) keeps it in this process; `redis` in one Redis for every
replica, with this process's memory as the fallback while Redis cannot answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rypsok.core.engines.circuit import CircuitState
from rypsok.core.store.base import CallAdmission, Store

if TYPE_CHECKING:
    from rypsok.core.config.settings import Config
    from rypsok.core.engines.health import HealthRegistry

__all__ = ["CallAdmission", "CircuitState", "Store", "build_store"]


def build_store(config: Config, health: HealthRegistry) -> Store:
    if config.store.backend == "redis":
        # Imported only here: the default build ships no Redis client.
        from rypsok.core.store.redis_store import RedisStore

        return RedisStore(config, health)
    from rypsok.core.store.memory import MemoryStore

    return MemoryStore(config, health)
