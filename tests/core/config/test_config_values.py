"""Every table's keys: kinds, ranges, dependent ranges, rules (REQ-CFG-003, REQ-CFG-005)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from rypsok.core import limits
from rypsok.core.config import ConfigError, load
from tests.support.toml_documents import OPTIONAL_TABLES

HEADER = "config_version = 1\n"


def problems(write_config, body: str, env: dict[str, str] | None = None) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load(str(write_config(HEADER + body)), env or {})
    return [p.render() for p in info.value.problems]


def loaded(write_config, body: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return load(str(write_config(HEADER + body)), env or {})


# -- defaults are the limits table --------------------------------------------------------


def _setting(config: object, key: str) -> object:
    value = config
    for part in key.split("."):
        value = getattr(value, part)
    return value


def test_req_cfg_003_every_keyed_default_is_the_limits_table_value(write_config) -> None:
    config = load(None, {})
    for key, row in limits.by_key().items():
        table = key.rpartition(".")[0]
        if table in OPTIONAL_TABLES:
            with_table = loaded(write_config, f"[{table}]\n{OPTIONAL_TABLES[table]}")
            assert _setting(with_table, key) == row.default, key
            continue
        assert _setting(config, key) == row.default, key


def test_req_cfg_003_every_keyed_range_is_enforced_at_both_ends(tmp_path: Path) -> None:
    for key, row in limits.by_key().items():
        table, _, name = key.rpartition(".")
        if row.high is None or key in ("search.engine_timeout_ms",):
            continue
        for bad in (row.low - 1, row.high + 1):  # type: ignore[operator]
            path = tmp_path / "c.toml"
            path.write_text(f"{HEADER}[{table}]\n{name} = {bad}\n")
            with pytest.raises(ConfigError) as info:
                load(str(path), {})
            assert any(p.key == key for p in info.value.problems), (key, bad)


def test_req_cfg_003_zero_configuration_has_wikipedia_brave_and_searxng() -> None:
    config = load(None, {})
    engines = {e.id: e for e in config.engines}
    assert set(engines) == {"brave", "searxng", "wikipedia"}
    assert engines["wikipedia"].active and not engines["brave"].active
    assert engines["brave"].api_key_env == "BRAVE_API_KEY"
    assert load(None, {"BRAVE_API_KEY": "k" * 30}).engines[0].active
    # Issue 19: SearXNG from SEARXNG_URL, inactive without it, like Brave without its key.
    assert not engines["searxng"].active
    assert engines["searxng"].inactive_reason == "no_base_url"
    assert engines["searxng"].base_url_env == "SEARXNG_URL"
    assert engines["searxng"].categories == ("general", "news", "science", "code")
    searxng = load(None, {"SEARXNG_URL": "http://searxng:8080/"}).engines[1]
    assert searxng.active and searxng.base_url == "http://searxng:8080"


# -- kinds ------------------------------------------------------------------------------------


def test_wrong_kind_names_key_expected_found_and_place(write_config) -> None:
    assert problems(write_config, '[search]\nmax_results = "8"\n') == [
        "search.max_results: expected an integer from 1 to 20, found text (line 3, column 15)"
    ]


@pytest.mark.parametrize(
    ("value", "found"),
    [
        ("1.5", "a decimal number"),
        ("true", "true or false"),
        ("[1]", "an array"),
        ("{a = 1}", "a table"),
        ("1979-05-27", "a date or time"),
        ("-1", "a number below that range"),
        ("21", "a number above that range"),
    ],
)
def test_wrong_kind_describes_what_was_found_without_the_value(write_config, value, found) -> None:
    assert problems(write_config, f"[search]\nmax_results = {value}\n") == [
        f"search.max_results: expected an integer from 1 to 20, found {found} (line 3, column 15)"
    ]


def test_unknown_word_is_not_repeated(write_config) -> None:
    assert problems(write_config, '[privacy]\nsecret_detection = "hush-hush"\n') == [
        "privacy.secret_detection: expected one of off, warn, mask, refuse, found an unknown "
        "word (line 3, column 20)"
    ]


def test_req_cfg_005_unknown_key_is_refused_with_a_suggestion(write_config) -> None:
    assert problems(write_config, "[search]\nmax_result = 3\n") == [
        "search.max_result: an unknown key; did you mean max_results? (line 3, column 1)"
    ]


def test_req_cfg_005_unknown_key_far_from_any_is_named_without_a_suggestion(write_config) -> None:
    found = problems(write_config, "[search]\nghp_abcdefghij0123456789 = 3\n")
    assert found == ["search.ghp_abcdefghij0123456789: an unknown key (line 3, column 1)"]


def test_req_cfg_005_unknown_key_that_is_a_credential_is_not_echoed(write_config) -> None:
    token = "ghp_" + "a1B2" * 9  # the shape of a GitHub token
    found = problems(write_config, f"[search]\n{token} = 3\n")
    assert found == [
        "search: an unknown key (its name is not shown: it looks like a credential) "
        "(line 3, column 1)"
    ]


def test_req_cfg_005_unknown_table_is_refused(write_config) -> None:
    assert problems(write_config, "[serach]\nmax_results = 3\n") == [
        "serach: an unknown table; did you mean search? (line 2, column 2)"
    ]


def test_a_table_where_a_value_belongs_and_back(write_config) -> None:
    assert problems(write_config, "search = 5\n") == [
        "search: expected a table, found an integer (line 2, column 10)"
    ]


# Dependent ranges (a range another key narrows) are tested in test_dependent_ranges.py.


# -- engines -----------------------------------------------------------------------------------


def test_unknown_driver(write_config) -> None:
    assert problems(write_config, '[engines.x]\ntype = "google"\ncategories = ["general"]\n') == [
        "engines.x.type: no such driver; one of wikipedia, brave, duckduckgo, searxng (line 3, column 8)"
    ]


def test_scraping_driver_needs_the_switch_in_the_books_words(write_config) -> None:
    assert problems(
        write_config, '[engines.ddg]\ntype = "duckduckgo"\ncategories = ["general"]\n'
    ) == [
        'engines.ddg: type "duckduckgo" scrapes a human-facing interface; it runs only with '
        "[scraping] enabled = true, at the operator's risk under the provider's terms. "
        "(line 2, column 10)"
    ]
    config = loaded(
        write_config,
        "[scraping]\nenabled = true\n[engines.ddg]\ntype = "
        '"duckduckgo"\ncategories = ["general"]\n',
    )
    assert config.engines[0].active


def test_req_cfg_005_engine_identifier_grammar_is_enforced_naming_the_identifier(
    write_config,
) -> None:
    found = problems(
        write_config, '[engines.Bad-Id]\ntype = "wikipedia"\ncategories = ["general"]\n'
    )
    assert found == [
        "engines.Bad-Id: an engine identifier must be lowercase letters, digits and "
        "underscores, starting with a letter (line 2, column 10)"
    ]


def test_engine_needs_type_and_categories(write_config) -> None:
    found = problems(write_config, "[engines.w]\nenabled = true\n")
    assert found == [
        "engines.w: needs a type: one of wikipedia, brave, duckduckgo, searxng (line 2, column 10)"
    ]
    found = problems(write_config, '[engines.w]\ntype = "wikipedia"\ncategories = ["sports"]\n')
    assert found == [
        "engines.w.categories[0]: expected one of general, news, science, code, "
        "found an unknown word (line 4, column 15)"
    ]
    found = problems(write_config, '[engines.w]\ntype = "wikipedia"\ncategories = []\n')
    assert found == [
        "engines.w.categories: needs at least one of general, news, science, code "
        "(line 4, column 14)"
    ]


def test_endpoint_is_brave_only_and_base_url_wikipedia_only(write_config) -> None:
    found = problems(
        write_config,
        '[engines.w]\ntype = "wikipedia"\ncategories = ["general"]\nendpoint = "news"\n',
    )
    assert found == [
        "engines.w.endpoint: the wikipedia driver takes no endpoint (line 5, column 1)"
    ]
    found = problems(
        write_config,
        '[engines.b]\ntype = "brave"\ncategories = ["general"]\n'
        'api_key_env = "K"\nbase_url = "https://x.example/w"\n',
    )
    assert found == ["engines.b.base_url: the brave driver takes no base_url (line 6, column 1)"]


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("https://wiki.example/w", True),
        ("http://127.0.0.1:8080/w", True),
        ("http://localhost/w", True),
        ("http://[::1]:9000", True),
        ("http://wiki.example/w", False),
        ("ftp://wiki.example/", False),
        ("https://user:pw@wiki.example/", False),
        ("/w/api.php", False),
        ("https://", False),
    ],
)
def test_base_url_plain_http_only_on_loopback(write_config, url: str, ok: bool) -> None:
    body = f'[engines.w]\ntype = "wikipedia"\ncategories = ["general"]\nbase_url = "{url}"\n'
    if ok:
        assert loaded(write_config, body).engines[0].base_url is not None
    else:
        found = problems(write_config, body)
        assert found == [
            "engines.w.base_url: expected an absolute https URL (plain http only on "
            "a loopback host), found text in another form (line 5, column 12)"
        ]
        assert url not in found[0] or url == "https://"


# -- secrets by reference (REQ-CFG-004) -------------------------------------------------------


def test_req_cfg_004_inline_api_key_is_refused(write_config) -> None:
    found = problems(
        write_config,
        '[engines.b]\ntype = "brave"\ncategories = ["general"]\n'
        'api_key = "BSAsecretsecretsecret"\n',
    )
    assert found == [
        "engines.b.api_key: give the secret by api_key_env or api_key_file (line 5, column 1)"
    ]
    assert "BSAsecret" not in found[0]


def test_req_cfg_004_variable_name_that_is_not_one_is_not_shown(write_config) -> None:
    secret = "BSAkd8s7Dk2jfl0-x"
    found = problems(
        write_config,
        f'[engines.b]\ntype = "brave"\ncategories = ["general"]\napi_key_env = "{secret}"\n',
    )
    assert found == [
        "engines.b.api_key_env: the value is not the name of an environment "
        "variable (it is not shown) (line 5, column 15)"
    ]


def test_req_cfg_004_keyed_engine_without_key_is_inactive_not_an_error(write_config) -> None:
    config = loaded(
        write_config,
        '[engines.b]\ntype = "brave"\ncategories = ["general"]\napi_key_env = "MY_KEY"\n',
    )
    assert not config.engines[0].active
    assert config.engines[0].credential_problem == "environment variable MY_KEY is unset or empty"


def test_req_cfg_004_key_file_is_read_and_trimmed(write_config, tmp_path: Path) -> None:
    key = tmp_path / "key"
    key.write_text("  the-key-value\n")
    config = loaded(
        write_config,
        f'[engines.b]\ntype = "brave"\ncategories = ["general"]\napi_key_file = "{key}"\n',
    )
    engine = config.engines[0]
    assert engine.active and engine.credential is not None
    assert engine.credential.reveal() == "the-key-value"
    assert "the-key-value" not in repr(config) and "the-key-value" not in str(engine)


def test_req_sec_020_secret_types_redact_in_debug_output() -> None:
    from rypsok.core.config.secrets import Secret

    secret = Secret("hunter2")
    assert repr(secret) == str(secret) == f"{secret}" == f"{secret!r}" == "[redacted]"
    with pytest.raises(TypeError):
        import pickle

        pickle.dumps(secret)


# -- callers and tokens --------------------------------------------------------------------

CALLER = '[[service.http.auth.callers]]\nid = "ops"\n'


def test_inline_token_is_refused(write_config) -> None:
    found = problems(write_config, CALLER + 'token = "x"\ntoken_env = "T"\n', {"T": "t" * 40})
    assert found == [
        "service.http.auth.callers[0].token: give the token by token_env or "
        "token_file (line 4, column 1)"
    ]


def test_token_unset_unreadable_or_short_are_errors(write_config, tmp_path: Path) -> None:
    assert problems(write_config, CALLER + 'token_env = "TOK"\n') == [
        "service.http.auth.callers[0].token_env: environment variable TOK is unset or empty "
        "(line 4, column 13)"
    ]
    assert problems(write_config, CALLER + f'token_file = "{tmp_path}/absent"\n') == [
        "service.http.auth.callers[0].token_file: the file named by token_file cannot be read "
        "(line 4, column 14)"
    ]
    assert problems(write_config, CALLER + 'token_env = "TOK"\n', {"TOK": "short"}) == [
        "service.http.auth.callers[0].token_env: the token is shorter than 32 bytes; generate "
        "one with openssl rand -base64 32 (line 4, column 13)"
    ]


def test_callers_need_exactly_one_source_and_distinct_ids_and_tokens(write_config) -> None:
    env = {"A": "a" * 40, "B": "a" * 40}
    body = CALLER + 'token_env = "A"\n' + CALLER + 'token_env = "B"\n'
    found = problems(write_config, body, env)
    assert (
        "service.http.auth.callers[1].id: another caller has the same id (line 6, column 6)"
        in found
    )
    assert any("the same as another caller's" in f for f in found)
    assert all("a" * 40 not in f for f in found)


def test_world_readable_token_file_warns(write_config, tmp_path: Path) -> None:
    from rypsok.core.config.report import warnings

    token = tmp_path / "tok"
    token.write_text("z" * 44)
    token.chmod(0o644)
    config = loaded(write_config, CALLER + f'token_file = "{token}"\n')
    assert "service.http.auth.callers[0]: the token file is readable by everyone; chmod 600 it" in (
        warnings(config)
    )
    token.chmod(0o600)
    assert not any(
        "callers" in w for w in warnings(loaded(write_config, CALLER + f'token_file = "{token}"\n'))
    )


# -- the listener's bind --------------------------------------------------------------------


def test_non_loopback_bind_needs_callers(write_config) -> None:
    assert problems(write_config, '[service.http]\nbind = "192.0.2.7:8737"\n') == [
        "service.http.bind: a non-loopback bind needs [service.http.auth] callers "
        "(line 3, column 8)"
    ]


def test_unspecified_bind_needs_allowed_hosts(write_config) -> None:
    found = problems(
        write_config,
        '[service.http]\nbind = "0.0.0.0:8737"\n' + CALLER + 'token_env = "T"\n',
        {"T": "t" * 40},
    )
    assert found == [
        "service.http.bind: a bind on an unspecified address (0.0.0.0, ::) needs "
        "service.http.allowed_hosts (line 3, column 8)"
    ]


@pytest.mark.parametrize("bind", ["localhost", "127.0.0.1", "127.0.0.1:99999", "::1:80", "host:80"])
def test_bind_must_be_an_address_and_port(write_config, bind: str) -> None:
    found = problems(write_config, f'[service.http]\nbind = "{bind}"\n')
    assert found[0].startswith("service.http.bind: expected an address and port")


def test_bind_forms_are_normalized(write_config) -> None:
    assert (
        loaded(write_config, '[service.http]\nbind = "[::1]:9000"\n').service.http.bind
        == "[::1]:9000"
    )
    assert loaded(write_config, '[service.http]\nbind = "localhost:1"\n').service.http.bind == (
        "127.0.0.1:1"
    )


def test_allowed_hosts_and_origins(write_config) -> None:
    http = loaded(
        write_config,
        '[service.http]\nallowed_hosts = ["Rypsok.Example", '
        '"rypsok.example:443"]\nallowed_origins = ["https://app.example:*", "null"]\n',
    ).service.http
    assert http.allowed_hosts == ("rypsok.example", "rypsok.example:443")
    assert http.allowed_origins == ("https://app.example:*", "null")
    found = problems(write_config, '[service.http]\nallowed_origins = ["app.example"]\n')
    assert found[0].startswith("service.http.allowed_origins[0]: expected an origin")


# -- egress rules and ports ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ("blocked.invalid.", "a host pattern must not end with a dot"),
        (".blocked.invalid", "a host pattern must not start with a dot"),
        ("a..example", "a host pattern has an empty label"),
        ("https://a.example", "a rule must not carry a scheme"),
        ("a.example:8080", "a rule must not carry a port"),
        ("[::1]:443", "a rule must not carry a port"),
        ("10.0.0.1/8", "a network must have no bits set after its prefix"),
        ("10.0.0.0/33", "a rule with / must be a network in CIDR notation"),
        ("foo.*.example", "a wildcard may only stand as the first label, as in *.example.org"),
        ("", "a rule must not be empty"),
    ],
)
def test_egress_rule_errors_name_the_index(write_config, rule: str, message: str) -> None:
    found = problems(write_config, f'[egress]\ndeny = ["ok.example", "{rule}"]\n')
    assert found == [f"egress.deny[1]: {message} (line 3, column 23)"]


def test_egress_rules_are_normalized(write_config) -> None:
    egress = loaded(
        write_config,
        '[egress]\nallow = ["Wiki.Corp.Example", "*.corp.example", '
        '"10.0.0.0/8", "fd00::1", "bücher.example"]\n',
    ).egress
    kinds = [(r.kind, r.name or str(r.network)) for r in egress.allow]
    assert kinds == [
        ("host", "wiki.corp.example"),
        ("suffix", "corp.example"),
        ("network", "10.0.0.0/8"),
        ("address", "fd00::1/128"),
        ("host", "xn--bcher-kva.example"),
    ]
    assert egress.allow[1].matches_name("a.corp.example")
    assert not egress.allow[1].matches_name("corp.example")


def test_fetch_port_other_than_80_443_needs_an_allow_rule(write_config) -> None:
    assert problems(write_config, "[fetch]\nports = [80, 443, 8443]\n") == [
        "fetch.ports[2]: a port other than 80 and 443 needs an egress.allow rule (line 3, column 19)"
    ]
    config = loaded(write_config, '[fetch]\nports = [443, 8443]\n[egress]\nallow = ["x.example"]\n')
    assert config.fetch.ports == (443, 8443)


def test_proxy_is_http_without_credentials(write_config) -> None:
    assert (
        loaded(write_config, '[egress]\nproxy = "http://proxy.corp:3128"\n').egress.proxy
        is not None
    )
    found = problems(write_config, '[egress]\nproxy = "http://u:pw@proxy.corp:3128"\n')
    assert found == [
        "egress.proxy: expected an http://host:port proxy URL without credentials, "
        "found text in another form (line 3, column 9)"
    ]


def test_languages_and_region(write_config) -> None:
    search = loaded(
        write_config, '[search]\nlanguages = ["en", "pt-br", "zh-hans"]\nregion = "JP"\n'
    ).search
    assert search.languages == ("en", "pt-BR", "zh-Hans") and search.region == "JP"
    assert problems(write_config, '[search]\nregion = "jp"\n') == [
        "search.region: expected two uppercase letters, found text in another form "
        "(line 3, column 10)"
    ]
    assert problems(write_config, "[search]\nlanguages = []\n") == [
        "search.languages: needs at least one language tag (line 3, column 13)"
    ]


def test_every_problem_of_a_file_is_reported_at_once(write_config) -> None:
    found = problems(
        write_config, '[search]\nmax_results = "x"\nregion = 5\n[fetch]\nrobots_txt = 1\n'
    )
    assert len(found) == 3


def test_config_is_immutable() -> None:
    config = load(None, {})
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.search.max_results = 9  # type: ignore[misc]
