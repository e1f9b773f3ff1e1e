"""PDFium is contained (issue 33; REQ-SEC-014): the native code runs in a fresh worker
process per document, never in the process that serves the calls, and whatever the
worker does (a crash, silence, a flood, an answer that is not ours, an allocation past
its memory limit) ends as one PdfRefused kind, and through web_fetch as one clean error
after which the next call is served.

The workers that misbehave here are stand-ins: reader.command is swapped for a child
that does the one bad thing. Each test takes under 1 s (a worker start is ~0.1 s), but
the web_fetch call that waits for its deadline (2 s, of which 0.4 s is the site's
shutdown).
"""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from rypsok.core.fetch.pdf import reader
from rypsok.core.model import ToolError
from tests.support import pdfs
from tests.support.fetching import ALLOW_LOCAL, fetch, make
from tests.support.paths import REPO
from tests.support.run import clean_env
from tests.support.site import Page, site

PDF = "application/pdf"
TEXT = "A one page report on the harbor, the bridge and the river."
BOUNDS = reader.Bounds(max_pages=1000, max_chars=64 * 1024, memory_mib=60)
CONFIG = ALLOW_LOCAL + "[fetch]\ndeadline_ms = 2000\nrobots_txt = false\n"
LINUX = sys.platform.startswith("linux")


def one_page() -> bytes:
    return pdfs.document([pdfs.Page([pdfs.Run(TEXT, 72, 700)])], title="Harbor report")


def child(code: str) -> list[str]:
    """A stand-in for the worker: a Python that runs ``code`` and nothing else."""
    return [sys.executable, "-I", "-S", "-c", code]


def stand_in(monkeypatch: pytest.MonkeyPatch, code: str) -> None:
    monkeypatch.setattr(reader, "command", lambda: child(code))


def refusal(
    body: bytes = b"%PDF-1.7\n",
    *,
    seconds: float = 5.0,
    bounds: reader.Bounds = BOUNDS,
    cancel: threading.Event | None = None,
) -> tuple[str, float]:
    """read_pdf's PdfRefused kind, and how long it took to come."""
    started = time.monotonic()
    with pytest.raises(reader.PdfRefused) as info:
        reader.read_pdf(body, bounds, seconds=seconds, cancel=cancel)
    return info.value.kind, time.monotonic() - started


class Recorded:
    """Every Popen started while it is installed, so a test can look at its child."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.started: list[subprocess.Popen[bytes]] = []
        started = self.started

        class Recording(subprocess.Popen[bytes]):
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, **kwargs)
                started.append(self)

        # reader.py calls subprocess.Popen through the module: patched for this test.
        monkeypatch.setattr(subprocess, "Popen", Recording)

    def only(self) -> subprocess.Popen[bytes]:
        assert len(self.started) == 1
        return self.started[0]


def reaped(process: subprocess.Popen[bytes]) -> bool:
    """The child has ended and been waited for: no process, not even a zombie."""
    if process.poll() is None:
        return False
    return not LINUX or not Path(f"/proc/{process.pid}").exists()


# -- the serving process ----------------------------------------------------------------

SERVE_AND_LIST = """
import json, sys
from pathlib import Path
from tests.support import pdfs
from tests.support.fetching import ALLOW_LOCAL, fetch, make
from tests.support.site import Page, site

body = pdfs.document([pdfs.Page([pdfs.Run(sys.argv[2], 72, 700)])])
with site({"/r.pdf": Page(body=body, content_type="application/pdf")}) as s:
    answer = fetch(make(Path(sys.argv[1]), ALLOW_LOCAL), url=s.url("/r.pdf"))
