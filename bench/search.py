"""Benchmarks of rypsok: a search's own share, a cached search against an uncached one,
the cold start and the idle memory.

Run from the repository root with the dev interpreter:

    .venv/bin/python -m bench.search [--searches N] [--quick] [--only SECTION] [--profile]

It prints one table per section, the book's reference figures beside the
measured ones. It never asserts a timing: the figures are for a reader.
Everything runs in-process or as child processes speaking stdio; no socket
is opened. bench/README.md says what each figure means.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

if TYPE_CHECKING:
    from rypsok.core.facade import Rypsok
    from rypsok.core.net.client import Response
    from rypsok.core.store.local.memory_store import MemoryStore

REPO = Path(__file__).resolve().parent.parent
WARMUP_SEARCHES = 30
ENGINE_DELAY_S = 0.005  # the second row of section 1: every engine answers after 5 ms
START_TIMEOUT_S = 30.0
EXIT_TIMEOUT_S = 10.0
IDLE_WAIT_S = 1.0

# -- section 1: the own share of a search -----------------------------------------------------

BRAVE_KEY = "bench-brave-key-0123456789abcdef"
# Three engines: Brave and two Wikipedia engines (two identifiers, one host; the fake
# client gives the two Wikipedia requests of one search two different answers).
CONFIG_TOML = """config_version = 1

[limits]
web_search_per_minute = 6000

[engines.brave]
type = "brave"
categories = ["general"]
preference = 10
api_key_env = "BRAVE_API_KEY"

[engines.wikipedia]
type = "wikipedia"
categories = ["general"]
preference = 20

[engines.wikipedia_b]
type = "wikipedia"
categories = ["general"]
preference = 30
"""
# Section 1b: two Wikipedia engines (the type whose record allows storage) and the cache
# on, so every engine answer of a search is eligible. A long ttl_s and the default
# max_entries: the repeated queries stay cached for the whole run, while the misses of the
# "new query" row fill the cache and make it evict, as a busy process would.
CACHE_CONFIG_TOML = """config_version = 1

[limits]
web_search_per_minute = 6000

[cache]
enabled = true
ttl_s = 3600

[engines.wikipedia]
type = "wikipedia"
categories = ["general"]
preference = 20

[engines.wikipedia_b]
type = "wikipedia"
categories = ["general"]
preference = 30
"""
MAX_RESULTS = 10
QUERIES = (
    "rust programming language",
    "ownership and borrowing",
    "memory safety without gc",
    "async runtime comparison",
    "python global interpreter lock",
    "reciprocal rank fusion",
    "unicode normalization forms",
    "tls certificate pinning",
    "json lines logging",
    "model context protocol",
)

# (title, article path) of the encyclopedia pages; Brave lists some of the same pages.
TOPICS = (
    ("Rust (programming language)", "general-purpose programming language"),
    ("Ownership (computer science)", "resource management discipline"),
    ("Memory safety", "protection from software bugs and security vulnerabilities"),
    ("Borrow checker", "static analysis of references"),
    ("Garbage collection (computer science)", "automatic memory management"),
    ("Concurrency (computer science)", "execution of several computations at once"),
    ("Type safety", "the extent to which a language discourages type errors"),
    ("Mozilla", "free software community"),
    ("Cargo (package manager)", "the build system and package manager of Rust"),
    ("LLVM", "a set of compiler and toolchain technologies"),
    ("Rust & Bone", "2012 romantic drama film"),
    ("C++", "high-level general-purpose programming language"),
    ("Zero-cost abstraction", "abstractions that impose no run-time overhead"),
    ("Systems programming", "programming of system software"),
)


def _wiki_url(title: str) -> str:
    return "https://en.wikipedia.org/wiki/" + quote(title.replace(" ", "_"), safe=";@$!*(),/~:")


def _wiki_snippet(title: str, about: str) -> str:
    """About 200 characters with CirrusSearch's highlight spans and a few entities."""
    words = title.split(" ")[0]
    text = (
        f'<span class="searchmatch">{words}</span> is a {about}. It is known for '
        f"&quot;fearless&quot; work with data&mdash;every reference is checked "
        f'before the program runs &amp; <span class="searchmatch">errors</span> are '
        f"reported early, at compile time, &#8211; not at run"
    )
    return text[:260]


