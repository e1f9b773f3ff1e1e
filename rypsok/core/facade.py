"""The Rypsok facade: search, fetch and status, transport-independent.

Protocol adapters call these and nothing below them (REQ-MAIN-002). Each
call runs in a call scope (request_id, caller), is rate-limited per caller,
ends within its maximum (LIM-S7 for a search), and ends with exactly one
response or one ToolError.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Awaitable, Callable, Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from rypsok.core import limits
from rypsok.core.config.settings import Config
from rypsok.core.disposal import forget_urls
from rypsok.core.engines.health import HealthRegistry
from rypsok.core.fetch.errors import fetch_deadline
from rypsok.core.fetch.request import fetch_request
from rypsok.core.model import (
    FetchResponse,
    SearchResponse,
    StatusResponse,
    ToolError,
    rate_limited,
    search_deadline,
    status_deadline,
    unknown_parameter,
)
from rypsok.core.net.client import OutboundClient, user_agent
from rypsok.core.net.egress import EgressPolicy
from rypsok.core.net.proxy import Proxy
from rypsok.core.net.tls import client_context
from rypsok.core.search.request import search_request
from rypsok.core.store import build_store
from rypsok.core.telemetry import call_scope, caller_calls, counters, durations, log

if TYPE_CHECKING:
    from rypsok.core.fetch.pipeline import FetchService
    from rypsok.core.search.pipeline import SearchService

LOCAL_CALLER = "local"
R = TypeVar("R")
# Refusals that come before any outbound request do not use the tool's budget.
_REFUNDED = frozenset({"invalid_request", "denied"})
# What [logging] log_queries adds to the call event, per tool.
_LOGGED_ARGUMENT: Mapping[str, str] = {"web_search": "query", "web_fetch": "url"}


class Rypsok:
    def __init__(
        self,
        config: Config,
        *,
        tls: ssl.SSLContext | None = None,
        client: OutboundClient | None = None,
        fetch_client: OutboundClient | None = None,
    ) -> None:
        self.config = config
        self.health = HealthRegistry(config)
        # Limits, circuits, cache, strict-mode memory and robots.txt rules: this process's
        # own by default, or shared by every replica through the configured store.
        self.store = build_store(config)
        lim = config.limits
        # One trust store and one User-Agent for both profiles, built only when a client
        # is not given (the CA bundle is read once at start, not once a client).
        agent = user_agent(config.service.user_agent_contact)
        trust = tls

        def new_client(proxy: Proxy | None = None) -> OutboundClient:
            nonlocal trust
            if trust is None:
                trust = client_context()
            return OutboundClient(tls=trust, user_agent=agent, proxy=proxy)

        self.client = client or new_client(config.egress.proxy)
        self._new_client = new_client
        self._fetch_client = fetch_client
        self.parsing = anyio.CapacityLimiter(lim.parsing_in_flight)  # pages and scraped answers
        # One egress component for both profiles: the operator's rules, read once.
        self.egress = egress_policy(config)

    # The two pipelines, their drivers and parsers are built by the first call that
    # needs them: a session at rest holds none of it (LIM-M1), and the first call pays
    # the imports within its budget.

    @cached_property
    def searches(self) -> SearchService:
        from rypsok.core.engines.registry import driver_for
        from rypsok.core.search.pipeline import SearchService

        drivers = {e.id: driver_for(e) for e in self.config.engines if e.active}
        return SearchService(
            self.config, self.health, self.client, drivers, self.store, self.egress, self.parsing
        )

    @cached_property
    def fetches(self) -> FetchService:
        from rypsok.core.fetch.pipeline import FetchService

        # Agent-directed requests: their own client, never through the engine proxy
        # (REQ-SEC-007), every address judged by the egress policy at connect time.
        return FetchService(
            self.config,
            self._fetch_client or self._new_client(),
            self.egress,
            self.parsing,
            self.store,
        )

    async def open(self) -> None:
        """Reach the store once before the first call (a store that cannot be reached is
        logged and served around)."""
        await self.store.open()

    async def close(self) -> None:
        await self.store.close()

    @classmethod
    def from_config(cls, config: Config, *, tls: ssl.SSLContext | None = None) -> Rypsok:
        return cls(config, tls=tls)

    async def search(
        self, arguments: Mapping[str, Any], caller: str = LOCAL_CALLER
    ) -> SearchResponse:
        """web_search: validated, checked for secrets, then asked of the engines.

        Returns within LIM-S7 of the call's start; raises ToolError otherwise.
        """

        async def work() -> SearchResponse:
            # The caller keys the result cache: entries are never shared between callers.
            # In strict mode the pipeline remembers the URLs it returns.
            return await self.searches.search(search_request(self.config, arguments), caller=caller)

        maximum = self.config.search.deadline_ms + limits.default("LIM-S7")
        return await self._call(
            "web_search", caller, work, maximum, search_deadline, arguments=arguments
        )

    async def fetch(
        self, arguments: Mapping[str, Any], caller: str = LOCAL_CALLER
    ) -> FetchResponse:
        """web_fetch: one public page's main content; returns within LIM-F5 of the start."""

        async def work() -> FetchResponse:
            # The caller owns what is kept of the page for its next part: never shared.
            return await self.fetches.fetch(fetch_request(self.config, arguments), caller=caller)

        maximum = self.config.fetch.deadline_ms + limits.default("LIM-F5")
        return await self._call(
            "web_fetch", caller, work, maximum, fetch_deadline, arguments=arguments
        )

    async def _call(
        self,
        tool: str,
        caller: str,
        work: Callable[[], Awaitable[R]],
        maximum_ms: int,
        late: Callable[[], ToolError],
        *,
        arguments: Mapping[str, Any] | None = None,
    ) -> R:
        """One tool call: its scope, its rate limit, its maximum duration, one outcome,
        the call event and the counters. A refusal before any outbound request (invalid or
        denied) does not use the caller's budget."""
        with call_scope(caller):
            started = time.monotonic()
            outcome = "error"
            try:
                # The store's answer counts against the call's maximum like the work does.
                with anyio.move_on_after(maximum_ms / 1000) as scope:
                    admitted = await self.store.admit_call(caller, tool)
                    if admitted.wait_ms is not None:
                        raise rate_limited(tool, admitted.wait_ms)
                    try:
                        response = await work()
                    except ToolError as error:
                        if error.kind in _REFUNDED:
                            await self.store.refund_call(caller, tool, admitted)
                        raise
                if scope.cancelled_caught:
                    raise late()
                outcome = str(getattr(response, "outcome", "ok"))
                return response
            except ToolError as error:
                outcome = _refusal(error)
                # Counted under rypsok's words only: a name the caller made up is not a key
                # that lives for the process's life (/metrics keeps every key).
                counted = "invalid_request:unknown_parameter" if error.caller_word else outcome
                counters.add("refused", tool, counted)
                raise
            except anyio.get_cancelled_exc_class():
                outcome = "cancelled"  # by the host: the call ends with no answer
                raise
            finally:
                forget_urls()  # the URLs this call split stay in no cache (REQ-LIFE-002)
                counters.add("calls", tool, outcome.split(":")[0])
                durations.observe(tool, time.monotonic() - started)
                caller_calls.add(caller, tool)
                self._log_call(tool, outcome, _ms(started), arguments)

    async def status(
        self, arguments: Mapping[str, Any] | None = None, caller: str = LOCAL_CALLER
    ) -> StatusResponse:
        """Every configured engine's state, from memory; never a request (LIM-S13).

        engine_status takes no parameter: any argument is refused inside the call, so a
        refused call is timed, logged and counted like the other tools' refusals."""

        async def work() -> StatusResponse:
            for name in arguments or {}:
                raise unknown_parameter(name, ())
            return StatusResponse(self.health.reports(await self.store.circuit_states()))

        maximum = limits.default("LIM-S13")
        return await self._call("engine_status", caller, work, maximum, status_deadline)

    def _log_call(
        self, tool: str, outcome: str, latency_ms: int, arguments: Mapping[str, Any] | None
    ) -> None:
        """The call event. With [logging] log_queries on and the level at debug, it is
        written at debug and carries the query (web_search) or the URL (web_fetch), so a
        reader that keeps only info and above never sees it (LIM-P3, REQ-PRIV-004)."""
        name = _LOGGED_ARGUMENT.get(tool)
        if (
            self.config.logging.log_queries
            and log.enabled("debug")
            and name is not None
            and arguments is not None
        ):
            # The longest the argument may be (LIM-S1 as configured, LIM-F9), so that a
            # refused, hostile argument cannot make a line of megabytes.
            bound = (
                self.config.search.query_max_chars if name == "query" else limits.default("LIM-F9")
            )
            value = arguments.get(name)
            said: dict[str, str] = {}
            if isinstance(value, str):
                # A credential in it stays out even of a debug log (THR-16); masked
                # before the cut so a secret across the bound is still found.
                from rypsok.core.privacy import mask  # loaded by the first search anyway

                said[name] = mask(value)[0][:bound]
            log.debug("call", tool=tool, outcome=outcome, latency_ms=latency_ms, **said)
            return
        log.info("call", tool=tool, outcome=outcome, latency_ms=latency_ms)


def egress_policy(config: Config) -> EgressPolicy:
    """The egress component as the configuration sets it: built here, above both, so that
    `net` never reads the configuration."""
    return EgressPolicy(
        allow=config.egress.allow, deny=config.egress.deny, ports=config.fetch.ports
    )


def _refusal(error: ToolError) -> str:
    """kind:reason, or kind:parameter for invalid_request: rypsok's words only."""
    detail = error.detail.get("reason") or error.detail.get("parameter") or error.kind
    return f"{error.kind}:{detail}"


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
