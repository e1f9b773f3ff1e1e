"""Extraction benchmark: rypsok's extractor beside trafilatura and readability-lxml.

Run from the repository root, with an interpreter that has the pins of
``bench/requirements.txt`` (a venv of its own, see bench/README.md):

    python -m bench.extraction --data DIR [--set NAME ...] [--limit N] [--only NAME ...]
                               [--worst K] [--saved LABEL=DIR ...]

DIR (or the environment variable RYPSOK_EXTRACTION_BENCH) is the extraction
benchmark: the folder ``bench/extraction/`` of the workplace's shared
material, not part of this repository. It brings the scorer (``score.py``)
and three development sets, each scored by its own metric:

- ``scrapinghub-aeb`` (181 news pages): ``aeb``, the benchmark's metric
  (``\\w+`` tokens, 4-token shingles, precision and recall averaged over
  pages, F1 of the two means);
- ``trafilatura-dev`` (690 multilingual pages): ``seg``, snippets that must
  and must not appear, counted over the whole set;
- ``wcxb-dev`` (1,497 pages of seven kinds): ``bow``, word F1 per page,
  averaged, and the same by page type.

Every extractor reads exactly the same decoded pages in this process; they
take turns page by page (the order rotating), so a passing load on a shared
machine touches them alike. rypsok's Markdown is turned into plain text first
(link targets, list markers and Markdown punctuation removed) so that only the
words of the content are scored, as the benchmark's README asks.

Pages per second time the extractor call on the decoded page, parse
included: ``parse_html`` + ``extract`` for rypsok, as web_fetch calls them
(keeping the attributes the extractor reads, letting the tree go after),
``trafilatura.extract`` without comments, readability-lxml's summary turned
into text. ``--saved LABEL=DIR`` adds the texts of an extractor run in another
interpreter by ``bench/other_extractor.py`` (rs-trafilatura): scored the same
way, its speed shown as its own run measured it. The
``rypsok-extract`` line (only with ``--only rypsok-extract``) times
``extract`` alone on a tree parsed beforehand. Nothing is asserted: figures
are for a reader.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from rypsok.core.fetch.extraction.attributes import READ_ATTRIBUTES
from rypsok.core.fetch.extraction.extract import extract, extract_blocks
from rypsok.core.fetch.extraction.kind import PAGE_KINDS
from rypsok.core.html.tree import ParsedDocument, parse_html, release

REPO = Path(__file__).resolve().parent.parent

DATA_ENV = "RYPSOK_EXTRACTION_BENCH"
WHERE = (
    "give the extraction benchmark's folder with --data DIR or {env}: the folder "
    "bench/extraction/ of the workplace's shared material (score.py, scrapinghub-aeb, "
    "trafilatura-dev, wcxb-dev); it is not part of this repository"
)
# Each set and the scorer's metric it is judged by (the benchmark's README).
METRIC = {"scrapinghub-aeb": "aeb", "trafilatura-dev": "seg", "wcxb-dev": "bow"}
SETS = tuple(METRIC)
EXTRACTORS = ("rypsok", "rypsok-extract", "trafilatura", "readability")
DEFAULT_EXTRACTORS = ("rypsok", "trafilatura", "readability")
BASE_URL = "https://example.org/"

_LINK = re.compile(r"\[((?:\\.|[^\]\\])*)\]\((?:[^()\s]|\([^()\s]*\))*\)")
_FENCE = re.compile(r"^(`{3,}|~{3,})[^\n]*$", re.M)
_LIST = re.compile(r"^(\s*)(?:[-+*]|\d+[.)])\s+", re.M)
_ESCAPED = re.compile(r"\\([\\`*_\[\]{}()#+\-.!|>~=])")
# Emphasis markers and a table's cell separators: syntax, not words. An
# escaped character (a literal * or |) is kept.
_EMPHASIS = re.compile(r"(?<!\\)\*+")
_CELL = re.compile(r"(?:^|(?<!\\))\|")

Extractor = Callable[[str, str], str]  # (page id, decoded page) -> text


def markdown_to_text(markdown: str) -> str:
    """The words of rypsok's Markdown, as the scorer should see them."""
    text = _FENCE.sub("", markdown)
    text = _LINK.sub(r"\1", text)
    text = _LIST.sub(r"\1", text)
    text = re.sub(r"^\s*(?:#{1,6}|>+)\s?", "", text, flags=re.M)
    text = re.sub(r"^\|?\s*(?:---\s*\|\s*)+$", "", text, flags=re.M)
    text = _EMPHASIS.sub("", text)
    text = _CELL.sub(" ", text)
    return _ESCAPED.sub(r"\1", text)


