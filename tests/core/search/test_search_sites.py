"""Issue 36, item 3: site: and -site: in a web_search query, read by rypsok itself:
each engine gets the terms in its own form or not at all (its admission record says
which), the fused list keeps only the results on the named hosts, and a notice names
each engine that searched more widely than asked. Bad input first by the reader,
then end to end against fake engines."""

from __future__ import annotations

from pathlib import Path

import pytest

from rypsok.core import limits
from rypsok.core.config.admission import ADMISSIONS
from rypsok.core.engines.base import query_text, sites_honoured
from rypsok.core.model import ToolError
from rypsok.core.search.sites import read_sites, result_host
from rypsok.core.store.values import EngineQuery
from tests.support.fake_engines import brave, wikipedia
from tests.support.searching import BRAVE, WIKI, engine_query, make, run_error, run_search

# -- reading the terms ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("term", "host"),
    [
        ("site:docs.python.org", "docs.python.org"),
        ("SITE:Docs.Python.ORG.", "docs.python.org"),
        ("site:https://docs.python.org/3/library/", "docs.python.org"),  # a URL: its host
        ("site:docs.python.org:8443", "docs.python.org"),  # a port is let go of
        ("site:*.python.org", "python.org"),  # subdomains are in anyway
        ("site:bücher.de", "xn--bcher-kva.de"),  # an IDN, as results are matched
        ("site:93.184.215.14", "93.184.215.14"),
        ("site:[2001:db8::1]:443", "2001:db8::1"),
    ],
)
def test_issue_36_a_site_term_names_one_host(term: str, host: str) -> None:
    read = read_sites(f"asyncio tasks {term}")
    assert read.include == (host,) and read.exclude == ()
    assert read.text == "asyncio tasks"


def test_issue_36_several_terms_mean_any_and_minus_site_excludes() -> None:
    read = read_sites("site:a.org tasks -site:b.a.org site:c.net site:a.org")
    assert read.include == ("a.org", "c.net") and read.exclude == ("b.a.org",)
    assert read.text == "tasks"
    assert read.admits("a.org") and read.admits("x.a.org") and read.admits("c.net")
    assert not read.admits("b.a.org") and not read.admits("y.b.a.org")
    assert not read.admits("evil-a.org") and not read.admits("a.org.evil.com")


def test_issue_36_a_query_without_terms_is_left_alone() -> None:
    read = read_sites("what is a website: a primer")  # "website:" is no term
    assert not read and read.text == "what is a website: a primer"


@pytest.mark.parametrize(
    "query",
    [
        "tasks site:",  # no host
        "tasks site:*",  # a wildcard only
        "tasks site:a*b.org",  # a wildcard inside
        "tasks site:exa mple.org/ site:-bad-.org",  # a label that starts with a hyphen
        "site:python.org",  # nothing to search for besides
        "tasks " + " ".join(f"site:h{i}.org" for i in range(30)),  # thirty terms
    ],
)
def test_issue_36_bad_site_terms_are_refused_before_any_work(tmp_path: Path, query: str) -> None:
    core, fake = make(tmp_path)
    error = run_error(core, query=query)
    assert error.kind == "invalid_request" and error.detail == {"parameter": "query"}
    assert fake.calls == []  # no engine was asked
    assert "h29" not in error.message and "bad" not in error.message  # no query text


def test_issue_36_at_most_the_bound_of_terms_is_read() -> None:
    bound = limits.default("LIM-S14")
    read_sites("tasks " + " ".join(f"site:h{i}.org" for i in range(bound)))
    with pytest.raises(ToolError):
        read_sites("tasks " + " ".join(f"site:h{i}.org" for i in range(bound + 1)))


def test_issue_36_result_hosts_are_matched_in_ascii() -> None:
    assert result_host("https://Bücher.DE./x") == "xn--bcher-kva.de"
    assert result_host("https://[2001:db8::1]:8443/") == "2001:db8::1"
    assert result_host("not a url") is None


# -- each engine's form ----------------------------------------------------------------------


def query(sites: tuple[str, ...], not_sites: tuple[str, ...] = ()) -> EngineQuery:
    return engine_query(query="tasks", sites=sites, not_sites=not_sites)


