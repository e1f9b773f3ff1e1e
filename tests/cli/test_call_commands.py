"""rypsok search, fetch and status: one call from the command line (issue 18, item 3).

Each test runs `python -m rypsok` as a child process against local stand-ins: the
engine providers behind a CONNECT tunnel ([egress] proxy), a page on a local HTTPS
site (allowed by an egress rule), both trusted through SSL_CERT_FILE, as an operator
would point rypsok at a private CA. Nothing reaches the internet: the refusals are
decided before any request.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import Run, clean_env, cli
from tests.support import engine_standin, site
from tests.support.engine_standin import WIKI, Reply, Seen, brave_results, tunnel, wiki_results

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
ARTICLE = (
    b"""<!doctype html><html><head><title>Moths at night</title></head><body>
<nav><a href="/">Home</a></nav><main><article><h1>Moths at night</h1>
<p>Moths find their way by the moon and the stars, and a lamp confuses them: they circle it
because they keep it at a fixed angle, as they would keep the moon.</p>
<p>Most moths fly at night, and many are pollinators of flowers that open after dark.</p>
"""
    + b"<p>A moth's wings carry scales that rub off as a fine dust between the fingers.</p>\n" * 8
    + b"""
<p>LAST Some moths never eat as adults: they live a few days on what the caterpillar stored.</p>
</article></main><footer>FOOTER of the site</footer></body></html>"""
)


def _ca_file(tmp_path: Path, ca: object) -> str:
    path = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(path))  # type: ignore[attr-defined]
    return str(path)


def _answer(seen: Seen) -> Reply:
    if seen.host == WIKI:
        return wiki_results(seen, ["Moth", "Lamp"])
    return brave_results(["https://moths.example/night", "https://lamps.example/"])


def _search(tmp_path: Path, *args: str) -> tuple[Run, list[Seen]]:
    with tunnel(_answer) as standin:
        config = tmp_path / "rypsok.toml"
        config.write_text(
            f'config_version = 1\n[egress]\nproxy = "{standin.url}"\n'
            '[engines.wikipedia]\ntype = "wikipedia"\ncategories = ["general"]\n'
            '[engines.brave]\ntype = "brave"\ncategories = ["general"]\n'
            'api_key_env = "BRAVE_API_KEY"\n',
            encoding="utf-8",
        )
        env = clean_env(
            SSL_CERT_FILE=_ca_file(tmp_path, engine_standin.CA),
            BRAVE_API_KEY="BSA" + "k" * 29,
        )
        run = cli("search", *args, "--config", str(config), env=env)
    return run, standin.seen


def test_issue_18_search_prints_each_result_with_its_url_and_snippet(tmp_path: Path) -> None:
    run, seen = _search(tmp_path, "moths at night")
    assert run.code == 0, run.err
    assert "https://moths.example/night" in run.out and "https://lamps.example/" in run.out
    assert "1. " in run.out and "outcome: ok" in run.out
    assert "https://en.wikipedia.org/wiki/Moth" in run.out
    assert {s.host for s in seen} == {WIKI, engine_standin.BRAVE}


def test_issue_18_search_json_is_the_tools_answer(tmp_path: Path) -> None:
    run, _ = _search(tmp_path, "moths at night", "--json", "--max-results", "2")
    assert run.code == 0, run.err
    answer = json.loads(run.out)
    assert answer["outcome"] == "ok" and len(answer["results"]) == 2
    assert set(answer["results"][0]) >= {"title", "url", "snippet"}


def test_issue_18_a_query_with_a_secret_is_refused_before_any_request(tmp_path: Path) -> None:
    run, seen = _search(tmp_path, f"why does {TOKEN} fail")
    assert run.code == 3 and run.out == ""
    assert "denied (secret_in_query)" in run.err and "character 9" in run.err
    assert TOKEN not in run.err and seen == []
    run, _ = _search(tmp_path, f"why does {TOKEN} fail", "--json")
    assert run.code == 3 and json.loads(run.out)["error"]["detail"]["reason"] == "secret_in_query"


def test_issue_18_a_bad_parameter_is_the_tools_invalid_request(tmp_path: Path) -> None:
    run, seen = _search(tmp_path, "moths", "--max-results", "900")
    assert run.code == 3 and "invalid_request" in run.err and "max_results" in run.err
    assert seen == []


def _fetch(tmp_path: Path, *args: str, allow: bool = True) -> Run:
    with site.site({"/moths": site.Page(body=ARTICLE)}) as s:
        config = tmp_path / "rypsok.toml"
        rule = '[egress]\nallow = ["127.0.0.1"]\n' if allow else ""
        config.write_text("config_version = 1\n" + rule, encoding="utf-8")
        env = clean_env(SSL_CERT_FILE=_ca_file(tmp_path, site.CA))
        return cli("fetch", s.url("/moths"), *args, "--config", str(config), env=env)


def test_issue_18_fetch_prints_the_pages_markdown(tmp_path: Path) -> None:
    run = _fetch(tmp_path)
    assert run.code == 0, run.err
    assert run.out.startswith("title: Moths at night\nurl: https://127.0.0.1:")
    assert "# Moths at night" in run.out and "pollinators of flowers" in run.out
    assert "FOOTER" not in run.out and "outcome: ok" in run.out


def test_issue_18_fetch_reads_on_in_parts(tmp_path: Path) -> None:
    first = json.loads(_fetch(tmp_path, "--json", "--max-chars", "500").out)
    assert first["truncated"] is True and len(first["content"]) <= 500
    assert "LAST" not in first["content"]
    human = _fetch(tmp_path, "--max-chars", "500").out
    assert f"read on with --start {first['next_start_char']}" in human
    start = str(first["next_start_char"])
    run = _fetch(tmp_path, "--start", start)
    assert run.code == 0 and "LAST Some moths" in run.out
    assert "# Moths at night" not in run.out


def test_issue_18_fetch_of_a_private_address_is_denied(tmp_path: Path) -> None:
    # Without the egress rule 127.0.0.1 is the host's own network: refused, never asked.
    run = _fetch(tmp_path, allow=False)
    assert run.code == 3 and run.out == ""
    assert "denied (egress)" in run.err


def test_issue_18_status_lists_the_engines(tmp_path: Path) -> None:
    config = tmp_path / "rypsok.toml"
    config.write_text(
        'config_version = 1\n[engines.wikipedia]\ntype = "wikipedia"\ncategories = ["general"]\n'
        '[engines.brave]\ntype = "brave"\ncategories = ["general"]\napi_key_env = "BRAVE_API_KEY"\n',
        encoding="utf-8",
    )
    run = cli("status", "--config", str(config))
    assert run.code == 0, run.err
    assert "wikipedia: closed" in run.out and "brave: disabled (no_credential)" in run.out
    answer = json.loads(cli("status", "--json", "--config", str(config)).out)
    assert [e["id"] for e in answer["engines"]] == ["brave", "wikipedia"]


def test_issue_18_call_commands_exit_1_on_configuration_and_2_on_usage(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("config_version = 2\n", encoding="utf-8")
    for args in (("search", "x"), ("fetch", "https://example.com/"), ("status",)):
        run = cli(*args, "--config", str(bad))
        assert run.code == 1 and run.out == "", args
    for args in (("search",), ("fetch",), ("search", "x", "--max-results", "many")):
        run = cli(*args)
        assert run.code == 2 and run.out == "" and "usage:" in run.err, args
