"""The store: where the state that replicas share is kept ([store] backend).

`memory` (the default) keeps it in this process (`local/`); `redis` in one Redis for every
replica, with this process's memory as the fallback while Redis cannot answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rypsok.core.store.base import Store
from rypsok.core.store.values import CallAdmission, CircuitState

if TYPE_CHECKING:
    from rypsok.core.config.settings import Config

__all__ = ["CallAdmission", "CircuitState", "Store", "build_store"]


def build_store(config: Config) -> Store:
    if config.store.backend == "redis":
        # Imported only here: the default build ships no Redis client.
        from rypsok.core.store.redis_store import RedisStore

        return RedisStore(config)
    from rypsok.core.store.local.memory_store import MemoryStore

    return MemoryStore(config)
