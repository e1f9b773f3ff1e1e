"""PDF reading: the candidate libraries measured on one corpus (issue 33, item 6).

Run from the repository root with the bench venv of ``bench/requirements-pdf.txt``
(see bench/README.md):

    .venv-pdfbench/bin/python -m bench.pdf [--only LIB ...] [--timeout S] [--memory MIB]
                                            [--keep DIR]

The corpus is generated into a temporary folder each run: documents with known
text made with reportlab (a bench-only dependency), and a hostile set written by
hand as bytes (``hostile_files``, from tests/support/pdfs.py, which the tests share;
standard library only). Each candidate reads each document in a child process of
its own (``python -m bench.pdf --child LIB PATH``) under a wall-clock limit and an
address-space limit (RLIMIT_AS), so a runaway or a crash ends that child only.

Measured per candidate: word F1 against the known text (bag of lowercase
``\\w+`` words), reading order on the two-column page (all of column 1 before
any of column 2), pages per second on the 300-page document (extraction only,
import excluded), the child's peak RSS (``ru_maxrss``), and the outcome on each
hostile file. Nothing is asserted: figures are for a reader.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.pdfs import LEFT, LIGATURES, RIGHT, WORDS, hostile_files, sentence

# rypsok: the reader web_fetch runs (rypsok/core/fetch/pdf/: PDFium's characters and
# boxes through pypdfium2's raw API, then rypsok's own layout to Markdown), beside the
# libraries' own plain-text extraction.
CANDIDATES = ("rypsok", "pypdfium2", "pypdf", "pdfminer.six")


@dataclass
class Document:
    name: str
    path: Path
    truth: str | None  # the known text; None for the hostile set
    pages: int


def make_known(folder: Path) -> list[Document]:  # pragma: no cover - needs reportlab
    from reportlab.lib.pagesizes import A4  # type: ignore[import-untyped]
    from reportlab.lib.styles import getSampleStyleSheet  # type: ignore[import-untyped]
    from reportlab.pdfbase import pdfmetrics  # type: ignore[import-untyped]
    from reportlab.pdfbase.ttfonts import TTFont  # type: ignore[import-untyped]
    from reportlab.pdfgen import canvas  # type: ignore[import-untyped]
    from reportlab.platypus import (  # type: ignore[import-untyped]
        Paragraph,
        SimpleDocTemplate,
        Table,
    )

    docs: list[Document] = []
    styles = getSampleStyleSheet()

    # One column with headings.
    path = folder / "article.pdf"
    flow: list[Any] = []
    truth: list[str] = []
    for section in range(4):
        heading = f"Section {section + 1} {WORDS[section]} {WORDS[section + 5]}"
        flow.append(Paragraph(heading, styles["Heading1"]))
        truth.append(heading)
        for para in range(3):
            text = ". ".join(sentence(section * 10 + para * 3 + k, WORDS) for k in range(3))
            flow.append(Paragraph(text + ".", styles["BodyText"]))
            truth.append(text)
    SimpleDocTemplate(str(path), pagesize=A4, title="Article").build(flow)
    docs.append(Document("article", path, "\n".join(truth), 0))

    # Two columns, fruit on the left and birds on the right, 12 pt lines: drawn
    # column by column (as TeX writes them), then line by line across both columns.
    for name, by_column in (("two-column", True), ("two-column-mixed", False)):
        path = folder / f"{name}.pdf"
        c = canvas.Canvas(str(path), pagesize=A4)
        c.setFont("Helvetica", 10)
        left = [sentence(line, LEFT, 6) for line in range(50)]
        right = [sentence(line, RIGHT, 6) for line in range(50)]
        draws = [(50, i, t) for i, t in enumerate(left)] + [
            (310, i, t) for i, t in enumerate(right)
        ]
        if not by_column:
            draws.sort(key=lambda d: (d[1], d[0]))
        for x, line, text in draws:
            c.drawString(x, 780 - line * 12, text)
        c.save()
        docs.append(Document(name, path, "\n".join(left + right), 1))

    # Running header, footer and page numbers over 20 pages.
    path = folder / "running.pdf"
    c = canvas.Canvas(str(path), pagesize=A4)
    truth = []
    for page in range(20):
        c.setFont("Helvetica", 8)
        c.drawString(50, 810, "Annual report of the harbor board")
        c.drawString(50, 25, f"Confidential draft page {page + 1} of 20")
        truth += ["Annual report of the harbor board", f"Confidential draft page {page + 1} of 20"]
        c.setFont("Helvetica", 11)
        for line in range(30):
            text = sentence(page * 31 + line, WORDS, 10)
            c.drawString(50, 770 - line * 22, text)
            truth.append(text)
        c.showPage()
    c.save()
    docs.append(Document("running-20p", path, "\n".join(truth), 20))

    # Hyphenated line ends and ligature glyphs (a TrueType font that has them).
    path = folder / "hyphen-ligature.pdf"
    c = canvas.Canvas(str(path), pagesize=A4)
    font = "Helvetica"
    dejavu = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
    if dejavu.exists():
        pdfmetrics.registerFont(TTFont("DejaVu", str(dejavu)))
        font = "DejaVu"
    c.setFont(font, 12)
    lines = [
        (
            "The ﬁrst ﬂoor of the oﬃce has a ﬁne eﬀect and the extrac-",
            "The first floor of the office has a fine effect and the",
        ),
        ("tion of the docu-", "extraction of the"),
        (
            "ment was diﬃcult for the staﬀ of the ﬁrm",
            "document was difficult for the staff of the firm",
        ),
        (
            "who reﬂected on the conﬁguration of the work-",
            "who reflected on the configuration of the",
        ),
        ("shop and its ﬂow of material", "workshop and its flow of material"),
    ]
    if font == "Helvetica":  # no ligature glyphs: the plain letters, hyphenation only
        lines = [(t.translate(LIGATURES), v) for t, v in lines]
    for i, (drawn, _) in enumerate(lines):
        c.drawString(72, 760 - i * 16, drawn)
    c.save()
    docs.append(Document("hyphen-ligature", path, "\n".join(v for _, v in lines), 1))

    # A simple table.
    path = folder / "table.pdf"
    rows = [["Item", "Quantity", "Price"]] + [
        [WORDS[i], str(10 + i), f"{i + 1}.50"] for i in range(12)
    ]
    SimpleDocTemplate(str(path), pagesize=A4).build([Table(rows)])
    docs.append(Document("table", path, "\n".join(" ".join(r) for r in rows), 1))

    # 300 pages, for speed.
    path = folder / "long-300p.pdf"
    c = canvas.Canvas(str(path), pagesize=A4)
    truth = []
    for page in range(300):
        c.setFont("Helvetica", 10)
        for line in range(45):
            text = sentence(page * 47 + line, WORDS, 11)
            c.drawString(50, 790 - line * 17, text)
            truth.append(text)
        c.showPage()
    c.save()
    docs.append(Document("long-300p", path, "\n".join(truth), 300))

    # Encrypted: a user password is needed to open it.
    path = folder / "encrypted.pdf"
    c = canvas.Canvas(str(path), pagesize=A4, encrypt="secret")
    c.setFont("Helvetica", 12)
    c.drawString(72, 720, "This text is behind a password")
    c.save()
    docs.append(Document("encrypted", path, None, 1))

    # Scan-like: an image of text, no text layer.
    path = folder / "scan.pdf"
    from PIL import Image, ImageDraw  # type: ignore[import-not-found]

    image = Image.new("L", (1240, 1754), 255)
    draw = ImageDraw.Draw(image)
    for line in range(30):
        draw.text((100, 100 + line * 50), sentence(line, WORDS, 8), fill=0)
    image_path = folder / "scan.png"
    image.save(image_path)
    c = canvas.Canvas(str(path), pagesize=A4)
    c.drawImage(str(image_path), 0, 0, width=A4[0], height=A4[1])
    c.save()
    docs.append(Document("scan-no-text", path, None, 1))
    return docs


# --- the child: one library, one document --------------------------------------------


def _pypdfium2(path: str) -> tuple[int, str]:  # pragma: no cover - bench venv only
    # Untyped where installed (the dev venv has it now), absent elsewhere.
    import pypdfium2  # type: ignore[import-untyped,import-not-found,unused-ignore]

    pdf = pypdfium2.PdfDocument(path)
    parts = []
    for index in range(len(pdf)):
        page = pdf[index]
        textpage = page.get_textpage()
        parts.append(textpage.get_text_range())
        textpage.close()
        page.close()
    count = len(pdf)
    pdf.close()
    return count, "\n".join(parts)


def _pypdf(path: str) -> tuple[int, str]:  # pragma: no cover - bench venv only
    import pypdf  # type: ignore[import-not-found]

    reader = pypdf.PdfReader(path)
    parts = [page.extract_text() for page in reader.pages]
    return len(parts), "\n".join(parts)


def _pdfminer(path: str) -> tuple[int, str]:  # pragma: no cover - bench venv only
    from pdfminer.high_level import extract_text  # type: ignore[import-not-found]

    text: str = extract_text(path)
    return text.count("\f") + (0 if text.endswith("\f") else 1), text


def _rypsok(path: str) -> tuple[int, str]:  # pragma: no cover - needs pypdfium2
    from rypsok.core.fetch.pdf import worker

    answer = worker.read(Path(path).read_bytes(), max_pages=100_000, max_chars=64 << 20)
    if answer["outcome"] != "ok":
        raise ValueError(answer["outcome"])
    return int(answer["pages"]), "\n\n".join(answer["blocks"])


READERS: dict[str, tuple[str, Callable[[str], tuple[int, str]]]] = {
    "rypsok": ("rypsok.core.fetch.pdf.glyphs", _rypsok),
    "pypdfium2": ("pypdfium2", _pypdfium2),
    "pypdf": ("pypdf", _pypdf),
    "pdfminer.six": ("pdfminer.high_level", _pdfminer),
}


def peak_rss_kib() -> int:
    """The child's own peak RSS: VmHWM, which starts afresh at exec (``ru_maxrss``
    would carry the bench parent's peak across fork and exec)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # not Linux