maps = Path("/proc/self/maps")
print(json.dumps({
    "content": answer["content"],
    "modules": sorted(m for m in sys.modules if m.startswith(("pypdfium2", "rypsok.core.fetch.pdf"))),
    "mapped": "pdfium" in maps.read_text() if maps.exists() else None,
}))
"""


def test_issue_33_req_sec_014_the_serving_process_never_loads_pdfium(tmp_path: Path) -> None:
    # A fresh interpreter: other tests in this process import glyphs on purpose.
    done = subprocess.run(
        [sys.executable, "-c", SERVE_AND_LIST, str(tmp_path), TEXT],
        capture_output=True,
        cwd=REPO,
        env=clean_env(),
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    seen = json.loads(done.stdout.decode().strip().splitlines()[-1])
    assert seen["content"] == TEXT  # the PDF was read, by a worker
    assert "rypsok.core.fetch.pdf.reader" in seen["modules"]
    for native in ("pypdfium2", "pypdfium2_raw", "rypsok.core.fetch.pdf.glyphs"):
        assert native not in seen["modules"]
    assert seen["mapped"] in (False, None)  # libpdfium is not mapped into it either


# -- a worker that crashes --------------------------------------------------------------


@pytest.mark.parametrize("sig", [signal.SIGABRT, signal.SIGSEGV], ids=["abort", "segv"])
def test_req_sec_014_a_worker_that_crashes_is_refused_as_crashed(
    monkeypatch: pytest.MonkeyPatch, sig: signal.Signals
) -> None:
    stand_in(monkeypatch, f"import os; os.kill(os.getpid(), {int(sig)})")
    kind, elapsed = refusal(one_page())
    assert kind == "crashed"
    assert elapsed < 1.5


def test_req_sec_014_a_crashed_worker_ends_the_call_only(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pages = {"/r.pdf": Page(body=one_page(), content_type=PDF)}
    with site(pages) as s:
        core = make(tmp_path, CONFIG)
        with monkeypatch.context() as patched:
            stand_in(patched, "import os, signal; os.kill(os.getpid(), signal.SIGABRT)")
            with pytest.raises(ToolError) as info:
                fetch(core, url=s.url("/r.pdf"))
        assert info.value.kind == "unsupported_content"
        assert info.value.detail == {"reason": "extraction_failed"}
        # The next call, with the real worker, on the same core.
        answer = fetch(core, url=s.url("/r.pdf?again"))
    assert answer["outcome"] == "ok"
    assert answer["content"] == TEXT


def test_req_sec_014_a_worker_that_fails_without_a_signal_is_crashed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stand_in(monkeypatch, "raise SystemExit(70)")
    assert refusal()[0] == "crashed"


# -- a worker that never answers ---------------------------------------------------------


def test_issue_33_a_silent_worker_is_killed_at_the_deadline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stand_in(monkeypatch, "import time; time.sleep(30)")
    recorded = Recorded(monkeypatch)
    kind, elapsed = refusal(seconds=0.5)
    assert kind == "deadline"
    assert 0.45 <= elapsed < 1.5, elapsed
    process = recorded.only()
    assert reaped(process)
    assert process.returncode == -signal.SIGKILL


def test_issue_33_a_worker_that_never_reads_its_file_is_killed_at_the_deadline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 4 MiB that the child never reads: the parent's write blocks on the full pipe
    # until the watchdog kills the child.
    stand_in(monkeypatch, "import time; time.sleep(30)")
    recorded = Recorded(monkeypatch)
    kind, elapsed = refusal(b"%PDF-1.7\n" + b"\0" * (4 << 20), seconds=0.5)
    assert kind == "deadline"
    assert elapsed < 1.5, elapsed
    assert reaped(recorded.only())


def test_issue_33_a_cancelled_read_kills_the_worker_promptly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stand_in(monkeypatch, "import time; time.sleep(30)")
    recorded = Recorded(monkeypatch)
    cancel = threading.Event()
    timer = threading.Timer(0.2, cancel.set)
    timer.start()
    try:
        kind, elapsed = refusal(seconds=10, cancel=cancel)
    finally:
        timer.cancel()
    assert kind == "cancelled"
    assert elapsed < 1.0, elapsed  # set at 0.2 s; the watchdog looks every WATCH_S
    assert reaped(recorded.only())


def test_req_sec_014_a_silent_worker_ends_a_web_fetch_call_at_its_bound(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # deadline_ms 1000: the worker is killed a little before the call's own bound
    # (deadline plus LIM-F5), and the call answers deadline; the next one is served.
    with site({"/r.pdf": Page(body=one_page(), content_type=PDF)}) as s:
        core = make(tmp_path, ALLOW_LOCAL + "[fetch]\ndeadline_ms = 1000\nrobots_txt = false\n")
        with monkeypatch.context() as patched:
            stand_in(patched, "import time; time.sleep(30)")
            recorded = Recorded(patched)
            started = time.monotonic()
            with pytest.raises(ToolError) as info:
                fetch(core, url=s.url("/r.pdf"))
            elapsed = time.monotonic() - started
        assert info.value.detail == {"reason": "deadline"}
        assert elapsed < 2.0, elapsed
        assert reaped(recorded.only())
        assert fetch(core, url=s.url("/r.pdf?again"))["content"] == TEXT


def test_issue_33_no_time_left_starts_no_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    recorded = Recorded(monkeypatch)
    assert refusal(seconds=0)[0] == "deadline"
    assert recorded.started == []


# -- an answer that is not ours ----------------------------------------------------------


def writes(answer: object) -> str:
    """Child code that reads its file, then writes ``answer`` as JSON and exits 0."""
    return f"import sys; sys.stdin.buffer.read(); sys.stdout.write({json.dumps(answer)!r})"


@pytest.mark.parametrize(
    "code",
    [
        writes({"outcome": "pwned", "blocks": ["x"]}),
        writes({"outcome": "OK", "blocks": ["x"]}),
        writes({"blocks": ["x"]}),
        writes(["ok"]),
        writes({"outcome": "ok", "blocks": [1, 2]}),
        writes({"outcome": "ok", "blocks": "not a list"}),
        writes({"outcome": "ok"}),
        "print('this is not JSON')",
        "import sys; sys.stdout.buffer.write(bytes([0xff, 0xfe, 0x7b]))",
        "pass",  # says nothing at all
    ],
    ids=[
        "unknown-outcome",
        "outcome-case",
        "no-outcome",
        "not-an-object",
        "blocks-not-strings",
        "blocks-not-a-list",
        "no-blocks",
        "invalid-json",
        "invalid-utf8",
        "empty",
    ],
)
def test_req_sec_014_an_answer_that_is_not_ours_is_damaged(
    monkeypatch: pytest.MonkeyPatch, code: str
) -> None:
    stand_in(monkeypatch, code)
    assert refusal()[0] == "damaged"


def test_req_sec_014_an_answer_past_the_bound_is_damaged(monkeypatch: pytest.MonkeyPatch) -> None:
    # The bound at max_chars 64 Ki: 4 bytes a character and 64 KiB, 320 KiB in all. The
    # child writes without end; the parent stops at the bound and kills it.
    stand_in(monkeypatch, "import sys\nwhile True: sys.stdout.buffer.write(b'x' * 65536)")
    recorded = Recorded(monkeypatch)
    kind, elapsed = refusal()
    assert kind == "damaged"
    assert elapsed < 1.5
    assert reaped(recorded.only())


def test_req_sec_014_a_valid_answer_just_past_the_bound_is_damaged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    limit = BOUNDS.max_chars * 4 + 64 * 1024
    head, tail = '{"outcome": "ok", "blocks": ["', '"]}'
    filler = limit - len(head) - len(tail) + 1
    # The answer is made in the child: an argument that long is past the system's bound.
    stand_in(
        monkeypatch,
        f"import sys; sys.stdin.buffer.read(); sys.stdout.write({head!r} + 'x' * {filler} + {tail!r})",
    )
    assert refusal()[0] == "damaged"
    # One byte less is read.
    stand_in(
        monkeypatch,
        f"import sys; sys.stdin.buffer.read(); sys.stdout.write({head!r} + 'x' * {filler - 1} + {tail!r})",
    )
    assert len(reader.read_pdf(b"%PDF-1.7\n", BOUNDS, seconds=5).blocks[0]) == filler - 1


def test_issue_33_the_answer_of_the_worker_stand_in_is_read_when_it_is_ours(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The control for the refusals above: the same stand-in with a good answer is read,
    # and fields of the wrong type fall back to nothing rather than fail.
    answer = {"outcome": "ok", "blocks": ["one", "two"], "title": 5, "pages": -1, "read": 1}
    stand_in(monkeypatch, writes(answer))
    text = reader.read_pdf(b"%PDF-1.7\n", BOUNDS, seconds=5)
    assert text.blocks == ["one", "two"]
    assert (text.title, text.pages, text.read, text.partial) == (None, 0, 1, False)


# -- the memory limit -------------------------------------------------------------------


def peak_rss_kib() -> int:
    """This process's peak resident size (VmHWM), reset first where Linux allows it."""
    status = Path("/proc/self/status").read_text()
    return int(status.split("VmHWM:", 1)[1].split()[0])