def test_issue_36_the_site_hosts_stay_out_of_an_engine_querys_repr() -> None:
    # They are words of the query, which may be confidential and never reaches a log.
    shown = repr(query(("intranet-secret.example",), ("other-secret.example",)))
    assert "secret" not in shown and "tasks" not in shown
    read = repr(read_sites("tasks site:intranet-secret.example"))
    assert "secret" not in read and "tasks" not in read


def test_issue_36_each_driver_gets_the_terms_its_record_admits() -> None:
    one, two = query(("a.org",), ("b.org",)), query(("a.org", "c.net"), ("b.org",))
    brave_record, ddg = ADMISSIONS["brave"], ADMISSIONS["duckduckgo"]
    wiki, searx = ADMISSIONS["wikipedia"], ADMISSIONS["searxng"]
    assert query_text(brave_record, two) == "tasks (site:a.org OR site:c.net) -site:b.org"
    assert query_text(ddg, one) == "tasks site:a.org -site:b.org"
    assert query_text(ddg, two) == "tasks -site:b.org"  # one host at a time: none sent
    assert query_text(searx, one) == "tasks site:a.org -site:b.org"
    assert query_text(wiki, two) == "tasks"
    assert sites_honoured(brave_record, two) and sites_honoured(ddg, one)
    assert not sites_honoured(ddg, two) and not sites_honoured(wiki, one)
    assert sites_honoured(wiki, query(()))


# -- end to end ---------------------------------------------------------------------------------


def test_issue_36_results_are_only_the_named_hosts_with_a_notice_per_engine(
    tmp_path: Path,
) -> None:
    core, fake = make(tmp_path)
    fake.by_host = {
        WIKI: wikipedia(["Asyncio"]),  # en.wikipedia.org: not a named host
        BRAVE: brave(
            [
                "https://docs.python.org/3/library/asyncio-task.html",
                "https://blog.example/asyncio",
                "https://peps.python.org/pep-3156/",
                "https://evilpython.org/",
            ]
        ),
    }
    answer = run_search(core, query="asyncio tasks site:python.org", max_results=10)
    assert [r["url"] for r in answer["results"]] == [
        "https://docs.python.org/3/library/asyncio-task.html",
        "https://peps.python.org/pep-3156/",
    ]
    assert {"code": "site_filter_ignored", "engine": "wikipedia"} in answer["notices"]
    assert {"code": "results_dropped", "reason": "outside_site", "count": 3} in answer["notices"]
    sent = {host: params for host, params, _ in fake.calls}
    assert sent[BRAVE]["q"] == ["asyncio tasks site:python.org"]
    assert sent[WIKI]["srsearch"] == ["asyncio tasks"]  # it does not read the operator


def test_issue_36_minus_site_drops_a_host_and_keeps_the_rest(tmp_path: Path) -> None:
    core, fake = make(tmp_path)
    fake.by_host = {
        WIKI: wikipedia(["Asyncio"]),
        BRAVE: brave(["https://www.reddit.com/r/python", "https://docs.python.org/3/"]),
    }
    answer = run_search(core, query="asyncio -site:reddit.com", max_results=10)
    urls = [r["url"] for r in answer["results"]]
    assert "https://docs.python.org/3/" in urls and not any("reddit" in u for u in urls)
    assert any("wikipedia.org" in u for u in urls)


def test_issue_36_a_host_the_egress_policy_refuses_is_only_a_filter(tmp_path: Path) -> None:
    # site: names a private address: the engines are asked as usual, nothing is fetched,
    # and no result survives (engines do not return such hosts; ranking refuses them).
    core, fake = make(tmp_path)
    fake.by_host = {WIKI: wikipedia(["Router"]), BRAVE: brave(["https://192.168.1.1/admin"])}
    answer = run_search(core, query="router admin site:192.168.1.1")
    assert answer["results"] == [] and answer["outcome"] == "empty"
    assert sorted(host for host, _, _ in fake.calls) == sorted([WIKI, BRAVE])


def test_issue_36_the_secret_check_sees_the_whole_query(tmp_path: Path) -> None:
    core, fake = make(tmp_path)
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    error = run_error(core, query=f"site:github.com token {token}")
    assert error.kind == "denied" and error.detail["reason"] == "secret_in_query"
    assert fake.calls == []
    # A secret written as the site's host is caught too: the check reads every word.
    assert run_error(core, query=f"token site:{token}.example").kind == "denied"
