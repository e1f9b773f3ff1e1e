"""bench/outline.py (issue 36, item 4) on a document made here: the reading it
simulates with the outline reaches a late section in fewer characters and calls."""

from __future__ import annotations

from pathlib import Path

from bench import outline as bench
from tests.support.fetching import ALLOW_LOCAL, make
from tests.support.site import Page, site

PROSE = "The harbour keeps its boats in rows, and each row has a keeper who counts them. "


def test_issue_36_the_outline_bench_counts_both_ways_of_reading(tmp_path: Path) -> None:
    body = "".join(
        f"<h2>Section {i}</h2>" + "".join(f"<p>{PROSE * 3} ({i}.{j})</p>" for j in range(4))
        for i in range(30)
    )
    html = f"<html><body><article><h1>Harbour</h1>{body}</article></body></html>".encode()
    with site(
        {
            "/long": Page(body=html),
            "/manual.pdf": Page(body=bench.manual(6), content_type="application/pdf"),
        }
    ) as s:
        core = make(tmp_path, ALLOW_LOCAL + "[limits]\nweb_fetch_per_minute = 6000\n")
        tasks = bench.read_tasks(core, s.url("/long"), "long", "html", 3000, 5)
        pdf = bench.read_tasks(core, s.url("/manual.pdf"), "manual", "pdf", 3000, 5)
    assert len(tasks) == 5 and pdf
    for task in tasks + pdf:
        assert task.heading.startswith("Section")
        assert task.with_calls <= 2 < task.without_calls
        assert task.with_chars < task.without_chars
