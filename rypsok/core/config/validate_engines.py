"""The [engines.<id>] tables: each checked against its driver type's admission record (read
by `validate`)."""

from __future__ import annotations

from collections.abc import Mapping

from rypsok.core.config import admission as records
from rypsok.core.config import secrets
from rypsok.core.config.admission import CATEGORIES, Endpoint
from rypsok.core.config.positions import Path, hidden_reason, render, shown
from rypsok.core.config.problems import Problem, describe
from rypsok.core.config.reader import IDENTIFIER, MISSING, Reader, Table
from rypsok.core.config.settings import (
    EngineSettings,
)
from rypsok.core.config.urls import (
    parse_base_url,
)
from rypsok.core.config.validate_service import NOT_A_VARIABLE

SCRAPING_REFUSED = (
    'type "{driver}" scrapes a human-facing interface; it runs only with '
    "[scraping] enabled = true, at the operator's risk under the provider's terms."
)

# With no [engines.*] table: Wikipedia (keyless), Brave keyed by BRAVE_API_KEY, and a
# SearXNG instance at the URL in SEARXNG_URL; each of the last two is inactive without
# its variable.
DEFAULT_ENGINES: dict[str, Table] = {
    "brave": {"type": "brave", "categories": ["general", "news"], "api_key_env": "BRAVE_API_KEY"},
    "searxng": {
        "type": "searxng",
        "categories": list(CATEGORIES),
        "base_url_env": "SEARXNG_URL",
    },
    "wikipedia": {"type": "wikipedia", "categories": ["general", "science"]},
}


ENGINE_KEYS = (
    "type",
    "enabled",
    "categories",
    "preference",
    "api_key_env",
    "api_key_file",
    "endpoint",
    "base_url",
    "base_url_env",
    "rate_per_minute",
    "concurrency",
)
BASE_URL_HTTPS = "an absolute https URL (plain http only on a loopback host)"
BASE_URL_ANY = "an absolute http or https URL without credentials, query or fragment"
DRIVERS = ", ".join(records.ADMISSIONS)


def engines_of(
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
                BASE_URL_ANY if admission.operator_instance else BASE_URL_HTTPS,
                lambda t: parse_base_url(t, http_anywhere=admission.operator_instance),
            )
            base_url = text or None
        else:
            r.add((*path, "base_url"), f"the {driver} driver takes no base_url", key=True)
    url_env, url_problem = None, None
    if admission.operator_instance:
        url_env, from_env, url_problem = _base_url_env(r, entry, path, env)
        base_url = base_url or from_env
        rate = {
            name: r.ranged(entry, path, name, 0, low, high) or None
            for name, (low, high) in records.OPERATOR_RATES.items()
            if name in entry
        }
    else:
        rate = {}
        for name in ("base_url_env", *records.OPERATOR_RATES):
            if name in entry:
                r.add((*path, name), f"the {driver} driver takes no {name}", key=True)

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
        base_url_env=url_env,
        base_url_problem=url_problem,
        rate_per_minute=rate.get("rate_per_minute"),
        concurrency=rate.get("concurrency"),
    )


def _base_url_env(
    r: Reader, entry: Table, path: Path, env: Mapping[str, str]
) -> tuple[str | None, str | None, str | None]:
    """(the variable named, the URL it holds, why there is none) for an operator's
    instance: its base_url is written in the table or read from base_url_env. An unset
    variable leaves the engine inactive, as an unset key does; a value that is no URL is
    an error, told without the value."""
    name = entry.get("base_url_env", MISSING)
    if name is MISSING:
        if "base_url" not in entry:
            r.add(path, "an instance engine needs base_url or base_url_env", key=True)
        return None, None, None
    if "base_url" in entry:
        r.add(path, "give only one of base_url and base_url_env", key=True)
        return None, None, None
    if not isinstance(name, str):
        r.add((*path, "base_url_env"), f"expected a variable name, found {describe(name)}")
        return None, None, None
    if not secrets.is_variable_name(name):
        r.add((*path, "base_url_env"), NOT_A_VARIABLE)
        return None, None, None
    value = env.get(name, "").strip()
    if not value:
        return name, None, f"environment variable {name} is unset or empty"
    url = parse_base_url(value, http_anywhere=True)
    if url is None:
        r.add((*path, "base_url_env"), f"the variable {name} does not hold {BASE_URL_ANY}")
    return name, url, None


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
