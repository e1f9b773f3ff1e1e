"""The limits table as code: every LIM- row of the book, in one place.

Nothing else in the package writes a limit's number. A row is either *keyed*
(a configuration key sets it, within a range) or *fixed*. The configuration
schema reads defaults and ranges from here; the services read the effective
values from the validated configuration, or the fixed values from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

KIB: Final = 1024
MIB: Final = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Limit:
    """One row of the limits table."""

    id: str
    quantity: str
    default: int
    low: int | None = None
    high: int | None = None
    key: str | None = None  # the configuration key that sets it; None when fixed


def _rows(*rows: Limit) -> dict[str, Limit]:
    table: dict[str, Limit] = {}
    for row in rows:
        if row.id in table:  # pragma: no cover - guarded by a unit test
            raise ValueError(f"duplicate limit {row.id}")
        table[row.id] = row
    return table


TABLE: Final[dict[str, Limit]] = _rows(
    # Search
    Limit("LIM-S1", "length of query, characters", 400, 1, 600, "search.query_max_chars"),
    Limit("LIM-S2", "max_results", 5, 1, 20, "search.max_results"),
    Limit("LIM-S2C", "ceiling of max_results", 20, 1, 20, "search.max_results_ceiling"),
    Limit("LIM-S3", "results requested from each engine", 10, 5, 20, "search.results_per_engine"),
    Limit("LIM-S4", "overall deadline of a search, ms", 2500, 500, 10000, "search.deadline_ms"),
    Limit(
        "LIM-S5", "timeout of one engine request, ms", 2000, 100, None, "search.engine_timeout_ms"
    ),
    Limit("LIM-S6", "reserve for post-processing, ms", 200, 50, 1000, "search.reserve_ms"),
    Limit("LIM-S7", "margin of a web_search call beyond the deadline, ms", 300),
    Limit("LIM-S8", "engines queried per request", 8, 1, 16, "search.engines_per_request"),
    Limit("LIM-S9", "length of a snippet, characters", 300, 50, 1000, "search.snippet_max_chars"),
    Limit("LIM-S10", "length of a title, characters", 150, 50, 300, "search.title_max_chars"),
    Limit("LIM-S11", "latency window, completed requests", 20),
    Limit(
        "LIM-S12",
        "connect timeout of an engine request, ms",
        1000,
        200,
        5000,
        "search.connect_timeout_ms",
    ),
    Limit("LIM-S13", "maximum duration of an engine_status call, ms", 200),
    # site: and -site: terms read from one query (issue 36; not in the book's table).
    Limit("LIM-S14", "site: terms in one web_search query", 10),
    # Fetch
    Limit("LIM-F1", "max_chars", 3000, 500, None, "fetch.max_chars"),
    Limit("LIM-F2", "ceiling of max_chars", 20000, 500, 100000, "fetch.max_chars_ceiling"),
    Limit(
        "LIM-F3",
        "response bytes after decompression",
        5 * MIB,
        64 * KIB,
        10 * MIB,
        "fetch.max_bytes",
    ),
    Limit("LIM-F4", "overall deadline of a fetch, ms", 10000, 1000, 30000, "fetch.deadline_ms"),
    Limit("LIM-F5", "margin of a web_fetch call beyond the deadline, ms", 1000),
    Limit("LIM-F6", "connect timeout of a fetch, ms", 3000, 500, 10000, "fetch.connect_timeout_ms"),
    Limit("LIM-F7", "redirects followed", 5, 0, 10, "fetch.max_redirects"),
    Limit("LIM-F9", "length of a url, characters", 2048),
    Limit("LIM-F10", "HTML nodes parsed", 100000),
    Limit("LIM-F11", "HTML nesting depth", 256),
    Limit("LIM-F12", "robots.txt kept in memory, seconds", 24 * 3600),
    Limit("LIM-F13", "size of a robots.txt read, bytes", 512 * KIB),
    Limit(
        "LIM-F14", "URLs remembered for strict mode", 10000, 100, 1000000, "limits.strict_mode_urls"
    ),
    Limit("LIM-F15", "robots.txt entries kept", 1000, 10, 100000, "limits.robots_cache_entries"),
    # What web_fetch keeps of a page for the next part (issue 20; not in the book's table)
    Limit(
        "LIM-F16",
        "time a fetched page is kept for continuation, s (0: nothing is kept)",
        120,
        0,
        3600,
        "fetch.continuation_ttl_s",
    ),
    Limit(
        "LIM-F17",
        "fetched pages kept for continuation",
        32,
        1,
        1000,
        "fetch.continuation_max_entries",
    ),
    Limit(
        "LIM-F18",
        "fetched pages kept for continuation, bytes in all (4 bytes a character)",
        8 * MIB,
        64 * KIB,
        64 * MIB,
        "fetch.continuation_max_bytes",
    ),
    Limit("LIM-F19", "content hashes remembered for content_changed, caller-URL pairs", 1024),
    Limit("LIM-F20", "lifetime of a remembered content hash, times fetch.continuation_ttl_s", 10),
    # PDFs (issue 33; not in the book's table): read in a worker process (fetch/pdf/)
    Limit("LIM-F21", "pages of a PDF read", 1000, 1, 10000, "fetch.pdf_max_pages"),
    Limit(
        "LIM-F22",
        "characters of Markdown made of a PDF",
        1024 * 1024,
        64 * 1024,
        8 * 1024 * 1024,
        "fetch.pdf_max_chars",
    ),
    Limit(
        "LIM-F23",
        "address space of the PDF reader's process, MiB (bounds its objects and every "
        "stream it decompresses)",
        60,
        48,
        1024,
        "fetch.pdf_memory_mib",
    ),
    # The data a script-rendered page carries (issue 34; not in the book's table): the
    # text of its JSON and framework scripts, kept by the parse (html/tree.py) and read
    # without running anything (fetch/extraction/embedded.py). Fixed: a page is at most
    # LIM-F3, and 2 MiB holds the data of any real article page many times over.
    Limit("LIM-F24", "bytes of script data kept from one page", 2 * MIB),
    Limit("LIM-F25", "nesting depth of embedded data read", 64),
    Limit("LIM-F26", "strings and brackets of embedded data read from one page", 200000),
    # A long document's outline (issue 36; not in the book's table): what every answer
    # that holds part of a document lists of its headings. Fixed: small beside
    # max_chars, since each part of the document repeats it.
    Limit("LIM-F27", "headings in a web_fetch outline", 40),
    Limit("LIM-F28", "characters of heading text in a web_fetch outline", 2000),
    # Concurrency and rates
    Limit("LIM-C1", "outbound requests in flight", 32, 1, 256, "limits.outbound_in_flight"),
    Limit("LIM-C2", "requests in flight per engine", 2, 1, 8, "limits.per_engine_in_flight"),
    Limit("LIM-C3", "fetches in flight", 4, 1, 64, "limits.fetches_in_flight"),
    Limit("LIM-C4", "fetches in flight per host", 1),
    Limit("LIM-C5", "parsing tasks in flight", 2, 1, 16, "limits.parsing_in_flight"),
    Limit("LIM-C6", "web_search calls per minute", 60, 1, 6000, "limits.web_search_per_minute"),
    Limit("LIM-C7", "web_fetch calls per minute", 30, 1, 6000, "limits.web_fetch_per_minute"),
    Limit(
        "LIM-C8", "engine_status calls per minute", 30, 1, 6000, "limits.engine_status_per_minute"
    ),
    # HTTP listener
    Limit("LIM-H1", "HTTP connections at once", 64, 1, 4096, "service.http.max_connections"),
    Limit(
        "LIM-H2", "HTTP request body, bytes", 65536, 4096, 1048576, "service.http.max_request_bytes"
    ),
    Limit("LIM-H3", "idle HTTP connection timeout, s", 60, 5, 600, "service.http.idle_timeout_s"),
    Limit("LIM-H4", "HTTP/2 streams per connection", 16, 1, 256, "service.http.max_streams"),
    Limit(
        "LIM-H5", "time one HTTP request may take, s", 30, 3, 600, "service.http.request_timeout_s"
    ),
    Limit("LIM-H5M", "request_timeout_s margin over fetch.deadline_ms, ms", 2000),
    Limit("LIM-H6", "live handshake-revision sessions", 256, 1, 2048, "service.http.max_sessions"),
    Limit("LIM-H6T", "session expiry without traffic, s", 300),
    Limit("LIM-H7", "HTTP header block, bytes", 16384),
    # Circuit breaker
    Limit(
        "LIM-B1",
        "consecutive failures that open the circuit",
        3,
        1,
        10,
        "resilience.failures_to_open",
    ),
    Limit("LIM-B2", "first cooldown, s", 60, 10, 600, "resilience.first_cooldown_s"),
    Limit("LIM-B3", "longest cooldown, s", 900, 10, 3600, "resilience.max_cooldown_s"),
    # Interface size and shape
    Limit("LIM-I1", "tool names, descriptions, schemas and instructions, characters", 2000),
    Limit("LIM-I2", "parameters of one tool", 5),
    Limit("LIM-I4", "length of a notice or error message, characters", 200),
    # Operation
    Limit(
        "LIM-O1",
        "time to exit after end of input or SIGTERM, ms",
        3000,
        500,
        10000,
        "service.shutdown_ms",
    ),
    Limit("LIM-O2", "time until a cancelled call aborted its requests, ms", 500),
    Limit("LIM-O3", "largest stdio line, bytes", 16 * MIB),
    # Cache
    Limit("LIM-K2", "cache entry lifetime, s", 300, 10, 3600, "cache.ttl_s"),
    # The book's defaults are 1000 entries of 32 KiB: 36 MiB with what each key weighs,
    # which put the defaults with the cache on above LIM-M5 (issue 31). 256 answers of
    # up to 16 KiB (four times a usual answer of 10 results) fit (docs/memory.md).
    Limit("LIM-K3", "cache entries", 256, 1, 100000, "cache.max_entries"),
    Limit(
        "LIM-K4", "size of one cache entry, bytes", 16384, 1024, 1048576, "cache.max_entry_bytes"
    ),
    # Engine responses (admission records)
    Limit("LIM-E1", "engine response bytes after decompression (API drivers)", 1 * MIB),
    Limit("LIM-E2", "engine response bytes after decompression (scraping drivers)", 256 * KIB),
    # Configuration input (not in the book's table: bounds of our own parser)
    Limit("LIM-X1", "size of the configuration file, bytes", 1 * MIB),
    Limit("LIM-X2", "size of a secret file, bytes", 64 * KIB),
    Limit("LIM-X3", "shortest caller token, bytes", 32),
    # Metrics and health ([service.metrics])
    Limit("LIM-T1", "callers with calls counted under their own label", 100),
    Limit("LIM-T2", "scrape connections served at once", 4),
    Limit("LIM-T3", "milliseconds a rendered scrape is served again", 1000),
    Limit("LIM-T4", "event loop lag above which /healthz fails, ms", 2000),
    # OAuth resource server ([service.http.oauth])
    Limit(
        "LIM-A1", "bytes of one identity provider answer (metadata, keys, introspection)", 64 * KIB
    ),
    Limit("LIM-A2", "bytes of an access token", 12 * KIB),
    Limit("LIM-A3", "characters of a caller id read from a token", 255),
    Limit("LIM-A4", "keys read from one key set", 32),
    Limit("LIM-A5", "validated tokens and introspection answers kept", 10000),
    Limit("LIM-A6", "identity provider requests in flight", 4),
    Limit(
        "LIM-A7", "clock leeway for exp, nbf and iat, s", 30, 0, 300, "service.http.oauth.leeway_s"
    ),
    Limit(
        "LIM-A8",
        "shortest time between two key set fetches, s",
        60,
        5,
        3600,
        "service.http.oauth.keys_refresh_s",
    ),
    Limit(
        "LIM-A9",
        "age of a key set before it is fetched again, s",
        3600,
        300,
        86400,
        "service.http.oauth.keys_max_age_s",
    ),
    Limit(
        "LIM-A10",
        "time a positive introspection answer is kept, s",
        60,
        0,
        3600,
        "service.http.oauth.introspection_cache_s",
    ),
    Limit(
        "LIM-A11",
        "deadline of one identity provider request, ms",
        3000,
        500,
        10000,
        "service.http.oauth.timeout_ms",
    ),
    Limit("LIM-A12", "callers whose call windows are kept in one process", 10000),
    # Measured costs for CPython on Linux (bench/memory.py); see docs/memory.md
    Limit("LIM-M1", "the process at rest (CPython on Linux), MiB", 71),
    Limit(
        "LIM-M2",
        "fixed part of one web_fetch parse, decoded text, tree and extraction, with "
        "the parser the first fetch loads (CPython on Linux), MiB",
        45,
    ),
    Limit(
        "LIM-M3",
        "growing part of one web_fetch parse, decoded text, tree and extraction "
        "(CPython on Linux), tenths of a byte per byte of page",
        45,
    ),
    Limit("LIM-M4", "one live session, KiB", 60),
    Limit("LIM-M5", "MemoryMax of the documented unit, MiB", 256),
    # The shared store ([store]; issue 21): rypsok's own rows, not the book's.
    Limit("LIM-D1", "time Redis may owe a store operation, ms", 100, 5, 200, "store.timeout_ms"),
    Limit("LIM-D2", "replicas that share the limits", 1, 1, 1000, "store.replicas"),
    Limit("LIM-D3", "connections to the store", 32, 1, 256, "store.max_connections"),
    Limit("LIM-D4", "rest after a failed store operation before the next try, ms", 1000),
    Limit("LIM-D5", "life of a provider slot lease beyond the engine timeout, ms", 2000),
    Limit("LIM-D6", "length of the store key prefix, characters", 64),
    Limit("LIM-D7", "time a call keeps to answer locally after a store wait, ms", 20),
)


# The PDF reader's answer is read up to LIM-F22 characters at this many bytes each (UTF-8;
# the reader takes control characters out, which JSON would write as six), and this
# much for the rest of it.
PDF_ANSWER_BYTES_PER_CHAR: Final = 4
PDF_ANSWER_EXTRA: Final = 64 * KIB

# LIM-F8 is a list, not a number: the ports a fetch may use unless an allow rule says more.
DEFAULT_FETCH_PORTS: Final[tuple[int, ...]] = (80, 443)


def get(limit_id: str) -> Limit:
    return TABLE[limit_id]


def default(limit_id: str) -> int:
    return TABLE[limit_id].default


def by_key() -> dict[str, Limit]:
    """Rows backed by a configuration key, indexed by that key."""
    return {row.key: row for row in TABLE.values() if row.key is not None}
