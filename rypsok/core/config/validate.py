"""From the parsed TOML document to a `Config`, or every problem with its key.

The tables are read top to bottom in the order of the configuration page. The
[service] tables (with the callers) are read in validate_service.py, the [engines.<id>]
tables in validate_engines.py; the rest here.
Dependent ranges are checked with the keys they depend on already read, so
the message can name both keys and their values.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from rypsok.core import limits
from rypsok.core.config.positions import Path, Positions
from rypsok.core.config.problems import ConfigError, describe
from rypsok.core.config.reader import MISSING, Bound, Reader, Table, named
from rypsok.core.config.settings import (
    LOG_LEVELS,
    SAFE_SEARCH,
    SECRET_DETECTION,
    CacheSettings,
    Config,
    EgressSettings,
    FetchSettings,
    LimitsSettings,
    LoggingSettings,
    PrivacySettings,
    ResilienceSettings,
    ScrapingSettings,
    SearchSettings,
    StatusSettings,
)
from rypsok.core.config.urls import (
    parse_proxy,
)
from rypsok.core.config.validate_engines import engines_of
from rypsok.core.config.validate_service import service_of
from rypsok.core.config.validate_store import store_of
from rypsok.core.net.proxy import Proxy
from rypsok.core.net.rules import Rule, RuleError, parse_rule

L = limits.get

TABLES = (
    "config_version",
    "service",
    "search",
    "fetch",
    "egress",
    "limits",
    "resilience",
    "privacy",
    "logging",
    "status",
    "cache",
    "scraping",
    "store",
    "engines",
)
_LANGUAGE = re.compile(r"([A-Za-z]{2,3})((?:-[A-Za-z0-9]{1,8}){0,3})")
_REGION = re.compile(r"[A-Z]{2}")


def validate(
    document: Mapping[str, Any],
    positions: Positions,
    source: str,
    env: Mapping[str, str],
    *,
    read_tokens: bool = True,
) -> Config:
    """Check every key of *document*; raise ConfigError naming each problem.

    *read_tokens* False reads no caller token (serve over stdio has one caller and no
    listener): the callers' tables are still checked, their tokens are not read, and the
    settings carry no caller.
    """
    r = Reader(positions)
    doc = dict(document)
    r.unknown(doc, (), TABLES, "table")
    _config_version(r, doc)

    service_raw = r.table(doc, (), "service")
    fetch_raw = r.table(doc, (), "fetch")
    fetch = _fetch(r, fetch_raw, _egress_allow_count(doc))
    service = service_of(r, service_raw, fetch, env, read_tokens)
    search = _search(r, r.table(doc, (), "search"))
    egress = _egress(r, r.table(doc, (), "egress"))
    limits_ = _limits(r, r.table(doc, (), "limits"))
    resilience = _resilience(r, r.table(doc, (), "resilience"))
    privacy_raw = r.table(doc, (), "privacy")
    r.unknown(privacy_raw, ("privacy",), ("secret_detection",))
    privacy = PrivacySettings(
        r.choice(
            privacy_raw,
            ("privacy",),
            "secret_detection",
            SECRET_DETECTION,
            "refuse",
        )
    )
    logging_raw = r.table(doc, (), "logging")
    r.unknown(logging_raw, ("logging",), ("level", "log_queries"))
    logging = LoggingSettings(
        r.choice(logging_raw, ("logging",), "level", LOG_LEVELS, "info"),
        r.boolean(logging_raw, ("logging",), "log_queries", False),
    )
    status_raw = r.table(doc, (), "status")
    r.unknown(status_raw, ("status",), ("enabled",))
    status = StatusSettings(r.boolean(status_raw, ("status",), "enabled", True))
    cache = _cache(r, r.table(doc, (), "cache"))
    scraping_raw = r.table(doc, (), "scraping")
    r.unknown(scraping_raw, ("scraping",), ("enabled",))
    scraping = ScrapingSettings(r.boolean(scraping_raw, ("scraping",), "enabled", False))
    engines = engines_of(r, doc, scraping.enabled, env)
    store = store_of(r, doc, env)

    if r.problems:
        # In the order of the file; problems without a place (dependent ranges) last.
        r.problems.sort(key=lambda p: p.place or (1 << 30, 0))
        raise ConfigError(r.problems)
    return Config(
        source=source,
        service=service,
        search=search,
        fetch=fetch,
        egress=egress,
        limits=limits_,
        resilience=resilience,
        privacy=privacy,
        logging=logging,
        status=status,
        cache=cache,
        scraping=scraping,
        engines=engines,
        store=store,
    )


def _config_version(r: Reader, doc: Table) -> None:
    value = doc.get("config_version", MISSING)
    if value is MISSING:
        if doc:
            r.add(("config_version",), "is required; write config_version = 1 at the top")
        return
    if isinstance(value, bool) or not isinstance(value, int):
        r.add(("config_version",), f"expected the integer 1, found {describe(value)}")
    elif value != 1:
        r.add(("config_version",), "this release reads configuration version 1 only")


# -- [search] ------------------------------------------------------------------------------


def _search(r: Reader, raw: Table) -> SearchSettings:
    path: Path = ("search",)
    r.unknown(
        raw,
        path,
        (
            "languages",
            "region",
            "safe_search",
            "max_results",
            "max_results_ceiling",
            "query_max_chars",
            "deadline_ms",
            "engine_timeout_ms",
            "connect_timeout_ms",
            "reserve_ms",
            "engines_per_request",
            "results_per_engine",
            "snippet_max_chars",
            "title_max_chars",
            "drop_flagged_results",
            "engine_attribution",
        ),
    )
    languages = _languages(r, raw, path)
    region = r.text(
        raw,
        path,
        "region",
        "US",
        "two uppercase letters",
        lambda s: s if _REGION.fullmatch(s) else None,
    )
    safe = r.choice(raw, path, "safe_search", SAFE_SEARCH, "moderate")
    max_results, ceiling = _under_ceiling(r, raw, path, "max_results", "LIM-S2", "LIM-S2C")
    query_max = r.integer(raw, path, "query_max_chars", L("LIM-S1"))
    deadline = r.integer(raw, path, "deadline_ms", L("LIM-S4"))
    reserve = r.integer(raw, path, "reserve_ms", L("LIM-S6"))
    deadline_key, reserve_key = (*path, "deadline_ms"), (*path, "reserve_ms")
    engine_timeout = r.integer(
        raw,
        path,
        "engine_timeout_ms",
        L("LIM-S5"),
        top=_high("LIM-S4") - (L("LIM-S6").low or 0),
        cap=Bound(
            deadline - reserve,
            f"{named(deadline_key, deadline)} minus {named(reserve_key, reserve)}",
            (deadline_key, reserve_key),
        ),
    )
    return SearchSettings(
        languages=languages,
        region=region,
        safe_search=safe,
        max_results=max_results,
        max_results_ceiling=ceiling,
        query_max_chars=query_max,
        deadline_ms=deadline,
        engine_timeout_ms=engine_timeout,
        connect_timeout_ms=r.integer(raw, path, "connect_timeout_ms", L("LIM-S12")),
        reserve_ms=reserve,
        engines_per_request=r.integer(raw, path, "engines_per_request", L("LIM-S8")),
        results_per_engine=r.integer(raw, path, "results_per_engine", L("LIM-S3")),
        snippet_max_chars=r.integer(raw, path, "snippet_max_chars", L("LIM-S9")),
        title_max_chars=r.integer(raw, path, "title_max_chars", L("LIM-S10")),
        drop_flagged_results=r.boolean(raw, path, "drop_flagged_results", False),
        engine_attribution=r.boolean(raw, path, "engine_attribution", False),
    )


def _under_ceiling(
    r: Reader, raw: Table, path: Path, key: str, limit: str, ceiling_limit: str
) -> tuple[int, int]:
    """A default a call may raise up to its `<key>_ceiling`, and that ceiling: the default
    is checked against the ceiling as configured, which the message names."""
    ceiling_key = (*path, f"{key}_ceiling")
    ceiling = r.integer(raw, path, f"{key}_ceiling", L(ceiling_limit))
    cap = Bound(ceiling, named(ceiling_key, ceiling), (ceiling_key,))
    value = r.integer(raw, path, key, L(limit), top=_high(ceiling_limit), cap=cap)
    return value, ceiling


def _high(limit_id: str) -> int:
    """The high end of a row that has one (a ceiling, a deadline)."""
    high = L(limit_id).high
    if high is None:  # pragma: no cover - the rows named here all have one
        raise ValueError(f"{limit_id} has no high bound")
    return high


def _language_tag(text: str) -> str | None:
    match = _LANGUAGE.fullmatch(text)
    if match is None:
        return None
    parts = [match.group(1).lower()]
    for sub in match.group(2).split("-")[1:]:
        if len(sub) == 2 and sub.isalpha():
            parts.append(sub.upper())
        elif len(sub) == 4 and sub.isalpha():
            parts.append(sub.title())
        else:
            parts.append(sub.lower())
    return "-".join(parts)


def _languages(r: Reader, raw: Table, path: Path) -> tuple[str, ...]:
    items = r.string_list(raw, path, "languages", ("en",), "language tags", max_items=32)
    if items is None:
        return ("en",)
    if not items and isinstance(raw.get("languages"), list) and not raw["languages"]:
        r.add((*path, "languages"), "needs at least one language tag")
        return ("en",)
    out: list[str] = []
    for index, item in items:
        tag = _language_tag(item)
        if tag is None:
            r.add(
                (*path, "languages", index),
                "expected a language tag such as en or pt-BR, found text in another form",
            )
        elif tag in out:
            r.add((*path, "languages", index), "this language is listed twice")
        else:
            out.append(tag)
    return tuple(out) or ("en",)


# -- [fetch] and [egress] --------------------------------------------------------------------


def _egress_allow_count(doc: Table) -> int:
    egress = doc.get("egress")
    allow = egress.get("allow") if isinstance(egress, dict) else None
    return len(allow) if isinstance(allow, list) else 0


def _fetch(r: Reader, raw: Table, allow_rules: int) -> FetchSettings:
    path: Path = ("fetch",)
    r.unknown(
        raw,
        path,
        (
            "max_chars",
            "max_chars_ceiling",
            "max_bytes",
            "deadline_ms",
            "connect_timeout_ms",
            "max_redirects",
            "ports",
            "robots_txt",
            "follow_cross_host_redirects",
            "strict_mode",
            "continuation_ttl_s",
            "continuation_max_entries",
            "continuation_max_bytes",
            "pdf",
            "pdf_max_pages",
            "pdf_max_chars",
            "pdf_memory_mib",
        ),
    )
    max_chars, ceiling = _under_ceiling(r, raw, path, "max_chars", "LIM-F1", "LIM-F2")
    return FetchSettings(
        max_chars=max_chars,
        max_chars_ceiling=ceiling,
        max_bytes=r.integer(raw, path, "max_bytes", L("LIM-F3")),
        deadline_ms=r.integer(raw, path, "deadline_ms", L("LIM-F4")),
        connect_timeout_ms=r.integer(raw, path, "connect_timeout_ms", L("LIM-F6")),
        max_redirects=r.integer(raw, path, "max_redirects", L("LIM-F7")),
        ports=_ports(r, raw, path, allow_rules),
        robots_txt=r.boolean(raw, path, "robots_txt", True),
        follow_cross_host_redirects=r.boolean(raw, path, "follow_cross_host_redirects", False),
        strict_mode=r.boolean(raw, path, "strict_mode", False),
        continuation_ttl_s=r.integer(raw, path, "continuation_ttl_s", L("LIM-F16")),
        continuation_max_entries=r.integer(raw, path, "continuation_max_entries", L("LIM-F17")),
        continuation_max_bytes=r.integer(raw, path, "continuation_max_bytes", L("LIM-F18")),
        pdf=r.boolean(raw, path, "pdf", True),
        pdf_max_pages=r.integer(raw, path, "pdf_max_pages", L("LIM-F21")),
        pdf_max_chars=r.integer(raw, path, "pdf_max_chars", L("LIM-F22")),
        pdf_memory_mib=r.integer(raw, path, "pdf_memory_mib", L("LIM-F23")),
    )


def _ports(r: Reader, raw: Table, path: Path, allow_rules: int) -> tuple[int, ...]:
    default = limits.DEFAULT_FETCH_PORTS
    value = raw.get("ports", MISSING)
    if value is MISSING:
        return default
    if not isinstance(value, list):
        r.add((*path, "ports"), f"expected an array of ports, found {describe(value)}")
        return default
    if not value:
        r.add((*path, "ports"), "needs at least one port")
        return default
    ports: list[int] = []
    for index, item in enumerate(value[:64]):
        where = (*path, "ports", index)
        if isinstance(item, bool) or not isinstance(item, int):
            r.add(where, f"expected a port from 1 to 65535, found {describe(item)}")
        elif not 1 <= item <= 65535:
            r.add(where, "expected a port from 1 to 65535, found a number outside that range")
        elif item in ports:
            r.add(where, "this port is listed twice")
        else:
            if item not in default and allow_rules == 0:
                r.add(where, "a port other than 80 and 443 needs an egress.allow rule")
            ports.append(item)
    if len(value) > 64:
        r.add((*path, "ports"), "expected at most 64 ports")
    return tuple(ports) or default


def _rules(r: Reader, raw: Table, path: Path, name: str) -> tuple[Rule, ...]:
    items = r.string_list(
        raw, path, name, (), "rules (networks, addresses or host names)", max_items=4096
    )
    rules: list[Rule] = []
    for index, text in items or []:
        try:
            rules.append(parse_rule(text))
        except RuleError as exc:
            r.add((*path, name, index), str(exc))
    return tuple(rules)


def _egress(r: Reader, raw: Table) -> EgressSettings:
    path: Path = ("egress",)
    r.unknown(raw, path, ("allow_http", "allow", "deny", "proxy"))
    proxy_text = r.text(
        raw,
        path,
        "proxy",
        "",
        "an http://host:port proxy URL without credentials",
        lambda s: s if s == "" or parse_proxy(s) else None,
    )
    parsed = parse_proxy(proxy_text) if proxy_text else None
    return EgressSettings(
        allow_http=r.boolean(raw, path, "allow_http", False),
        allow=_rules(r, raw, path, "allow"),
        deny=_rules(r, raw, path, "deny"),
        proxy=Proxy(*parsed) if parsed else None,
    )


# -- [limits], [resilience], [cache] -------------------------------------------------------


def _limits(r: Reader, raw: Table) -> LimitsSettings:
    path: Path = ("limits",)
    names = {
        "outbound_in_flight": "LIM-C1",
        "per_engine_in_flight": "LIM-C2",
        "fetches_in_flight": "LIM-C3",
        "parsing_in_flight": "LIM-C5",
        "web_search_per_minute": "LIM-C6",
        "web_fetch_per_minute": "LIM-C7",
        "engine_status_per_minute": "LIM-C8",
        "strict_mode_urls": "LIM-F14",
        "robots_cache_entries": "LIM-F15",
    }
    r.unknown(raw, path, names)
    values = {name: r.integer(raw, path, name, L(row)) for name, row in names.items()}
    return LimitsSettings(**values)


def _resilience(r: Reader, raw: Table) -> ResilienceSettings:
    path: Path = ("resilience",)
    r.unknown(raw, path, ("failures_to_open", "first_cooldown_s", "max_cooldown_s"))
    longest = r.integer(raw, path, "max_cooldown_s", L("LIM-B3"))
    longest_key = (*path, "max_cooldown_s")
    first = r.integer(
        raw,
        path,
        "first_cooldown_s",
        L("LIM-B2"),
        cap=Bound(longest, named(longest_key, longest), (longest_key,)),
    )
    return ResilienceSettings(r.integer(raw, path, "failures_to_open", L("LIM-B1")), first, longest)


def _cache(r: Reader, raw: Table) -> CacheSettings:
    path: Path = ("cache",)
    r.unknown(raw, path, ("enabled", "ttl_s", "max_entries", "max_entry_bytes"))
    return CacheSettings(
        enabled=r.boolean(raw, path, "enabled", False),
        ttl_s=r.integer(raw, path, "ttl_s", L("LIM-K2")),
        max_entries=r.integer(raw, path, "max_entries", L("LIM-K3")),
        max_entry_bytes=r.integer(raw, path, "max_entry_bytes", L("LIM-K4")),
    )
