"""From the parsed TOML document to a `Config`, or every problem with its key.

The tables are read top to bottom in the order of the configuration page.
Dependent ranges are checked with the keys they depend on already read, so
the message can name both keys and their values.
"""

from __future__ import annotations

import ipaddress
import math
import re
from collections.abc import Mapping
from typing import Any

from rypsok.core import limits
from rypsok.core.config import secrets
from rypsok.core.config.positions import Path, Positions, hidden_reason, render, shown
from rypsok.core.config.problems import ConfigError, Problem, describe
from rypsok.core.config.reader import IDENTIFIER, MISSING, Reader, Table
from rypsok.core.config.settings import (
    LOG_LEVELS,
    SAFE_SEARCH,
    SECRET_DETECTION,
    CacheSettings,
    Caller,
    Config,
    EgressSettings,
    EngineSettings,
    FetchSettings,
    HttpSettings,
    LimitsSettings,
    LoggingSettings,
    PrivacySettings,
    ResilienceSettings,
    ScrapingSettings,
    SearchSettings,
    ServiceSettings,
    StatusSettings,
)
from rypsok.core.config.urls import (
    parse_allowed_host,
    parse_base_url,
    parse_bind,
    parse_contact,
    parse_origin,
    parse_proxy,
)
from rypsok.core.engines import admission as records
from rypsok.core.engines.admission import CATEGORIES, Endpoint
from rypsok.core.net.hostname import is_loopback_host
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
    "engines",
)
SCRAPING_REFUSED = (
    'type "{driver}" scrapes a human-facing interface; it runs only with '
    "[scraping] enabled = true, at the operator's risk under the provider's terms."
)
NOT_A_VARIABLE = "the value is not the name of an environment variable (it is not shown)"
_LANGUAGE = re.compile(r"([A-Za-z]{2,3})((?:-[A-Za-z0-9]{1,8}){0,3})")
_REGION = re.compile(r"[A-Z]{2}")
_TOKEN_CHARS = re.compile(r"[\x21-\x7e]+")

# With no [engines.*] table: Wikipedia (keyless) and Brave keyed by BRAVE_API_KEY.
DEFAULT_ENGINES: dict[str, Table] = {
    "brave": {"type": "brave", "categories": ["general", "news"], "api_key_env": "BRAVE_API_KEY"},
    "wikipedia": {"type": "wikipedia", "categories": ["general", "science"]},
}


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
    service = _service(r, service_raw, fetch, env, read_tokens)
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
    engines = _engines(r, doc, scraping.enabled, env)

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


# -- [service] and [service.http] ----------------------------------------------------------


def _service(
    r: Reader, raw: Table, fetch: FetchSettings, env: Mapping[str, str], read_tokens: bool
) -> ServiceSettings:
    path: Path = ("service",)
    r.unknown(raw, path, ("structured_content", "user_agent_contact", "shutdown_ms", "http"))
    structured = r.boolean(raw, path, "structured_content", True)
    contact = r.text(
        raw, path, "user_agent_contact", "", "a URL or an e-mail address", parse_contact
    )
    shutdown = r.integer(raw, path, "shutdown_ms", L("LIM-O1"))
    http = _http(r, r.table(raw, path, "http"), fetch, env, read_tokens)
    return ServiceSettings(structured, contact, shutdown, http)


