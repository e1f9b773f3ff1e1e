"""The limits table as code: one place for every LIM- number."""

from __future__ import annotations

import ast

from rypsok.core import limits
from tests.support.paths import REPO
from tests.support.sources import parse_file

PACKAGE = REPO / "rypsok"
# Numbers that equal a limit by coincidence and mean something else (file, value).
NOT_LIMITS = {
    ("client.py", 200),
    ("client.py", 300),
    ("wikipedia.py", 200),
    ("wikipedia.py", 300),
    ("brave.py", 200),
    ("brave.py", 300),  # the 2xx status range
    ("searxng.py", 200),
    ("searxng.py", 300),  # the 2xx status range
    ("searxng.py", 500),  # ms kept back from the instance's upstream time: a record fact
    ("admission.py", 600),
    ("admission.py", 500),  # admission-record facts of the drivers
    ("detectors.py", 100000),  # a regular expression's repetition bound
    ("outline.py", 4096),  # characters of a heading line inspected, not a bound on input
    ("unicode.py", 4096),  # a cache size
    ("markup.py", 4096),  # a cache size
    ("score.py", 600),
    ("prune.py", 600),  # _HARD_PROSE, characters of prose: an extraction heuristic
    ("score.py", 120),  # _MIN_ARTICLE, a score: an extraction heuristic
    ("telemetry.py", 1000000),  # nanoseconds in a millisecond
    ("validate.py", 4096),
    ("validate.py", 256),
    ("validate_service.py", 256),  # list lengths the parser accepts
    ("charset.py", 256),  # the end of the byte range x-user-defined maps
    ("legacy.py", 256),  # the end of the byte range of a single-byte table
    ("load.py", 65536),  # a read chunk
    ("urls.py", 256),
    ("urls.py", 200),  # IPv4 arithmetic; the contact's length
    ("errors.py", 3600),  # the book's bound on a site's Retry-After, not a limits row
    ("errors.py", 500),
    ("pipeline.py", 400),
    ("pipeline.py", 200),
    ("pipeline.py", 300),  # HTTP status classes
    ("probe.py", 200),  # the status a listener that answers gives
    ("process.py", 32768),  # os.O_BINARY's value on Windows, a flag
    ("noncontent.py", 300),
    ("noncontent.py", 500),
    ("noncontent.py", 150),
    ("noncontent.py", 2500),  # characters of a title and of prose: non-content heuristics
    ("glyphs.py", 600),  # a bold font's weight (CSS numbers)
    ("glyphs.py", 4096),  # the bytes of a document title read from PDFium
    ("layout.py", 200),  # characters of a PDF heading: a layout heuristic
    ("kind.py", 20000),  # characters of Markdown looked at for a page kind's vocabulary
    ("kind.py", 4096),  # a cache size
    ("kind.py", 200),  # characters of a long block: a signal of the confidence
    ("kind.py", 3000),  # characters of a read's start looked at for the title
    ("kind.py", 5000),  # characters of a read's start searched for many-language words
    ("egress.py", 255),  # the largest octet of an IPv4 address
    ("urls.py", 255),  # the largest octet of an IPv4 address
    ("keys.py", 2048),  # bits of the smallest RSA key accepted (NIST SP 800-131A)
    ("keys.py", 8192),  # bits of the largest RSA key checked
    ("keys.py", 256),  # characters of a key id
    ("score.py", 150),  # characters of a paragraph the read left out: the same
}


def test_every_row_is_consistent() -> None:
    for row in limits.TABLE.values():
        if row.low is not None:
            assert row.low <= row.default, row.id
        if row.high is not None:
            assert row.default <= row.high, row.id
    keys = [row.key for row in limits.TABLE.values() if row.key]
    assert len(keys) == len(set(keys))


def test_no_limit_number_is_written_outside_the_table() -> None:
    rows = limits.TABLE.values()
    numbers = (
        {r.default for r in rows}
        | {r.low for r in rows if r.low}
        | {r.high for r in rows if r.high}
    )
    distinctive = {n for n in numbers if n >= 100 and n not in (100, 1000, 1024)}
    found = []
    for path in PACKAGE.rglob("*.py"):
        if path.name == "limits.py":
            continue
        for node in ast.walk(parse_file(path)):
            if (
                isinstance(node, ast.Constant)
                and type(node.value) is int
                and node.value in distinctive
                and (path.name, node.value) not in NOT_LIMITS
            ):
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {node.value}")
    assert found == []
