"""PDF reading: the candidate libraries measured on one corpus (issue 33, item 6).

Run from the repository root with the bench venv of ``bench/requirements-pdf.txt``
(see bench/README.md):

    .venv-pdfbench/bin/python -m bench.pdf [--only LIB ...] [--timeout S] [--memory MIB]
                                            [--keep DIR]

The corpus is generated into a temporary folder each run: documents with known
text made with reportlab (a bench-only dependency), and a hostile set written by
hand as bytes (``hostile_files``, standard library only). Each candidate reads
each document in a child process of its own (``python -m bench.pdf --child LIB
PATH``) under a wall-clock limit and an address-space limit (RLIMIT_AS), so a
runaway or a crash ends that child only.

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
import zlib
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CANDIDATES = ("pypdfium2", "pypdf", "pdfminer.six")

# --- the hostile set, written by hand ----------------------------------------------


def build_pdf(objects: Sequence[bytes], root: int = 1, trailer_extra: bytes = b"") -> bytes:
    """A PDF whose object N (from 1) is ``objects[N-1]``, with a correct xref table."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root %d 0 R %s>>\n" % (len(objects) + 1, root, trailer_extra)
    out += b"startxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


def stream(data: bytes, extra: bytes = b"") -> bytes:
    return b"<< /Length %d %s>>\nstream\n" % (len(data), extra) + data + b"\nendstream"


FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def text_page(parent: int, contents: int, font: int, extra: bytes = b"") -> bytes:
    return (
        b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
        b"/Resources << /Font << /F1 %d 0 R >> >> %s>>" % (parent, contents, font, extra)
    )


HELLO = b"BT /F1 12 Tf 72 720 Td (Hello hostile world) Tj ET"
CATALOG = b"<< /Type /Catalog /Pages 2 0 R >>"
PAGES_ONE = b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>"