def rypsok_text(html: str) -> str:
    return markdown_to_text(extract(parse_html(html), BASE_URL).markdown)


# Each page's kind and confidence as rypsok's runner read them (issue 34), by page id.
READS: dict[str, tuple[str, float]] = {}


def rypsok_read(doc_id: str, html: str, url: str | None) -> str:
    """rypsok's text, the page's kind and the confidence kept in READS. The page's
    own address is the base: the kind reads hints in its path."""
    # As web_fetch reads a page (fetch/pipeline.py): only the attributes the extractor
    # reads are kept, and the tree is let go of at once.
    doc = parse_html(html, keep_attributes=READ_ATTRIBUTES)
    try:
        got = extract_blocks(doc, url or BASE_URL)
    finally:
        release(doc.root)
    READS[doc_id] = (got.kind, got.confidence)
    return markdown_to_text("\n\n".join(got.blocks))


def load_scorer(folder: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("aeb_score", folder / "score.py")
    if spec is None or spec.loader is None:
        raise SystemExit(f"no scorer in {folder}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--data", metavar="DIR", help=f"the benchmark folder (default: ${DATA_ENV})")
    ap.add_argument(
        "--set",
        dest="sets",
        action="append",
        choices=SETS,
        default=[],
        metavar="NAME",
        help=f"a page set: {' | '.join(SETS)} (repeatable; default: all three)",
    )
    ap.add_argument(
        "--limit", type=int, default=0, metavar="N", help="only the first N pages of each set"
    )
    ap.add_argument(
        "--only",
        action="append",
        choices=EXTRACTORS,
        default=[],
        metavar="NAME",
        help=f"{' | '.join(EXTRACTORS)} (repeatable; default: {', '.join(DEFAULT_EXTRACTORS)})",
    )
    ap.add_argument(
        "--worst", type=int, default=0, metavar="K", help="list rypsok's K worst pages per set"
    )
    ap.add_argument(
        "--saved",
        action="append",
        default=[],
        metavar="LABEL=DIR",
        help="also score the texts bench/other_extractor.py saved in DIR (repeatable)",
    )
    args = ap.parse_args(argv)
    if args.limit < 0 or args.worst < 0:
        ap.error("--limit and --worst take a number of pages, 0 or more")
    saved: dict[str, Path] = {}
    for given in args.saved:
        label, sep, where = given.partition("=")
        if not sep or not label or not where or label in EXTRACTORS or label in saved:
            ap.error(f"--saved takes LABEL=DIR with a new label, not {given!r}")
        saved[label] = Path(where)
    args.saved = saved
    # Repeats collapse; the sets keep the benchmark's order.
    args.sets = [s for s in SETS if s in args.sets] or list(SETS)
    args.only = [e for e in EXTRACTORS if e in args.only] or list(DEFAULT_EXTRACTORS)
    return args


def data_folder(given: str | None, env: Mapping[str, str], sets: Sequence[str] = SETS) -> Path:
    """The benchmark folder from --data or the environment; one line and exit 2 without."""
    raw = given or env.get(DATA_ENV)
    if not raw:
        print(f"extraction: {WHERE.format(env=DATA_ENV)}", file=sys.stderr)
        raise SystemExit(2)
    folder = Path(raw)
    missing = [n for n in ("score.py", *sets) if not (folder / n).exists()]
    if missing:
        print(
            f"extraction: {folder} has no {', '.join(missing)}; " + WHERE.format(env=DATA_ENV),
            file=sys.stderr,
        )
        raise SystemExit(2)
    return folder


def _builtin_runner(fn: Callable[[str], str | None]) -> Extractor:
    return lambda _id, html: str(fn(html) or "")


def _runners(
    want: Sequence[str],
    scorer: ModuleType,
    trees: dict[str, ParsedDocument],
    urls: Mapping[str, str | None] | None = None,
) -> list[tuple[str, Extractor]]:
    runners: list[tuple[str, Extractor]] = []
    where = urls or {}
    for name in want:
        if name == "rypsok":
            runners.append(
                (name, lambda doc_id, html: rypsok_read(doc_id, html, where.get(doc_id)))
            )
        elif name == "rypsok-extract":

            def extract_only(doc_id: str, _html: str) -> str:
                return markdown_to_text(extract(trees[doc_id], BASE_URL).markdown)

            runners.append((name, extract_only))
        else:
            try:
                fn, _desc = scorer._builtin(
                    "trafilatura-nocomments" if name == "trafilatura" else name
                )
            except ImportError as exc:
                print(f"{name}: not installed ({exc}); see bench/README.md")
                continue
            runners.append((name, _builtin_runner(fn)))
    return runners


def page_f1(scorer: ModuleType, metric: str, row: Mapping[str, Any]) -> float | None:
    """One page's F1 under the set's metric (None: the page has no figure for it)."""
    value = row.get(metric)
    if value is None:
        return None
    if metric == "aeb":
        p, r = scorer._p(*value), scorer._r(*value)
        return float(2 * p * r / (p + r)) if p + r else 0.0
    if metric == "bow":
        return float(value[2])
    tp, fp, fn, _tn = value
    return 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 1.0


def run_set(
    scorer: ModuleType, folder: Path, name: str, args: argparse.Namespace
) -> dict[str, dict[str, Any]]:
    ds = scorer.load_dataset(folder / name)
    if args.limit:
        ds["docs"] = ds["docs"][: args.limit]
    docs = ds["docs"]
    pages = {d["id"]: scorer.decode_html(scorer._read_maybe_gz(d["path"])) for d in docs}
    trees: dict[str, ParsedDocument] = {}
    if "rypsok-extract" in args.only:
        trees = {k: parse_html(v) for k, v in pages.items()}
    runners = _runners(args.only, scorer, trees, {d["id"]: d.get("url") for d in docs})
    outputs: dict[str, dict[str, str]] = {label: {} for label, _ in runners}
    spent = dict.fromkeys(outputs, 0.0)
    errors = dict.fromkeys(outputs, 0)
    for i, doc in enumerate(docs):
        # Rotate who goes first, so none always meets a cold cache or a load spike first.
        turn = runners[i % len(runners) :] + runners[: i % len(runners)] if runners else []
        for label, fn in turn:
            start = time.perf_counter()
            try:
                text = fn(doc["id"], pages[doc["id"]])
            except Exception:  # an extractor's crash scores as an empty page
                text = ""
                errors[label] += 1
            spent[label] += time.perf_counter() - start
            outputs[label][doc["id"]] = text
        if (i + 1) % 100 == 0:
            print(f"  [{name}] {i + 1}/{len(docs)}", file=sys.stderr, flush=True)
    # Texts another interpreter saved (bench/other_extractor.py): scored alike, its
    # speed kept as that run measured it.
    for label, where in args.saved.items():
        kept = load_saved(where / f"{name}.json", [d["id"] for d in docs])
        outputs[label] = kept["texts"]
        spent[label] = len(docs) / kept["pages_per_s"] if kept["pages_per_s"] else 0.0
        errors[label] = kept["errors"]
    ns = argparse.Namespace(ngram=4, tokenizer="word", bootstrap=0)
    results: dict[str, dict[str, Any]] = {}
    for label in outputs:
        res: dict[str, Any] = scorer.score(ds, outputs[label], ns)
        res["pages_per_s"] = len(docs) / spent[label] if spent[label] else float("inf")
        res["errors"] = errors[label]
        res["elsewhere"] = label in args.saved
        res["empty"] = sum(1 for t in outputs[label].values() if not t.strip())
        results[label] = res
    report_set(scorer, name, len(docs), results, args.worst)
    report_halves(scorer, name, ds, outputs)
    if "rypsok" in results:
        report_reads(scorer, name, docs, results["rypsok"])
    return results


def load_saved(path: Path, ids: Sequence[str]) -> dict[str, Any]:
    """The texts bench/other_extractor.py saved for one set, for exactly these pages;
    one line and exit 2 when the file is missing, unreadable or of other pages."""
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
        texts = kept["texts"]
        if not isinstance(texts, dict) or set(texts) != set(ids):
            raise ValueError("not the same pages")
        kept["texts"] = {k: str(texts[k]) for k in ids}
        kept["pages_per_s"] = float(kept.get("pages_per_s") or 0.0)
        kept["errors"] = int(kept.get("errors") or 0)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"extraction: {path} holds no saved texts of this set ({exc})", file=sys.stderr)
        raise SystemExit(2) from None
    return dict(kept)


