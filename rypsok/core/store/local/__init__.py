"""The memory backend: what the store keeps, held in this process.

One module per kind of state (per-caller calls, provider rates and slots, circuits, the
result cache, returned URLs, robots.txt rules), each the Python twin of a Lua script of
the redis backend (`store/scripts.py`); `memory_store.py` puts them behind the `Store`
interface. The contract suite (tests/core/store/test_contract.py) runs both backends
through the same operations.
"""