def bomb(inflated: int = 1 << 30) -> bytes:
    """A page whose content stream is FlateDecode and inflates to ``inflated`` bytes."""
    compressor = zlib.compressobj(9)
    chunk = b" " * (1 << 20)
    parts = [compressor.compress(chunk) for _ in range(inflated // len(chunk))]
    data = b"".join(parts) + compressor.flush()
    return build_pdf(
        [CATALOG, PAGES_ONE, text_page(2, 4, 5), stream(data, b"/Filter /FlateDecode "), FONT]
    )


def xref_loop() -> bytes:
    """A valid one-page file whose trailer's /Prev is the offset of its own xref."""
    objects = [CATALOG, PAGES_ONE, text_page(2, 4, 5), stream(HELLO), FONT]
    plain = build_pdf(objects)
    xref = int(plain.rsplit(b"startxref\n", 1)[1].split(b"\n", 1)[0])
    return build_pdf(objects, trailer_extra=b"/Prev %d " % xref)


def self_reference() -> bytes:
    """Objects that point at themselves: an object stream listed as holding itself
    (cross-reference stream, type-2 entry), contents and a length that are their own
    references."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    bodies = {
        1: CATALOG,
        2: PAGES_ONE,
        3: text_page(2, 4, 5, b"/Annots 6 0 R "),
        4: b"4 0 R",  # the page's contents: itself
        5: FONT,
        # 6 is said (by the xref stream) to live in object stream 7 ...
        7: b"<< /Type /ObjStm /N 2 /First 8 /Length 7 0 R >>\nstream\n6 0 7 4 [6 0 R]\n7 0 R"
        b"\nendstream",  # ... which holds itself and has its own /Length
    }
    offsets: dict[int, int] = {}
    for number in sorted(bodies):
        offsets[number] = len(out)
        out += b"%d 0 obj\n" % number + bodies[number] + b"\nendobj\n"
    rows = bytearray(b"\x00" + (0).to_bytes(4, "big") + (65535).to_bytes(2, "big"))
    for number in range(1, 9):
        if number == 6:
            rows += b"\x02" + (7).to_bytes(4, "big") + (0).to_bytes(2, "big")
        elif number == 8:
            rows += b"\x01" + len(out).to_bytes(4, "big") + (0).to_bytes(2, "big")
        else:
            rows += b"\x01" + offsets[number].to_bytes(4, "big") + (0).to_bytes(2, "big")
    xref = len(out)
    out += b"8 0 obj\n" + stream(bytes(rows), b"/Type /XRef /Size 9 /W [1 4 2] /Root 1 0 R ")
    out += b"\nendobj\nstartxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


def deep_nesting(levels: int = 100_000) -> bytes:
    """A page dictionary carrying an array nested ``levels`` deep."""
    nest = b"/Nest " + b"[" * levels + b"]" * levels + b" "
    return build_pdf([CATALOG, PAGES_ONE, text_page(2, 4, 5, nest), stream(HELLO), FONT])


def empty_pages(count: int = 10_000) -> bytes:
    kids = b" ".join(b"%d 0 R" % (3 + i) for i in range(count))
    pages = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, count)
    page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>"
    return build_pdf([CATALOG, pages, *([page] * count)])


def actions() -> bytes:
    """Text, an /OpenAction running JavaScript and a link annotation that launches."""
    launch = (
        b"<< /Type /Annot /Subtype /Link /Rect [0 0 612 792] "
        b"/A << /S /Launch /F (calc.exe) /Win << /F (cmd.exe) /P (/c calc) >> >> >>"
    )
    catalog = (
        b"<< /Type /Catalog /Pages 2 0 R /OpenAction << /S /JavaScript /JS (app.alert(1);) >> "
        b"/Names << /JavaScript << /Names [(x) << /S /JavaScript /JS (this.print();) >>] >> >> >>"
    )
    return build_pdf(
        [catalog, PAGES_ONE, text_page(2, 4, 5, b"/Annots [6 0 R] "), stream(HELLO), FONT, launch]
    )


def hostile_files(truncate: bytes | None = None) -> dict[str, bytes]:
    """The hand-written hostile set (standard library only). ``truncate`` is a good
    file to cut; without it a small hand-written one is cut."""
    whole = truncate if truncate is not None else xref_loop()
    return {
        "truncated": whole[: len(whole) * 6 // 10],
        "bomb-1GiB": bomb(),
        "xref-loop": xref_loop(),
        "self-reference": self_reference(),
        "nesting-100k": deep_nesting(),
        "empty-10k-pages": empty_pages(),
        "js-launch": actions(),
    }


# --- the documents with known text (reportlab) ---------------------------------------

WORDS = [
    "river",
    "stone",
    "market",
    "window",
    "garden",
    "letter",
    "silver",
    "engine",
    "harbor",
    "forest",
    "winter",
    "signal",
    "copper",
    "valley",
    "report",
    "planet",
    "marble",
    "circle",
    "anchor",
    "bridge",
    "meadow",
    "thunder",
    "lantern",
    "orchard",
    "canvas",
    "pocket",
    "saddle",
    "timber",
    "velvet",
    "walnut",
]
LEFT = [
    "apple",
    "banana",
    "cherry",
    "damson",
    "elder",
    "fig",
    "grape",
    "hazel",
    "iris",
    "juniper",
    "kiwi",
    "lemon",
    "mango",
    "nectar",
    "olive",
    "peach",
    "quince",
    "raisin",
    "sloe",
    "tangerine",
]
RIGHT = [
    "falcon",
    "heron",
    "osprey",
    "plover",
    "raven",
    "robin",
    "swallow",
    "thrush",
    "wren",
    "condor",
    "eagle",
    "finch",
    "gannet",
    "hawk",
    "ibis",
    "jay",
    "kestrel",
    "lark",
    "magpie",
    "owl",
]


def sentence(seed: int, vocabulary: Sequence[str], length: int = 12) -> str:
    return " ".join(vocabulary[(seed * 7 + i * 3) % len(vocabulary)] for i in range(length))


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


LIGATURES = str.maketrans({"ﬁ": "fi", "ﬂ": "fl", "ﬀ": "ff", "ﬃ": "ffi", "ﬄ": "ffl"})


# --- the child: one library, one document --------------------------------------------


def _pypdfium2(path: str) -> tuple[int, str]:  # pragma: no cover - bench venv only
    import pypdfium2  # type: ignore[import-not-found]

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


READERS: dict[str, tuple[str, Callable[[str], tuple[int, str]]]] = {
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
