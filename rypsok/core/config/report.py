"""What `rypsok check` prints: the effective settings, warnings, the estimate.

Lines are for people (their format may change in a minor version). They
show numbers, switches and words from fixed lists; never a token, an API
key, a path, an egress rule's text or a proxy address.
"""

from __future__ import annotations

import sys

from rypsok.core import limits
from rypsok.core.config.estimate import MemoryEstimate, estimate, pdf_parse_bytes
from rypsok.core.config.settings import (
    Config,
    EngineSettings,
    MetricsSettings,
    OAuthSettings,
    StoreSettings,
)
from rypsok.core.net.failure import FAILURE_KINDS, failure_sentence
from rypsok.core.net.hostname import is_loopback_url

PREFIX = "rypsok: "


def _flag(value: bool) -> str:
    return "true" if value else "false"


def call_maxima_ms(config: Config) -> tuple[int, int]:
    """The longest a web_search and a web_fetch call can last (LIM-S7, LIM-F5)."""
    return (
        config.search.deadline_ms + limits.default("LIM-S7"),
        config.fetch.deadline_ms + limits.default("LIM-F5"),
    )


def engine_state(engine: EngineSettings) -> str:
    reason = engine.inactive_reason
    if reason == "disabled":
        return "inactive: disabled by configuration"
    if reason == "no_credential":
        return f"inactive: {engine.credential_problem or 'no credential could be read'}"
    if reason == "no_base_url":
        return f"inactive: {engine.base_url_problem or 'no base_url'}"
    if engine.admission.operator_instance:
        # Told here because check reads no network: the instance's own setting.
        return "active: its instance must list json in search.formats (else it answers 403)"
    if not engine.admission.keyed:
        return "active: no credential needed"
    return "active: credential resolved"


def engine_line(engine: EngineSettings) -> str:
    parts = [
        f"engine {engine.id}:",
        f"type={engine.driver}",
        f"enabled={_flag(engine.enabled)}",
        f"categories={','.join(engine.categories)}",
        f"preference={engine.preference}",
    ]
    if engine.endpoint is not None:
        parts.append(f"endpoint={engine.endpoint}")
    if engine.base_url_env is not None:
        parts.append(f"base_url_env={engine.base_url_env}")
    elif engine.base_url is not None:
        parts.append("base_url=custom")
    if engine.admission.operator_instance:
        per_minute, burst, in_flight = engine.rate
        parts.append(f"rate_per_minute={per_minute} burst={burst} concurrency={in_flight}")
    if engine.admission.keyed:
        parts.append(
            f"api_key_env={engine.api_key_env}" if engine.api_key_env else "api_key_file=set"
        )
    return " ".join(parts) + " " + engine_state(engine)


def failure_kind_lines(config: Config) -> list[str]:
    """What each kind of a failed engine request means (`engine_failed` logs it, the
    one-call commands print it) and where to look; `proxy` only when one is set."""
    return [
        f"engine failure kind={kind}: {failure_sentence(kind, 'the engine host')}; look at {where}"
        for kind, (_, where) in FAILURE_KINDS.items()
        if kind != "proxy" or config.egress.proxy is not None
    ]


def _plain_http_off_loopback(engine: EngineSettings) -> bool:
    from rypsok.core.net.hostname import is_loopback_url

    url = engine.base_url or ""
    return url.startswith("http://") and not is_loopback_url(url)


def memory_of(config: Config) -> MemoryEstimate:
    return estimate(
        fetches_in_flight=config.limits.fetches_in_flight,
        max_bytes=config.fetch.max_bytes,
        parsing_in_flight=config.limits.parsing_in_flight,
        max_sessions=config.service.http.max_sessions,
        legacy_revisions=config.service.http.legacy_revisions,
        # With the redis store the entries live in Redis, and its fallback skips the cache.
        cache_enabled=config.cache.enabled and config.store.backend == "memory",
        cache_max_entries=config.cache.max_entries,
        cache_max_entry_bytes=config.cache.max_entry_bytes,
        continuation_max_bytes=(
            config.fetch.continuation_max_bytes if config.fetch.continuation_ttl_s else 0
        ),
        pdf_parse_bytes=pdf_parse_bytes(config.fetch) if config.fetch.pdf else 0,
        platform=sys.platform,
    )