def _http(
    r: Reader, raw: Table, fetch: FetchSettings, env: Mapping[str, str], read_tokens: bool
) -> HttpSettings:
    path: Path = ("service", "http")
    r.unknown(
        raw,
        path,
        (
            "bind",
            "allowed_hosts",
            "allowed_origins",
            "legacy_revisions",
            "max_connections",
            "max_request_bytes",
            "idle_timeout_s",
            "max_streams",
            "max_sessions",
            "request_timeout_s",
            "auth",
        ),
    )
    bind = r.text(
        raw,
        path,
        "bind",
        "127.0.0.1:8737",
        "an address and port such as 127.0.0.1:8737 or [::1]:8737",
        parse_bind,
    )
    host, _, port = bind.rpartition(":")
    bind_host = host.strip("[]")
    hosts = _normalized_list(
        r, raw, path, "allowed_hosts", "a host name or host:port", parse_allowed_host
    )
    origins = _normalized_list(
        r,
        raw,
        path,
        "allowed_origins",
        "an origin such as https://app.example (or :* for any port, or null)",
        parse_origin,
    )
    legacy = r.boolean(raw, path, "legacy_revisions", True)
    max_connections = r.integer(raw, path, "max_connections", L("LIM-H1"))
    max_request_bytes = r.integer(raw, path, "max_request_bytes", L("LIM-H2"))
    idle = r.integer(raw, path, "idle_timeout_s", L("LIM-H3"))
    streams = r.integer(raw, path, "max_streams", L("LIM-H4"))
    sessions = r.integer(raw, path, "max_sessions", L("LIM-H6"))
    margin_ms = limits.default("LIM-H5M")
    floor_s = math.ceil((fetch.deadline_ms + margin_ms) / 1000)
    request_timeout = r.integer(
        raw,
        path,
        "request_timeout_s",
        L("LIM-H5"),
        low=floor_s,
        because=f"fetch.deadline_ms {fetch.deadline_ms} plus {margin_ms // 1000} s",
    )
    callers = _callers(r, r.table(raw, path, "auth"), env, read_tokens)

    address = ipaddress.ip_address(bind_host) if bind_host != "localhost" else None
    loopback = is_loopback_host(bind_host)
    if not loopback and not callers and not _callers_declared(raw):
        r.add((*path, "bind"), "a non-loopback bind needs [service.http.auth] callers")
    if address is not None and address.is_unspecified and not hosts:
        r.add(
            (*path, "bind"),
            "a bind on an unspecified address (0.0.0.0, ::) needs service.http.allowed_hosts",
        )
    return HttpSettings(
        bind_host=bind_host,
        bind_port=int(port),
        allowed_hosts=tuple(hosts),
        allowed_origins=tuple(origins),
        legacy_revisions=legacy,
        max_connections=max_connections,
        max_request_bytes=max_request_bytes,
        idle_timeout_s=idle,
        max_streams=streams,
        max_sessions=sessions,
        request_timeout_s=request_timeout,
        callers=callers,
    )


def _callers_declared(http_raw: Table) -> bool:
    auth = http_raw.get("auth")
    return (
        isinstance(auth, dict) and isinstance(auth.get("callers"), list) and bool(auth["callers"])
    )


def _callers(
    r: Reader, raw: Table, env: Mapping[str, str], read_tokens: bool
) -> tuple[Caller, ...]:
    path: Path = ("service", "http", "auth")
    r.unknown(raw, path, ("callers",))
    value = raw.get("callers", MISSING)
    if value is MISSING:
        return ()
    if not isinstance(value, list):
        r.add((*path, "callers"), f"expected an array of tables, found {describe(value)}")
        return ()
    callers: list[Caller] = []
    ids: set[str] = set()
    tokens: dict[str, int] = {}
    for index, entry in enumerate(value):
        at: Path = (*path, "callers", index)
        if not isinstance(entry, dict):
            r.add(at, f"expected a table, found {describe(entry)}")
            continue
        if "token" in entry:
            r.add((*at, "token"), "give the token by token_env or token_file", key=True)
        r.unknown(
            {k: v for k, v in entry.items() if k != "token"}, at, ("id", "token_env", "token_file")
        )
        ident = r.text(
            entry,
            at,
            "id",
            "",
            "lowercase letters, digits and underscores, starting with a letter",
            lambda s: s if IDENTIFIER.fullmatch(s) else None,
        )
        if "id" not in entry:
            r.add(at, "a caller needs an id", key=True)
        elif ident and ident in ids:
            r.add((*at, "id"), "another caller has the same id")
        ids.add(ident)
        resolved = _caller_token(r, entry, at, env, read_tokens)
        if resolved is None:
            continue
        token, token_env, world = resolved
        # A problem of the token itself names the key that gives it, at its value.
        source: Path = (*at, "token_env" if token_env is not None else "token_file")
        text = token.reveal()
        if len(text.encode("utf-8")) < limits.default("LIM-X3"):
            r.add(
                source,
                "the token is shorter than 32 bytes; generate one with openssl rand -base64 32",
            )
            continue
        if not _TOKEN_CHARS.fullmatch(text):
            r.add(source, "the token holds spaces or characters a bearer token cannot carry")
            continue
        if text in tokens:
            r.add(source, "the token is the same as another caller's; give each caller its own")
            continue
        tokens[text] = index
        callers.append(Caller(ident, token, token_env, world))
    return tuple(callers)


