"""What one scrape shows: the counters since the process started, the call durations,
and the state of the running service read at that moment (circuits, sessions, permits,
the store, memory beside `check`'s estimate, readiness).

The telemetry groups each map to one metric family with label names of their own; a
group that is not mapped here is not exported, so nothing reaches a label by accident.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import get_args

import anyio

from rypsok import __version__
from rypsok.core.config.report import call_maxima_ms, memory_of
from rypsok.core.facade import Rypsok
from rypsok.core.model import DeniedReason, EngineState, ErrorKind, UnavailableReason
from rypsok.core.net.failure import FAILURE_KINDS
from rypsok.core.telemetry import DURATION_BUCKETS_S, caller_calls, counters, durations
from rypsok.protocol.metrics.exposition import Family, word

TOOLS = ("web_search", "web_fetch", "engine_status")
OUTCOMES = (
    "ok",
    "partial",
    "empty",
    *get_args(ErrorKind),
    "cancelled",
    "error",
)
REASONS = (*get_args(DeniedReason), *get_args(UnavailableReason))
STATES: tuple[EngineState, ...] = get_args(EngineState)
CONTENT_KINDS = ("html", "xhtml", "text", "markdown", "pdf")
MIB = 1024 * 1024
STARTED = time.time()


@dataclass
class Service:
    """The parts of a running process a scrape reads; what a transport has, it gives."""

    core: Rypsok
    transport: str  # "http" or "stdio"
    sessions: Callable[[], int] | None = None
    connections: Callable[[], int] | None = None
    draining: Callable[[], bool] = lambda: False
    started: Callable[[], bool] = lambda: True
    extra: list[Family] = field(default_factory=list)

    def ready(self) -> bool:
        return self.started() and not self.draining()


def _counter_families(engines: set[str]) -> list[Family]:
    calls = Family("rypsok_tool_calls_total", "counter", "Tool calls that ended, by outcome.")
    refusals = Family(
        "rypsok_tool_refusals_total",
        "counter",
        "Tool calls refused or unavailable, by error kind and reason.",
    )
    engine_ok = Family(
        "rypsok_engine_requests_total", "counter", "Engine requests that were answered."
    )
    engine_errors = Family(
        "rypsok_engine_errors_total", "counter", "Engine requests that failed, by error class."
    )
    engine_failures = Family(
        "rypsok_engine_failures_total",
        "counter",
        "Engine requests that failed, by the client's failure kind.",
    )
    cache = Family("rypsok_cache_lookups_total", "counter", "Result cache look-ups by result.")
    pages = Family("rypsok_fetch_pages_total", "counter", "Pages read by web_fetch, by kind.")
    read_bytes = Family(
        "rypsok_fetch_bytes_total", "counter", "Bytes of pages read by web_fetch, by kind."
    )
    statuses = Family(
        "rypsok_fetch_http_errors_total", "counter", "Sites that answered 4xx or 5xx."
    )
    store = Family(
        "rypsok_store_operations_total",
        "counter",
        "Store operations served from this replica's share, late, failed or behind.",
    )
    transitions = Family(
        "rypsok_store_transitions_total", "counter", "The shared store became away or back."
    )
    http = Family("rypsok_http_refusals_total", "counter", "HTTP requests refused, by reason.")
    oauth = Family("rypsok_oauth_tokens_total", "counter", "Bearer tokens judged, by result.")
    for (group, key, sub), value in sorted(counters.totals().items()):
        if group == "calls":
            calls.add(value, tool=word(key, TOOLS), outcome=word(sub, OUTCOMES))
        elif group == "refused":
            kind, _, reason = sub.partition(":")
            kind = word(kind, get_args(ErrorKind))
            reason = word(reason, REASONS) if kind in ("denied", "unavailable") else kind
            refusals.add(value, tool=word(key, TOOLS), kind=kind, reason=reason)
        elif group == "engine_requests":
            engine_ok.add(value, engine=word(key, engines))
        elif group == "engine_errors":
            engine_errors.add(value, engine=word(key, engines), error_class=word(sub))
        elif group == "engine_failures":
            engine_failures.add(value, engine=word(key, engines), kind=word(sub, FAILURE_KINDS))
        elif group == "cache":
            cache.add(value, engine=word(key, engines), result=word(sub))
        elif group == "fetch" and key == "pages":
            pages.add(value, kind=word(sub, CONTENT_KINDS))
        elif group == "fetch" and key == "bytes":
            read_bytes.add(value, kind=word(sub, CONTENT_KINDS))
        elif group == "fetch" and key == "status":
            statuses.add(value, status_class=word(sub, ("4xx", "5xx")))
        elif group == "store" and key == "state":
            transitions.add(value, to=word(sub, ("unavailable", "recovered")))
        elif group == "store":
            store.add(value, event=word(key), operation=word(sub))
        elif group == "http" and key == "refusals":
            http.add(value, reason=word(sub))
        elif group == "oauth":
            oauth.add(value, result=word(sub))
    return [
        calls,
        refusals,
        engine_ok,
        engine_errors,
        engine_failures,
        cache,
        pages,
        read_bytes,
        statuses,
        store,
        transitions,
        http,
        oauth,
    ]


def _duration_family() -> Family:
    family = Family("rypsok_tool_call_duration_seconds", "histogram", "How long tool calls took.")
    for tool, (counts, total) in sorted(durations.snapshot().items()):
        tool = word(tool, TOOLS)
        running = 0
        for bound, count in zip((*DURATION_BUCKETS_S, float("inf")), counts, strict=True):
            running += count
            le = "+Inf" if bound == float("inf") else repr(bound)
            family.add(running, "_bucket", tool=tool, le=le)
        family.add(total, "_sum", tool=tool)
        family.add(running, "_count", tool=tool)
    return family


def _caller_families() -> list[Family]:
    counts, dropped = caller_calls.snapshot()
    if not caller_calls.enabled:
        return []
    per_caller = Family(
        "rypsok_caller_calls_total", "counter", "Tool calls per caller (per_caller on)."
    )
    for (caller, tool), value in sorted(counts.items()):
        per_caller.add(value, caller=caller, tool=word(tool, TOOLS))
    lost = Family(
        "rypsok_caller_labels_dropped_total",
        "counter",
        "Calls of callers past the bound of per-caller labels (LIM-T1), counted only here.",
    )
    lost.add(dropped)
    return [per_caller, lost]


def resident_bytes() -> int | None:
    """The process's resident set now (Linux), else its peak (getrusage, other Unixes);
    None where neither is known (Windows): the metric is then left out, not made up."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            pages = int(statm.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        pass
    try:
        import resource  # Unix only
    except ImportError:
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