def lines(config: Config) -> list[str]:
    """check's report after the first line, in the book's order and words ("What rypsok
    check says"); where a line differs, this build has a reason (the memory build, HTTP/2)."""
    s, f, h, e, lim = config.search, config.fetch, config.service.http, config.egress, config.limits
    search_ms, fetch_ms = call_maxima_ms(config)
    out = [
        "search: "
        f"languages={','.join(s.languages)} region={s.region} safe_search={s.safe_search} "
        f"max_results={s.max_results} (ceiling {s.max_results_ceiling}) "
        f"query_max_chars={s.query_max_chars} deadline_ms={s.deadline_ms} "
        f"engine_timeout_ms={s.engine_timeout_ms} connect_timeout_ms={s.connect_timeout_ms} "
        f"reserve_ms={s.reserve_ms} engines_per_request={s.engines_per_request} "
        f"results_per_engine={s.results_per_engine} snippet_max_chars={s.snippet_max_chars} "
        f"title_max_chars={s.title_max_chars} "
        f"drop_flagged_results={_flag(s.drop_flagged_results)} "
        f"engine_attribution={_flag(s.engine_attribution)}",
        "tool rate limits per minute: "
        f"web_search={lim.web_search_per_minute} web_fetch={lim.web_fetch_per_minute} "
        f"engine_status={lim.engine_status_per_minute}"
        + (
            ""
            if config.status.enabled
            else " (engine_status is not offered: [status] enabled = false)"
        ),
        f"tool call maxima in ms: web_search={search_ms} web_fetch={fetch_ms}; "
        "engine_status reads memory only",
    ]
    out += [engine_line(engine) for engine in config.engines]
    out += failure_kind_lines(config)
    served = config.categories_served()
    out.append(
        "categories served: "
        + (
            ",".join(served)
            if served
            else "none (no active engine; every search is unavailable with reason no_engine)"
        )
    )
    out.append(
        "service.http: "
        f"bind={h.bind} callers={len(h.callers)} legacy_revisions={_flag(h.legacy_revisions)} "
        f"max_connections={h.max_connections} max_request_bytes={h.max_request_bytes} "
        f"idle_timeout_s={h.idle_timeout_s} max_streams={h.max_streams} "
        f"request_timeout_s={h.request_timeout_s} max_sessions={h.max_sessions} "
        # This build's own key: the lane past the SDK's transport (issue 32).
        f"fast_lane={_flag(h.fast_lane)}; "
        # This build's own: it serves HTTP/1.1 alone (clarifications, LIM-H4).
        "HTTP/1.1 only: HTTP/2 is not served, so max_streams bounds nothing"
    )
    if h.oauth is not None:
        out.append(oauth_line(h.oauth))
    m = config.service.metrics
    if m is not None:
        out.append(
            f"service.metrics: bind={m.bind} (/metrics, /healthz, /readyz) "
            f"token={'required' if m.token is not None or m.token_env else 'none'} "
            f"per_caller={_flag(m.per_caller)}"
        )
    out.append(
        "fetch: "
        f"ports={','.join(str(p) for p in f.ports)} max_bytes={f.max_bytes} "
        f"max_chars={f.max_chars} (ceiling {f.max_chars_ceiling}) deadline_ms={f.deadline_ms} "
        f"max_redirects={f.max_redirects} "
        f"robots_txt={_flag(f.robots_txt)} "
        f"follow_cross_host_redirects={_flag(f.follow_cross_host_redirects)} "
        # This build's own: what is kept of a page for the next part (issue 20).
        f"continuation_ttl_s={f.continuation_ttl_s} "
        f"continuation_max_entries={f.continuation_max_entries} "
        f"continuation_max_bytes={f.continuation_max_bytes} "
        # This build's own: PDFs read in a worker process (issue 33).
        f"pdf={_flag(f.pdf)} pdf_max_pages={f.pdf_max_pages} pdf_max_chars={f.pdf_max_chars} "
        f"pdf_memory_mib={f.pdf_memory_mib}"
    )
    out.append(
        f"egress: allow_rules={len(e.allow)} deny_rules={len(e.deny)} "
        f"allow_http={_flag(e.allow_http)} strict_mode={_flag(f.strict_mode)} "
        f"proxy={'set' if e.proxy else 'none'}"
    )
    out.append(f"privacy: secret_detection={config.privacy.secret_detection}")
    out.append(
        f"logging: level={config.logging.level} log_queries={_flag(config.logging.log_queries)}"
    )
    c = config.cache
    out.append(
        f"cache: enabled={_flag(c.enabled)} max_entries={c.max_entries} ttl_s={c.ttl_s} "
        f"max_entry_bytes={c.max_entry_bytes}"
    )
    out.append(store_line(config.store))
    out.append(f"scraping: enabled={_flag(config.scraping.enabled)}")
    r = config.resilience
    out.append(
        f"resilience: failures_to_open={r.failures_to_open} "
        f"first_cooldown_s={r.first_cooldown_s} max_cooldown_s={r.max_cooldown_s}"
    )
    out.append(
        f"limits: outbound_in_flight={lim.outbound_in_flight} "
        f"per_engine_in_flight={lim.per_engine_in_flight} "
        f"fetches_in_flight={lim.fetches_in_flight} parsing_in_flight={lim.parsing_in_flight} "
        f"strict_mode_urls={lim.strict_mode_urls} robots_cache_entries={lim.robots_cache_entries}"
    )
    out.append(memory_line(memory_of(config)))
    return out


