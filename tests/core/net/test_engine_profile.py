"""The engine profile of the one egress component, on the production path (REQ-SEC-005,
REQ-SEC-017; issue 14 item 9): a search through the facade, the real pipeline, driver,
engine client and TLS, against stand-ins on 127.0.0.1 (tests/support/engine_standin.py).

An engine's request goes only to the engine's endpoint. An endpoint the operator wrote (a
base_url) is the operator's trust (REQ-SEC-017, NET-15): every address its host resolves to
is reached, a private one without an allow rule, except that deny rules win and a name
never reaches the cloud metadata service. A built-in endpoint (en.wikipedia.org,
api.search.brave.com, html.duckduckgo.com) was not written by the operator: an address the
built-in table refuses is reached only through an allow rule. A refusal costs that engine
only, as request_failure, and nothing reaches the refused destination: no connection, so
no header.

Where a refusal and a failed connection would give the same notice, a spy on the connect
step (`connect_spy`) is what tells them apart: it records every connection attempted.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import pytest

from rypsok.core.config import load
from rypsok.core.engines.base import EngineQuery, OutboundRequest
from rypsok.core.engines.brave import BraveDriver
from rypsok.core.engines.registry import endpoint_for
from rypsok.core.engines.wikipedia import WikipediaDriver
from rypsok.core.facade import Rypsok
from rypsok.core.net import client as client_module
from rypsok.core.net.client import IPAddress, OutboundClient, user_agent
from tests.support.engine_standin import (
    BRAVE,
    ELSEWHERE,
    MIRROR,
    WIKI,
    Reply,
    Seen,
    Standin,
    brave_results,
    client_tls,
    site,
    tunnel,
    wiki_results,
)
from tests.support.standin import mediawiki

Resolver = Callable[[str, int], Awaitable[list[IPAddress]]]
TOKEN = "BSA" + "k" * 29


def resolving_to(*addresses: str, asked: list[str] | None = None) -> Resolver:
    """The injected resolver: every name answers *addresses* (no DNS in tests)."""

    async def resolve(host: str, port: int) -> list[IPAddress]:
        if asked is not None:
            asked.append(host)
        return [ipaddress.ip_address(a) for a in addresses]

    return resolve


def core_for(tmp_path: Path, text: str, resolver: Resolver | None = None) -> Rypsok:
    path = tmp_path / "rypsok.toml"
    path.write_text("config_version = 1\n" + text, encoding="utf-8")
    config = load(str(path), {"BRAVE_API_KEY": TOKEN})
    client = OutboundClient(
        tls=client_tls(),
        user_agent=user_agent(""),
        proxy=config.egress.proxy,
        resolver=resolver,
    )
    return Rypsok(config, client=client)


def search(core: Rypsok, query: str = "rust") -> dict[str, Any]:
    async def go() -> dict[str, Any]:
        return (await core.search({"query": query})).to_json()

    return anyio.run(go)


def wiki_engine(engine_id: str, base_url: str, preference: int) -> str:
    return (
        f'[engines.{engine_id}]\ntype = "wikipedia"\ncategories = ["general"]\n'
        f'preference = {preference}\nbase_url = "{base_url}"\n'
    )


def corp_answer(seen: Seen) -> Reply:
    return wiki_results(seen, ["Corp handbook"])


def engines_text(good: dict[str, Any], corp: Standin, egress: str = "") -> str:
    # "good" is the operator's loopback wiki written as an address literal; "corp" is a
    # private wiki named by a host name that the resolver answers with loopback.
    return (
        f"[egress]\n{egress}\n"
        + wiki_engine("good", good["base_url"], 10)
        + wiki_engine("corp", f"{corp.url}/w", 20)
    )


def failed(answer: dict[str, Any]) -> list[dict[str, Any]]:
    return [n for n in answer["notices"] if n["code"] == "engine_unavailable"]


def titles(answer: dict[str, Any]) -> list[str]:
    return [r["title"] for r in answer["results"]]


Attempt = tuple[tuple[str, ...], int]  # the addresses handed to the connect step, the port


def connect_spy(monkeypatch: pytest.MonkeyPatch, redirect_to: int | None = None) -> list[Attempt]:
    """Record every connection the engine client attempts (the step that opens sockets).

    With *redirect_to*, an attempt on port 443 is carried out against 127.0.0.1 on that
    port (a stand-in playing the provider's address) instead of the judged addresses, as a
    test cannot listen on 443.
    """
    attempts: list[Attempt] = []
    original = client_module._connect_in_order

    async def spy(addresses: Any, port: int, deadline: float) -> Any:
        attempts.append((tuple(str(a) for a in addresses), port))
        if redirect_to is None or port != 443:
            return await original(addresses, port, deadline)
        return await original([ipaddress.ip_address("127.0.0.1")], redirect_to, deadline)

    monkeypatch.setattr(client_module, "_connect_in_order", spy)
    return attempts


# -- an endpoint the operator wrote: the operator's trust -----------------------------------


@pytest.mark.parametrize(
    "addresses",
    [("127.0.0.1",), ("::ffff:127.0.0.1",), ("::1", "127.0.0.1"), ("127.0.0.2", "127.0.0.1")],
)
def test_req_sec_005_req_sec_017_a_base_url_name_resolving_to_loopback_is_asked_without_allow_rule(
    tmp_path: Path, addresses: tuple[str, ...]
) -> None:
    asked: list[str] = []
    with mediawiki() as good, site(corp_answer) as corp:
        core = core_for(tmp_path, engines_text(good, corp), resolving_to(*addresses, asked=asked))
        answer = search(core)
    assert answer["outcome"] == "ok", answer["notices"]
    assert failed(answer) == []
    assert "Corp handbook" in titles(answer)
    assert asked == [MIRROR]
    assert [(s.host, s.path) for s in corp.seen] == [(MIRROR, "/w/api.php")]
    # The operator's loopback wiki written as an address literal is asked too. (Its results
    # name 127.0.0.1, a host web_fetch refuses, so they are not shown.)
    assert len(good["queries"]) == 1


@pytest.mark.parametrize(
    "egress",
    [
        'deny = ["wiki.corp.example"]',
        'deny = ["*.corp.example"]',
        'allow = ["127.0.0.0/8"]\ndeny = ["*.corp.example"]',
        'allow = ["wiki.corp.example"]\ndeny = ["wiki.corp.example"]',
    ],
)
def test_req_sec_005_req_sec_017_a_deny_rule_refuses_a_base_url_endpoint(
    tmp_path: Path, egress: str
) -> None:
    with mediawiki() as good, site(corp_answer) as corp:
        text = engines_text(good, corp, egress)
        answer = search(core_for(tmp_path, text, resolving_to("127.0.0.1")))
    assert failed(answer) == [
        {"code": "engine_unavailable", "engine": "corp", "reason": "request_failure"}
    ]
    # The stand-in listens on the one address the name resolves to: nothing reached it.
    assert corp.connections == [] and corp.seen == []
    assert len(good["queries"]) == 1


@pytest.mark.parametrize(
    "addresses",
    [("169.254.169.254",), ("::ffff:169.254.169.254",), ("fd00:ec2::254",), ("100.100.100.200",)],
)
def test_req_sec_005_req_sec_017_a_base_url_name_resolving_to_a_metadata_address_is_not_connected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, addresses: tuple[str, ...]
) -> None:
    attempts = connect_spy(monkeypatch)
    with mediawiki() as good, site(corp_answer) as corp:
        answer = search(core_for(tmp_path, engines_text(good, corp), resolving_to(*addresses)))
    assert failed(answer) == [
        {"code": "engine_unavailable", "engine": "corp", "reason": "request_failure"}
    ]
    # Only the good engine's literal was connected to: no attempt at the metadata address
    # (an attempt that failed would have given the same notice).
    assert attempts == [(("127.0.0.1",), port_of(good))]
    assert corp.connections == []


def test_req_sec_005_req_sec_017_a_metadata_address_among_a_base_url_name_s_is_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    attempts = connect_spy(monkeypatch)
    with mediawiki() as good, site(corp_answer) as corp:
        resolver = resolving_to("169.254.169.254", "127.0.0.1")
        answer = search(core_for(tmp_path, engines_text(good, corp), resolver))
    assert answer["outcome"] == "ok", answer["notices"]
    assert "Corp handbook" in titles(answer)
    # The name's metadata address was dropped before the connect step; its other one served.
    assert (("127.0.0.1",), corp.port) in attempts
    assert all("169.254.169.254" not in tried for tried, _port in attempts)


# -- a built-in endpoint: the built-in table ------------------------------------------------

WIKIPEDIA_ONLY = '[engines.wikipedia]\ntype = "wikipedia"\ncategories = ["general"]\n'


def port_of(good: dict[str, Any]) -> int:
    """The port of the loopback wiki's base_url (http://127.0.0.1:<port>/w)."""
    port = urlsplit(good["base_url"]).port
    assert port is not None
    return port


def rust_answer(seen: Seen) -> Reply:
    return wiki_results(seen, ["Rust (programming language)"])


@pytest.mark.parametrize(
    "addresses", [("127.0.0.1",), ("10.0.0.1",), ("::1",), ("::ffff:127.0.0.1",)]
)
def test_req_sec_005_req_sec_017_a_builtin_endpoint_resolving_to_a_refused_address_is_not_connected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, addresses: tuple[str, ...]
) -> None:
    """A poisoned answer for en.wikipedia.org (no base_url, no proxy) reaches nothing.

    A refused connection on 127.0.0.1:443 would give the same notice as the refusal, so the
    spy is what proves it: had the client tried, it would have been carried to a stand-in
    that answers. The operator's loopback wiki (an address literal) answers the search."""
    asked: list[str] = []
    with mediawiki() as good, site(rust_answer, name=WIKI) as wiki:
        attempts = connect_spy(monkeypatch, redirect_to=wiki.port)
        text = wiki_engine("good", good["base_url"], 10) + WIKIPEDIA_ONLY
        answer = search(core_for(tmp_path, text, resolving_to(*addresses, asked=asked)))
    assert failed(answer) == [
        {"code": "engine_unavailable", "engine": "wikipedia", "reason": "request_failure"}
    ]
    assert asked == [WIKI]
    assert attempts == [(("127.0.0.1",), port_of(good))]
    assert wiki.connections == [] and wiki.seen == []