async def families(service: Service) -> list[Family]:
    core = service.core
    engines = {e.id for e in core.config.engines}
    out = _counter_families(engines)
    out.append(_duration_family())
    out.extend(_caller_families())

    circuit = Family(
        "rypsok_engine_circuit_state",
        "gauge",
        "Each engine's circuit: 1 for the state it is in, 0 for the others.",
    )
    with anyio.move_on_after(1.0):  # the store's answer, Redis included, or none
        for report in core.health.reports(await core.store.circuit_states()):
            for state in STATES:
                circuit.add(
                    1 if report.state == state else 0, engine=word(report.id, engines), state=state
                )
    out.append(circuit)

    permits = Family("rypsok_permits_in_use", "gauge", "Permits held now, by kind.")
    capacity = Family("rypsok_permits", "gauge", "Permits there are, by kind.")
    limiters = {"parsing": core.parsing}
    if core.__dict__.get("searches") is not None:
        limiters["outbound"] = core.searches.outbound
    if core.__dict__.get("fetches") is not None:
        limiters["fetches"] = core.fetches.in_flight
    for kind, limiter in limiters.items():
        permits.add(limiter.borrowed_tokens, kind=kind)
        capacity.add(limiter.total_tokens, kind=kind)
    out += [permits, capacity]

    if service.sessions is not None:
        sessions = Family(
            "rypsok_http_sessions", "gauge", "Live sessions of the handshake revisions."
        )
        sessions.add(service.sessions())
        out.append(sessions)
    if service.connections is not None:
        open_connections = Family("rypsok_http_connections", "gauge", "HTTP connections open.")
        open_connections.add(service.connections())
        out.append(open_connections)

    store = Family(
        "rypsok_store_available",
        "gauge",
        "1 while the shared store answers (or the store is this process's memory); 0 while "
        "this replica serves from its own share.",
    )
    store.add(1 if getattr(core.store, "available", True) else 0, backend=core.config.store.backend)
    out.append(store)

    memory = Family(
        "rypsok_process_resident_memory_bytes", "gauge", "Resident memory of the process."
    )
    resident = resident_bytes()
    if resident is not None:
        memory.add(resident)
    estimate = Family(
        "rypsok_memory_estimate_bytes",
        "gauge",
        "The worst case check estimates for this configuration.",
    )
    estimate.add(memory_of(core.config).total * MIB)
    start = Family(
        "rypsok_process_start_time_seconds", "gauge", "When the process started, Unix time."
    )
    start.add(STARTED)
    maxima = Family(
        "rypsok_tool_call_maximum_seconds",
        "gauge",
        "The longest a call of the tool can last with this configuration.",
    )
    search_ms, fetch_ms = call_maxima_ms(core.config)
    maxima.add(search_ms / 1000, tool="web_search")
    maxima.add(fetch_ms / 1000, tool="web_fetch")
    out.append(maxima)
    ready = Family("rypsok_ready", "gauge", "1 while /readyz answers 200.")
    ready.add(1 if service.ready() else 0)
    info = Family("rypsok_build_info", "gauge", "The running build; always 1.")
    info.add(1, version=__version__, transport=service.transport)
    out += [memory, estimate, start, ready, info, *service.extra]
    return out
