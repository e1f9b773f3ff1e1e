"""The engine profile of the one egress component, on the production path (REQ-SEC-005,
REQ-SEC-017; issue 14 item 9): a search through the facade, the real pipeline, driver,
engine client and TLS, against stand-ins on 127.0.0.1 (tests/engine_standin.py).

An engine's request goes only to the endpoint the operator configured, and to an address
the built-in table admits unless the operator named it (an address literal in base_url,
localhost, an allow rule). A refusal costs that engine only, as request_failure, and
nothing reaches the refused destination: no connection, so no header.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from rypsok.core.config import load
from rypsok.core.engines.base import EngineQuery, OutboundRequest
from rypsok.core.engines.brave import BraveDriver
from rypsok.core.engines.wikipedia import WikipediaDriver
from rypsok.core.facade import Rypsok
from rypsok.core.net.client import EngineClient, IPAddress, user_agent
from tests.engine_standin import (
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
from tests.standin import mediawiki

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
    client = EngineClient(
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


# -- a named endpoint that resolves to a refused address ------------------------------------


@pytest.mark.parametrize(
    "addresses",
    [("127.0.0.1",), ("::ffff:127.0.0.1",), ("::1", "127.0.0.1"), ("127.0.0.2", "127.0.0.1")],
)
def test_req_sec_005_req_sec_017_a_base_url_name_resolving_to_loopback_is_refused(
    tmp_path: Path, addresses: tuple[str, ...]
) -> None:
    asked: list[str] = []
    with mediawiki() as good, site(corp_answer) as corp:
        core = core_for(tmp_path, engines_text(good, corp), resolving_to(*addresses, asked=asked))
        answer = search(core)
    assert failed(answer) == [
        {"code": "engine_unavailable", "engine": "corp", "reason": "request_failure"}
    ]
    # The operator's loopback wiki, written as an address, is the operator's choice: asked.
    # (Its results name 127.0.0.1, a host web_fetch refuses, so they are not shown.)
    assert len(good["queries"]) == 1
    assert "Corp handbook" not in titles(answer)
    # The name was resolved, and none of its addresses was connected to.
    assert asked == [MIRROR]
    assert corp.connections == [] and corp.seen == []


@pytest.mark.parametrize(
    "allow", ['"wiki.corp.example"', '"*.corp.example"', '"127.0.0.1"', '"127.0.0.0/8"']
)
def test_req_sec_005_req_sec_017_an_allow_rule_admits_a_private_engine_endpoint(
    tmp_path: Path, allow: str
) -> None:
    with mediawiki() as good, site(corp_answer) as corp:
        text = engines_text(good, corp, f"allow = [{allow}]")
        answer = search(core_for(tmp_path, text, resolving_to("127.0.0.1")))
    assert answer["outcome"] == "ok", answer["notices"]
    assert "Corp handbook" in titles(answer)
    assert [s.host for s in corp.seen] == [MIRROR]
    assert corp.seen[0].path == "/w/api.php"


def test_req_sec_005_req_sec_017_a_deny_rule_refuses_an_allowed_engine_endpoint(
    tmp_path: Path,
) -> None:
    with mediawiki() as good, site(corp_answer) as corp:
        text = engines_text(good, corp, 'allow = ["127.0.0.0/8"]\ndeny = ["*.corp.example"]')
        answer = search(core_for(tmp_path, text, resolving_to("127.0.0.1")))
    assert failed(answer) == [
        {"code": "engine_unavailable", "engine": "corp", "reason": "request_failure"}
    ]
    assert corp.connections == []
    assert len(good["queries"]) == 1


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
        # The same configuration, the driver unpatched: the endpoint answers.
        text = engines_text(good, corp, 'allow = ["wiki.corp.example"]')
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
