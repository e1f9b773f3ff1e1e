"""Extraction benchmark: rypsok's extractor beside trafilatura and readability-lxml.

Run from the repository root with the dev interpreter:

    .venv/bin/python bench/extraction.py --data DIR [--limit N] [--only NAME ...] [--worst K]

DIR (or the environment variable RYPSOK_EXTRACTION_BENCH) is the extraction
benchmark: the folder ``bench/extraction/`` of the workplace's shared
material, not part of this repository. It brings the pages (scrapinghub-aeb,
trafilatura-dev, wcxb-dev), the expected texts and the scorer (``score.py``).

All extractors read exactly the same decoded pages, one after another in this
process, and are scored by the scorer's own ``aeb``
metric (``\\w+`` tokens, 4-token shingles, precision and recall averaged over
pages, F1 of the two means). rypsok's Markdown is turned into plain text
first (link targets, list markers and Markdown punctuation removed) so that
only the words of the content are scored, as the benchmark's README asks.

Timing is the extractor call alone (the page is already decoded): for rypsok
that is ``parse_html`` + ``extract``; the ``rypsok (extract only)`` line times
``extract`` on a tree parsed beforehand. Bench-only dependencies are pinned in
``bench/requirements.txt``. Nothing is asserted: figures are for a reader.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from rypsok.core.fetch.html.extract import extract  # noqa: E402
from rypsok.core.fetch.html.tree import ParsedDocument, parse_html  # noqa: E402

DATA_ENV = "RYPSOK_EXTRACTION_BENCH"
WHERE = (
    "give the extraction benchmark's folder with --data DIR or {env}: the folder "
    "bench/extraction/ of the workplace's shared material (score.py, scrapinghub-aeb, "
    "trafilatura-dev, wcxb-dev); it is not part of this repository"
)
DATASET = "scrapinghub-aeb"
BASE_URL = "https://example.org/"

_LINK = re.compile(r"\[((?:\\.|[^\]\\])*)\]\((?:[^()\s]|\([^()\s]*\))*\)")
_FENCE = re.compile(r"^(`{3,}|~{3,})[^\n]*$", re.M)
_LIST = re.compile(r"^(\s*)(?:[-+*]|\d+[.)])\s+", re.M)
_ESCAPED = re.compile(r"\\([\\`*_\[\]{}()#+\-.!|>~=])")


def markdown_to_text(markdown: str) -> str:
    """The words of rypsok's Markdown, as the scorer should see them."""
    text = _FENCE.sub("", markdown)
    text = _LINK.sub(r"\1", text)
    text = _LIST.sub(r"\1", text)
    text = re.sub(r"^\s*(?:#{1,6}|>+)\s?", "", text, flags=re.M)
    text = re.sub(r"^\|?\s*(?:---\s*\|\s*)+$", "", text, flags=re.M)
    return _ESCAPED.sub(r"\1", text)


def rypsok_text(html: str) -> str:
    return markdown_to_text(extract(parse_html(html), BASE_URL).markdown)


