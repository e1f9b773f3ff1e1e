"""The redis backend: what replicas share, kept in one Redis that all of them reach.

Each limit holds for the whole deployment, as the memory backend holds it for one
process:

* admit_call / refund_call: a sliding 60 s window per (caller, tool), a sorted set of
  tickets scored by server time; a call is refused while the window holds the tool's
  limit, with the ms until its oldest ticket leaves; a refund removes its own ticket.
* reserve / hold: a token bucket per engine at the engine's full rate and burst; the
  turn is taken at once (concurrent calls queue), or nothing is taken when it comes
  later than the caller can wait. A provider's Retry-After holds every replica.
* slot: the engine's concurrency as leases in a sorted set, scored by expiry (engine
  timeout + LIM-D5), so that a replica that dies mid-request gives its slots back.
* circuits: one hash per engine with the transitions of `Circuit`; exactly one probe in
  the deployment, leased (search deadline or engine timeout, the longer, + LIM-D5) so
  that a dead replica's probe ends. Only the request that took the probe can abandon
  it. A change made by this replica is logged here, with the local circuits' events.
* cache: entries under a SHA-256 of (engine, caller, every request field), never the
  query text; too-large answers are not stored; ttl_s per entry; at most max_entries in
  the deployment (the oldest stored go first).
* strict mode and robots: kept in this process as well, and looked up here first, so
  they keep working while Redis is away.

Faults: every operation passes through a `Guard`, which bounds it and judges whether
Redis or this busy process made it late; when Redis is away the answer comes from
`self.local`, a MemoryStore whose limits are this replica's share (see `memory_store.share`),
the cache is skipped, circuits are this process's own. No exception of the Redis client
leaves an operation; a cancelled caller's cancellation does. The URL (it may hold a
password) is never logged or put in a message.
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import suppress
from typing import TYPE_CHECKING, Any, Final

import anyio

from rypsok.core import limits
from rypsok.core.config.settings import Config
from rypsok.core.permits import Permit
from rypsok.core.store import codec, scripts
from rypsok.core.store.base import Backend
from rypsok.core.store.guard import Away, Guard, NoTime
from rypsok.core.store.local.cache import entry_bytes
from rypsok.core.store.local.circuit import transition_logger
from rypsok.core.store.local.memory_store import MemoryStore, engine_rates, tool_limits
from rypsok.core.store.robots_rules import RobotsRules
from rypsok.core.store.values import (
    CALL_WINDOW_S,
    COUNTED,
    CacheKey,
    CacheOutcome,
    CallAdmission,
    CircuitDecision,
    CircuitState,
    RawResult,
)

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.commands.core import AsyncScript

WINDOW_MS: Final = int(CALL_WINDOW_S * 1000)
# How long a waiter for a full engine sleeps between tries: short at first, a little
# longer while it stays full, so that waiting costs Redis little.
_SLOT_WAIT_FIRST_S: Final = 0.01
_SLOT_WAIT_LONGEST_S: Final = 0.025
# A wait too long to matter, in place of one that is not a number Lua can read (inf).
_LONGEST_MS: Final = 1e12
_DECISIONS: Final[Mapping[bytes, CircuitDecision]] = {b"go": "go", b"probe": "probe"}
_STATES: Final[Mapping[bytes, CircuitState]] = {b"open": "open", b"half_open": "half_open"}


class RedisStore:
    backend: Backend = "redis"

    def __init__(self, config: Config, *, clock_key: str | None = None) -> None:
        """`clock_key` is for tests only: the scripts read the time from that key
        (`scripts.on_test_clock`) instead of the server's TIME."""
        # Imported here: the default build does not ship the client.
        import redis.asyncio as aioredis
        from redis.asyncio.retry import Retry
        from redis.backoff import NoBackoff

        settings = config.store
        if settings.url is None:
            raise ValueError("[store] backend redis has no URL")
        timeout_s = settings.timeout_ms / 1000
        try:
            # No timeout of the client's own: its clock is the event loop's, which a busy
            # replica makes late. The guard bounds every wait and judges who was late; it
            # also queues operations beyond max_connections, so the pool never waits.
            pool = aioredis.BlockingConnectionPool.from_url(
                settings.url.reveal(),
                max_connections=settings.max_connections,
                timeout=None,
                socket_timeout=None,
                socket_connect_timeout=None,
                # The guard decides when to try again, not the client.
                retry=Retry(NoBackoff(), 0),
                driver_info=None,  # no CLIENT SETINFO round trip per connection
            )
        except ValueError:
            # The client's message may quote the URL, which may hold a password.
            raise ValueError("[store] the URL cannot be used") from None
        self._client: Redis = aioredis.Redis(connection_pool=pool)
        from redis.exceptions import TimeoutError as ClientTimeout

        self._guard = Guard(
            timeout_s,
            timeouts=(TimeoutError, ClientTimeout),
            connections=settings.max_connections,
        )
        self._keys = codec.Keys(settings.key_prefix)
        self._config = config
        self.local = MemoryStore(config, replicas=settings.replicas)
        # Every configured engine, as engine_status lists them.
        self._engines = tuple(sorted(e.id for e in config.engines))
        self.cache_enabled = config.cache.enabled
        self._limits = tool_limits(config)
        self._rates = engine_rates(config)
        # A lease outlives what it covers by LIM-D5: a slot, one engine request; a probe,
        # everything from its admission to its answer, which the search deadline bounds
        # (it may wait for a rate turn and a slot before its request).
        s = config.search
        self._slot_lease_ms = s.engine_timeout_ms + limits.default("LIM-D5")
        self._probe_lease_ms = max(s.engine_timeout_ms, s.deadline_ms) + limits.default("LIM-D5")
        # Which probe this replica holds: its token in Redis, or a local circuit's.
        self._probe_tokens: dict[str, str] = {}
        self._local_probes: set[str] = set()

        def register(source: str) -> AsyncScript:
            if clock_key is not None:
                source = scripts.on_test_clock(source, clock_key)
            return self._client.register_script(source)

        self._admit = register(scripts.ADMIT_CALL)
        self._reserve = register(scripts.RESERVE)
        self._hold = register(scripts.HOLD)
        self._slot_acquire = register(scripts.SLOT_ACQUIRE)
        self._circuit_admit = register(scripts.CIRCUIT_ADMIT)
        self._circuit_success = register(scripts.CIRCUIT_SUCCESS)
        self._circuit_failure = register(scripts.CIRCUIT_FAILURE)
        self._circuit_abandon = register(scripts.CIRCUIT_ABANDON)
        self._circuit_states = register(scripts.CIRCUIT_STATES)
        self._bounded_put = register(scripts.BOUNDED_PUT)
        self._remember = register(scripts.REMEMBER)

    @property
    def available(self) -> bool:
        return self._guard.available

    async def open(self) -> None:
        # A failure is logged by the guard; serve starts all the same.
        await self._quietly("open", self._client.ping)

    async def close(self) -> None:
        # Nothing is left to tell at shutdown: a failure to close is not an error.
        with anyio.move_on_after(self._guard.timeout_s, shield=True), suppress(Exception):
            await self._client.aclose(close_connection_pool=True)

    async def _quietly(self, operation: str, call: Callable[[], Awaitable[Any]]) -> None:
        """An operation whose answer nobody waits for, dropped while Redis is away: what
        it would have ended in Redis ends there on its own (a lease, a ticket), and what
        it would have kept is kept in this process as well."""
        with suppress(Away):
            await self._guard.run(operation, call)

    # -- per-caller tool limits ----------------------------------------------------------

    async def admit_call(self, caller: str, tool: str) -> CallAdmission:
        ticket = secrets.token_hex(8)
        key = self._keys.calls(caller, tool)
        args = (self._limits[tool], WINDOW_MS, ticket)
        try:
            wait = await self._guard.run("admit_call", lambda: self._admit([key], args))
        except Away:
            return await self.local.admit_call(caller, tool)
        return CallAdmission(None, ticket) if int(wait) == 0 else CallAdmission(int(wait))

    async def refund_call(self, caller: str, tool: str, admission: CallAdmission) -> None:
        if admission.ticket is None:  # admitted by this process while Redis was away
            await self.local.refund_call(caller, tool, admission)
            return
        key = self._keys.calls(caller, tool)
        ticket = admission.ticket
        # Lost while Redis is away: the ticket leaves the window within 60 s all the same.
        await self._quietly("refund_call", lambda: self._client.zrem(key, ticket))

    # -- provider limits -----------------------------------------------------------------

    def _bucket(self, engine: str) -> tuple[float, int]:
        rate = self._rates[engine]
        return 60_000 / rate.per_minute, rate.burst

    async def reserve(self, engine: str, max_wait_s: float) -> float | None:
        key = self._keys.rate(engine)
        args = (*self._bucket(engine), _ms(max_wait_s))
        try:
            wait_us = await self._guard.run("reserve", lambda: self._reserve([key], args))
        except Away:
            return await self.local.reserve(engine, max_wait_s)
        return None if int(wait_us) < 0 else int(wait_us) / 1e6  # microseconds

    async def hold(self, engine: str, seconds: float) -> None:
        # Held here too: the pause still holds should Redis go away before it ends.
        await self.local.hold(engine, seconds)
        key = self._keys.rate(engine)
        args = (*self._bucket(engine), _ms(seconds))
        await self._quietly("hold", lambda: self._hold([key], args))

    def slot(self, engine: str) -> Slot:
        return Slot(self, engine)

    # -- circuit breakers ----------------------------------------------------------------

    async def circuit_admit(self, engine: str) -> CircuitDecision:
        key = self._keys.circuit(engine)
        token = secrets.token_hex(8)
        try:
            got = await self._guard.run(
                "circuit_admit", lambda: self._circuit_admit([key], (self._probe_lease_ms, token))
            )
        except Away:
            decision = await self.local.circuit_admit(engine)
            if decision == "probe":
                self._local_probes.add(engine)
            return decision
        decision = _DECISIONS.get(got, "skip")
        if decision == "probe":
            self._probe_tokens[engine] = token
        return decision

    async def circuit_success(self, engine: str) -> None:
        self._probe_tokens.pop(engine, None)
        if engine in self._local_probes:  # the probe was this process's circuit's
            self._local_probes.discard(engine)
            await self.local.circuit_success(engine)
            return
        key = self._keys.circuit(engine)
        try:
            closed = await self._guard.run("circuit_success", lambda: self._circuit_success([key]))
        except Away:
            await self.local.circuit_success(engine)
            return
        if int(closed) == 1:
            transition_logger(engine)("closed", None)

    async def circuit_failure(
        self, engine: str, error_class: str, retry_after_s: float | None = None
    ) -> None:
        self._probe_tokens.pop(engine, None)
        if engine in self._local_probes:
            self._local_probes.discard(engine)
            await self.local.circuit_failure(engine, error_class, retry_after_s)
            return
        r = self._config.resilience
        key = self._keys.circuit(engine)
        args = (
            1 if error_class in COUNTED else 0,
            -1 if retry_after_s is None else _ms(retry_after_s),
            r.failures_to_open,
            r.first_cooldown_s * 1000,
            r.max_cooldown_s * 1000,
        )
        try:
            opened_ms = await self._guard.run(
                "circuit_failure", lambda: self._circuit_failure([key], args)
            )
        except Away:
            await self.local.circuit_failure(engine, error_class, retry_after_s)
            return
        if int(opened_ms) >= 0:
            transition_logger(engine)("opened", int(opened_ms) / 1000)

    async def circuit_abandon(self, engine: str) -> None:
        if engine in self._local_probes:
            self._local_probes.discard(engine)
            await self.local.circuit_abandon(engine)
            return
        token = self._probe_tokens.pop(engine, None)
        if token is None:
            return
        key = self._keys.circuit(engine)
        # Lost while Redis is away: the probe lease runs out on its own.
        await self._quietly("circuit_abandon", lambda: self._circuit_abandon([key], (token,)))

    async def circuit_states(self) -> Mapping[str, CircuitState]:
        ids = self._engines
        keys = [self._keys.circuit(i) for i in ids]
        try:
            got = await self._guard.run("circuit_states", lambda: self._circuit_states(keys))
        except Away:
            return await self.local.circuit_states()
        return {i: _STATES.get(state, "closed") for i, state in zip(ids, got, strict=True)}

    # -- the result cache ----------------------------------------------------------------

    async def cache_get(self, key: CacheKey) -> tuple[RawResult, ...] | None:
        if not self.cache_enabled:
            return None
        name = self._keys.cache_entry + codec.cache_member(key)
        try:
            raw = await self._guard.run("cache_get", lambda: self._client.get(name))
        except Away:
            return None
        return None if raw is None else codec.decode_results(raw)

    async def cache_put(self, key: CacheKey, results: Sequence[RawResult]) -> CacheOutcome:
        settings = self._config.cache
        if not self.cache_enabled:
            return "skipped"
        if entry_bytes(results) > settings.max_entry_bytes:
            return "too_large"
        member = codec.cache_member(key)
        keys = (self._keys.cache_entry + member, self._keys.cache_index)
        args = (
            codec.encode_results(results),
            settings.ttl_s * 1000,
            settings.max_entries,
            member,
            self._keys.cache_entry,
        )
        try:
            await self._guard.run("cache_put", lambda: self._bounded_put(keys, args))
        except Away:
            return "skipped"  # while Redis is away the cache is not used
        return "stored"

    # -- strict mode's memory ------------------------------------------------------------

    async def remember_returned(self, urls: Sequence[str]) -> None:
        await self.local.remember_returned(urls)
        if not urls:
            return
        digests = dict.fromkeys(codec.digest(u) for u in urls)
        args: tuple[int | str, ...] = (self._config.limits.strict_mode_urls, *digests)
        key = self._keys.returned
        await self._quietly("remember_returned", lambda: self._remember([key], args))

    async def was_returned(self, urls: Sequence[str]) -> bool:
        if await self.local.was_returned(urls):
            return True
        if not urls:
            return False
        digests = [codec.digest(u) for u in urls]
        key = self._keys.returned
        try:
            scores = await self._guard.run(
                "was_returned", lambda: self._client.zmscore(key, digests)
            )
        except Away:
            return False
        return any(score is not None for score in scores)

    # -- robots.txt ----------------------------------------------------------------------

    async def robots_get(self, origin: str) -> RobotsRules | None:
        found = await self.local.robots_get(origin)
        if found is not None:
            return found
        name, _ = self._keys.robots(origin)
        try:
            raw = await self._guard.run("robots_get", lambda: self._client.get(name))
        except Away:
            return None
        return None if raw is None else codec.decode_robots(raw)

    async def robots_put(self, origin: str, rules: RobotsRules) -> None:
        await self.local.robots_put(origin, rules)
        name, member = self._keys.robots(origin)
        keys = (name, self._keys.robots_index)
        args = (
            codec.encode_robots(rules),
            limits.default("LIM-F12") * 1000,
            self._config.limits.robots_cache_entries,
            member,
            self._keys.robots_entry,
        )
        await self._quietly("robots_put", lambda: self._bounded_put(keys, args))

    # -- for Slot ------------------------------------------------------------------------

    async def _try_slot(self, engine: str, token: str) -> bool:
        """Whether a lease was taken now; `Away` when Redis did not answer."""
        key = self._keys.slots(engine)
        args = (self._rates[engine].concurrency, self._slot_lease_ms, token)
        got = await self._guard.run("slot", lambda: self._slot_acquire([key], args))
        return int(got) == 1

    async def _release_slot(self, engine: str, token: str) -> None:
        key = self._keys.slots(engine)
        # Lost while Redis is away: the lease expires on its own.
        await self._quietly("slot_release", lambda: self._client.zrem(key, token))


