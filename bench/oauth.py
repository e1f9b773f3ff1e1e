"""What a call's credentials cost to check: a configured caller's token beside OAuth
access tokens, signed (ES256, RS256, EdDSA) and opaque, the first time and when kept
(issue 37).

Run from the repository root with the dev venv:

    .venv/bin/python -m bench.oauth [--calls N]

The identity provider is tests/support/token_issuer.py on 127.0.0.1 (its key set is
fetched once before timing, as a running server has it). Timed per call, median of N:
- static: the configured callers' check (a SHA-256 and one constant-time compare);
- uncached: a token never seen (one signature check and the claims; a new token each
  call, made before timing);
- kept: the same token again (one SHA-256 and a look-up);
- introspected: an opaque token the first time, a POST to the provider on loopback
  (the least a real provider costs), and kept.
Then whole calls over HTTP (engine_status, the 2026-07-28 revision, one connection a
call) with a static token and with a kept OAuth token, median of N, so the check's share
of a call shows. Nothing is asserted: figures are for a reader.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import anyio

from rypsok.core.config import load
from rypsok.core.oauth.resource import ResourceServer, resource_server
from rypsok.protocol.http.auth import Authenticator
from tests.support.http_harness import (
    TOKEN_A,
    caller_env,
    config_text,
    modern_headers,
    post,
    served,
    tool_call,
)
from tests.support.token_issuer import (
    Issuer,
    claims_for,
    mint,
    new_key,
    oauth_table,
    running,
)

SECRET = "bench-introspection-secret"


def _median_us(samples: list[float]) -> float:
    return statistics.median(samples) * 1e6


def _time_each(run: Callable[[int], object], calls: int) -> float:
    samples = []
    for n in range(calls):
        started = time.perf_counter()
        run(n)
        samples.append(time.perf_counter() - started)
    return _median_us(samples)


def _server(issuer: Issuer, tmp: Path) -> ResourceServer:
    path = tmp / "oauth.toml"
    text = oauth_table(issuer.url, introspection=True, extra="introspection_cache_s = 600\n")
    path.write_text("config_version = 1\n" + text)
    settings = load(str(path), {"RYPSOK_OAUTH_SECRET": SECRET}).service.http.oauth
    assert settings is not None
    return resource_server(settings, "")


def validation(calls: int, tmp: Path) -> list[tuple[str, float]]:
    rows: list[tuple[str, float]] = []
    path = tmp / "callers.toml"
    path.write_text(config_text(callers=True))
    callers = load(str(path), caller_env()).service.http.callers
    auth = Authenticator(callers)
    header = [f"Bearer {TOKEN_A}".encode()]
    rows.append(("static token", _time_each(lambda _: auth.caller(header), calls)))

    keys = [new_key("ES256", "e"), new_key("RS256", "r"), new_key("EdDSA", "d")]
    issuer = Issuer(keys, client=("rypsok", SECRET))
    with running(issuer):
        server = _server(issuer, tmp)

        def check(token: str) -> object:
            return anyio.run(server.authenticate, token.encode())

        check(mint(keys[0], claims_for(issuer.url)))  # the key set, fetched once
        for key in keys:
            fresh = [mint(key, claims_for(issuer.url, jti=f"{key.alg}-{n}")) for n in range(calls)]
            uncached = _time_each(lambda n, fresh=fresh: check(fresh[n]), calls)  # type: ignore[misc]
            rows.append((f"{key.alg} token, uncached", uncached))
            kept = _time_each(lambda _, token=fresh[0]: check(token), calls)  # type: ignore[misc]
            rows.append((f"{key.alg} token, kept", kept))
        opaque = [f"opaque-{n}" for n in range(calls)]
        for token in opaque:
            issuer.active[token] = {"active": True, **claims_for(issuer.url)}
        rows.append(("opaque token, introspected", _time_each(lambda n: check(opaque[n]), calls)))
        rows.append(("opaque token, kept", _time_each(lambda _: check(opaque[0]), calls)))
    # anyio.run per check adds an event loop's start; measured alone and taken off.
    loop = _time_each(lambda _: anyio.run(_nothing), calls)
    return [(name, cost - loop) if "token," in name else (name, cost) for name, cost in rows]


async def _nothing() -> None:
    return None


def whole_calls(calls: int, tmp: Path) -> list[tuple[str, float]]:
    key = new_key("ES256", "e")
    with running(Issuer([key])) as issuer:
        text = config_text(callers=True, more=oauth_table(issuer.url))
        with served(tmp, text, caller_env()) as server:
            token = mint(key, claims_for(issuer.url))
            rows = []
            for name, bearer in (("static token", TOKEN_A), ("ES256 token, kept", token)):

                def one(_: int, bearer: str = bearer) -> None:
                    reply = post(
                        server.port, tool_call("engine_status"), modern_headers(token=bearer)
                    )
                    assert reply.status == 200

                one(0)
                rows.append((name, _time_each(one, calls)))
            return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        checks = validation(args.calls, Path(tmp))
        calls = whole_calls(max(50, args.calls // 3), Path(tmp))
    print(f"credential check, median of {args.calls} (microseconds a call)")
    for name, cost in checks:
        print(f"  {name:<32} {cost:>10.1f}")
    print("whole engine_status calls over HTTP (microseconds a call)")
    for name, cost in calls:
        print(f"  {name:<32} {cost:>10.1f}")


if __name__ == "__main__":
    main()
