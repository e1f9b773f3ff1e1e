"""Reading a PDF in a worker process, from the server's side (docs/tools.md, "PDFs").

One fresh process per document (worker.py): PDFium is native code, and a crash, an
abort or a runaway in it must not reach the process that serves the other callers.
The process gets the file on stdin, sets its own memory limit (fetch.pdf_memory_mib)
before it loads PDFium, and is killed at the deadline or when the call is given up.
Its answer is read up to a bound, and only our own words in it are believed: the
outcome is checked against a fixed set, the text is treated as the page's text.

Runs in a worker thread under a parsing permit (fetch/pipeline.py), so the event loop
never waits for it; a second thread watches the deadline and the cancel flag.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from rypsok.core import limits
from rypsok.core.fetch.pdf import worker

# The child's first line: where to import from, then the worker. -I: no environment
# variables, no user site; -S: no site module (the parent's path is given whole).
_BOOT: Final = (
    "import sys,json\n"
    "h=json.loads(sys.stdin.buffer.readline())\n"
    "sys.path[:]=h['path']\n"
    "from rypsok.core.fetch.pdf.worker import main\n"
    "main(h)\n"
)
# How often the watchdog looks at the cancel flag, seconds.
WATCH_S: Final = 0.05
READ_SHARE: Final = 0.6
OUTCOMES: Final = frozenset({"ok", "encrypted", "no_text", "damaged"})
# Environment the child keeps: what a Python needs to start on each system.
_KEEP_ENV: Final = ("PATH", "SYSTEMROOT", "SystemRoot", "TEMP", "TMP", "LANG", "LC_ALL")


class PdfRefused(Exception):
    """The document was not read. kind: encrypted, no_text, damaged (PDFium could not
    open it, or its answer was not ours), memory (past the limit), crashed (the process
    ended by a signal or an error), deadline, cancelled."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


@dataclass(frozen=True, slots=True)
class PdfText:
    title: str | None  # the document's metadata title
    heading: str | None  # its first heading, for a title when there is none
    blocks: list[str]  # Markdown blocks, in reading order
    pages: int  # pages in the document
    read: int  # pages read
    partial: bool  # pages or characters were left out at a bound
    removed: int  # control characters the reader took out of the text


@dataclass(frozen=True, slots=True)
class Bounds:
    max_pages: int
    max_chars: int
    memory_mib: int


@functools.cache
def _path() -> tuple[str, ...]:
    """The child's import path: the parent's, after the folders that hold rypsok and
    PDFium's bindings (an editable install finds rypsok by a hook -S leaves out)."""
    found: list[str] = []
    for name in ("rypsok", "pypdfium2", "pypdfium2_raw"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin:
            found.append(str(Path(spec.origin).parent.parent))
    found += [p for p in sys.path if isinstance(p, str)]
    # Found once a process: find_spec walks the path with a stat for each entry, and the
    # answer does not change while the server runs.
    return tuple(dict.fromkeys(found))


def command() -> list[str]:
    return [sys.executable, "-I", "-S", "-c", _BOOT]


def _environment() -> dict[str, str]:
    return {k: v for k in _KEEP_ENV if (v := os.environ.get(k)) is not None}


def read_pdf(
    body: bytes, bounds: Bounds, *, seconds: float, cancel: threading.Event | None = None
) -> PdfText:
    """The document's text, or PdfRefused; never longer than ``seconds``."""
    if seconds <= 0:
        raise PdfRefused("deadline")
    header = {
        "path": list(_path()),
        "bytes": len(body),
        "max_pages": bounds.max_pages,
        "max_chars": bounds.max_chars,
        "memory_mib": bounds.memory_mib,
        "cpu_s": max(1, int(seconds) + 1),
        # Pages are read for this share of the time; the rest lays them out and answers.
        "budget_s": seconds * READ_SHARE,
    }
    started = time.monotonic()
    process = subprocess.Popen(  # noqa: S603 - our own interpreter and code, no shell
        command(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=_environment(),
        close_fds=True,
    )
    ended = threading.Event()
    why: list[str] = []

    def watch() -> None:
        while not ended.wait(WATCH_S):
            late = time.monotonic() - started >= seconds
            if late or (cancel is not None and cancel.is_set()):
                why.append("deadline" if late else "cancelled")
                process.kill()
                return

    watchdog = threading.Thread(target=watch, name="rypsok-pdf-watch", daemon=True)
    watchdog.start()
    try:
        raw = _exchange(process, header, body, bounds)
        code = process.wait()
    finally:
        ended.set()
        if process.poll() is None:
            process.kill()
            process.wait()
        watchdog.join()
    if why:
        raise PdfRefused(why[0])
    if code == worker.EXIT_MEMORY:
        raise PdfRefused("memory")
    if code != 0:
        raise PdfRefused("crashed")
    return _answer(raw)


def _exchange(
    process: subprocess.Popen[bytes], header: dict[str, Any], body: bytes, bounds: Bounds
) -> bytes:
    """The file written to the child, its answer read up to the bound (None past it)."""
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(json.dumps(header).encode("ascii") + b"\n")
        process.stdin.write(body)
        process.stdin.close()
    except OSError:  # the child has already ended (killed, or failed to start)
        pass
    limit = bounds.max_chars * limits.PDF_ANSWER_BYTES_PER_CHAR + limits.PDF_ANSWER_EXTRA
    raw = process.stdout.read(limit + 1)
    process.stdout.close()
    if len(raw) > limit:
        process.kill()
        raise PdfRefused("damaged")
    return raw


def _answer(raw: bytes) -> PdfText:
    try:
        answer = json.loads(raw.decode("utf-8", "surrogatepass"))
    except ValueError:
        raise PdfRefused("damaged") from None
    outcome = answer.get("outcome") if isinstance(answer, dict) else None
    if outcome not in OUTCOMES:
        raise PdfRefused("damaged")
    if outcome != "ok":
        raise PdfRefused(outcome)
    blocks = answer.get("blocks")
    if not isinstance(blocks, list) or not all(isinstance(b, str) for b in blocks):
        raise PdfRefused("damaged")
    return PdfText(
        title=_text_or_none(answer.get("title")),
        heading=_text_or_none(answer.get("heading")),
        blocks=blocks,
        pages=_count(answer.get("pages")),
        read=_count(answer.get("read")),
        partial=answer.get("partial") is True,
        removed=_count(answer.get("removed")),
    )


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _count(value: object) -> int:
    return value if isinstance(value, int) and value >= 0 else 0