def child(library: str, path: str, memory_mib: int) -> None:  # pragma: no cover
    limit = memory_mib << 20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    module, read = READERS[library]
    started = time.perf_counter()
    __import__(module)
    imported = time.perf_counter()
    result: dict[str, Any] = {"import_s": imported - started}
    try:
        if path == "-":
            pages, text = 0, ""
        else:
            pages, text = read(path)
        result.update(outcome="ok", pages=pages, text=text)
    except MemoryError:
        result.update(outcome="memory")
    except RecursionError:
        result.update(outcome="error RecursionError")
    except Exception as error:  # the class is the measurement
        result.update(outcome=f"error {type(error).__name__}", message=str(error)[:120])
    result["read_s"] = time.perf_counter() - imported
    result["maxrss_kib"] = peak_rss_kib()
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()
    os._exit(0)  # no teardown: a native library's finalisers are not measured


def run_child(library: str, path: str, timeout: float, memory_mib: int) -> dict[str, Any]:
    command = [sys.executable, "-m", "bench.pdf", "--child", library, path]
    command += ["--memory", str(memory_mib)]
    started = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return {"outcome": f"timeout {timeout:.0f} s", "wall_s": timeout}
    wall = time.perf_counter() - started
    if proc.returncode != 0 or not out.strip():
        code = proc.returncode
        if code < 0:
            kind = f"crash {signal.Signals(-code).name}"
        else:
            tail = err.decode(errors="replace").strip().splitlines()[-1:] or [""]
            kind = f"exit {code}" + (" memory" if "MemoryError" in tail[0] else "")
        return {"outcome": kind, "wall_s": wall}
    result: dict[str, Any] = json.loads(out.decode().splitlines()[-1])
    result["wall_s"] = wall
    return result