def _open_metrics(m: MetricsSettings) -> bool:
    from rypsok.core.net.hostname import is_loopback_host

    return not is_loopback_host(m.bind_host) and m.token is None and m.token_env is None


def oauth_line(o: OAuthSettings) -> str:
    """One line naming the issuer and what is checked; the client secret never appears."""
    keys = o.jwks_uri or "from the issuer's metadata"
    if o.client_id:
        introspection = f"client {o.client_id}, " + (
            o.introspection_endpoint or "endpoint from the issuer's metadata"
        )
    else:
        introspection = "off (opaque tokens are refused)"
    scopes = ",".join(f"{tool}={scope or '(any token)'}" for tool, scope in o.scopes)
    return (
        f"service.http.oauth: issuer={o.issuer} resource={o.resource} keys={keys} "
        f"introspection={introspection} algorithms={','.join(o.algorithms)} "
        f"caller_claim={o.caller_claim} scopes={scopes} leeway_s={o.leeway_s} "
        f"keys_refresh_s={o.keys_refresh_s} keys_max_age_s={o.keys_max_age_s} "
        f"introspection_cache_s={o.introspection_cache_s} timeout_ms={o.timeout_ms}"
    )


def store_line(st: StoreSettings) -> str:
    """The backend and its bounds; of the URL only where it was read from (it may carry a
    password), never the URL itself."""
    if st.backend == "memory":
        return "store: backend=memory (this process only)"
    source = f"url_env={st.url_env}" if st.url_env is not None else "url_file=set"
    return (
        f"store: backend=redis {source} key_prefix={st.key_prefix} replicas={st.replicas} "
        f"timeout_ms={st.timeout_ms} max_connections={st.max_connections}"
    )


def memory_line(m: MemoryEstimate) -> str:
    note = f"an estimate for {m.build}"
    if not m.measured_here:
        note += "; measured on Linux; not measured for this platform"
    return (
        f"memory: worst case about {m.total} MiB (base {m.base} + bodies {m.bodies} + "
        f"parses {m.parses} + sessions {m.sessions} + cache {m.cache} + "
        f"continuation {m.continuation} MiB; {note})"
    )


