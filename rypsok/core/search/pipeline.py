"""The search pipeline, stage by stage (external design §6 and §7).

secret check -> engine selection (and the result cache, when on) -> concurrent
engine requests under the deadline -> outcome decision -> rank fusion -> content
boundary -> cut -> answers stored in the cache.

Guarantees: no engine request starts before the request was validated and
the secret check passed; a request never outlives its engine timeout or the
search deadline; one engine's failure, whatever it is, costs that engine
only; the same engine answers give byte-identical output whatever order they
arrive in; no provider text reaches a notice, an error or a log line.

The cache (the store's, off by default) is consulted per engine during selection: a hit
stands in for the engine's answer, so it sends no request, takes no provider rate token
and leaves the engine's circuit and latency alone. Answers are stored only once the
response is built, so a call cancelled or cut short stores nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, cast
from urllib.parse import urlsplit

import anyio

from rypsok.core import boundary, privacy
from rypsok.core.config.settings import Config, EngineSettings
from rypsok.core.engines.base import (
    Admission,
    Driver,
    EngineFailure,
    PageDriver,
    PartialAnswer,
    sites_honoured,
)
from rypsok.core.engines.health import HealthRegistry
from rypsok.core.engines.registry import endpoint_for
from rypsok.core.model import (
    Notice,
    NoticeCode,
    Outcome,
    SearchResponse,
    SearchResult,
    ToolError,
    all_failed,
    no_engine,
    no_engine_for,
    search_deadline,
    secret_in_query,
)
from rypsok.core.net.client import ClientError, OutboundClient
from rypsok.core.net.egress import EgressPolicy, EngineProfile
from rypsok.core.net.failure import FailureKind
from rypsok.core.net.hostname import is_loopback_url
from rypsok.core.permits import Permit, run_under_permit
from rypsok.core.search.rank import EngineAnswer, rank
from rypsok.core.search.request import SearchRequest
from rypsok.core.search.sites import SiteFilter, read_sites, result_host
from rypsok.core.store.base import Store
from rypsok.core.store.values import CacheKey, EngineQuery, RawResult
from rypsok.core.telemetry import counters, log

# Client failures in the engine classes of REQ-ENG-006.
_CLIENT_CLASS = {"timeout": "timeout", "too_large": "parse_failure"}


@dataclass(frozen=True, slots=True)
class _Selected:
    engine: EngineSettings
    driver: Driver
    probe: bool
    wait_s: float
    # Where this engine's answer is stored, or None when it must not be (cache off, an
    # engine whose record forbids storage, a query the privacy check flagged).
    cache_key: CacheKey | None = None
    # The answer served from the cache; None when the engine is asked.
    cached: tuple[RawResult, ...] | None = None


@dataclass(slots=True)
class _Failed:
    error_class: str


class SearchService:
    def __init__(
        self,
        config: Config,
        health: HealthRegistry,
        client: OutboundClient,
        drivers: Mapping[str, Driver],
        store: Store,
        egress: EgressPolicy,
        parsing: anyio.CapacityLimiter | None = None,
    ) -> None:
        self.config = config
        # Provider rates and slots, circuits and the result cache: the store's.
        self.store = store
        # Shared with web_fetch: a page-shaped engine answer takes a parse permit.
        self.parsing = parsing or anyio.CapacityLimiter(config.limits.parsing_in_flight)
        self.health = health
        self.client = client
        self.drivers = drivers
        self.outbound = anyio.CapacityLimiter(config.limits.outbound_in_flight)
        # The one egress component; the engine client asks its engine profile (REQ-SEC-017).
        self.egress = egress
        # Without rules the built-in judgment alone applies; skip the per-URL verdict.
        self._host_rules = egress.rule_verdict if egress.has_rules else None
        # Both follow from the configuration alone, which never changes: made once each.
        self._candidates: dict[str, list[EngineSettings]] = {}
        self._profiles: dict[str, EngineProfile] = {}
        self._http: dict[str, bool] = {}

    async def search(self, request: SearchRequest, *, caller: str) -> SearchResponse:
        """One web_search. `caller` is who the call belongs to: cache entries are
        theirs alone (REQ-CACHE-004)."""
        s = self.config.search
        deadline = anyio.current_time() + s.deadline_ms / 1000
        notices: list[Notice] = []
        query, masked, flagged = self._secret_check(request.query)
        sites = _sites(query, masked, request.sites)

        engine_query = EngineQuery(
            query=sites.text,
            category=request.category,
            language=request.language,
            region=s.region,
            safe_search=s.safe_search,
            time_range=request.time_range,
            count=s.results_per_engine,
            engine_timeout_ms=s.engine_timeout_ms,
            sites=sites.include,
            not_sites=sites.exclude,
        )
        # A flagged query (warned about or masked) neither reads nor feeds the cache.
        cache_caller = None if flagged else caller
        selected = await self._select(request, engine_query, deadline, notices, cache_caller)
        if not selected:
            raise _nothing_selected(request.category, notices)
        # An engine sent the query without some of its site: terms: rypsok filters its
        # results by host all the same, but it searched more widely than asked.
        notices += [
            Notice("site_filter_ignored", i.engine.id)
            for i in selected
            if not sites_honoured(i.engine.admission, engine_query)
        ]

        outcomes: dict[str, list[RawResult] | _Failed] = {
            i.engine.id: list(i.cached) for i in selected if i.cached is not None
        }
        asked = [i for i in selected if i.cached is None]
        # Engines whose answer said some of their own upstream sources were down: how many.
        shortfalls: dict[str, int] = {}
        with anyio.move_on_at(deadline) as overall:
            async with anyio.create_task_group() as group:
                for item in asked[1:]:
                    group.start_soon(self._ask, item, engine_query, deadline, outcomes, shortfalls)
                # The first engine is asked from this task, inside the group: as concurrent
                # as a task of its own (the others run whenever it waits), one task fewer
                # to start; a cancellation reaches it the same way.
                if asked:
                    await self._ask(asked[0], engine_query, deadline, outcomes, shortfalls)
        cut = [i.engine.id for i in selected if i.engine.id not in outcomes]
        for engine_id in cut:  # cut by the search deadline
            outcomes[engine_id] = _Failed("timeout")
            counters.add("engine_errors", engine_id, "timeout")
            log.info("engine_failed", engine=engine_id, kind="timeout", **{"class": "timeout"})
        # Told together: past the deadline, the store's waits must not add up per engine.
        await self._all([partial(self.store.circuit_failure, e, "timeout") for e in cut])

        answered = [i for i in selected if isinstance(outcomes[i.engine.id], list)]
        failed = [i for i in selected if isinstance(outcomes[i.engine.id], _Failed)]
        for item in failed:
            failure = outcomes[item.engine.id]
            assert isinstance(failure, _Failed)
            notices.append(Notice("engine_unavailable", item.engine.id, failure.error_class))
        for engine_id, down in sorted(shortfalls.items()):
            if isinstance(outcomes.get(engine_id), list):
                notices.append(Notice("engine_incomplete", engine_id, count=down))
        if not answered:
            late = overall.cancelled_caught or anyio.current_time() >= deadline
            raise search_deadline() if late else all_failed()

        results, content_notices = self._results(request, answered, outcomes, sites)
        notices += content_notices
        if masked:
            notices.append(Notice("credential_masked", count=masked))
        outcome: Outcome = "empty" if not results else "partial" if failed else "ok"
        response = SearchResponse(outcome, tuple(notices), tuple(results))
        # Last: a call cancelled before this point stores nothing.
        await self._keep(asked, outcomes, response)
        return response

    # -- stages ------------------------------------------------------------------------------

    def _secret_check(self, query: str) -> tuple[str, int, bool]:
        """The query that may leave the host, how many secrets were masked, and whether
        the check found anything (warned or masked), which keeps the query out of the
        cache."""
        mode = self.config.privacy.secret_detection
        decision = privacy.apply(query, mode)
        if decision.refused:
            log.info(
                "refused",
                tool="web_search",
                reason="secret_in_query",
                kind=decision.kind,
                position=decision.position,
            )
            raise secret_in_query(decision.kind or "secret", decision.position or 0)
        if decision.findings and mode == "warn":
            log.warn("secret_in_query", kind=decision.kind, position=decision.position)
        return (decision.text, decision.count if mode == "mask" else 0, bool(decision.findings))

    async def _select(
        self,
        request: SearchRequest,
        query: EngineQuery,
        deadline: float,
        notices: list[Notice],
        cache_caller: str | None,
    ) -> list[_Selected]:
        """Enabled engines of the category in preference order, at most engines_per_request;
        the ones that cannot be asked now are skipped with a notice.

        With the cache on (and `cache_caller` set: the query was not flagged), an eligible
        engine's stored answer is served instead of a request, except to the call that
        holds the circuit's probe: the probe is there to test the engine. The lookup comes
        before the provider limiter, so a hit takes no rate token; `admit` only changes
        the circuit when it hands out the probe, which never looks up.
        """
        candidates = self._candidates.get(request.category)
        if candidates is None:
            candidates = self._candidates[request.category] = sorted(
                (e for e in self.config.engines if e.active and request.category in e.categories),
                key=lambda e: (e.preference, e.id),
            )[: self.config.search.engines_per_request]
        selected: list[_Selected] = []
        for engine in candidates:
            driver = self.drivers[engine.id]
            reason = driver.skip_reason(query)
            if reason is not None:
                notices.append(Notice("engine_skipped", engine.id, reason))
                continue
            admission = await self.store.circuit_admit(engine.id)
            key = self._cache_key(cache_caller, engine, query)
            if key is not None and admission != "probe":
                cached = await self._lookup(key)
                if cached is not None:
                    notices.append(Notice("from_cache", engine.id))
                    selected.append(_Selected(engine, driver, False, 0.0, key, cached))
                    continue
            if admission == "skip":
                notices.append(Notice("engine_skipped", engine.id, "cooldown"))
                continue
            wait = await self.store.reserve(engine.id, deadline - anyio.current_time())
            if wait is None:
                if admission == "probe":
                    await self.store.circuit_abandon(engine.id)
                notices.append(Notice("engine_skipped", engine.id, "rate_limited"))
                continue
            selected.append(_Selected(engine, driver, admission == "probe", wait, key))
        return selected

    # -- the result cache: every call guarded, so a failure only costs speed (REQ-CACHE-006)

    def _cache_key(
        self, caller: str | None, engine: EngineSettings, query: EngineQuery
    ) -> CacheKey | None:
        if not self.store.cache_enabled or caller is None or not eligible(engine.admission):
            return None
        return CacheKey(engine.id, caller, query)

    async def _lookup(self, key: CacheKey) -> tuple[RawResult, ...] | None:
        try:
            found = await self.store.cache_get(key)
        except Exception as exc:
            _cache_failed(key, "lookup", exc)
            return None
        counters.add("cache", key.engine, "hit" if found is not None else "miss")
        return found

    async def _keep(
        self,
        asked: list[_Selected],
        outcomes: Mapping[str, list[RawResult] | _Failed],
        response: SearchResponse,
    ) -> None:
        """What the answer leaves behind, stored together: engine answers in the cache and,
        in strict mode, the returned URLs that web_fetch may then read."""
        writes: list[Callable[[], Coroutine[Any, Any, None]]] = []
        if self.store.cache_enabled:
            for item in asked:
                answer = outcomes.get(item.engine.id)
                if item.cache_key is not None and isinstance(answer, list):
                    writes.append(partial(self._put, item.cache_key, answer))
        if self.config.fetch.strict_mode and response.results:
            writes.append(partial(self.store.remember_returned, [r.url for r in response.results]))
        await self._all(writes)

    async def _put(self, key: CacheKey, answer: list[RawResult]) -> None:
        try:
            outcome = await self.store.cache_put(key, answer)
        except Exception as exc:
            _cache_failed(key, "store", exc)
            return
        counters.add("cache", key.engine, outcome)

    async def _all(self, writes: list[Callable[[], Coroutine[Any, Any, None]]]) -> None:
        """Run the store writes side by side, so that they take one store wait in all; in
        this process's memory they never wait, and run one after the other."""
        if len(writes) < 2 or self.store.backend == "memory":
            for write in writes:
                await write()
            return
        async with anyio.create_task_group() as group:
            for write in writes:
                group.start_soon(write)

    async def _ask(
        self,
        item: _Selected,
        query: EngineQuery,
        deadline: float,
        outcomes: dict[str, list[RawResult] | _Failed],
        shortfalls: dict[str, int],
    ) -> None:
        """One engine request; every way it can end is recorded, none escapes."""
        engine = item.engine
        health = self.health.get(engine.id)
        s = self.config.search
        url: str | None = None  # the request's, once built: its host is logged on failure
        try:
            if item.wait_s > 0:  # the provider's rate: wait for this call's turn
                await anyio.sleep(item.wait_s)
            async with self.store.slot(engine.id), Permit(self.outbound):
                # The request's own latency (LIM-S11): waits for a rate turn or a slot
                # are queueing, not the engine's answer time.
                started = anyio.current_time()
                request = item.driver.request(query)
                url = request.url
                budget = min(s.engine_timeout_ms / 1000, deadline - anyio.current_time())
                if budget <= 0:
                    raise EngineFailure("timeout", kind="timeout")
                response = await self.client.get(
                    request.url,
                    headers=request.headers,
                    max_bytes=request.max_bytes,
                    connect_timeout_s=min(s.connect_timeout_ms / 1000, budget),
                    total_timeout_s=budget,
                    allow_http=self._plain_http(engine),
                    engine=self._profile(engine),
                )
                latency_ms = int((anyio.current_time() - started) * 1000)
                health.record_latency(latency_ms)
                counters.add("engine_requests", engine.id, "answered")
                log.debug(
                    "engine_answered",
                    engine=engine.id,
                    status=response.status,
                    latency_ms=latency_ms,
                )
            if engine.admission.html_answer:
                # Off the event loop, under a parsing permit the thread keeps until it has
                # really ended; a cancelled call sets the flag that stops it (REQ-AGG-006).
                page = cast(PageDriver, item.driver)  # what html_answer promises
                status, header, body = response.status, response.header, response.body
                results = await run_under_permit(
                    self.parsing,
                    lambda cancel: page.parse(status, header, body, cancel=cancel),
                )
            else:
                parsed = item.driver.parse(response.status, response.header, response.body)
                if isinstance(parsed, PartialAnswer):
                    shortfalls[engine.id] = parsed.sources_down
                    parsed = parsed.results
                results = parsed
            if not engine.admission.takes_count:
                # A provider without a count parameter answers with a whole page: keep
                # what would have been asked of it (LIM-S3).
                del results[query.count :]
        except anyio.get_cancelled_exc_class():
            if item.probe:
                with anyio.CancelScope(shield=True):  # the store bounds its own wait
                    await self.store.circuit_abandon(engine.id)
            raise
        except EngineFailure as failure:
            await self._failed(
                engine,
                failure.error_class,
                failure.kind,
                failure.retry_after_s,
                outcomes,
                failure.hint,
                url,
            )
            return
        except ClientError as error:
            error_class = _CLIENT_CLASS.get(error.kind, "request_failure")
            await self._failed(engine, error_class, error.cause, None, outcomes, url=url)
            return
        except Exception as exc:  # a defect in a driver costs that engine only (REQ-AGG-007)
            log.error("driver_error", engine=engine.id, error_type=type(exc).__name__)
            await self._failed(engine, "parse_failure", "content", None, outcomes, url=url)
            return
        # The answer is the engine's before the store hears of it: a slow store cannot
        # cost an answer that has arrived.
        outcomes[engine.id] = results
        await self.store.circuit_success(engine.id)

    def _plain_http(self, engine: EngineSettings) -> bool:
        """Whether the engine's requests may use plain http: only to a base_url the
        operator wrote, on loopback, or anywhere for an instance of their own. Its
        requests all go to that base_url's host, so this is known once per engine."""
        allowed = self._http.get(engine.id)
        if allowed is None:
            allowed = self._http[engine.id] = engine.base_url is not None and (
                engine.admission.operator_instance or is_loopback_url(engine.base_url)
            )
        return allowed

    def _profile(self, engine: EngineSettings) -> EngineProfile:
        profile = self._profiles.get(engine.id)
        if profile is None:
            profile = self._profiles[engine.id] = EngineProfile(self.egress, endpoint_for(engine))
        return profile

    async def _failed(
        self,
        engine: EngineSettings,
        error_class: str,
        kind: FailureKind,
        retry_after_s: float | None,
        outcomes: dict[str, list[RawResult] | _Failed],
        hint: str | None = None,
        url: str | None = None,
    ) -> None:
        outcomes[engine.id] = _Failed(error_class)
        await self.store.circuit_failure(engine.id, error_class, retry_after_s)
        if error_class == "rate_limited" and retry_after_s:
            cap = self.config.resilience.max_cooldown_s
            await self.store.hold(engine.id, min(retry_after_s, cap))
        counters.add("engine_errors", engine.id, error_class)
        counters.add("engine_failures", engine.id, kind)  # the operator's finer word
        # `kind`: the operator's finer word (net.failure), `class` the caller's; `host`:
        # the engine's own host (configuration, never a caller's), when one was asked,
        # read here so that an answered request pays nothing for it.
        host = None if url is None else urlsplit(url).hostname
        fields: dict[str, str] = {"engine": engine.id, "kind": kind, "class": error_class}
        if host is not None:
            fields["host"] = host
        if hint is not None:
            fields["hint"] = hint
        log.info("engine_failed", **fields)

    def _results(
        self,
        request: SearchRequest,
        answered: list[_Selected],
        outcomes: Mapping[str, list[RawResult] | _Failed],
        sites: SiteFilter,
    ) -> tuple[list[SearchResult], list[Notice]]:
        """Keep the results on the query's sites, rank every answer, then clean in rank
        order and keep max_results."""
        s = self.config.search
        answers = []
        outside: set[str] = set()
        hosts: dict[str, bool] = {}  # host -> admitted, judged once a search
        for item in answered:
            raw = outcomes[item.engine.id]
            assert isinstance(raw, list)
            if sites:
                raw = _on_sites(raw, sites, hosts, outside)
            # A RawResult has an Observation's fields: rank reads it as it is.
            answers.append(EngineAnswer(item.engine.id, item.engine.preference, raw))
        # Without dropping, the loop below keeps the first max_results and looks no
        # further: only those need building. A flagged result dropped leaves room for the
        # next one, so then every result may be needed.
        cut = (
            sum(len(a.results) for a in answers) if s.drop_flagged_results else request.max_results
        )
        ranking = rank(answers, max_results=cut, rules=self._host_rules)
        attribution = s.engine_attribution or any(
            i.engine.admission.attribution_required for i in answered
        )
        dropped: dict[str, int] = dict(ranking.dropped)
        if outside:
            dropped["outside_site"] = len(outside)
        counts: dict[NoticeCode, int] = {
            "title_truncated": 0,
            "snippet_truncated": 0,
            "characters_removed": 0,
            "instruction_like_content": 0,
        }
        kept: list[SearchResult] = []
        for result in ranking.results:
            if len(kept) == request.max_results:
                break
            # Provenance decides the cleaner: raw provider text is stripped of markup and
            # its entities decoded; text a parser already decoded is kept as written.
            cleaned = boundary.clean_result(
                result.title,
                result.snippet,
                title_markup=result.markup,
                snippet_markup=result.markup,
                title_max_chars=s.title_max_chars,
                snippet_max_chars=s.snippet_max_chars,
            )
            if cleaned.instruction_like and s.drop_flagged_results:
                dropped["instruction_like_content"] = dropped.get("instruction_like_content", 0) + 1
                continue
            counts["title_truncated"] += cleaned.title_truncated
            counts["snippet_truncated"] += cleaned.snippet_truncated
            counts["characters_removed"] += cleaned.characters_removed
            counts["instruction_like_content"] += cleaned.instruction_like
            kept.append(
                SearchResult(
                    title=cleaned.title,
                    url=result.url,
                    snippet=cleaned.snippet,
                    date=result.date,
                    engines=(result.engines + result.sources) if attribution else None,
                )
            )
        notices = [
            Notice("results_dropped", reason=reason, count=count)
            for reason, count in sorted(dropped.items())
        ]
        notices += [Notice(code, count=count) for code, count in counts.items() if count]
        return kept, notices