def _caller_token(
    r: Reader, entry: Table, at: Path, env: Mapping[str, str], read: bool
) -> tuple[secrets.Secret, str | None, bool] | None:
    """The caller's token, its variable's name and whether its file is world-readable;
    None after a problem, or when *read* is False once the keys' forms are checked."""
    has_env, has_file = "token_env" in entry, "token_file" in entry
    if has_env == has_file:
        r.add(at, "give exactly one of token_env and token_file", key=True)
        return None
    if has_env:
        name = entry["token_env"]
        if not isinstance(name, str):
            r.add((*at, "token_env"), f"expected a variable name, found {describe(name)}")
            return None
        if not secrets.is_variable_name(name):
            r.add((*at, "token_env"), NOT_A_VARIABLE)
            return None
        if not read:
            return None
        got = secrets.from_env(name, env)
        if got.secret is None:
            r.add((*at, "token_env"), got.problem or "the token cannot be read")
            return None
        return got.secret, name, False
    path_value = entry["token_file"]
    if not isinstance(path_value, str) or not path_value:
        r.add((*at, "token_file"), f"expected a file path, found {describe(path_value)}")
        return None
    if not read:
        return None
    got = secrets.from_file(path_value, "token_file")
    if got.secret is None:
        r.add((*at, "token_file"), got.problem or "the token cannot be read")
        return None
    return got.secret, None, got.world_readable


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
    ceiling = r.integer(raw, path, "max_results_ceiling", L("LIM-S2C"))
    max_results = r.integer(
        raw,
        path,
        "max_results",
        L("LIM-S2"),
        high=ceiling,
        because=f"search.max_results_ceiling {ceiling}",
    )
    query_max = r.integer(raw, path, "query_max_chars", L("LIM-S1"))
    deadline = r.integer(raw, path, "deadline_ms", L("LIM-S4"))
    reserve = r.integer(raw, path, "reserve_ms", L("LIM-S6"))
    engine_timeout = r.ranged(
        raw,
        path,
        "engine_timeout_ms",
        L("LIM-S5").default,
        L("LIM-S5").low or 0,
        L("LIM-S4").high or 0,
        None,
        deadline - reserve,
        f"search.deadline_ms {deadline} minus search.reserve_ms {reserve}",
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
        ),
    )
    ceiling = r.integer(raw, path, "max_chars_ceiling", L("LIM-F2"))
    max_chars = r.integer(
        raw,
        path,
        "max_chars",
        L("LIM-F1"),
        high=ceiling,
        because=f"fetch.max_chars_ceiling {ceiling}",
    )
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
    first = r.integer(
        raw,
        path,
        "first_cooldown_s",
        L("LIM-B2"),
        high=longest,
        because=f"resilience.max_cooldown_s {longest}",
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


# -- [engines.<id>] ------------------------------------------------------------------------

ENGINE_KEYS = (
    "type",
    "enabled",
    "categories",
    "preference",
    "api_key_env",
    "api_key_file",
    "endpoint",
    "base_url",
)
DRIVERS = ", ".join(records.ADMISSIONS)


def _engines(
    r: Reader, doc: Table, scraping: bool, env: Mapping[str, str]
) -> tuple[EngineSettings, ...]:
    raw = r.table(doc, (), "engines")
    tables = raw if raw else DEFAULT_ENGINES
    engines: list[EngineSettings] = []
    for ident in sorted(tables):
        entry = tables[ident]
        if not IDENTIFIER.fullmatch(ident):
            r.problems.append(_id_problem(r, ident))
            continue
        if not isinstance(entry, dict):
            r.add(("engines", ident), f"expected a table, found {describe(entry)}")
            continue
        engine = _engine(r, ident, entry, scraping, env)
        if engine is not None:
            engines.append(engine)
    return tuple(engines)


def _id_problem(r: Reader, ident: str) -> Problem:
    # The identifier is shown as shown() writes it (quoted, every odd character escaped),
    # or, when it cannot be, the problem names the [engines] table alone.
    rule = "lowercase letters, digits and underscores, starting with a letter"
    where = r.positions.key_at(("engines", ident))
    if shown(ident) is not None:
        return Problem(render(("engines", ident)), f"an engine identifier must be {rule}", where)
    return Problem(
        "engines",
        f"an engine identifier must be {rule} (this one is not shown: {hidden_reason(ident)})",
        where,
    )


def _engine(
    r: Reader, ident: str, entry: Table, scraping: bool, env: Mapping[str, str]
) -> EngineSettings | None:
    path: Path = ("engines", ident)
    if "api_key" in entry:
        r.add((*path, "api_key"), "give the secret by api_key_env or api_key_file", key=True)
    r.unknown({k: v for k, v in entry.items() if k != "api_key"}, path, ENGINE_KEYS)
    driver = entry.get("type", MISSING)
    if driver is MISSING:
        r.add(path, f"needs a type: one of {DRIVERS}", key=True)
        return None
    if not isinstance(driver, str):
        r.add((*path, "type"), f"expected one of {DRIVERS}, found {describe(driver)}")
        return None
    admission = records.admission(driver)
    if admission is None:
        r.add((*path, "type"), f"no such driver; one of {DRIVERS}")
        return None
    if admission.scraping and not scraping:
        # The sentence names the engine's table: placed at its key (`ddg` of [engines.ddg]).
        r.add(path, SCRAPING_REFUSED.format(driver=driver), key=True)
    enabled = r.boolean(entry, path, "enabled", True)
    categories = _categories(r, entry, path)
    preference = r.ranged(entry, path, "preference", 100, -(2**31), 2**31 - 1)

    endpoint: Endpoint | None = None
    if admission.endpoints:
        endpoint = r.choice(entry, path, "endpoint", admission.endpoints, admission.endpoints[0])
    elif "endpoint" in entry:
        r.add((*path, "endpoint"), f"the {driver} driver takes no endpoint", key=True)
    base_url: str | None = None
    if "base_url" in entry:
        if admission.accepts_base_url:
            text = r.text(
                entry,
                path,
                "base_url",
                "",
                "an absolute https URL (plain http only on a loopback host)",
                parse_base_url,
            )
            base_url = text or None
        else:
            r.add((*path, "base_url"), f"the {driver} driver takes no base_url", key=True)

    key_env, key_file = entry.get("api_key_env", MISSING), entry.get("api_key_file", MISSING)
    credential: secrets.Secret | None = None
    problem: str | None = None
    env_name: str | None = None
    if not admission.keyed:
        for name in ("api_key_env", "api_key_file"):
            if name in entry:
                r.add((*path, name), f"the {driver} driver takes no credential", key=True)
    elif key_env is MISSING and key_file is MISSING:
        if "api_key" not in entry:  # already told where the key belongs
            r.add(path, "a keyed engine needs api_key_env or api_key_file", key=True)
    elif key_env is not MISSING and key_file is not MISSING:
        r.add(path, "give only one of api_key_env and api_key_file", key=True)
    elif key_env is not MISSING:
        if not isinstance(key_env, str):
            r.add((*path, "api_key_env"), f"expected a variable name, found {describe(key_env)}")
        elif not secrets.is_variable_name(key_env):
            r.add((*path, "api_key_env"), NOT_A_VARIABLE)
        else:
            env_name = key_env
            got = secrets.from_env(key_env, env)
            credential, problem = got.secret, got.problem
    else:
        if not isinstance(key_file, str) or not key_file:
            r.add((*path, "api_key_file"), f"expected a file path, found {describe(key_file)}")
        else:
            got = secrets.from_file(key_file, "api_key_file")
            credential, problem = got.secret, got.problem
    return EngineSettings(
        id=ident,
        admission=admission,
        enabled=enabled,
        categories=categories,
        preference=preference,
        api_key_env=env_name,
        api_key_file_set=key_file is not MISSING,
        endpoint=endpoint,
        base_url=base_url,
        credential=credential,
        credential_problem=problem,
    )


def _categories(r: Reader, entry: Table, path: Path) -> tuple[str, ...]:
    allowed = ", ".join(CATEGORIES)
    items = r.string_list(entry, path, "categories", (), "categories", max_items=8)
    if items is None:
        if "categories" not in entry:
            r.add(path, f"needs categories: at least one of {allowed}", key=True)
        return ()
    out: list[str] = []
    for index, item in items:
        if item not in CATEGORIES:
            r.add((*path, "categories", index), f"expected one of {allowed}, found an unknown word")
        elif item in out:
            r.add((*path, "categories", index), "this category is listed twice")
        else:
            out.append(item)
    if isinstance(entry.get("categories"), list) and not entry["categories"]:
        r.add((*path, "categories"), f"needs at least one of {allowed}")
    return tuple(out)


def _normalized_list(
    r: Reader, raw: Table, path: Path, name: str, expected: str, parse: Any
) -> list[str]:
    items = r.string_list(raw, path, name, (), expected.split(" such as")[0] + "s", max_items=256)
    out: list[str] = []
    for index, item in items or []:
        normal = parse(item)
        if normal is None:
            r.add((*path, name, index), f"expected {expected}, found text in another form")
        elif normal not in out:
            out.append(normal)
    return out
