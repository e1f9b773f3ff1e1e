"""Configuration documents built by tests: the keys rypsok knows (so that generated tables
reach the validators), a marker that must never be echoed, and a value written as TOML."""

from __future__ import annotations

import json
from typing import Any

MARK = "ZQXsecret"
# An optional table's keys exist only when the table does, with the keys it requires:
# a test of one key writes these lines after the table's header.
OPTIONAL_TABLES = {
    "service.http.oauth": 'resource = "https://s.example/mcp"\nissuer = "https://id.example"\n',
    "service.metrics": 'bind = "127.0.0.1:9464"\n',
}
KNOWN_KEYS = [
    "max_results",
    "languages",
    "region",
    "deadline_ms",
    "bind",
    "callers",
    "allow",
    "deny",
    "proxy",
    "type",
    "categories",
    "api_key_env",
    "api_key_file",
    "token_env",
    "token_file",
    "enabled",
    "ports",
    "max_bytes",
    "level",
    "secret_detection",
    "base_url",
    "endpoint",
    "id",
    "http",
    "auth",
    "ttl_s",
    "preference",
    "user_agent_contact",
    "allowed_hosts",
    "structured_content",
    "shutdown_ms",
    "fast_lane",
    "allow_http",
    "failures_to_open",
    "first_cooldown_s",
    "max_cooldown_s",
    "max_entries",
    "max_entry_bytes",
]


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value) if isinstance(value, int) else json.dumps(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
