"""A stand-in for the engine client: answers by host from fixtures, records calls.

The production pipeline, drivers, ranking and boundary run unchanged; only
the socket is replaced (the client itself has its own tests against local
TLS servers).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio

from rypsok.core.net.client import ClientError, Response
from tests.support import paths

FIXTURES = paths.FIXTURES / "engines"


def fixture(engine: str, name: str) -> Response:
    data = json.loads((FIXTURES / engine / f"{name}.json").read_text(encoding="utf-8"))
    body = data["body_text"].encode() if "body_text" in data else json.dumps(data["body"]).encode()
    headers = tuple((k.lower(), v) for k, v in data.get("headers", {}).items())
    return Response(data["status"], headers, body)


def wikipedia(titles: list[str], edition: str = "en") -> Response:
    search = [
        {
            "ns": 0,
            "title": t,
            "pageid": i,
            "snippet": f"About <b>{t}</b>",
            "timestamp": "2026-09-01T00:00:00Z",
        }
        for i, t in enumerate(titles)
    ]
    body = {"requestid": edition, "batchcomplete": "", "query": {"search": search}}
    return Response(200, (("content-type", "application/json"),), json.dumps(body).encode())


def brave(urls: list[str]) -> Response:
    results = [
        {"title": f"Page {i}", "url": u, "description": f"Text {i}"} for i, u in enumerate(urls)
    ]
    body = {"type": "search", "web": {"type": "search", "results": results}}
    return Response(200, (("content-type", "application/json"),), json.dumps(body).encode())


Behaviour = Response | ClientError | Callable[[], Any]


@dataclass
class FakeClient:
    by_host: dict[str, Behaviour] = field(default_factory=dict)
    delays: dict[str, float] = field(default_factory=dict)
    calls: list[tuple[str, dict[str, list[str]], tuple[tuple[str, str], ...]]] = field(
        default_factory=list
    )
    cancelled: list[str] = field(default_factory=list)

    async def get(
        self,
        url: str,
        *,
        headers: Any = (),
        max_bytes: int,
        connect_timeout_s: float,
        total_timeout_s: float,
        allow_http: bool = False,
        engine: Any = None,  # the engine profile: the real client's to apply
    ) -> Response:
        parts = urlsplit(url)
        host = parts.hostname or ""
        self.calls.append((host, parse_qs(parts.query), tuple(headers)))
        try:
            with anyio.fail_after(total_timeout_s):
                await anyio.sleep(self.delays.get(host, 0))
        except TimeoutError:
            raise ClientError("timeout", "the request took longer than allowed") from None
        except anyio.get_cancelled_exc_class():
            self.cancelled.append(host)
            raise
        behaviour = self.by_host.get(host)
        if behaviour is None:
            raise ClientError("connect", "the connection was refused")
        if isinstance(behaviour, ClientError):
            raise behaviour
        if isinstance(behaviour, Response):
            return behaviour
        result = behaviour()
        assert isinstance(result, Response)
        return result
