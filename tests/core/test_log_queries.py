"""[logging] log_queries (LIM-P3, REQ-PRIV-004; book: Configuration, [logging]; issue 14
item 8).

Through `python -m rypsok serve` over stdio, reading the JSON lines it writes on stderr:

- log_queries = true at level debug: the `call` event of web_search carries the query and
  that of web_fetch the URL, and the event is written at debug, so a reader that keeps
  info and above never holds them. A credential in the text is masked even there.
- log_queries = false (the default): no event carries the text, at any level.
- log_queries = true at a level above debug: no event carries the text.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from rypsok.core.privacy import PLACEHOLDER
from tests.support.fetching import ARTICLE
from tests.support.mcp_lines import answers, call, lines
from tests.support.run import clean_env, cli
from tests.support.site import CA, Page, site
from tests.support.standin import mediawiki

QUERY = "zebracorn migration routes"
PATH = "/zebracorn-notes?topic=migration"
SECRET = "AKIA" + "QWERTYUIOPASDF23"  # an AWS access key id shape, refused by default


@contextmanager
def _world(tmp_path: Path) -> Iterator[tuple[str, str, dict[str, str]]]:
    """A Wikipedia stand-in, a page on a local HTTPS site, and the child's environment."""
    ca_file = tmp_path / "ca.pem"
    CA.cert_pem.write_to_path(str(ca_file))
    with ExitStack() as stack:
        wiki = stack.enter_context(mediawiki())
        page = stack.enter_context(site({PATH.split("?")[0]: Page(body=ARTICLE)}))
        yield wiki["base_url"], page.url(PATH), clean_env(SSL_CERT_FILE=str(ca_file))


def _serve(tmp_path: Path, logging: str) -> tuple[list[dict[str, Any]], str, str]:
    """Three calls (a search, a fetch, a search refused for a credential); the stderr
    records, the raw stderr, and the URL fetched."""
    with _world(tmp_path) as (base_url, url, env):
        config = tmp_path / "rypsok.toml"
        config.write_text(
            'config_version = 1\n[egress]\nallow = ["127.0.0.1"]\n'
            f"[logging]\n{logging}\n"
            '[engines.wikipedia]\ntype = "wikipedia"\ncategories = ["general"]\n'
            f'base_url = "{base_url}"\n'
        )
        run = cli(
            "serve",
            "--config",
            str(config),
            env=env,
            stdin=lines(
                call(1, "web_search", {"query": QUERY}),
                call(2, "web_fetch", {"url": url}),
                call(3, "web_search", {"query": f"key {SECRET}"}),
            ),
        )
    assert run.code == 0, run.err
    got = answers(run.out)
    assert got[1]["result"]["isError"] is False
    assert got[2]["result"]["isError"] is False
    assert got[3]["result"]["structuredContent"]["error"]["kind"] == "denied"
    return [json.loads(line) for line in run.err.splitlines()], run.err, url


def _calls(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The search, the fetch and the refused search, in that order (the calls run side
    by side, so their events come in any order)."""
    found = [r for r in records if r["event"] == "call"]
    assert sorted(r["tool"] for r in found) == ["web_fetch", "web_search", "web_search"]
    refused = [r for r in found if r["outcome"].startswith("denied")]
    fetch = [r for r in found if r["tool"] == "web_fetch"]
    search = [r for r in found if r["tool"] == "web_search" and r not in refused]
    assert len(refused) == len(fetch) == len(search) == 1
    return [search[0], fetch[0], refused[0]]


def test_lim_p3_req_priv_004_log_queries_puts_query_and_url_in_the_debug_call_event(
    tmp_path: Path,
) -> None:
    records, raw, url = _serve(tmp_path, 'level = "debug"\nlog_queries = true')
    search, fetch, refused = _calls(records)
    assert search["level"] == "debug" and search["query"] == QUERY
    assert fetch["level"] == "debug" and fetch["url"] == url
    assert "query" not in fetch and "url" not in search
    # The credential itself is never written, not even here.
    assert refused["query"] == f"key {PLACEHOLDER}"
    assert SECRET not in raw
    # Only the call event carries them: no other event names the query or the path.
    others = [r for r in records if r["event"] != "call"]
    assert QUERY not in json.dumps(others) and "zebracorn-notes" not in json.dumps(others)


def test_lim_p3_req_priv_004_at_the_default_no_event_carries_query_or_url(
    tmp_path: Path,
) -> None:
    # Debug, so that every event there is is written; log_queries stays at its default.
    records, raw, _ = _serve(tmp_path, 'level = "debug"')
    assert all(r["level"] == "info" for r in _calls(records))
    assert "zebracorn" not in raw and SECRET not in raw
    assert all("query" not in r and "url" not in r for r in records)


def test_lim_p3_req_priv_004_log_queries_writes_nothing_above_debug(tmp_path: Path) -> None:
    for level in ("info", "warn"):
        records, raw, _ = _serve(tmp_path, f'level = "{level}"\nlog_queries = true')
        # The start warning says query logging is on; no line holds a query or a URL.
        assert any(r["event"] == "log_queries_enabled" for r in records)
        assert "zebracorn" not in raw and SECRET not in raw
        assert all(r["level"] != "debug" for r in records)
        if level == "info":
            assert all("query" not in r and "url" not in r for r in _calls(records))
