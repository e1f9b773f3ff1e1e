"""The PDF reader's own process: reads one file from stdin, writes one JSON answer.

Started by reader.py with a memory limit it sets on itself before PDFium is loaded
(RLIMIT_AS, where the system has it) and a CPU-time limit behind the parent's deadline.
Whatever the file does to PDFium (an abort, a runaway, an allocation past the limit)
ends this process only. Nothing is written to stderr that the parent reads: the answer
is one JSON object on stdout, its outcome one of our own words.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import time
import unicodedata
from typing import Any, BinaryIO, Final

# Exit codes the parent reads when the process could not write its answer.
EXIT_MEMORY: Final = 3
# Categories of characters that are not readable text: private use, unassigned,
# surrogates, controls, format characters (zero-width ones), and U+FFFD.
_UNREADABLE: Final = frozenset({"Co", "Cn", "Cs", "Cc", "Cf"})
# A text layer with less than this share of readable characters is no text at all
# (glyphs without a Unicode mapping come out as controls or private use).
READABLE_SHARE: Final = 0.5
# Control characters: taken out here, counted, and said in characters_removed as the
# content boundary would (it takes them out of a page); so a character of the answer is
# at most four bytes of JSON (limits.PDF_ANSWER_BYTES_PER_CHAR).
_CONTROLS: Final = re.compile("[\x00-\x1f\x7f-\x9f]")


def limit(memory_mib: int, cpu_s: int) -> None:
    try:
        import resource
    except ImportError:  # Windows: the parent's deadline is the only bound
        return
    size = memory_mib << 20
    for name, value in (("RLIMIT_AS", size), ("RLIMIT_CPU", cpu_s)):
        which = getattr(resource, name, None)
        if which is None:
            continue
        # A hard limit below ours already bounds it.
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(which, (value, value))


def readable(text: str) -> int:
    return sum(1 for c in text if c != "\ufffd" and unicodedata.category(c) not in _UNREADABLE)


def read(
    data: bytes, *, max_pages: int, max_chars: int, budget_s: float = float("inf")
) -> dict[str, Any]:
    """The answer for one file (reader.py reads it). Pages are read until the bounds or
    until ``budget_s`` seconds have gone, so that a long document gives its first pages
    (partial) before the call's deadline rather than nothing."""
    from rypsok.core.fetch.pdf.glyphs import Document, Unreadable
    from rypsok.core.fetch.pdf.layout import normalise, page_pieces, to_markdown

    try:
        doc = Document(data)
    except Unreadable as refused:
        return {"outcome": refused.kind}
    del data
    try:
        title = doc.title()
        pages: list[Any] = []
        chars = good = removed = 0
        partial = doc.pages > max_pages
        started = time.monotonic()
        for index in range(min(doc.pages, max_pages)):
            if index and time.monotonic() - started > budget_s:
                partial = True
                break
            page = doc.page(index)
            for span in page.spans:
                text = normalise(span.text)
                span.text = _CONTROLS.sub("", text)
                removed += len(text) - len(span.text)
                chars += len(span.text)
                good += readable(span.text)
            pages.append(page_pieces(page))
            if chars >= max_chars:
                partial = partial or index + 1 < doc.pages
                break
        read_pages = len(pages)
    finally:
        doc.close()
    if good == 0 or good < READABLE_SHARE * chars:
        return {"outcome": "no_text", "pages": doc.pages}
    blocks, heading = to_markdown(pages)
    del pages
    kept: list[str] = []
    total = 0
    for block in blocks:
        if total + len(block) > max_chars:
            partial = True
            break
        kept.append(block)
        total += len(block) + 2
    return {
        "outcome": "ok",
        "title": title,
        "heading": heading,
        "blocks": kept,
        "pages": doc.pages,
        "read": read_pages,
        "partial": partial,
        "removed": removed,
    }


def main(header: dict[str, Any], stdin: BinaryIO | None = None) -> None:
    limit(int(header["memory_mib"]), int(header["cpu_s"]))
    source = stdin or sys.stdin.buffer
    out = sys.stdout.buffer
    try:
        data = source.read(int(header["bytes"]))
        answer = read(
            data,
            max_pages=int(header["max_pages"]),
            max_chars=int(header["max_chars"]),
            budget_s=float(header.get("budget_s", "inf")),
        )
        del data
        out.write(json.dumps(answer, ensure_ascii=False).encode("utf-8", "surrogatepass"))
        out.flush()
    except MemoryError:
        os._exit(EXIT_MEMORY)