def report_set(
    scorer: ModuleType, name: str, n: int, results: Mapping[str, Mapping[str, Any]], worst: int
) -> None:
    metric = METRIC[name]
    print(f"\n{name}: {n} pages, metric {metric}, one run, same decoded pages\n")
    print(f"| extractor | {metric} F1 | P | R | pages/s | empty | errors |")
    print("|---|---|---|---|---|---|---|")
    for label, res in results.items():
        m = res.get(metric)
        figures = f"{m['f1']:.3f} | {m['precision']:.3f} | {m['recall']:.3f}" if m else "- | - | -"
        speed = f"{res['pages_per_s']:.1f}" + (" (its own run)" if res.get("elsewhere") else "")
        print(f"| {label} | {figures} | {speed} | {res['empty']} | {res['errors']} |")
    ours = results.get("rypsok") or results.get("rypsok-extract")
    theirs = results.get("trafilatura")
    per_ours = (ours or {}).get("bow_per_type") or {}
    if metric == "bow" and per_ours:
        per_theirs = (theirs or {}).get("bow_per_type") or {}
        per_read = (results.get("readability") or {}).get("bow_per_type") or {}
        more = [label for label, res in results.items() if res.get("elsewhere")]
        print(f"\n{name}, bow F1 by page type (difference: rypsok - trafilatura)\n")
        print(
            "| type | pages | rypsok | trafilatura | difference | readability |"
            + "".join(f" {label} |" for label in more)
        )
        print("|---|---|---|---|---|---|" + "---|" * len(more))
        for kind, mine in per_ours.items():
            other = per_theirs.get(kind)
            read = per_read.get(kind)
            extra = ""
            for label in more:
                theirs_too = (results[label].get("bow_per_type") or {}).get(kind)
                extra += f" {theirs_too['f1']:.3f} |" if theirs_too else " - |"
            print(
                f"| {kind} | {mine['n']} | {mine['f1']:.3f} | "
                + (f"{other['f1']:.3f} | {mine['f1'] - other['f1']:+.3f}" if other else "- | -")
                + (f" | {read['f1']:.3f} |" if read else " | - |")
                + extra
            )
    if worst and ours:
        other_f1 = {r["id"]: page_f1(scorer, metric, r) for r in (theirs or {}).get("pages", [])}
        scored = [(page_f1(scorer, metric, r), r["id"]) for r in ours["pages"]]
        ranked = sorted((f, i) for f, i in scored if f is not None)[:worst]
        print(f"\nrypsok's {len(ranked)} worst pages in {name} ({metric} F1; trafilatura's):")
        for f, doc_id in ranked:
            t = other_f1.get(doc_id)
            print(
                f"  {doc_id[:24]}  rypsok {f:.2f}  trafilatura {'-' if t is None else f'{t:.2f}'}"
            )