def reset_peak() -> None:
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")


@pytest.mark.skipif(not LINUX, reason="RLIMIT_AS and /proc/self/status are Linux's")
def test_issue_33_the_memory_limit_holds_against_a_flate_bomb() -> None:
    bomb = pdfs.bomb(inflated=256 << 20)  # 255 KiB of file, 0.5 s to build
    reset_peak()
    before = peak_rss_kib()
    kind, elapsed = refusal(bomb, bounds=reader.Bounds(1000, 64 * 1024, 48))
    grown_mib = (peak_rss_kib() - before) / 1024
    assert kind in ("crashed", "memory")
    assert elapsed < 1.5, elapsed
    # The parent held the file and the answer, never the inflated stream.
    assert grown_mib < 32, grown_mib


@pytest.mark.skipif(not LINUX, reason="RLIMIT_AS is what refuses the bomb above")
def test_issue_33_the_same_bomb_under_a_large_limit_is_read() -> None:
    # The control for the test above: the refusal is the limit's doing. With 1 GiB the
    # 256 MiB of spaces inflate (0.4 s) and are found to hold no text.
    kind, _ = refusal(pdfs.bomb(inflated=256 << 20), bounds=reader.Bounds(1000, 64 * 1024, 1024))
    assert kind == "no_text"


# -- what a fresh worker costs ------------------------------------------------------------


def test_issue_33_a_fresh_worker_per_document_costs_little(
    capsys: pytest.CaptureFixture[str],
) -> None:
    body = one_page()
    times = []
    for _ in range(5):
        started = time.monotonic()
        text = reader.read_pdf(body, BOUNDS, seconds=5)
        times.append(time.monotonic() - started)
        assert text.blocks == [TEXT]
    times.sort()
    with capsys.disabled():
        print(
            f"\nPDF worker, one-page document: median {times[2] * 1000:.0f} ms, "
            f"min {times[0] * 1000:.0f} ms, max {times[-1] * 1000:.0f} ms"
        )
    assert times[2] < 2.0