@pytest.mark.parametrize(
    ("address", "allow"),
    [
        ("127.0.0.1", '"127.0.0.1"'),
        ("127.0.0.1", '"127.0.0.0/8"'),
        ("127.0.0.1", '"en.wikipedia.org"'),
        ("127.0.0.1", '"*.wikipedia.org"'),
        ("10.0.0.1", '"10.0.0.0/8"'),
        ("::1", '"::1"'),
        ("::ffff:127.0.0.1", '"127.0.0.1"'),
    ],
)
def test_req_sec_005_req_sec_017_an_allow_rule_admits_a_refused_address_of_a_builtin_endpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, address: str, allow: str
) -> None:
    with site(rust_answer, name=WIKI) as wiki:
        attempts = connect_spy(monkeypatch, redirect_to=wiki.port)
        text = f"[egress]\nallow = [{allow}]\n" + WIKIPEDIA_ONLY
        answer = search(core_for(tmp_path, text, resolving_to(address)))
    # The judged address, on the endpoint's port, was handed to the connect step.
    assert attempts == [((str(ipaddress.ip_address(address)),), 443)]
    assert answer["outcome"] == "ok", answer["notices"]
    assert "Rust (programming language)" in titles(answer)
    assert [s.host for s in wiki.seen] == [WIKI]