# --- scoring -------------------------------------------------------------------------


def words(text: str) -> Counter[str]:
    return Counter(re.findall(r"\w+", text.lower()))


def f1(found: str, truth: str) -> float:
    got, want = words(found), words(truth)
    common = sum((got & want).values())
    if not common:
        return 0.0
    precision, recall = common / sum(got.values()), common / sum(want.values())
    return 2 * precision * recall / (precision + recall)


def reading_order(text: str) -> str:
    """'ok' when every fruit word (column 1) comes before every bird (column 2);
    else how many times the text switches column."""
    left, right = set(LEFT), set(RIGHT)
    sides = [
        "L" if w in left else "R" for w in re.findall(r"\w+", text.lower()) if w in left | right
    ]
    switches = sum(1 for a, b in itertools.pairwise(sides) if a != b)
    if sides and sides[0] == "L" and switches == 1:
        return "ok"
    return f"interleaved ({switches} switches)"


def describe(result: dict[str, Any], doc: Document) -> str:
    outcome = str(result["outcome"])
    if outcome != "ok":
        msg = result.get("message")
        return outcome + (f": {msg}" if msg else "")
    text = str(result.get("text", ""))
    return f"ok, {result.get('pages')} pages, {len(text.strip())} chars"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0] if __doc__ else "")
    parser.add_argument("--child", nargs=2, metavar=("LIB", "PATH"), help=argparse.SUPPRESS)
    parser.add_argument("--only", nargs="*", choices=CANDIDATES, default=list(CANDIDATES))
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds a document")
    parser.add_argument("--memory", type=int, default=1024, help="MiB of address space")
    parser.add_argument("--keep", type=Path, help="write the corpus here and keep it")
    args = parser.parse_args(argv)
    if args.child:
        child(args.child[0], args.child[1], args.memory)
        return 0

    with tempfile.TemporaryDirectory(prefix="pdfbench-") as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        docs = make_known(folder)
        for name, data in hostile_files((folder / "article.pdf").read_bytes()).items():
            path = folder / f"hostile-{name}.pdf"
            path.write_bytes(data)
            docs.append(Document(name, path, None, 0))
        print(f"corpus: {len(docs)} files in {time.perf_counter() - started:.1f} s ({folder})")
        report(docs, args.only, args.timeout, args.memory)
    return 0


