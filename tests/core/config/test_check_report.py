"""What rypsok check prints (the "What rypsok check says" and Warnings pages)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.paths import EXAMPLES
from tests.support.run import check, clean_env

DEFAULT_LINES = [
    "rypsok: tool rate limits per minute: web_search=60 web_fetch=30 engine_status=30",
    "rypsok: tool call maxima in ms: web_search=2800 web_fetch=11000; engine_status reads "
    "memory only",
    "rypsok: engine brave: type=brave enabled=true categories=general,news preference=100 "
    "endpoint=web api_key_env=BRAVE_API_KEY inactive: environment variable BRAVE_API_KEY is "
    "unset or empty",
    "rypsok: engine wikipedia: type=wikipedia enabled=true categories=general,science "
    "preference=100 active: no credential needed",
    "rypsok: categories served: general,science",
    "rypsok: egress: allow_rules=0 deny_rules=0 allow_http=false strict_mode=false proxy=none",
    "rypsok: privacy: secret_detection=refuse",
    "rypsok: logging: level=info log_queries=false",
    "rypsok: cache: enabled=false max_entries=256 ttl_s=300 max_entry_bytes=16384",
    "rypsok: store: backend=memory (this process only)",
    "rypsok: scraping: enabled=false",
    "rypsok: resilience: failures_to_open=3 first_cooldown_s=60 max_cooldown_s=900",
    "rypsok: limits: outbound_in_flight=32 per_engine_in_flight=2 fetches_in_flight=4 "
    "parsing_in_flight=2 strict_mode_urls=10000 robots_cache_entries=1000",
]
ORDER = [
    "configuration from",
    "search:",
    "tool rate limits",
    "tool call maxima",
    "engine ",
    "categories served",
    "service.http:",
    "fetch:",
    "egress:",
    "privacy:",
    "logging:",
    "cache:",
    "store:",
    "scraping:",
    "resilience:",
    "limits:",
    "memory:",
]


def test_req_ops_001_check_report_at_the_defaults_in_the_books_order() -> None:
    run = check(None)
    assert run.code == 0
    assert run.lines[0] == "rypsok: configuration from the defaults (no file) is valid"
    for line in DEFAULT_LINES:
        assert line in run.lines
    assert run.lines[2:4] == DEFAULT_LINES[:2]
    heads = []
    for line in (x for x in run.lines if not x.startswith("rypsok: warning:")):
        head = next(o for o in ORDER if line.removeprefix("rypsok: ").startswith(o))
        if not heads or heads[-1] != head:
            heads.append(head)
    assert heads == ORDER


def test_check_service_http_line_says_http2_is_not_served() -> None:
    line = next(x for x in check(None).lines if x.startswith("rypsok: service.http:"))
    assert line.startswith(
        "rypsok: service.http: bind=127.0.0.1:8737 callers=0 "
        "legacy_revisions=true max_connections=64 max_request_bytes=65536 "
        "idle_timeout_s=60 max_streams=16 request_timeout_s=30 "
        "max_sessions=256"
    )
    assert "HTTP/2 is not served" in line


def test_check_fetch_line_at_the_defaults() -> None:
    assert (
        "rypsok: fetch: ports=80,443 max_bytes=5242880 max_chars=3000 (ceiling 20000) "
        "deadline_ms=10000 max_redirects=5 robots_txt=true "
        "follow_cross_host_redirects=false continuation_ttl_s=120 "
        "continuation_max_entries=32 continuation_max_bytes=8388608 "
        "pdf=true pdf_max_pages=1000 pdf_max_chars=1048576 pdf_memory_mib=60"
    ) in check(None).lines


def test_check_memory_line_has_every_share_and_names_the_build() -> None:
    line = next(x for x in check(None).lines if x.startswith("rypsok: memory:"))
    assert re.fullmatch(
        r"rypsok: memory: worst case about \d+ MiB \(base \d+ \+ bodies 20 \+ "
        r"parses \d+ \+ sessions 15 \+ cache 0 \+ continuation 9 MiB; an estimate for .+\)",
        line,
    )


def test_check_call_maxima_follow_the_deadlines(write_config) -> None:
    path = write_config(
        "config_version = 1\n[search]\ndeadline_ms = 4000\n[fetch]\n"
        "deadline_ms = 20000\n[service.http]\nrequest_timeout_s = 30\n"
    )
    assert (
        "rypsok: tool call maxima in ms: web_search=4300 web_fetch=21000; engine_status "
        "reads memory only"
    ) in check(path).lines


def test_check_brave_line_with_the_key_ends_credential_resolved() -> None:
    run = check(EXAMPLES / "tutorial-2.toml", clean_env(BRAVE_API_KEY="x" * 30))
    brave = next(x for x in run.lines if x.startswith("rypsok: engine brave:"))
    assert brave.endswith("credential resolved")
    assert "x" * 30 not in run.err


def test_check_invalid_file_lists_each_problem(write_config) -> None:
    run = check(write_config('config_version = 1\n[search]\nmax_results = "x"\nregion = 1\n'))
    assert run.code == 1
    assert run.lines[0].startswith("rypsok: configuration from --config ")
    assert run.lines[0].endswith(" is invalid")
    assert run.lines[1:] == [
        "rypsok: error: search.max_results: expected an integer from 1 to 20, found text "
        "(line 3, column 15)",
        "rypsok: error: search.region: expected two uppercase letters, found an integer "
        "(line 4, column 10)",
    ]


# -- warnings -------------------------------------------------------------------------------

WARNING = re.compile(r"rypsok: warning: [a-z_.\[\]0-9<>]+: [^;]+; .+")


@pytest.mark.parametrize(
    ("body", "key"),
    [
        ('[egress]\nallow = ["10.0.0.0/8"]\n', "egress.allow[0]"),
        ('[egress]\nallow = ["::/0"]\n', "egress.allow[0]"),
        ('[privacy]\nsecret_detection = "off"\n', "privacy.secret_detection"),
        ("[logging]\nlog_queries = true\n", "logging.log_queries"),
        ("[fetch]\nrobots_txt = false\n", "fetch.robots_txt"),
        ("[egress]\nallow_http = true\n", "egress.allow_http"),
        ("[fetch]\nfollow_cross_host_redirects = true\n", "fetch.follow_cross_host_redirects"),
        (
            '[scraping]\nenabled = true\n[engines.ddg]\ntype = "duckduckgo"\ncategories = '
            '["general"]\n',
            "engines.ddg",
        ),
        (
            '[cache]\nenabled = true\n[engines.b]\ntype = "brave"\ncategories = ["general"]\n'
            'api_key_env = "K"\n',
            "cache.enabled",
        ),
        ("[fetch]\nmax_bytes = 10485760\n[limits]\nfetches_in_flight = 64\n", "memory"),
        ('[service.metrics]\nbind = "0.0.0.0:9464"\n', "service.metrics.bind"),
    ],
)
def test_warnings_table_each_row_warns_and_keeps_exit_0(write_config, body: str, key: str) -> None:
    run = check(write_config("config_version = 1\n" + body))
    assert run.code == 0
    warnings = [x for x in run.lines if x.startswith("rypsok: warning:")]
    assert [w for w in warnings if w.startswith(f"rypsok: warning: {key}: ")], run.err
    assert all(WARNING.fullmatch(w) for w in warnings)


def test_issue_38_a_metrics_listener_on_loopback_or_with_a_token_does_not_warn(
    write_config,
) -> None:
    for body in (
        '[service.metrics]\nbind = "127.0.0.1:9464"\n',
        '[service.metrics]\nbind = "0.0.0.0:9464"\ntoken_env = "RYPSOK_METRICS_TOKEN"\n',
    ):
        run = check(write_config("config_version = 1\n" + body), {"RYPSOK_METRICS_TOKEN": "m" * 40})
        assert run.code == 0, run.err
        assert not [x for x in run.lines if "warning: service.metrics" in x]
        assert [x for x in run.lines if x.startswith("rypsok: service.metrics: bind=")]


def test_narrow_allow_rules_do_not_warn(write_config) -> None:
    run = check(
        write_config(
            'config_version = 1\n[egress]\nallow = ["10.1.0.0/16", '
            '"fd00::/32", "wiki.corp.example"]\n'
        )
    )
    assert not [x for x in run.lines if "warning" in x and "warning: memory:" not in x]


def test_lim_m5_the_defaults_warn_exactly_when_their_estimate_is_above_the_unit() -> None:
    from rypsok.core.config import load
    from rypsok.core.config.report import memory_of

    estimate = memory_of(load(None, {}))
    warned = [x for x in check(None).lines if x.startswith("rypsok: warning: memory:")]
    assert bool(warned) == estimate.over_unit
    if warned:
        assert f"about {estimate.total} MiB" in warned[0]


def test_non_loopback_bind_warns(write_config, tmp_path: Path) -> None:
    token = tmp_path / "t"
    token.write_text("q" * 40)
    token.chmod(0o600)
    run = check(
        write_config(
            f'config_version = 1\n[service.http]\nbind = "192.0.2.1:8737"\n'
            f'[[service.http.auth.callers]]\nid = "a"\ntoken_file = "{token}"\n'
        )
    )
    assert [x for x in run.lines if x.startswith("rypsok: warning: service.http.bind: ")]


# -- what check never prints ----------------------------------------------------------------


def test_check_never_prints_tokens_keys_rules_proxy_or_paths(write_config, tmp_path: Path) -> None:
    secret_dir = tmp_path / "secret-dir"
    secret_dir.mkdir()
    key_file = secret_dir / "brave-key-file"
    key_file.write_text("BSA-the-brave-key-0123456789")
    token_file = secret_dir / "token-file"
    token_file.write_text("T" * 48)
    token_file.chmod(0o600)
    body = (
        'config_version = 1\n[egress]\nallow = ["wiki.internal-secret.example"]\n'
        'deny = ["hidden.example"]\nproxy = "http://proxy.private-name.example:3128"\n'
        '[[service.http.auth.callers]]\nid = "ops"\ntoken_env = "OPS_TOKEN"\n'
        f'[[service.http.auth.callers]]\nid = "cli"\ntoken_file = "{token_file}"\n'
        f'[engines.b]\ntype = "brave"\ncategories = ["general"]\napi_key_file = "{key_file}"\n'
    )
    run = check(write_config(body), clean_env(OPS_TOKEN="S" * 40))
    assert run.code == 0, run.err
    for text in (
        "BSA-the-brave-key",
        "T" * 48,
        "S" * 40,
        "internal-secret",
        "hidden.example",
        "private-name",
        "secret-dir",
    ):
        assert text not in run.err, text
    assert (
        "rypsok: egress: allow_rules=1 deny_rules=1 allow_http=false strict_mode=false "
        "proxy=set" in run.lines
    )