def wikipedia_body(offset: int) -> bytes:
    """A MediaWiki list=search answer (formatversion 1) of ten hits, from TOPICS[offset:]."""
    hits = []
    for i in range(10):
        title, about = TOPICS[(offset + i) % len(TOPICS)]
        hits.append(
            {
                "ns": 0,
                "title": title,
                "pageid": 700000 + offset * 100 + i,
                "size": 81234 + i,
                "wordcount": 9000 + i,
                "snippet": _wiki_snippet(title, about),
                "timestamp": f"2026-09-{1 + i:02d}T08:15:42Z",
            }
        )
    body = {
        "requestid": "en",
        "batchcomplete": "",
        "continue": {"sroffset": 10, "continue": "-||"},
        "query": {"searchinfo": {"totalhits": 4211}, "search": hits},
    }
    return json.dumps(body).encode()


def brave_body() -> bytes:
    """A Brave web answer of ten results with the fields a real one carries.

    Four results are Wikipedia pages (one as http with a tracking parameter, one with a
    fragment) so that they merge with the Wikipedia engines' results.
    """
    results: list[dict[str, Any]] = []
    overlap = {
        1: _wiki_url(TOPICS[0][0]),
        3: _wiki_url(TOPICS[2][0]).replace("https://", "http://") + "?utm_source=brave",
        5: _wiki_url(TOPICS[7][0]) + "#History",
        8: _wiki_url(TOPICS[11][0]),
    }
    for i in range(10):
        url = overlap.get(i, f"https://www.site{i}.example/articles/{i}/rust-memory-safety?ref=x")
        host = urlsplit(url).hostname or ""
        results.append(
            {
                "title": f"Rust &amp; <strong>memory safety</strong>: part {i} &#8211; "
                f"what &quot;ownership&quot; means",
                "url": url,
                "is_source_local": False,
                "is_source_both": False,
                "description": (
                    f"A <strong>language</strong> empowering everyone to build "
                    f"reliable &amp; efficient software. Result {i} explains "
                    f"<strong>ownership</strong>, borrowing and lifetimes with "
                    f"examples &mdash; and why the compiler&#39;s checks matter "
                    f"for concurrent code."
                ),
                "page_age": f"2026-09-{10 + i:02d}T14:03:11",
                "age": f"{i + 1} days ago",
                "profile": {
                    "name": host,
                    "url": f"https://{host}/",
                    "long_name": host,
                    "img": f"https://imgs.search.brave.example/{i}/favicon.png",
                },
                "language": "en",
                "family_friendly": True,
                "type": "search_result",
                "subtype": "generic",
                "is_live": False,
                "meta_url": {
                    "scheme": "https",
                    "netloc": host,
                    "hostname": host,
                    "favicon": f"https://imgs.search.brave.example/{i}/favicon.png",
                    "path": f"\u203a articles \u203a {i}",
                },
                "extra_snippets": [
                    f"Extra snippet {j} about <strong>rust</strong> &amp; safety." for j in range(3)
                ],
            }
        )
    body = {
        "type": "search",
        "query": {
            "original": "rust memory safety",
            "more_results_available": True,
            "country": "us",
            "spellcheck_off": True,
        },
        "mixed": {
            "type": "mixed",
            "main": [{"type": "web", "index": i, "all": False} for i in range(10)],
            "top": [],
            "side": [],
        },
        "web": {"type": "search", "family_friendly": True, "results": results},
    }
    return json.dumps(body).encode()


@dataclass
class BenchClient:
    """Stands in for the engine client: a prepared answer per host, every request timed.

    An engine request occupies [start, end]: with delay 0 it answers at once (end is
    when `get` returns, a few microseconds later, without yielding to the event loop);
    with a delay it answers at start + delay, and any later resumption of the task is
    time spent waiting for rypsok's own work, so it is not counted as engine time.
    """

    answers: dict[str, list[Response]]
    delay_s: float = 0.0
    spans: list[tuple[float, float]] = field(default_factory=list)
    turns: dict[str, int] = field(default_factory=dict)
    post: list[float] = field(default_factory=list)  # durations of the post-processing stage

    async def get(
        self,
        url: str,
        *,
        headers: Any = (),
        max_bytes: int,
        connect_timeout_s: float,
        total_timeout_s: float,
        allow_http: bool = False,
        engine: Any = None,
    ) -> Response:
        import anyio

        start = time.perf_counter()
        host = urlsplit(url).hostname or ""
        turn = self.turns.get(host, 0)
        self.turns[host] = turn + 1
        options = self.answers[host]
        answer = options[turn % len(options)]
        if self.delay_s > 0:
            await anyio.sleep(self.delay_s)
            end = start + self.delay_s
        else:
            end = time.perf_counter()
        self.spans.append((start, end))
        return answer


