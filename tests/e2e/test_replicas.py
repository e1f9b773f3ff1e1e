"""Three replicas of `rypsok serve --transport http` sharing one real redis-server (issue 21),
proved end to end over real sockets: MCP tools/call over HTTP (the 2026-07-28 stateless
revision) against child processes on 127.0.0.1, engines that count on loopback.

What the replicas share, each against what separate processes would do:

* a caller's per-minute tool limit: N admitted of N + k calls spread round robin (a
  replica of its own would admit all of them; replicas cut off from Redis, their shares:
  N // 3 each, fewer than N, since N is no multiple of 3);
* a provider's rate: at most burst + rate x elapsed requests reach the provider, fewer than
  the three bursts of three separate limiters;
* the result cache: an answer stored by one replica serves the same caller on another;
* a circuit: opened by one replica's failures, open on the others, which send nothing.

And what happens when Redis dies mid-load: every call is answered, within its maximum;
each replica says `store_unavailable` once, `store_recovered` once Redis is back, and the
shared limit holds again.

Without a redis-server binary the fixtures fail with tests/support/redis.py's sentence.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from rypsok.core import limits
from tests.support.redis import RedisServer, redis_server
from tests.support.replicas import Answer, Engines, Replica, base_env, call, engines, replicas

TOKEN_A = "a" * 24 + "-token-of-mimlys-0123456789"
TOKEN_B = "b" * 24 + "-token-of-ops-00000000000000"
REPLICAS = 3
STATUS_LIMIT = 10  # engine_status per caller per minute: no multiple of REPLICAS
DEADLINE_MS = 2500
FAILURES_TO_OPEN = 2
COUNTED_RATE = 5  # requests per minute of the engine whose requests are counted (burst 5)
COUNTED_BURST = 5
SEARCH_MAX_S = (DEADLINE_MS + limits.default("LIM-S7")) / 1000  # `check`: tool call maxima
STATUS_MAX_S = limits.default("LIM-S13") / 1000
WAIT_S = 15.0  # the longest any poll below waits for a child to log something

CONFIG = """config_version = 1
[service]
shutdown_ms = 1000
[service.http]
bind = "127.0.0.1:0"
[[service.http.auth.callers]]
id = "mimlys"
token_env = "RYPSOK_TOKEN_MIMLYS"
[[service.http.auth.callers]]
id = "ops"
token_env = "RYPSOK_TOKEN_OPS"
[search]
deadline_ms = {deadline}
[egress]
allow = ["127.0.0.1"]
[limits]
engine_status_per_minute = {status_limit}
web_search_per_minute = 600
per_engine_in_flight = 8
[resilience]
failures_to_open = {failures}
first_cooldown_s = 600
max_cooldown_s = 600
[cache]
enabled = true
[store]
backend = "redis"
url_env = "RYPSOK_REDIS_URL"
replicas = {replicas}
timeout_ms = 100
# general: the cache (c). news: the provider rate (b), beside an engine of the most rate
# an operator may give, so that each answer shows its notices. science: the circuit (d).
# code: the load of (e).
[engines.wikipedia]
type = "wikipedia"
categories = ["general"]
base_url = "{wikipedia}"
[engines.counted]
type = "searxng"
categories = ["news"]
base_url = "{counted}"
rate_per_minute = {counted_rate}
[engines.news_steady]
type = "searxng"
categories = ["news"]
base_url = "{news_steady}"
rate_per_minute = 600
concurrency = 8
[engines.flaky]
type = "wikipedia"
categories = ["science"]
base_url = "{flaky}"
[engines.science_steady]
type = "wikipedia"
categories = ["science"]
base_url = "{science_steady}"
[engines.code_steady]
type = "searxng"
categories = ["code"]
base_url = "{code_steady}"
rate_per_minute = 600
concurrency = 8
"""


@pytest.fixture(autouse=True)
def _collector_out_of_the_timing() -> Iterator[None]:
    """The calls are timed from this process, which the whole suite has filled by the time
    these tests run: a full collection over that heap would add its pause to a call's
    elapsed time, which is the replica's bound, not this process's. What exists before a
    test is frozen out of the collector for its length."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def config_text(stand_ins: Engines) -> str:
    return CONFIG.format(
        deadline=DEADLINE_MS,
        status_limit=STATUS_LIMIT,
        failures=FAILURES_TO_OPEN,
        replicas=REPLICAS,
        counted_rate=COUNTED_RATE,
        wikipedia=stand_ins.wiki_url("wikipedia"),
        counted=stand_ins.searxng_url("counted"),
        news_steady=stand_ins.searxng_url("news_steady"),
        flaky=stand_ins.wiki_url("flaky"),
        science_steady=stand_ins.wiki_url("science_steady"),
        code_steady=stand_ins.searxng_url("code_steady"),
    )


