"""Reading a named section of a long document, with the outline and without (issue 36).

Run from the repository root with the dev venv:

    .venv/bin/python -m bench.outline --data DIR [--pages N] [--max-chars N]

DIR is the extraction benchmark (as for ``bench.extraction``). The documents are the
N longest pages of its three development sets, by the length of what web_fetch
answers for them, and three PDFs made here (manuals of 20, 40 and 80 pages, a
section a page, drawn with the test suite's PDF writer). Each is served from a local
site and read through web_fetch itself, as an agent would, at ``max_chars``
(3000, the default). The sections an agent is asked for are headings of the
document's second half, listed in the outline or not (at most five a document,
spread over it).

Without the outline an agent reads part after part from the start until an answer
holds the heading; with it, it reads the first answer and its outline, then calls
with the ``start_char`` of the listed heading nearest before the section (the
outline of a long document lists a sample of a level), reading on from there.
Counted for each: the characters read before the section begins (the parts'
content, and the outline as JSON where there is one) and the calls made. Nothing
is asserted: figures are for a reader.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.extraction import SETS, data_folder, load_scorer
from rypsok.core.fetch.extraction.extract import extract
from rypsok.core.html.tree import parse_html
from tests.support import pdfs
from tests.support.fetching import ALLOW_LOCAL, fetch, make
from tests.support.site import Page, site


@dataclass(frozen=True, slots=True)
class Task:
    document: str
    kind: str  # html or pdf
    heading: str
    start_char: int
    without_chars: int
    without_calls: int
    with_chars: int
    with_calls: int


def longest_pages(folder: Path, count: int) -> list[tuple[str, str]]:
    """(id, HTML) of the ``count`` pages whose extracted Markdown is longest."""
    scorer = load_scorer(folder)
    sized: list[tuple[int, str, str]] = []
    for name in SETS:
        for doc in scorer.load_dataset(folder / name)["docs"]:
            html = scorer.decode_html(scorer._read_maybe_gz(doc["path"]))
            length = len(extract(parse_html(html), "https://example.org/").markdown)
            sized.append((length, f"{name}/{doc['id']}", html))
    sized.sort(reverse=True)
    return [(doc_id, html) for _length, doc_id, html in sized[:count]]


def manual(pages: int) -> bytes:
    """A PDF manual: a title, then one section a page, a 16 pt heading over paragraphs."""
    drawn: list[pdfs.Page] = []
    for number in range(pages):
        runs = [pdfs.Run(f"Section {number + 1}: valve care", 72, 720, 16, bold=True)]
        lines = [pdfs.sentence(number * 40 + i, pdfs.WORDS) for i in range(36)]
        runs += pdfs.lines_at(lines, 72, 690, 14, 11)
        if number == 0:
            runs.insert(0, pdfs.Run("Harbour valve manual", 72, 750, 24, bold=True))
        drawn.append(pdfs.Page(runs=runs))
    return pdfs.document(drawn, title="Harbour valve manual")


_HEADING = re.compile(r"^#{1,6} +(.+)$", re.MULTILINE)


def read_tasks(
    core: Any, url: str, document: str, kind: str, max_chars: int, per_document: int
) -> list[Task]:
    first = fetch(core, url=url, max_chars=max_chars)
    outline = first.get("outline") or []
    if not first["truncated"] or not outline:
        return []
    parts = [(0, first["next_start_char"], len(first["content"]))]
    texts = [first["content"]]
    start = first["next_start_char"]
    while True:  # the document part by part, as an agent without the outline reads it
        answer = fetch(core, url=url, max_chars=max_chars, start_char=start)
        parts.append((start, start + len(answer["content"]), len(answer["content"])))
        texts.append(answer["content"])
        if not answer["truncated"]:
            break
        start = answer["next_start_char"]
    whole = "".join(texts)
    # Every heading of the document is a section an agent may want, listed or not.
    headings = [(m.start(), m.group(1)) for m in _HEADING.finditer(whole)]
    wanted = [h for h in headings if h[0] >= len(whole) // 2]
    step = max(1, len(wanted) // per_document)
    outline_chars = len(json.dumps(outline, ensure_ascii=False))
    listed = sorted(h["start_char"] for h in outline)
    tasks: list[Task] = []
    for at, text in wanted[::step][:per_document]:
        read = calls = 0
        for begin, end, length in parts:
            calls += 1
            if begin <= at < end:
                read += at - begin
                break
            read += length
        if at < parts[0][1]:
            tasks.append(Task(document, kind, text, at, read, calls, at + outline_chars, 1))
            continue
        # With the outline: jump to the listed heading nearest before the section (the
        # outline may list a sample of a level), then read on until the section.
        with_chars, with_calls = len(first["content"]) + outline_chars, 1
        # A listed heading inside the first answer is no jump: read on from its end.
        position = max([h for h in listed if h <= at] + [parts[0][1]])
        while True:
            answer = fetch(core, url=url, max_chars=max_chars, start_char=position)
            with_calls += 1
            end = position + len(answer["content"])
            if at < end or not answer["truncated"]:
                with_chars += at - position
                break
            with_chars += len(answer["content"])
            position = answer["next_start_char"]
        tasks.append(Task(document, kind, text, at, read, calls, with_chars, with_calls))
    return tasks


def report(tasks: Sequence[Task], max_chars: int) -> None:
    print(f"\n{len(tasks)} sections asked for, max_chars = {max_chars}\n")
    print("| documents | sections | characters read without | with | calls without | with |")
    print("|---|---|---|---|---|---|")
    for kind in ("html", "pdf", "all"):
        chosen = [t for t in tasks if kind in ("all", t.kind)]
        if not chosen:
            continue
        docs = len({t.document for t in chosen})
        print(
            f"| {kind}: {docs} | {len(chosen)} "
            f"| median {statistics.median(t.without_chars for t in chosen):,.0f}, "
            f"mean {statistics.mean(t.without_chars for t in chosen):,.0f} "
            f"| median {statistics.median(t.with_chars for t in chosen):,.0f}, "
            f"mean {statistics.mean(t.with_chars for t in chosen):,.0f} "
            f"| mean {statistics.mean(t.without_calls for t in chosen):.1f}, "
            f"max {max(t.without_calls for t in chosen)} "
            f"| mean {statistics.mean(t.with_calls for t in chosen):.1f}, "
            f"max {max(t.with_calls for t in chosen)} |"
        )


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", metavar="DIR", help="the extraction benchmark folder")
    ap.add_argument("--pages", type=int, default=30, metavar="N", help="longest pages taken")
    ap.add_argument("--max-chars", type=int, default=3000, metavar="N")
    ap.add_argument("--per-document", type=int, default=5, metavar="K")
    args = ap.parse_args(argv)
    import os

    folder = data_folder(args.data, os.environ)
    served: dict[str, Page] = {}
    kinds: dict[str, str] = {}
    for doc_id, html in longest_pages(folder, args.pages):
        path = "/" + doc_id.replace("/", "_")
        served[path] = Page(body=html.encode("utf-8"), content_type="text/html; charset=utf-8")
        kinds[path] = "html"
    for pages in (20, 40, 80):
        path = f"/manual-{pages}.pdf"
        served[path] = Page(body=manual(pages), content_type="application/pdf")
        kinds[path] = "pdf"
    tasks: list[Task] = []
    with tempfile.TemporaryDirectory() as tmp, site(served) as s:
        core = make(
            Path(tmp),
            ALLOW_LOCAL + "[fetch]\nrobots_txt = false\n[limits]\nweb_fetch_per_minute = 6000\n",
        )
        for path, kind in kinds.items():
            tasks += read_tasks(core, s.url(path), path, kind, args.max_chars, args.per_document)
    report(tasks, args.max_chars)
    print(
        "\ncharacters read: the parts' content before the section begins, and the outline"
        " as JSON where there is one; calls: web_fetch calls until an answer holds the"
        " section's heading."
    )


if __name__ == "__main__":
    main()
