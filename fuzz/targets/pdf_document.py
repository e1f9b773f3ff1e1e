"""Fuzz target: a PDF as the PDF reader's worker reads it (rypsok.core.fetch.pdf.worker:
PDFium's text layer, then rypsok's layout to Markdown), here in the fuzzer's process.

Input: the file. Documented failures: PDFium aborts the process when an allocation
fails (a Flate bomb, a page of a million characters); that is why the server runs it in
a worker process with a memory limit (fetch/pdf/reader.py), and why the fuzzer runs
with its own RSS limit. Checked besides: the outcome is one of the reader's own words,
and an answer's text stays within the character bound it was given.
"""

from __future__ import annotations

from fuzz.harness import instrumented, main

with instrumented(__name__):
    from rypsok.core.fetch.pdf import reader, worker

MAX_CHARS = 64 * 1024


def TestOneInput(data: bytes) -> None:
    answer = worker.read(data, max_pages=8, max_chars=MAX_CHARS)
    assert answer["outcome"] in reader.OUTCOMES
    if answer["outcome"] == "ok":
        blocks = answer["blocks"]
        assert all(isinstance(b, str) for b in blocks)
        assert sum(len(b) for b in blocks) <= MAX_CHARS


if __name__ == "__main__":
    main(TestOneInput)
