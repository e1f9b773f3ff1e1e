"""A cache entry is kept packed as UTF-8 bytes (issue 31): what a hit gives back is
what was stored, and an entry weighs what the memory estimate of check counts."""

from __future__ import annotations

import gc
import tracemalloc

from rypsok.core import limits
from rypsok.core.config.estimate import CACHE_ENTRY_BYTES
from rypsok.core.store.local.cache import ResultCache, entry_bytes, pack, unpack
from rypsok.core.store.values import CacheKey, EngineQuery, RawResult

ODD = (
    RawResult("https://e.example/a", "A <b>x</b>", "about a", "2026-01-02", True, ("alpha",)),
    RawResult("https://e.example/b", "", "", None, False, ()),
    RawResult("https://e.example/c", "t", "s", "", True, ("a b", "c.d", "e-f", "g_h")),
    # A stray surrogate, a surrogate pair written as two code units, and every byte
    # value the framing uses, as characters: all come back as they were.
    RawResult("https://e.example/\ud800", "\ud83d\ude00 \xfd\xfe\xff", "😀 東京 Москва", None),
)


def test_a_packed_answer_comes_back_equal() -> None:
    assert unpack(pack(ODD)) == ODD
    assert unpack(pack(())) == ()
    for one in ODD:
        assert unpack(pack([one])) == (one,)


def test_a_hit_gives_back_the_stored_answer() -> None:
    cache = ResultCache(ttl_s=60, max_entries=4, max_entry_bytes=4096, sweep=False)
    key = CacheKey("wikipedia", "local", _query("rust"))
    assert cache.put(key, list(ODD))
    assert cache.get(key) == ODD


def test_a_packed_answer_is_its_counted_bytes_and_a_few_a_result() -> None:
    # A result's four texts, five separators, its flag digit and one separator between
    # results: 7 bytes a result past its text, and each source's name with its mark.
    sources = sum(len(name) + 1 for r in ODD for name in r.sources)
    assert len(pack(ODD)) == entry_bytes(ODD) + 7 * len(ODD) - 1 + sources


def _query(text: str, count: int = 10) -> EngineQuery:
    return EngineQuery(
        query=text,
        category="general",
        language="en",
        region="US",
        safe_search="moderate",
        time_range=None,
        count=count,
    )


def _answer(index: int, count: int, bound: int) -> list[RawResult]:
    """`count` results, together just under `bound` UTF-8 bytes, of ASCII words with
    one emoji in every title and snippet: the widest Python could store them."""
    per = bound // count
    out = []
    for j in range(count):
        url = f"https://result.example/{index}/{j}"
        title = "😀 " + "title words " * 5
        snippet_bytes = per - len(url) - len(title.encode()) - len("2026-01-02")
        snippet = "🚀" + "x" * (snippet_bytes - 4)
        out.append(RawResult(url, title, snippet, "2026-01-02", True, ("alpha",)))
    return out


def test_cache_entry_weighs_at_most_its_bound_and_the_estimate_s_overhead() -> None:
    """What the estimate counts for an entry (max_entry_bytes + CACHE_ENTRY_BYTES) is
    above what an entry at its bound holds, in the worst shape it can take: text that
    Python would store at 4 bytes a character, 20 results (the most results_per_engine
    asks for), and a key with a query of the longest length in 4-byte characters. Kept
    as result objects, such an entry held three times its bound."""
    bound = limits.default("LIM-K4")
    results = limits.get("LIM-S3").high
    query_chars = limits.get("LIM-S1").high
    assert results is not None and query_chars is not None
    entries = 40
    cache = ResultCache(ttl_s=60, max_entries=entries, max_entry_bytes=bound, sweep=False)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(entries):
            # Made here, traced: what the cache keeps of them is counted.
            answer = _answer(i, results, bound)
            assert bound - 64 <= entry_bytes(answer) <= bound
            text = f"🔍{i:05d}" + "q" * (query_chars - 6)
            assert cache.put(CacheKey("searxng", "local", _query(text, results)), answer)
        del answer, text  # what the cache holds is all that is left of them
        gc.collect()
        held = (tracemalloc.get_traced_memory()[0] - before) / entries
    finally:
        tracemalloc.stop()
    assert len(cache) == entries
    assert held <= bound + CACHE_ENTRY_BYTES