def half_of(doc: Mapping[str, Any]) -> str:
    """The half a page belongs to, by a fixed hash of its URL (its id when it has none):
    rules are tuned on half A and checked on half B (issue 35)."""
    key = str(doc.get("url") or doc["id"]).encode()
    return "A" if hashlib.sha256(key).digest()[0] % 2 == 0 else "B"


def report_halves(
    scorer: ModuleType, name: str, ds: Mapping[str, Any], outputs: Mapping[str, Mapping[str, str]]
) -> None:
    """Each extractor's F1 on each half of the set, scored apart, rypsok's ratio to
    trafilatura's beside; for a set with page types, the same by type."""
    metric = METRIC[name]
    ns = argparse.Namespace(ngram=4, tokenizer="word", bootstrap=0)
    fixed = ("rypsok", "rypsok-extract", "trafilatura", "readability")
    labels = [label for label in ("rypsok", "rypsok-extract", "trafilatura") if label in outputs]
    labels += [label for label in outputs if label not in fixed]
    if not labels:
        return
    by_half: dict[str, dict[str, Any]] = {}
    for half in ("A", "B"):
        part = {**ds, "docs": [d for d in ds["docs"] if half_of(d) == half]}
        by_half[half] = {
            label: scorer.score(part, {d["id"]: outputs[label][d["id"]] for d in part["docs"]}, ns)
            for label in labels
        }
        by_half[half]["n"] = len(part["docs"])
    print(f"\n{name}, halves by URL hash (A: tuned on, B: checked), {metric} F1\n")
    print("| half | pages | " + " | ".join(labels) + " | rypsok / trafilatura |")
    print("|---|---|" + "---|" * len(labels) + "---|")
    for half, res in by_half.items():
        f1 = {label: (res[label].get(metric) or {}).get("f1") for label in labels}
        ours, theirs = f1.get("rypsok") or f1.get("rypsok-extract"), f1.get("trafilatura")
        ratio = f"{ours / theirs:.3f}" if ours and theirs else "-"
        cells = " | ".join("-" if f1[label] is None else f"{f1[label]:.3f}" for label in labels)
        print(f"| {half} | {res['n']} | {cells} | {ratio} |")
    if metric != "bow":
        return
    kinds = sorted(
        {k for res in by_half.values() for k in (res[labels[0]].get("bow_per_type") or {})}
    )
    if not kinds:
        return
    others = [label for label in labels[1:] if label != "trafilatura"]
    print(
        f"\n{name}, by page type and half: "
        + " / ".join([labels[0], "trafilatura", *others])
        + " (pages)\n"
    )
    print("| type | A | B |")
    print("|---|---|---|")
    for kind in kinds:
        row: list[str] = []
        for half in ("A", "B"):
            res = by_half[half]
            mine = (res[labels[0]].get("bow_per_type") or {}).get(kind)
            other = (res.get("trafilatura", {}).get("bow_per_type") or {}).get(kind)
            cell = f"{mine['f1']:.3f}" if mine else "-"
            cell += f" / {other['f1']:.3f}" if other else ""
            for label in others:
                theirs_too = (res[label].get("bow_per_type") or {}).get(kind)
                cell += f" / {theirs_too['f1']:.3f}" if theirs_too else " / -"
            row.append(cell + (f" ({mine['n']})" if mine else ""))
        print(f"| {kind} | " + " | ".join(row) + " |")