@dataclass
class Deployment:
    redis: RedisServer
    engines: Engines
    replicas: list[Replica]

    @property
    def ports(self) -> list[int]:
        return [r.port for r in self.replicas]

    def events(self, name: str) -> list[list[dict[str, Any]]]:
        return [r.events(name) for r in self.replicas]

    def warm(self) -> None:
        """One search on each replica, one after another, before any test load. A fresh
        replica loads the search pipeline at its first web_search, on its event loop: a
        store operation of another call waiting meanwhile can outlast the store timeout
        and be taken for a Redis fault, which is not what these tests are about."""
        for port in self.ports:
            answer = call(
                port, "web_search", {"query": "warm-up", "category": "code"}, token=TOKEN_B
            )
            assert answer.answered and not answer.is_tool_error, answer.message


@pytest.fixture(scope="module")
def stand_ins() -> Iterator[Engines]:
    with engines() as running:
        yield running


@pytest.fixture(scope="module")
def deployment(
    tmp_path_factory: pytest.TempPathFactory, stand_ins: Engines
) -> Iterator[Deployment]:
    """One Redis and three replicas for the tests that only read what they share; each
    test uses engines, categories and limits of its own, so their order does not matter."""
    workdir = tmp_path_factory.mktemp("replicas")
    with redis_server(workdir) as server:
        env = base_env(
            RYPSOK_TOKEN_MIMLYS=TOKEN_A, RYPSOK_TOKEN_OPS=TOKEN_B, RYPSOK_REDIS_URL=server.url
        )
        with replicas(workdir, config_text(stand_ins), env, REPLICAS) as running:
            started = Deployment(server, stand_ins, running)
            started.warm()
            yield started


def no_store_fault(deployment: Deployment) -> None:
    """The shared-state tests prove what Redis shares: had a replica answered from its own
    memory meanwhile, their figures would say nothing of it."""
    for replica in deployment.replicas:
        found = replica.events("store_unavailable")
        assert not found, f"{replica.label} fell back to its own memory: {found}"


def search(port: int, query: str, category: str, token: str = TOKEN_A) -> Answer:
    return call(port, "web_search", {"query": query, "category": category}, token=token)


def skipped(answer: Answer, engine: str) -> set[str]:
    return {n.get("reason", "") for n in answer.notices("engine_skipped") if n["engine"] == engine}


# -- (a) a caller's tool limit -------------------------------------------------------------


def test_a_callers_tool_limit_admits_exactly_n_across_three_replicas_and_spares_another_caller(
    deployment: Deployment,
) -> None:
    extra = 3
    answers = [
        call(deployment.ports[i % REPLICAS], "engine_status", token=TOKEN_A)
        for i in range(STATUS_LIMIT + extra)
    ]
    assert all(a.answered for a in answers), [a.failure for a in answers]
    admitted = [a for a in answers if not a.is_tool_error]
    refused = [a for a in answers if a.is_tool_error]
    # Sequential calls: the first N in the window are admitted, the rest refused. A replica
    # of its own would have admitted all 13 (it sees 5 or 4); shares of 10 // 3 = 3, only 9.
    assert len(admitted) == STATUS_LIMIT
    assert answers[:STATUS_LIMIT] == admitted
    assert len(refused) == extra
    for answer in refused:
        assert answer.error["kind"] == "unavailable"
        assert answer.reason == "rate_limited"
        assert 0 < answer.error["detail"]["retry_after_ms"] <= 60_000
    # The other caller's budget is its own: one call on each replica, all admitted.
    others = [call(port, "engine_status", token=TOKEN_B) for port in deployment.ports]
    assert [a.is_tool_error for a in others] == [False] * REPLICAS
    no_store_fault(deployment)


# -- (b) a provider's rate -------------------------------------------------------------------


def test_b_provider_rate_holds_across_replicas_below_three_per_replica_bursts(
    deployment: Deployment,
) -> None:
    searches = 18
    stand_ins = deployment.engines
    before = stand_ins.count("counted")

    def one(i: int) -> Answer:
        return search(deployment.ports[i % REPLICAS], f"rate {i}", "news")

    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=6) as pool:
        answers = list(pool.map(one, range(searches)))
    elapsed_s = time.monotonic() - started
    sent = stand_ins.count("counted") - before

    assert all(a.answered and not a.is_tool_error for a in answers), [
        (a.failure, a.error) for a in answers
    ]
    # The token bucket of the whole deployment: its burst, and what refilled meanwhile.
    allowed = COUNTED_BURST + int(COUNTED_RATE * elapsed_s / 60)
    assert 1 <= sent <= allowed, (sent, allowed, elapsed_s)
    assert sent < REPLICAS * COUNTED_BURST  # what three limiters of their own let through
    # Every search the bucket turned away says so, and is the only kind of skip.
    rate_skipped = [a for a in answers if skipped(a, "counted") == {"rate_limited"}]
    assert len(rate_skipped) == searches - sent
    assert all(skipped(a, "counted") in (set(), {"rate_limited"}) for a in answers)
    assert not any(a.notices("engine_unavailable") for a in answers)
    # Each answered search carries the counted engine's result; the skipped ones do not.
    with_result = [
        a
        for a in answers
        if any(r["url"].startswith("https://counted.") for r in a.content["results"])
    ]
    assert len(with_result) == sent
    no_store_fault(deployment)