def covered(spans: Sequence[tuple[float, float]]) -> float:
    """Seconds covered by at least one engine request (the union of the intervals)."""
    total = 0.0
    current: tuple[float, float] | None = None
    for start, end in sorted(spans):
        if current is None or start > current[1]:
            if current is not None:
                total += current[1] - current[0]
            current = (start, end)
        else:
            current = (current[0], max(current[1], end))
    if current is not None:
        total += current[1] - current[0]
    return total


def memory_of(core: Rypsok) -> MemoryStore:
    """The core's memory store, whose parts the benchmark swaps (the default backend)."""
    from rypsok.core.store.local.memory_store import MemoryStore

    assert isinstance(core.store, MemoryStore)
    return core.store


def build_core(workdir: Path, config_toml: str = CONFIG_TOML) -> tuple[Rypsok, BenchClient]:
    from rypsok.core.config import load
    from rypsok.core.facade import Rypsok
    from rypsok.core.net.client import Response
    from rypsok.core.store.local.provider import ProviderLimiter

    path = workdir / "bench.toml"
    path.write_text(config_toml, encoding="utf-8")
    config = load(str(path), {"BRAVE_API_KEY": BRAVE_KEY})
    json_head = (("content-type", "application/json; charset=utf-8"),)
    client = BenchClient(
        {
            "api.search.brave.com": [Response(200, json_head, brave_body())],
            # Calls alternate: the first Wikipedia engine of a search gets hits 0-9, the
            # second hits 4-13 (six pages in common).
            "en.wikipedia.org": [
                Response(200, json_head, wikipedia_body(0)),
                Response(200, json_head, wikipedia_body(4)),
            ],
        }
    )
    # BenchClient has only the `get` the drivers call, not the whole OutboundClient.
    core = Rypsok(config, client=client)  # type: ignore[arg-type]
    # The provider limits (Wikipedia 100/min, burst 10; Brave 60/min, burst 1) would hold
    # a loop of searches for minutes: each engine gets a limiter of a very high rate, with
    # its concurrency unchanged.
    limiters = {}
    for engine_id, old in memory_of(core).limiters.items():
        limiters[engine_id] = ProviderLimiter(10**9, 10**6, int(old.slots.total_tokens))
    memory_of(core).limiters = limiters
    # The stage the book calls post-processing (fusion, cleaning, the cut), timed in place.
    stage = core.searches._results

    def timed(*args: Any) -> Any:
        started = time.perf_counter()
        try:
            return stage(*args)
        finally:
            client.post.append(time.perf_counter() - started)

    setattr(core.searches, "_results", timed)  # noqa: B010 - an instance attribute on purpose
    return core, client


@dataclass
class Series:
    label: str
    own_ms: list[float]
    call_ms: list[float]
    cpu_ms: list[float]
    post_ms: list[float]
    requests: list[int] = field(default_factory=list)  # engine requests of each search
    from_cache: list[int] = field(default_factory=list)  # from_cache notices of each search


def fresh_tool_limiter(core: Rypsok) -> None:
    """A new web_search window (6000 per minute), as at process start."""
    from rypsok.core.store.local.calls import ToolRateLimiter

    lim = core.config.limits
    memory_of(core).calls = ToolRateLimiter(
        {
            "web_search": lim.web_search_per_minute,
            "web_fetch": lim.web_fetch_per_minute,
            "engine_status": lim.engine_status_per_minute,
        }
    )


@dataclass(frozen=True)
class Variant:
    label: str
    delay_s: float = 0.0  # every engine answers after this
    encode: bool = False  # also build the tool result as the stdio adapter sends it
    cache: bool = True  # use the core's result cache, when it has one (off: as if disabled)
    fresh_queries: bool = False  # a query never asked before, so every lookup misses