def test_req_sec_017_only_an_endpoint_the_operator_wrote_is_configured(tmp_path: Path) -> None:
    text = (
        "[scraping]\nenabled = true\n"
        '[engines.corp]\ntype = "wikipedia"\ncategories = ["general"]\n'
        'base_url = "https://wiki.corp.internal/w"\n'
        + WIKIPEDIA_ONLY
        + '[engines.brave]\ntype = "brave"\ncategories = ["general"]\n'
        'api_key_env = "BRAVE_API_KEY"\n'
        '[engines.ddg]\ntype = "duckduckgo"\ncategories = ["general"]\n'
    )
    path = tmp_path / "rypsok.toml"
    path.write_text("config_version = 1\n" + text, encoding="utf-8")
    config = load(str(path), {"BRAVE_API_KEY": TOKEN})
    endpoints = {e.id: endpoint_for(e) for e in config.engines}
    assert {k: (v.host, v.port, v.configured) for k, v in endpoints.items()} == {
        "corp": ("wiki.corp.internal", 443, True),
        "wikipedia": ("wikipedia.org", 443, False),
        "brave": ("api.search.brave.com", 443, False),
        "ddg": ("html.duckduckgo.com", 443, False),
    }


# -- a request whose target is not the configured endpoint ----------------------------------