def auc(scores: Sequence[float], positive: Sequence[bool]) -> float:
    """Area under the ROC curve: the chance a positive outranks a negative, ties half."""
    pairs = sorted(zip(scores, positive, strict=True))
    rank_sum = 0.0
    i = 0
    while i < len(pairs):
        j = i
        while j < len(pairs) and pairs[j][0] == pairs[i][0]:
            j += 1
        rank_sum += (i + j + 1) / 2 * sum(1 for k in range(i, j) if pairs[k][1])
        i = j
    pos = sum(1 for p in positive if p)
    neg = len(positive) - pos
    return (rank_sum - pos * (pos + 1) / 2) / (pos * neg) if pos and neg else float("nan")


def calibration(confidence: Sequence[float], f1: Sequence[float]) -> tuple[float, int, float]:
    """Issue 34's two figures: the mean F1 of the pages of confidence >= 0.8 and
    how many there are, and the AUC of the confidence for telling the pages of
    F1 >= 0.7 from those below."""
    high = [f for c, f in zip(confidence, f1, strict=True) if c >= 0.8]
    mean = sum(high) / len(high) if high else float("nan")
    return mean, len(high), auc(confidence, [f >= 0.7 for f in f1])


# (confidence, F1) of every page of every set run, for the figures over all of them.
POOLED: list[tuple[float, float]] = []