def run_searches(
    core: Rypsok, client: BenchClient, variants: Sequence[Variant], count: int
) -> list[Series]:
    """Own share, call duration, CPU time and post-processing time (ms) of `count`
    sequential searches per variant, after a warm-up.

    The variants take turns search by search, so a slow spell of the machine touches
    them alike. The run starts with a fresh tool rate limiter and never sends more
    than web_search_per_minute searches through one limiter, so none is refused.
    """
    import anyio

    budget = core.config.limits.web_search_per_minute
    encoder = _encoder(core)
    cache = memory_of(core).cache

    async def go() -> list[Series]:
        series = [Series(v.label, [], [], [], []) for v in variants]
        admitted = 0
        fresh_tool_limiter(core)
        for i in range((WARMUP_SEARCHES + count) * len(variants)):
            variant, row = variants[i % len(variants)], series[i % len(variants)]
            if admitted == budget:
                fresh_tool_limiter(core)
                admitted = 0
            admitted += 1
            text = QUERIES[i // len(variants) % len(QUERIES)]
            if variant.fresh_queries:
                text = f"{text} {i}"
            arguments = {"query": text, "max_results": MAX_RESULTS}
            memory_of(core).cache = cache if variant.cache else None
            client.delay_s = variant.delay_s
            client.spans.clear()
            client.post.clear()
            cpu_started = time.thread_time()
            started = time.perf_counter()
            response = await core.search(arguments)
            if variant.encode:
                encoder(response.to_json())
            ended = time.perf_counter()
            cpu = time.thread_time() - cpu_started
            if i < WARMUP_SEARCHES * len(variants):
                continue
            row.call_ms.append((ended - started) * 1000)
            row.own_ms.append((ended - started - covered(client.spans)) * 1000)
            row.cpu_ms.append(cpu * 1000)
            row.post_ms.append(sum(client.post) * 1000)
            row.requests.append(len(client.spans))
            row.from_cache.append(sum(n.code == "from_cache" for n in response.notices))
        memory_of(core).cache = cache
        return series

    return anyio.run(go)


def _encoder(core: Rypsok) -> Callable[[dict[str, Any]], str]:
    """What the stdio adapter does with a search response: the tool result, on the wire."""
    import mcp_types as types

    from rypsok.protocol.server import compact

    structured = core.config.service.structured_content

    def encode(obj: dict[str, Any]) -> str:
        text: list[types.ContentBlock] = [types.TextContent(type="text", text=compact(obj))]
        result = (
            types.CallToolResult(content=text, structured_content=obj)
            if structured
            else types.CallToolResult(content=text)
        )
        message = types.JSONRPCResponse(
            jsonrpc="2.0", id=1, result=result.model_dump(by_alias=True, exclude_none=True)
        )
        return message.model_dump_json(by_alias=True, exclude_unset=True)

    return encode


def sanity(core: Rypsok, client: BenchClient) -> str:
    """One search, checked: every engine answered and results were merged."""
    import anyio

    from rypsok.core.engines.base import results_of
    from rypsok.core.search.rank import EngineAnswer, Observation, rank

    fresh_tool_limiter(core)
    response = anyio.run(core.search, {"query": QUERIES[0], "max_results": MAX_RESULTS})
    if response.outcome != "ok" or len(response.results) != MAX_RESULTS:
        raise SystemExit(
            f"bench: the sanity search gave outcome={response.outcome} with "
            f"{len(response.results)} results; notices={response.notices}"
        )
    answers = []
    for eid, driver in core.searches.drivers.items():
        host = "api.search.brave.com" if eid == "brave" else "en.wikipedia.org"
        raw = [results_of(driver.parse(r.status, r.header, r.body)) for r in client.answers[host]]
        pick = raw[1] if eid == "wikipedia_b" else raw[0]
        answers.append(
            EngineAnswer(eid, 0, [Observation(x.url, x.title, x.snippet, x.date) for x in pick])
        )
    merged = rank(answers, max_results=30)
    notices = (
        ", ".join(f"{n.code}={n.count}" if n.count else n.code for n in response.notices) or "none"
    )
    return (
        f"each search: 3 engines x 10 results -> {len(merged.results)} distinct after "
        f"deduplication -> {len(response.results)} returned; notices: {notices}"
    )


def pct(values: Sequence[float], q: float) -> float:
    """The q-th percentile, nearest rank (p50 of 1000 values is the 500th smallest)."""
    ordered = sorted(values)
    index = max(0, min(len(ordered) - 1, int(-(-q * len(ordered) // 100)) - 1))
    return ordered[index]


def section_search(count: int, workdir: Path) -> None:
    from rypsok.core.telemetry import log

    print(
        f"1. rypsok's own share of a search ({count} searches per row after "
        f"{WARMUP_SEARCHES} warm-up, rows interleaved, 3 engines x 10 results, "
        f"max_results={MAX_RESULTS})"
    )
    devnull = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - closed below
    previous = log._stream
    log._stream = devnull  # the call's log line is still formatted and written
    try:
        core, client = build_core(workdir)
        note = sanity(core, client)
        series = run_searches(
            core,
            client,
            [
                Variant("measured: engines answer at once"),
                Variant("measured: at once, + tool result JSON", encode=True),
                Variant(
                    f"measured: engines answer after {ENGINE_DELAY_S * 1000:.0f} ms",
                    delay_s=ENGINE_DELAY_S,
                ),
            ],
            count,
        )
    finally:
        log._stream = previous
        devnull.close()

    rows = [
        ("reference: Rust build, post-processing", "0.64 ms", "-", "5.11 ms", "-", "-"),
        ("aim (issue)", "< 2 ms", "< 10 ms", "-", "-", "-"),
    ]
    for s in series:
        rows.append(
            (
                s.label,
                ms(statistics.median(s.own_ms)),
                ms(pct(s.own_ms, 99)),
                ms(max(s.own_ms)),
                ms(statistics.median(s.cpu_ms)),
                ms(pct(s.cpu_ms, 99)),
            )
        )
        if s is series[0]:
            post = s.post_ms
            rows.append(
                (
                    "  of which post-processing",
                    ms(statistics.median(post)),
                    ms(pct(post, 99)),
                    ms(max(post)),
                    "-",
                    "-",
                )
            )
    table(("own share", "p50", "p99", "max", "CPU p50", "CPU p99"), rows)
    mean_call = statistics.fmean(series[0].call_ms)
    print(f"  {note}")
    print(
        f"  mean call duration with engines answering at once: {ms(mean_call)}; "
        f"throughput {1000 / mean_call:.0f} searches/s on one event loop"
    )
    print(
        "  own share = call duration - time covered by at least one engine request "
        "(union of [start, end] of the fake client's requests)"
    )
    print(
        "  post-processing: SearchService._results (rank fusion, content boundary, cut), "
        "the part the book's Rust figure names; the rest is validation, engine tasks, "
        "drivers' parsing, logging"
    )
    print(
        "  CPU: the thread's CPU time over the call (time.thread_time); in a VM it still "
        "counts time the host took the CPU away"
    )
    print(
        "  the provider limiters were replaced by limiters of 1e9 requests/min "
        "(concurrency unchanged); web_search_per_minute = 6000 in the configuration, "
        "and each row starts with a fresh tool limiter, renewed after 6000 searches, "
        "so no search is refused"
    )
    print(
        "  log lines are formatted and written to /dev/null; the book also names an own "
        "share of 'about 6 ms' (RFC 020) without its setup"
    )
    print()


def section_cache(count: int, workdir: Path) -> None:
    """A search answered from the result cache beside the same search without it."""
    import anyio

    from rypsok.core.telemetry import log

    print(
        f"1b. A cached search against an uncached one ({count} searches per row after "
        f"{WARMUP_SEARCHES} warm-up, rows interleaved, 2 Wikipedia engines x 10 results, "
        f"max_results={MAX_RESULTS}, engines answer at once)"
    )
    devnull = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - closed below
    previous = log._stream
    log._stream = devnull
    try:
        core, client = build_core(workdir, CACHE_CONFIG_TOML)
        cache = memory_of(core).cache
        if cache is None:
            raise SystemExit("bench: the cache section's configuration left the cache off")
        # Sanity: the second of two equal searches is served whole from the cache.
        fresh_tool_limiter(core)
        arguments = {"query": "bench sanity", "max_results": MAX_RESULTS}
        client.spans.clear()
        first = anyio.run(core.search, arguments)
        asked = len(client.spans)
        client.spans.clear()
        second = anyio.run(core.search, arguments)
        if (
            asked != 2
            or client.spans
            or second.results != first.results
            or [n.code for n in second.notices] != ["from_cache", "from_cache"]
        ):
            raise SystemExit(
                f"bench: the cache sanity check failed: requests {asked} then "
                f"{len(client.spans)}, notices {second.notices}"
            )
        series = run_searches(
            core,
            client,
            [
                Variant("uncached (cache off)", cache=False),
                Variant("cache on, every lookup misses (new query)", fresh_queries=True),
                Variant("cache on, answered from the cache"),
            ],
            count,
        )
        entries = len(cache)
    finally:
        log._stream = previous
        devnull.close()

    rows = []
    for s in series:
        rows.append(
            (
                s.label,
                ms(statistics.median(s.call_ms)),
                ms(pct(s.call_ms, 99)),
                ms(max(s.call_ms)),
                ms(statistics.median(s.cpu_ms)),
                f"{statistics.fmean(s.requests):.2f}",
                f"{statistics.fmean(s.from_cache):.2f}",
            )
        )
    table(("call duration", "p50", "p99", "max", "CPU p50", "requests", "from_cache"), rows)
    uncached, hit = statistics.median(series[0].call_ms), statistics.median(series[2].call_ms)
    print(
        f"  p50 of a cached search is {hit / uncached:.0%} of an uncached one "
        f"({ms(hit)} against {ms(uncached)}); with real engines the uncached call also "
        f"waits for the slowest engine, which a hit never does"
    )
    print(
        "  call duration: Rypsok.search, measured around the await (engines answer at "
        "once, so it is all rypsok's own work); requests and from_cache: per search, mean"
    )
    bound = core.config.cache.max_entries
    evicted = "; the new-query row filled it, so it evicted" if entries >= bound else ""
    print(f"  the cache held {entries} entries at the end (max_entries {bound}{evicted})")
    print()


def profile_search(count: int, workdir: Path) -> None:
    """cProfile over `count` searches with engines answering at once."""
    from rypsok.core.telemetry import log

    with open(os.devnull, "w", encoding="utf-8") as devnull:
        previous = log._stream
        log._stream = devnull
        try:
            core, client = build_core(workdir)
            profiler = cProfile.Profile()
            profiler.enable()
            run_searches(core, client, [Variant("profile")], count)
            profiler.disable()
        finally:
            log._stream = previous
    for key in ("tottime", "cumulative"):
        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out)
        stats.strip_dirs().sort_stats(key).print_stats(25)
        print(f"profile of {count} searches, sorted by {key}:")
        print("\n".join(out.getvalue().splitlines()[:40]))
        print()


# -- sections 2 and 3: child processes on stdio -----------------------------------------------

DISCOVER = (
    json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "server/discover",
            "params": {
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
                    "io.modelcontextprotocol/clientCapabilities": {},
                }
            },
        }
    )
    + "\n"
).encode()

# The smallest low-level SDK server with one tool, served on stdio.
BARE_SERVER = """
import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=[types.Tool(
        name="echo", description="Return the text.",
        input_schema={"type": "object", "properties": {"text": {"type": "string"}}})])


async def call_tool(ctx, params):
    text = str((params.arguments or {}).get("text", ""))
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


async def main():
    server = Server("bare", version="1", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


anyio.run(main)
"""


PRINT_DONE = "print('done', flush=True)"


@dataclass
class Child:
    seconds: float  # process start to the first line on stdout
    rss_kib: int | None
    cpu_s: float  # user + system CPU of the child, start to exit


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """No RYPSOK_CONFIG, no keys, no proxies: the default configuration."""
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG")}
    env["HOME"] = str(home)
    env.update(extra)
    return env


def first_answer(
    cmd: Sequence[str], env: dict[str, str], *, send: bool = True, hold_s: float = 0.0
) -> Child:
    """Start cmd and time its first line on stdout: the answer to server/discover (send),
    or a line the command prints itself. Optionally stay idle for hold_s and read VmRSS;
    then close stdin (the end of input) and wait for the exit."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=REPO,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        if send:
            proc.stdin.write(DISCOVER)
            proc.stdin.flush()
        line = _read_line(proc.stdout.fileno(), started + START_TIMEOUT_S)
        seconds = time.perf_counter() - started
        if send:
            answer = json.loads(line)
            if answer.get("id") != 1 or "result" not in answer:
                raise SystemExit(f"bench: {cmd[:3]} did not answer server/discover: {line[:200]!r}")
        rss = None
        if hold_s:
            time.sleep(hold_s)
            rss = vm_rss_kib(proc.pid)
        proc.stdin.close()
        code, cpu = _wait(proc, time.perf_counter() + EXIT_TIMEOUT_S)
        if code != 0:
            raise SystemExit(f"bench: {cmd[:3]} exited with {code}")
        return Child(seconds, rss, cpu)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()


def _wait(proc: subprocess.Popen[bytes], deadline: float) -> tuple[int, float]:
    """The exit code and the CPU seconds (user + system) of the child, from wait4."""
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return proc.returncode, usage.ru_utime + usage.ru_stime
        if time.perf_counter() > deadline:
            raise SystemExit("bench: the child did not exit at the end of its input")
        time.sleep(0.005)


def _read_line(fd: int, deadline: float) -> bytes:
    buffer = b""
    while b"\n" not in buffer:
        left = deadline - time.perf_counter()
        if left <= 0:
            raise SystemExit("bench: no answer within the time allowed")
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise SystemExit(f"bench: the child closed stdout before answering: {buffer!r}")
            buffer += chunk
    return buffer.split(b"\n", 1)[0]


def vm_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text(encoding="ascii").splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise SystemExit("bench: no VmRSS in /proc (Linux only)")


def base_python() -> str:
    """The interpreter beneath the venv: the pyz runs as an operator runs it."""
    candidate = getattr(sys, "_base_executable", None) or sys.executable
    return str(Path(candidate).resolve())


def build_pyz(out: Path) -> tuple[Path | None, str]:
    started = time.perf_counter()
    try:
        proc = subprocess.run(
            [sys.executable, str(REPO / "build_zipapp.py"), "--out", str(out)],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None, "build_zipapp.py took longer than 300 s"
    if proc.returncode != 0:
        return None, "build_zipapp.py failed: " + proc.stderr.strip()[-300:]
    return out / "rypsok.pyz", f"built in {time.perf_counter() - started:.1f} s"


@dataclass
class Subject:
    label: str
    cmd: list[str]
    env: dict[str, str]
    send: bool = True
    seconds: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


def section_start(runs: int, workdir: Path, pyz_path: Path | None) -> None:
    print(
        f"2. Cold start: process start to the answer of server/discover on stdio "
        f"(median of {runs} runs, interleaved)"
    )
    home = workdir / "home"
    home.mkdir(exist_ok=True)
    env = clean_env(home)
    notes = []
    pyz = pyz_path
    if pyz is None:
        pyz, how = build_pyz(workdir / "dist")
        notes.append(f"pyz: {how}")
    subjects = [
        Subject("(a) python -m rypsok serve (venv)", [sys.executable, "-m", "rypsok", "serve"], env)
    ]
    first_run = None
    if pyz is not None:
        shiv_env = clean_env(home, SHIV_ROOT=str(workdir / "shiv"))
        python = base_python()
        first_run = first_answer([python, str(pyz), "serve"], shiv_env).seconds * 1000
        subjects.append(
            Subject("(b) pyz, unpacked (base python3)", [python, str(pyz), "serve"], shiv_env)
        )
        notes.append(
            f"pyz run with {python}, SHIV_ROOT in a temporary folder; the first run unpacks it (b0)"
        )
    subjects += [
        Subject(
            "(c) python -c 'import mcp.server, mcp.server.stdio'",
            [sys.executable, "-c", f"import mcp.server, mcp.server.stdio; {PRINT_DONE}"],
            env,
            send=False,
        ),
        Subject(
            "(d) bare SDK low-level server, one tool", [sys.executable, "-c", BARE_SERVER], env
        ),
        Subject(
            "(e) python -c '' (interpreter start)",
            [sys.executable, "-c", PRINT_DONE],
            env,
            send=False,
        ),
    ]
    # Round after round, so that a passing load on the machine touches every subject alike.
    for _ in range(runs):
        for subject in subjects:
            child = first_answer(subject.cmd, subject.env, send=subject.send)
            subject.seconds.append(child.seconds * 1000)
            subject.cpu.append(child.cpu_s * 1000)
    rows: list[tuple[str, ...]] = [
        ("reference: Rust build, M1 (book)", "729 ms", "-", "-"),
        ("aim (issue)", "< 1000 ms", "-", "-"),
    ]
    for subject in subjects:
        times = subject.seconds
        rows.append(
            (
                subject.label,
                ms(statistics.median(times), 0),
                f"{ms(min(times), 0)} .. {ms(max(times), 0)}",
                ms(statistics.median(subject.cpu), 0),
            )
        )
        if subject.label.startswith("(a)") and first_run is not None:
            rows.append(("(b0) pyz, first run (unpacks)", ms(first_run, 0), "1 run", "-"))
    if pyz is None:
        rows.append(("(b) pyz", "not measured", "-", "-"))
    table(("first answer", "median", "range", "CPU to exit"), rows)
    print(
        "  (c) and (e): process start to a line the child prints once the imports are done; "
        "no BRAVE_API_KEY, so (a) and (b) serve the default configuration (Wikipedia)"
    )
    print("  CPU to exit: the child's user + system time from start to exit (end of input)")
    for note in notes:
        print(f"  {note}")
    print()


def section_memory(runs: int, workdir: Path) -> None:
    print(
        f"3. Idle memory: VmRSS after answering server/discover and {IDLE_WAIT_S:.0f} s idle "
        f"(median of {runs} runs)"
    )
    home = workdir / "home"
    home.mkdir(exist_ok=True)
    env = clean_env(home)

    def rss(cmd: Sequence[str]) -> list[int]:
        found = [first_answer(cmd, env, hold_s=IDLE_WAIT_S).rss_kib for _ in range(runs)]
        return [r for r in found if r is not None]

    ours = rss([sys.executable, "-m", "rypsok", "serve"])
    bare = rss([sys.executable, "-c", BARE_SERVER])
    difference = statistics.median(ours) - statistics.median(bare)
    rows = [
        ("reference: Rust build, musl (book, LIM-M1)", "10.9 MiB", "idle median, 20 runs"),
        ("aim (issue)", f"< bare + 10 MiB = {mib(statistics.median(bare) + 10 * 1024)}", "-"),
        (
            "rypsok serve (stdio, default configuration)",
            mib(statistics.median(ours)),
            f"{mib(min(ours))} .. {mib(max(ours))}",
        ),
        (
            "bare SDK low-level server, one tool",
            mib(statistics.median(bare)),
            f"{mib(min(bare))} .. {mib(max(bare))}",
        ),
        ("difference", mib(difference), "-"),
    ]
    table(("VmRSS", "median", "range"), rows)
    print()


# -- output -----------------------------------------------------------------------------------


def ms(value: float, digits: int = 2) -> str:
    return f"{value:.{digits}f} ms"


def mib(kib: float) -> str:
    return f"{kib / 1024:.1f} MiB"


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    line = "  ".join("-" * w for w in widths)
    print(
        "  "
        + "  ".join(
            h.ljust(w) if i == 0 else h.rjust(w)
            for i, (h, w) in enumerate(zip(header, widths, strict=True))
        )
    )
    print("  " + line)
    for row in rows:
        print(
            "  "
            + "  ".join(
                str(c).ljust(w) if i == 0 else str(c).rjust(w)
                for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmarks of rypsok (figures, no asserts).")
    parser.add_argument(
        "--searches",
        type=int,
        default=None,
        help="searches per row of section 1 (default 1000, --quick 100)",
    )
    parser.add_argument(
        "--quick", action="store_true", help="100 searches, 3 cold starts, 1 memory run"
    )
    parser.add_argument(
        "--only",
        choices=("search", "cache", "start", "memory"),
        action="append",
        help="run only this section (repeatable)",
    )
    parser.add_argument("--pyz", type=Path, help="use this rypsok.pyz instead of building one")
    parser.add_argument(
        "--profile", action="store_true", help="also print a cProfile of the searches of section 1"
    )
    args = parser.parse_args(argv)
    count = args.searches or (100 if args.quick else 1000)
    if count < 1:
        parser.error("--searches must be at least 1")
    start_runs, memory_runs = (3, 1) if args.quick else (5, 3)
    sections = set(args.only or ("search", "cache", "start", "memory"))
    import rypsok

    print(
        f"rypsok {rypsok.__version__}, Python {sys.version.split()[0]}, "
        f"{os.cpu_count()} CPUs, {sys.platform}"
    )
    print()
    with tempfile.TemporaryDirectory(prefix="rypsok-bench-") as tmp:
        workdir = Path(tmp)
        try:
            if "search" in sections:
                section_search(count, workdir)
                if args.profile:
                    profile_search(count, workdir)
            if "cache" in sections:
                section_cache(count, workdir)
            if "start" in sections:
                section_start(start_runs, workdir, args.pyz)
            if "memory" in sections:
                section_memory(memory_runs, workdir)
        finally:
            shutil.rmtree(workdir / "shiv", ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