# -- (c) the result cache --------------------------------------------------------------------


def test_c_an_answer_cached_by_one_replica_serves_the_same_caller_on_another(
    deployment: Deployment,
) -> None:
    stand_ins = deployment.engines
    first_port, second_port, third_port = deployment.ports
    before = stand_ins.count("wikipedia")

    first = search(first_port, "cached across replicas", "general")
    assert first.answered and not first.is_tool_error, first.message
    assert not first.notices("from_cache")
    assert stand_ins.count("wikipedia") - before == 1

    second = search(second_port, "cached across replicas", "general")
    assert second.answered and not second.is_tool_error, second.message
    assert second.notices("from_cache") == [{"code": "from_cache", "engine": "wikipedia"}]
    assert second.content["results"] == first.content["results"]
    assert stand_ins.count("wikipedia") - before == 1  # the engine saw exactly one request

    # Entries are the caller's own: the other caller's same query goes to the engine.
    other = search(third_port, "cached across replicas", "general", token=TOKEN_B)
    assert other.answered and not other.notices("from_cache"), other.message
    assert stand_ins.count("wikipedia") - before == 2
    no_store_fault(deployment)


# -- (d) a circuit ---------------------------------------------------------------------------


def engine_state(answer: Answer, engine: str) -> str:
    states = {e["id"]: e["state"] for e in answer.content["engines"]}
    return str(states[engine])


def test_d_a_circuit_opened_by_one_replica_is_open_on_the_others_which_send_nothing(
    deployment: Deployment,
) -> None:
    stand_ins = deployment.engines
    first_port, *other_ports = deployment.ports
    stand_ins.fail("flaky")
    try:
        for i in range(FAILURES_TO_OPEN):
            answer = search(first_port, f"circuit {i}", "science")
            assert answer.answered and not answer.is_tool_error, answer.message
            assert answer.content["outcome"] == "partial"
            assert answer.notices("engine_unavailable") == [
                {"code": "engine_unavailable", "engine": "flaky", "reason": "parse_failure"}
            ]
        sent = stand_ins.count("flaky")
        assert sent == FAILURES_TO_OPEN

        for port in other_ports:
            status = call(port, "engine_status", token=TOKEN_B)
            assert status.answered and not status.is_tool_error, status.message
            assert engine_state(status, "flaky") == "open"
            assert engine_state(status, "science_steady") == "closed"

            answer = search(port, f"circuit elsewhere {port}", "science", token=TOKEN_B)
            assert answer.answered and not answer.is_tool_error, answer.message
            assert skipped(answer, "flaky") == {"cooldown"}
            assert not answer.notices("engine_unavailable")
            assert answer.content["results"]  # the other engine of the category answered
        assert stand_ins.count("flaky") == sent  # nothing more reached the failing engine
    finally:
        stand_ins.heal("flaky")
    no_store_fault(deployment)


# -- (e) Redis killed mid-load ---------------------------------------------------------------


@dataclass
class Sent:
    replica: int
    tool: str
    at: float  # monotonic, when it was sent
    answer: Answer


def drive(
    ports: list[int], stop: threading.Event, record: Callable[[Sent], None], workers: int = 6
) -> list[threading.Thread]:
    """`workers` threads, each bound to one replica (round robin), calling back to back
    until `stop`: web_search of the code category by both callers (one query per worker,
    so that a shared cache can answer), and engine_status by the first caller."""

    def work(index: int) -> None:
        replica = index % len(ports)
        token = TOKEN_A if index % 2 == 0 else TOKEN_B
        turn = 0
        while not stop.is_set():
            at = time.monotonic()
            if token == TOKEN_A and turn % 2 == 1:
                answer = call(ports[replica], "engine_status", token=token)
                record(Sent(replica, "engine_status", at, answer))
            else:
                answer = search(ports[replica], f"load {index}", "code", token=token)
                record(Sent(replica, "web_search", at, answer))
            turn += 1

    threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(workers)]
    for thread in threads:
        thread.start()
    return threads


def wait_for(condition: Callable[[], bool], what: str, poke: Callable[[], None]) -> None:
    """Poke until `condition` holds; fail after WAIT_S."""
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"not within {WAIT_S} s: {what}"
        poke()
        time.sleep(0.05)