def load_scorer(folder: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("aeb_score", folder / "score.py")
    if spec is None or spec.loader is None:
        raise SystemExit(f"no scorer in {folder}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def reference_table(folder: Path) -> str:
    readme = (folder / "README.md").read_text(encoding="utf-8")
    lines = [ln for ln in readme.splitlines() if ln.startswith("|")]
    published = [ln for ln in readme.split("\n\n") if ln.startswith("Published")]
    return "\n".join([*lines, "", *published])


def data_folder(given: str | None, env: dict[str, str]) -> Path:
    """The benchmark folder from --data or the environment; one line and exit 2 without."""
    raw = given or env.get(DATA_ENV)
    if not raw:
        print(f"extraction: {WHERE.format(env=DATA_ENV)}", file=sys.stderr)
        raise SystemExit(2)
    folder = Path(raw)
    if not (folder / "score.py").is_file() or not (folder / DATASET).is_dir():
        print(
            f"extraction: {folder} has no score.py and {DATASET}/; " + WHERE.format(env=DATA_ENV),
            file=sys.stderr,
        )
        raise SystemExit(2)
    return folder


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--data", metavar="DIR", help=f"the benchmark folder (default: ${DATA_ENV})")
    ap.add_argument("--limit", type=int, default=0, help="only the first N pages")
    ap.add_argument(
        "--only",
        action="append",
        default=[],
        help="rypsok | rypsok-extract | trafilatura | readability (repeatable)",
    )
    ap.add_argument("--worst", type=int, default=0, help="list rypsok's K worst pages")
    args = ap.parse_args(argv)

    folder = data_folder(args.data, dict(os.environ))
    scorer = load_scorer(folder)
    ds = scorer.load_dataset(folder / DATASET)
    if args.limit:
        ds["docs"] = ds["docs"][: args.limit]
    pages = {d["id"]: scorer.decode_html(scorer._read_maybe_gz(d["path"])) for d in ds["docs"]}

    trees: dict[str, ParsedDocument] = {}

    def extract_only(doc_id: str) -> Callable[[str], str]:
        tree = trees[doc_id]
        return lambda _html: markdown_to_text(extract(tree, BASE_URL).markdown)

    runners: list[tuple[str, Callable[[str], str] | None]] = [
        ("rypsok", rypsok_text),
        ("rypsok-extract", None),
    ]
    want = set(args.only) or {"rypsok", "rypsok-extract", "trafilatura", "readability"}
    for name in ("trafilatura", "readability"):
        if name in want:
            try:
                fn, _desc = scorer._builtin(
                    "trafilatura-nocomments" if name == "trafilatura" else name
                )
            except ImportError as exc:
                print(f"{name}: not installed ({exc}); pip install -r bench/requirements.txt")
                continue
            runners.append((name, fn))
    if "rypsok-extract" in want:
        trees = {k: parse_html(v) for k, v in pages.items()}

    ns = argparse.Namespace(ngram=4, tokenizer="word", bootstrap=0)
    rows: list[tuple[str, dict[str, Any], float]] = []
    results: dict[str, dict[str, Any]] = {}
    for label, fn in runners:
        if label not in want:
            continue
        outputs: dict[str, str] = {}
        spent = 0.0
        for doc in ds["docs"]:
            call = fn if fn is not None else extract_only(doc["id"])
            start = time.perf_counter()
            outputs[doc["id"]] = call(pages[doc["id"]]) or ""
            spent += time.perf_counter() - start
        res = scorer.score(ds, outputs, ns)
        results[label] = res
        rows.append((label, res["aeb"], len(ds["docs"]) / spent if spent else float("inf")))

    print(f"\n{DATASET}: {len(ds['docs'])} pages, one run, same decoded pages\n")
    print("| extractor | aeb F1 | P | R | pages/s |")
    print("|---|---|---|---|---|")
    for label, m, pps in rows:
        print(f"| {label} | {m['f1']:.3f} | {m['precision']:.3f} | {m['recall']:.3f} | {pps:.1f} |")
    print(
        "\nrypsok = parse_html + extract; rypsok-extract = extract alone on a parsed tree;"
        " trafilatura without comments; readability-lxml summary -> text."
    )
    print("\nReference figures (benchmark README):\n")
    print(reference_table(folder))
    ours = results.get("rypsok") or results.get("rypsok-extract")
    if args.worst and ours:
        # Per page: the scorer's own precision and recall of the shingle
        # counts, worst F1 first; trafilatura's on the same page beside them.
        other = {r["id"]: r["aeb"] for r in results.get("trafilatura", {}).get("pages", [])}

        def pr(t: tuple[float, float, float]) -> tuple[float, float, float]:
            p, r = scorer._p(*t), scorer._r(*t)
            return p, r, 2 * p * r / (p + r) if p + r else 0.0

        print(f"\nrypsok's {args.worst} worst pages (aeb P, R, F1; trafilatura's F1):")
        worst = sorted(ours["pages"], key=lambda r: pr(r["aeb"])[2])[: args.worst]
        for r in worst:
            p, rc, f = pr(r["aeb"])
            t = f"{pr(other[r['id']])[2]:.2f}" if r["id"] in other else "-"
            print(f"  {r['id'][:16]}  P={p:.2f} R={rc:.2f} F1={f:.2f}  trafilatura F1={t}")


if __name__ == "__main__":
    main()
