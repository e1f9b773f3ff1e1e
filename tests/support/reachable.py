"""What a service still holds: every str and bytes value reachable from it and from rypsok's
module state, and markers made at run time to look for in that text (REQ-LIFE-002)."""

from __future__ import annotations

import contextlib
import functools
import gc
import sys
import types
import uuid
from collections.abc import Iterable

from rypsok.core.facade import Rypsok

# Larger than the graph of a service that has served a few calls; reaching it fails the
# test, so that a walk cut short can never pass for a clean one.
WALK_LIMIT = 400_000
# What the walk does not enter: code, classes and modules (their text is the program's,
# not a call's), and the interpreter's own descriptors.
_OPAQUE = (
    types.ModuleType,
    type,
    types.CodeType,
    types.WrapperDescriptorType,
    types.MethodDescriptorType,
    types.GetSetDescriptorType,
    types.MemberDescriptorType,
)


def _foreign_cache(obj: object) -> bool:
    """A library function's memo (urllib.parse.urlsplit keeps 128 URLs): not the service's
    state; test_disposal_fetch.py looks into the standard URL cache on its own."""
    return isinstance(obj, functools._lru_cache_wrapper) and not str(
        getattr(obj, "__module__", "")
    ).startswith("rypsok")


def _referents(obj: object) -> Iterable[object]:
    """What *obj* holds that a call could have left behind."""
    if isinstance(obj, _OPAQUE) or _foreign_cache(obj):
        return ()
    if isinstance(obj, types.FunctionType):  # a callback's captured values, not its module
        held: list[object] = [obj.__defaults__, obj.__kwdefaults__]
        for cell in obj.__closure__ or ():
            with contextlib.suppress(ValueError):  # a cell not filled yet
                held.append(cell.cell_contents)
        return held
    if isinstance(obj, types.BuiltinFunctionType):
        owner = obj.__self__
        return () if isinstance(owner, types.ModuleType) else (owner,)
    if isinstance(obj, types.FrameType):  # a kept traceback or coroutine: its variables
        return list(obj.f_locals.values())
    if isinstance(obj, dict):  # the collector does not visit a dict's str keys
        return [*obj.keys(), *gc.get_referents(obj)]
    return gc.get_referents(obj)


def _module_state() -> list[object]:
    """The globals of every loaded rypsok module: loggers, counters, caches."""
    return [
        vars(module)
        for name, module in sorted(sys.modules.items())
        if name == "rypsok" or name.startswith("rypsok.")
    ]


def reachable_text(core: Rypsok) -> str:
    """Every str and bytes value reachable from the service and rypsok's module state,
    through any object (not only rypsok's own): pools, limiters, queues, closures."""
    gc.collect()
    seen: set[int] = set()
    stack: list[object] = [core, *_module_state()]
    found: list[str] = []
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        assert len(seen) < WALK_LIMIT, "the object graph is larger than the walk allows"
        if isinstance(obj, str):
            found.append(obj)
        elif isinstance(obj, (bytes, bytearray)):
            found.append(bytes(obj).decode("latin-1"))
        elif isinstance(obj, memoryview):
            found.append(obj.tobytes().decode("latin-1"))
        else:
            stack.extend(_referents(obj))
    return "\n".join(found)


def marker(label: str) -> str:
    """A token made at run time, so that no constant of this module contains it."""
    return f"{label}{uuid.uuid4().hex}"


def assert_gone(core: Rypsok, markers: Iterable[str]) -> None:
    state = reachable_text(core)
    kept = [m for m in markers if m in state]
    assert kept == [], f"still reachable from the service: {kept}"