def report_reads(
    scorer: ModuleType, name: str, docs: Sequence[Mapping[str, Any]], ours: Mapping[str, Any]
) -> None:
    """The kind's accuracy against the set's labels and the confidence's calibration."""
    metric = METRIC[name]
    pairs = [(READS.get(r["id"]), page_f1(scorer, metric, r)) for r in ours["pages"]]
    conf = [read[1] for read, f in pairs if read is not None and f is not None]
    f1 = [f for read, f in pairs if read is not None and f is not None]
    POOLED.extend(zip(conf, f1, strict=True))
    mean, high, area = calibration(conf, f1)
    print(
        f"\n{name}, rypsok's confidence: {high} of {len(f1)} pages at >= 0.8, their mean "
        f"{metric} F1 {mean:.3f} (target >= 0.9); AUC for F1 < 0.7: {area:.3f} (target >= 0.8)"
    )
    labels = {d["id"]: str(d["page_type"]) for d in docs if d.get("page_type")}
    if not labels:
        return
    confusion: dict[tuple[str, str], int] = {}
    for doc_id, truth in labels.items():
        read = READS.get(doc_id)
        said = read[0] if read else "-"
        confusion[truth, said] = confusion.get((truth, said), 0) + 1
    right = sum(n for (t, s), n in confusion.items() if t == s)
    print(f"\n{name}, page kind: {right} of {len(labels)} right ({right / len(labels):.3f})\n")
    said_kinds = [k for k in PAGE_KINDS if any(s == k for _t, s in confusion)]
    print("| label \\ said | pages | right | " + " | ".join(said_kinds) + " |")
    print("|---|---|---|" + "---|" * len(said_kinds))
    for truth in sorted({t for t, _s in confusion}):
        row = [confusion.get((truth, k), 0) for k in said_kinds]
        n = sum(v for (t, _s), v in confusion.items() if t == truth)
        ok = confusion.get((truth, truth), 0)
        print(f"| {truth} | {n} | {ok / n:.3f} | " + " | ".join(map(str, row)) + " |")


def _revision() -> str:
    """The commit measured, and whether the extractor differs from it in the work tree."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
        ).stdout.strip()
        extractor = ("rypsok/core/fetch/extraction", "rypsok/core/html")
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", *extractor],
            cwd=REPO,
            capture_output=True,
            text=True,
        ).stdout.strip()
    except OSError:
        return "unknown"
    return (head or "unknown") + (" (extractor modified in the work tree)" if dirty else "")


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    folder = data_folder(args.data, os.environ, args.sets)
    scorer = load_scorer(folder)
    started = time.time()
    print(f"commit {_revision()}; load average at start {_load()}")
    for name in args.sets:
        run_set(scorer, folder, name, args)
    if len(args.sets) > 1 and POOLED:
        mean, high, area = calibration([c for c, _ in POOLED], [f for _, f in POOLED])
        print(
            f"\nthe sets together, rypsok's confidence: {high} of {len(POOLED)} pages at >= 0.8,"
            f" their mean F1 {mean:.3f}; AUC for F1 < 0.7: {area:.3f}"
        )
    print(
        "\nrypsok = parse_html + extract, Markdown to text; trafilatura = trafilatura.extract"
        " without comments; readability = readability-lxml summary -> text."
    )
    print(f"load average at the end {_load()} (1, 5, 15 min); {time.time() - started:.0f} s in all")


if __name__ == "__main__":
    main()