def test_req_sec_005_req_sec_017_an_engine_request_to_another_endpoint_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Should a driver ever build a URL for another host or port, the egress component
    refuses it before any I/O, whatever the allow rules admit."""
    with mediawiki() as good, site(corp_answer) as corp, site(corp_answer) as other:
        targets = {
            "port": f"https://{MIRROR}:{other.port}/w/api.php",
            "host": f"https://{ELSEWHERE}:{corp.port}/w/api.php",
        }
        original = WikipediaDriver.request

        for how, url in targets.items():

            def request(self: WikipediaDriver, query: EngineQuery, url: str = url) -> Any:
                made = original(self, query)
                if "corp" not in made.url:
                    return made  # the good engine goes where it was configured to
                return OutboundRequest(url, made.headers, made.max_bytes)

            monkeypatch.setattr(WikipediaDriver, "request", request)
            egress = 'allow = ["127.0.0.0/8", "wiki.corp.example", "elsewhere.example"]'
            text = engines_text(good, corp, egress)
            answer = search(core_for(tmp_path, text, resolving_to("127.0.0.1")))
            assert failed(answer) == [
                {"code": "engine_unavailable", "engine": "corp", "reason": "request_failure"}
            ], how
        monkeypatch.undo()
        # The driver unpatched, no allow rule: the endpoint the operator wrote answers.
        text = engines_text(good, corp)
        answer = search(core_for(tmp_path, text, resolving_to("127.0.0.1")))
    assert other.connections == [] and other.seen == []
    assert len(corp.seen) == 1 and answer["outcome"] == "ok"


# -- through the configured proxy -----------------------------------------------------------


def brave_text(proxy: str) -> str:
    return (
        f'[egress]\nproxy = "{proxy}"\n'
        '[engines.wikipedia]\ntype = "wikipedia"\ncategories = ["general"]\npreference = 10\n'
        '[engines.brave]\ntype = "brave"\ncategories = ["general"]\npreference = 20\n'
        'api_key_env = "BRAVE_API_KEY"\n'
    )


def provider_answer(seen: Seen) -> Reply:
    if seen.host == WIKI:
        return wiki_results(seen, ["Rust"])
    return brave_results(["https://www.rust-lang.org/"])


def test_req_sec_017_through_the_proxy_the_tunnel_goes_to_the_configured_endpoint_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with tunnel(provider_answer) as standin:
        # The proxy on 127.0.0.1 is the operator's own setting: engines reach it.
        answer = search(core_for(tmp_path, brave_text(standin.url)))
        assert answer["outcome"] == "ok", answer["notices"]
        assert sorted(standin.connections) == [f"{BRAVE}:443", f"{WIKI}:443"]
        assert next(s for s in standin.seen if s.host == BRAVE).header("X-Subscription-Token") == (
            TOKEN
        )

        original = BraveDriver.request

        def request(self: BraveDriver, query: EngineQuery) -> OutboundRequest:
            made = original(self, query)
            return OutboundRequest(
                made.url.replace(BRAVE, ELSEWHERE, 1), made.headers, made.max_bytes
            )

        monkeypatch.setattr(BraveDriver, "request", request)
        standin.connections.clear()
        standin.seen.clear()
        answer = search(core_for(tmp_path, brave_text(standin.url)))
    assert failed(answer) == [
        {"code": "engine_unavailable", "engine": "brave", "reason": "request_failure"}
    ]
    # No tunnel was asked for the other host: the token never left for it.
    assert standin.connections == [f"{WIKI}:443"]
    assert all(s.header("X-Subscription-Token") is None for s in standin.seen)