def warnings(config: Config) -> list[str]:
    """Each warning as `<key>: <what happens>; <the safer setting>`."""
    out: list[str] = []
    for index, rule in enumerate(config.egress.allow):
        if rule.wider_than(16, 32):
            out.append(
                f"egress.allow[{index}]: the rule admits a network wider than /16 (IPv4) "
                "or /32 (IPv6), private ranges included; list host names or a narrower "
                "network"
            )
    if config.privacy.secret_detection == "off":  # noqa: S105 - a mode, not a password
        out.append(
            "privacy.secret_detection: queries and URLs that carry credentials are sent "
            'as they are; use "refuse", the default'
        )
    h = config.service.http
    from rypsok.core.net.hostname import is_loopback_host

    if not is_loopback_host(h.bind_host):
        out.append(
            "service.http.bind: the listener speaks plain HTTP off loopback, so tokens "
            "and traffic cross the network unencrypted; bind on loopback behind a "
            "TLS-terminating proxy"
        )
    metrics = config.service.metrics
    if metrics is not None and _open_metrics(metrics):
        out.append(
            "service.metrics.bind: the metrics listener is off loopback and asks no "
            "token, so anyone who reaches it reads the counters; give it token_env or "
            "token_file, or bind on loopback"
        )
    if config.logging.log_queries:
        out.append("logging.log_queries: query text is written to the debug log; set it to false")
    if not config.fetch.robots_txt:
        out.append(
            "fetch.robots_txt: pages are read even where their site asks robots not "
            "to; set it to true"
        )
    if config.egress.allow_http:
        out.append(
            "egress.allow_http: pages are read over plain HTTP, readable and alterable "
            "on the way; set it to false"
        )
    if config.fetch.follow_cross_host_redirects:
        out.append(
            "fetch.follow_cross_host_redirects: a page can send a fetch to another host "
            "without the caller deciding; set it to false"
        )
    for engine in config.engines:
        if engine.enabled and engine.admission.scraping:
            out.append(
                f"engines.{engine.id}: the engine scrapes a human-facing page, at your "
                "risk under the provider's terms; prefer an engine with an API"
            )
    for engine in config.engines:
        if engine.enabled and engine.base_url is not None and _plain_http_off_loopback(engine):
            out.append(
                f"engines.{engine.id}: queries reach the instance over plain HTTP off "
                "loopback, readable and alterable on the way; use https, or keep the "
                "instance on this host or a private network you trust"
            )
    if config.cache.enabled and not any(
        e.enabled and e.admission.cacheable for e in config.engines
    ):
        out.append(
            "cache.enabled: the cache is on and no enabled engine allows its results "
            "to be stored (Wikipedia and SearXNG do, Brave and DuckDuckGo do not), so it holds "
            "nothing; turn the cache off, or enable an engine that allows storage"
        )
    out += _store_warnings(config.store)
    memory = memory_of(config)
    if memory.over_unit:
        # The cache's keys are named only when the cache counts (on, in this process).
        cache = "cache.max_entries, cache.max_entry_bytes, " if memory.cache else ""
        pdf = "fetch.pdf_memory_mib, " if config.fetch.pdf else ""
        out.append(
            f"memory: the worst case, about {memory.total} MiB, is above the "
            f"{limits.default('LIM-M5')} MiB MemoryMax of the documented unit; lower "
            "fetch.max_bytes, limits.fetches_in_flight, limits.parsing_in_flight, "
            f"{pdf}{cache}fetch.continuation_max_bytes or service.http.max_sessions"
        )
    for index, caller in enumerate(h.callers):
        if caller.world_readable:
            out.append(
                f"service.http.auth.callers[{index}]: the token file is readable by "
                "everyone; chmod 600 it"
            )
    return out


def _store_warnings(st: StoreSettings) -> list[str]:
    if st.backend != "redis" or st.url is None:
        return []
    out: list[str] = []
    url = st.url.reveal()
    if url.startswith("redis://") and not is_loopback_url(url):
        key = "store.url_env" if st.url_env is not None else "store.url_file"
        out.append(
            f"{key}: the store is reached over plain redis:// off loopback, so cached "
            "answers and caller ids cross the network unencrypted; use rediss://"
        )
    if st.replicas == 1:
        out.append(
            "store.replicas: it is 1, so while Redis is away every replica allows the "
            "whole of each limit; set it to the number of replicas"
        )
    return out
