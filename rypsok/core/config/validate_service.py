"""The [service] and [service.http] tables, with the HTTP callers and their tokens (read by
`validate`)."""

from __future__ import annotations

import ipaddress
import math
import re
from collections.abc import Mapping
from typing import Any

from rypsok.core import limits
from rypsok.core.config import secrets
from rypsok.core.config.positions import Path
from rypsok.core.config.problems import describe
from rypsok.core.config.reader import IDENTIFIER, MISSING, Bound, Reader, Table, named
from rypsok.core.config.settings import (
    Caller,
    FetchSettings,
    HttpSettings,
    MetricsSettings,
    ServiceSettings,
)
from rypsok.core.config.urls import (
    parse_allowed_host,
    parse_bind,
    parse_contact,
    parse_origin,
)
from rypsok.core.config.validate_oauth import oauth_of
from rypsok.core.net import authority
from rypsok.core.net.hostname import is_loopback_host

L = limits.get

NOT_A_VARIABLE = "the value is not the name of an environment variable (it is not shown)"
_TOKEN_CHARS = re.compile(r"[\x21-\x7e]+")


def service_of(
    r: Reader, raw: Table, fetch: FetchSettings, env: Mapping[str, str], read_tokens: bool
) -> ServiceSettings:
    path: Path = ("service",)
    r.unknown(
        raw, path, ("structured_content", "user_agent_contact", "shutdown_ms", "http", "metrics")
    )
    structured = r.boolean(raw, path, "structured_content", True)
    contact = r.text(
        raw, path, "user_agent_contact", "", "a URL or an e-mail address", parse_contact
    )
    shutdown = r.integer(raw, path, "shutdown_ms", L("LIM-O1"))
    http = _http(r, r.table(raw, path, "http"), fetch, env, read_tokens)
    metrics = _metrics(r, r.table(raw, path, "metrics"), env, read_tokens)
    if (
        metrics is not None
        and (metrics.bind_host, metrics.bind_port)
        == (
            http.bind_host,
            http.bind_port,
        )
        and metrics.bind_port
    ):
        r.add(("service", "metrics", "bind"), "the metrics listener needs a port of its own")
    return ServiceSettings(structured, contact, shutdown, http, metrics)


def _metrics(
    r: Reader, raw: Table, env: Mapping[str, str], read_tokens: bool
) -> MetricsSettings | None:
    """[service.metrics]; None while bind is empty (the default: no listener)."""
    path: Path = ("service", "metrics")
    r.unknown(raw, path, ("bind", "token_env", "token_file", "per_caller"))
    bind = r.text(
        raw,
        path,
        "bind",
        "",
        "an address and port such as 127.0.0.1:9464, or empty for none",
        lambda v: v if v == "" else parse_bind(v),
    )
    per_caller = r.boolean(raw, path, "per_caller", False)
    token: secrets.Secret | None = None
    token_env: str | None = None
    if "token_env" in raw or "token_file" in raw:
        resolved = _caller_token(r, raw, path, env, read_tokens)
        if resolved is not None:
            token, token_env, _ = resolved
    if not bind:
        return None
    bound = authority.split_host_port(bind)
    assert bound is not None and bound.port is not None
    return MetricsSettings(bound.host.strip("[]"), int(bound.port), token, token_env, per_caller)


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
            "fast_lane",
            "max_connections",
            "max_request_bytes",
            "idle_timeout_s",
            "max_streams",
            "max_sessions",
            "request_timeout_s",
            "auth",
            "oauth",
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
    bound = authority.split_host_port(bind)  # parse_bind's form: host:port, IPv6 in brackets
    assert bound is not None and bound.port is not None
    bind_host, port = bound.host.strip("[]"), bound.port
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
    fast_lane = r.boolean(raw, path, "fast_lane", True)
    max_connections = r.integer(raw, path, "max_connections", L("LIM-H1"))
    max_request_bytes = r.integer(raw, path, "max_request_bytes", L("LIM-H2"))
    idle = r.integer(raw, path, "idle_timeout_s", L("LIM-H3"))
    streams = r.integer(raw, path, "max_streams", L("LIM-H4"))
    sessions = r.integer(raw, path, "max_sessions", L("LIM-H6"))
    margin_ms = limits.default("LIM-H5M")
    floor_s = math.ceil((fetch.deadline_ms + margin_ms) / 1000)
    deadline_key: Path = ("fetch", "deadline_ms")
    request_timeout = r.integer(
        raw,
        path,
        "request_timeout_s",
        L("LIM-H5"),
        floor=Bound(
            floor_s,
            f"{named(deadline_key, fetch.deadline_ms)} plus {margin_ms // 1000} s",
            (deadline_key,),
        ),
    )
    callers = _callers(r, r.table(raw, path, "auth"), env, read_tokens)
    oauth = oauth_of(r, r.table(raw, path, "oauth"), env, read_tokens)

    address = ipaddress.ip_address(bind_host) if bind_host != "localhost" else None
    loopback = is_loopback_host(bind_host)
    if not loopback and not callers and not _callers_declared(raw) and "oauth" not in raw:
        # The book's words; [service.http.oauth] is the other way to authenticate.
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
        fast_lane=fast_lane,
        max_connections=max_connections,
        max_request_bytes=max_request_bytes,
        idle_timeout_s=idle,
        max_streams=streams,
        max_sessions=sessions,
        request_timeout_s=request_timeout,
        callers=callers,
        oauth=oauth,
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