def _sites(query: str, masked: int, given: SiteFilter | None) -> SiteFilter:
    """The site terms of the query the engines are sent. A masked query is read again:
    its words must be the masked ones; should masking have broken a term, the hosts read
    before stay and the masked query goes as it is."""
    if given is None:
        return SiteFilter(query)
    if not masked:
        return given
    try:
        return read_sites(query)
    except ToolError:
        return SiteFilter(query, given.include, given.exclude)


def _on_sites(
    raw: list[RawResult], sites: SiteFilter, hosts: dict[str, bool], outside: set[str]
) -> list[RawResult]:
    """The results whose host the site terms admit; the URLs of the others go in
    ``outside`` (counted once each, as results_dropped counts). A URL without a host is
    kept for ranking to drop."""
    kept: list[RawResult] = []
    for result in raw:
        host = result_host(result.url)
        if host is None:
            kept.append(result)
            continue
        admitted = hosts.get(host)
        if admitted is None:
            admitted = hosts[host] = sites.admits(host)
        if admitted:
            kept.append(result)
        else:
            outside.add(result.url)
    return kept


def _nothing_selected(category: str, notices: list[Notice]) -> ToolError:
    """no_engine, naming the parameter when every engine was skipped for its sake."""
    reasons = {n.reason for n in notices if n.code == "engine_skipped"}
    for parameter in ("time_range", "language"):
        if reasons == {parameter}:
            return no_engine_for(parameter, category)
    return no_engine(category)


def eligible(admission: Admission) -> bool:
    """Whether an engine's answers may be stored at all (REQ-CMP-007): the admission
    record decides, never a setting (Wikipedia yes; Brave and DuckDuckGo never)."""
    return admission.cacheable


def _cache_failed(key: CacheKey, stage: str, exc: Exception) -> None:
    # The engine and the exception's type only: never the key (it holds the query).
    log.warn("cache_failed", engine=key.engine, stage=stage, error_type=type(exc).__name__)
    counters.add("cache", key.engine, "failed")