@pytest.fixture
def own_deployment(tmp_path: Path, stand_ins: Engines) -> Iterator[Deployment]:
    """A Redis and three replicas of the test's own: it kills that Redis."""
    with redis_server(tmp_path) as server:
        env = base_env(
            RYPSOK_TOKEN_MIMLYS=TOKEN_A, RYPSOK_TOKEN_OPS=TOKEN_B, RYPSOK_REDIS_URL=server.url
        )
        with replicas(tmp_path, config_text(stand_ins), env, REPLICAS) as running:
            started = Deployment(server, stand_ins, running)
            started.warm()
            yield started


def store_changes(deployment: Deployment) -> list[tuple[int, int]]:
    """Per replica: how many times it has logged store_unavailable and store_recovered."""
    return [
        (len(r.events("store_unavailable")), len(r.events("store_recovered")))
        for r in deployment.replicas
    ]


def test_e_killing_redis_mid_load_loses_no_call_breaks_no_bound_and_shared_limits_return(
    own_deployment: Deployment,
) -> None:
    deployment = own_deployment
    ports = deployment.ports
    sent: list[Sent] = []
    lock = threading.Lock()
    warm_calls = [len(r.events("call")) for r in deployment.replicas]

    def record(item: Sent) -> None:
        with lock:
            sent.append(item)

    def answered_by(replica: int, after: float = 0.0) -> int:
        with lock:
            return sum(1 for s in sent if s.replica == replica and s.at >= after)

    stop = threading.Event()
    threads = drive(ports, stop, record)
    try:
        began = time.monotonic()
        # A second of load, and every replica on Redis when it dies: on two busy cores a
        # store operation can outlast the 100 ms store timeout with Redis well, and that
        # replica then rests on its own memory for LIM-D4 (its log says so, as it should).
        wait_for(
            lambda: (
                time.monotonic() - began > 1.0
                and all(answered_by(r) >= 10 for r in range(REPLICAS))
                and all(down == up for down, up in store_changes(deployment))
            ),
            "a second of load, ten answers from each replica, each replica on Redis",
            lambda: None,
        )
        at_kill = store_changes(deployment)
        deployment.redis.kill()
        killed_at = time.monotonic()
        # Past LIM-D4's rest, so that each replica also tries Redis again while it is away.
        rest_s = limits.default("LIM-D4") / 1000
        wait_for(
            lambda: (
                time.monotonic() - killed_at > 2 * rest_s
                and all(answered_by(r, killed_at) >= 10 for r in range(REPLICAS))
            ),
            "ten answers from each replica after the kill, and two rests",
            lambda: None,
        )
    finally:
        stop.set()
        for thread in threads:
            thread.join(SEARCH_MAX_S + 5)
    assert not any(t.is_alive() for t in threads)

    # Every call got exactly one answer: a result or a tool error, never a dropped
    # connection or an HTTP error, each within its tool's maximum.
    maxima = {"web_search": SEARCH_MAX_S, "engine_status": STATUS_MAX_S}
    for item in sent:
        assert item.answer.answered, (item.tool, item.answer.status, item.answer.failure)
        assert item.answer.elapsed_s <= maxima[item.tool], (item.tool, item.answer.elapsed_s)
    for index, replica in enumerate(deployment.replicas):
        logged = len(replica.events("call")) - warm_calls[index]
        assert logged == sum(1 for s in sent if s.replica == index), replica.label
    # The death was told once by each replica, and nothing recovered while Redis was dead.
    after_kill = store_changes(deployment)
    assert [(d - d0, u - u0) for (d, u), (d0, u0) in zip(after_kill, at_kill, strict=True)] == [
        (1, 0)
    ] * REPLICAS

    # Redis again, empty, on the same port: each replica finds it at its next trial.
    deployment.redis.start()

    def poke() -> None:
        for port in ports:
            search(port, "after the restart", "code")

    wait_for(
        lambda: all(
            u > u0 for (_, u), (_, u0) in zip(store_changes(deployment), at_kill, strict=True)
        ),
        "store_recovered from every replica",
        poke,
    )
    after_restart = store_changes(deployment)
    assert [(d - d0, u - u0) for (d, u), (d0, u0) in zip(after_restart, at_kill, strict=True)] == [
        (1, 1)
    ] * REPLICAS

    # The shared limit again: the second caller made no engine_status call yet, so N of
    # N + 3 are admitted across the three (shares of their own memory would admit N - 1).
    answers = [
        call(ports[i % REPLICAS], "engine_status", token=TOKEN_B) for i in range(STATUS_LIMIT + 3)
    ]
    assert all(a.answered for a in answers)
    assert [a.reason for a in answers if a.is_tool_error] == ["rate_limited"] * 3
    assert sum(1 for a in answers if not a.is_tool_error) == STATUS_LIMIT