def _ms(seconds: float) -> float:
    ms = seconds * 1000
    return ms if abs(ms) < _LONGEST_MS else math.copysign(_LONGEST_MS, ms)


class Slot:
    """One of an engine's concurrent-request slots, leased in Redis for the whole
    deployment, or from this process's share while Redis is away.

    A full engine is waited for with short sleeps; the caller's deadline bounds the
    wait, as it bounds anyio's own acquire."""

    __slots__ = ("_engine", "_local", "_store", "_token")

    def __init__(self, store: RedisStore, engine: str) -> None:
        self._store = store
        self._engine = engine
        self._token: str | None = None
        self._local: Permit | None = None

    async def __aenter__(self) -> None:
        token = secrets.token_hex(8)
        pause = _SLOT_WAIT_FIRST_S
        while True:
            try:
                if await self._store._try_slot(self._engine, token):
                    self._token = token
                    return
            except NoTime:
                # The caller's time is nearly out: a local slot would exceed the shared
                # concurrency, so keep waiting for the cancellation that is coming.
                pass
            except Away:
                held = self._store.local.slot(self._engine)
                await held.__aenter__()
                self._local = held
                return
            await anyio.sleep(pause)
            pause = min(pause * 1.5, _SLOT_WAIT_LONGEST_S)

    async def __aexit__(self, *exc_info: object) -> None:
        if self._local is not None:
            held, self._local = self._local, None
            await held.__aexit__(*exc_info)
            return
        token, self._token = self._token, None
        if token is not None:
            # Shielded: a cancelled request still gives its slot back (the guard's
            # timeout bounds the wait).
            with anyio.CancelScope(shield=True):
                await self._store._release_slot(self._engine, token)


__all__ = ["RedisStore", "Slot"]