def report(docs: list[Document], libraries: Sequence[str], timeout: float, memory: int) -> None:
    print(f"limits a child: {timeout:.0f} s wall clock, {memory} MiB address space\n")
    for library in libraries:
        print(f"## {library}")
        base = run_child(library, "-", timeout, memory)
        print(
            f"  import only: {base.get('import_s', 0) * 1000:.0f} ms, child wall "
            f"{base['wall_s'] * 1000:.0f} ms, peak RSS {base.get('maxrss_kib', 0) / 1024:.1f} MiB"
        )
        scores = []
        for doc in docs:
            result = run_child(library, str(doc.path), timeout, memory)
            line = f"  {doc.name:16} {describe(result, doc)}"
            if result["outcome"] == "ok" and doc.truth is not None:
                score = f1(str(result["text"]), doc.truth)
                scores.append(score)
                line += f", F1 {score:.3f}"
                if doc.name.startswith("two-column"):
                    line += f", order {reading_order(str(result['text']))}"
                if doc.name == "long-300p" and result.get("read_s"):
                    line += f", {result['pages'] / result['read_s']:.0f} pages/s"
            if "maxrss_kib" in result:
                line += f", peak RSS {result['maxrss_kib'] / 1024:.1f} MiB"
            line += f", {result['wall_s']:.2f} s"
            print(line, flush=True)
        if scores:
            print(f"  mean F1 over the known documents: {sum(scores) / len(scores):.3f}\n")


if __name__ == "__main__":
    raise SystemExit(main())
