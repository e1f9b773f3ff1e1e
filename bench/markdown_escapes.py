"""The Markdown writer's escaping before and after issue 20, on the extraction benchmark.

Run from the repository root, with the bench venv (bench/README.md), which has
markdown-it-py:

    python -m bench.markdown_escapes --data DIR [--set NAME ...] [--limit N] [--show K]
                                     [--before REV]

Every page of the extraction benchmark (DIR or RYPSOK_EXTRACTION_BENCH, as for
bench/extraction.py) is parsed once and extracted by three writers:

- before: the writer of commit REV (default: the last one before issue 20's escaping),
  read with ``git show`` and run in place of today's: every ``\\``, backtick,
  ``*``, ``[`` and ``]`` of the text escaped, and the starts of lines;
- after: today's writer;
- reference: today's writer with every ASCII punctuation character of the page's
  text escaped (``|`` aside, which a table escapes itself): text a CommonMark
  reader cannot misread, whatever it holds.

Per set and in all: the characters of Markdown before and after, the share saved,
the backslashes removed (and, in all, the escapes by character), and the pages
whose Markdown renders (markdown-it-py, CommonMark with tables, to HTML)
differently between two writers:

- before and after, on what ``extract`` answers. They differ where before let the
  page's text through as syntax (a ``<tag>``, an ``&amp;``) or escaped the writer's
  own marks at the start of a line; then before also renders unlike the reference.
- after and the reference, on every block rendered, before the end-of-page
  heuristics choose (they measure blocks in characters, and the reference's
  backslashes would change what they keep): must be none. A difference is a
  character after left bare and a reader takes for syntax.

The pages that differ are listed with their first differing lines. The time of
``extract`` under each writer (trees parsed beforehand, the writers taking turns)
is printed too. Nothing is asserted: figures are for a reader (docs/extraction.md,
"Escaping").
"""

from __future__ import annotations

import argparse
import collections
import difflib
import importlib
import importlib.util
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import rypsok.core.fetch.extraction.extract as extract_module
from bench import extraction
from rypsok.core.fetch.extraction import escape, markdown
from rypsok.core.html.tree import parse_html

REPO = Path(__file__).resolve().parent.parent

# The last commit whose writer escaped every \ ` * [ ] of the text (issue 20's start).
BEFORE = "752a5e2"
WRITER = "rypsok/core/fetch/extraction/markdown.py"
WRITERS = ("before", "after", "reference")


def writer_before(rev: str) -> ModuleType:
    """The writer of commit ``rev`` as a module of its own."""
    try:
        source = subprocess.run(
            ["git", "show", f"{rev}:{WRITER}"], cwd=REPO, capture_output=True, text=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        raise SystemExit(
            f"markdown_escapes: cannot read {WRITER} at {rev} with git: {exc}"
        ) from exc
    module = ModuleType("rypsok_markdown_before")
    sys.modules[module.__name__] = module  # its dataclasses look their module up
    exec(compile(source, f"{rev}:{WRITER}", "exec"), module.__dict__)
    return module


# A backslash escape: the character it escapes.
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
# Every ASCII punctuation character but "|".
_PUNCTUATION = re.compile(r"[!-/:-@\[-`{}~]")


def _reference_text(data: str, in_link: bool) -> str:
    data = escape._NOT_TEXT.sub("", data)
    return _PUNCTUATION.sub(escape._LITERAL + r"\g<0>", data)


def _recording(writer: ModuleType, whole: list[list[str]]) -> Callable[..., list[str]]:
    """``writer``'s markdown_blocks, which also puts in ``whole`` every block rendered,
    before the end-of-page heuristics keep some: those measure blocks in characters
    (a heading of 80 at most, ...), so more backslashes can change what they keep."""

    def markdown_blocks(
        root: Any, removed: Any, cut: Any, base: str, article: bool = True
    ) -> list[str]:
        rendered = writer._Renderer(removed, base, cut).render(root)
        blocks = [b.strip("\n") for b in rendered if b.strip()]
        whole.append(blocks)
        kept: list[str] = writer._without_trailing_leftovers(
            writer._without_empty_sections(blocks), article
        )
        return kept

    return markdown_blocks


@contextmanager
def writing_with(name: str, before: ModuleType, whole: list[list[str]]) -> Iterator[None]:
    """``extract`` with the writer ``name`` for the time of the block."""
    # The names as the modules look them up when extract runs.
    extracting, writing = vars(extract_module), vars(markdown)
    blocks, text = extracting["markdown_blocks"], writing["_text"]
    extracting["markdown_blocks"] = _recording(before if name == "before" else markdown, whole)
    if name == "reference":
        writing["_text"] = _reference_text
    try:
        yield
    finally:
        extracting["markdown_blocks"], writing["_text"] = blocks, text


@dataclass
class Tally:
    pages: int = 0
    chars: dict[str, int] = field(default_factory=lambda: dict.fromkeys(WRITERS, 0))
    backslashes: dict[str, int] = field(default_factory=lambda: dict.fromkeys(WRITERS, 0))
    seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(WRITERS, 0.0))
    # writer -> escaped character -> how many (code is alike under every writer)
    escapes: dict[str, collections.Counter[str]] = field(
        default_factory=lambda: {w: collections.Counter() for w in WRITERS}
    )
    # (writer, writer) -> the pages whose HTML differs
    differ: dict[tuple[str, str], list[str]] = field(default_factory=dict)

    def add(self, other: Tally) -> None:
        self.pages += other.pages
        for w in WRITERS:
            self.chars[w] += other.chars[w]
            self.backslashes[w] += other.backslashes[w]
            self.seconds[w] += other.seconds[w]
            self.escapes[w].update(other.escapes[w])
        for pair, ids in other.differ.items():
            self.differ.setdefault(pair, []).extend(ids)


# Pairs of writers compared: before and after on what extract answers; the reference
# on every block rendered (the same blocks as after's, whatever the heuristics keep).
PAIRS = (("before", "after"), ("after", "reference"), ("before", "reference"))


def run_set(
    scorer: ModuleType,
    folder: Path,
    name: str,
    limit: int,
    before: ModuleType,
    render: Callable[[str], str],
    base_url: str,
    shown: list[tuple[str, dict[str, str]]],
) -> Tally:
    ds = scorer.load_dataset(folder / name)
    docs = ds["docs"][:limit] if limit else ds["docs"]
    tally = Tally(differ={pair: [] for pair in PAIRS})
    for i, doc in enumerate(docs):
        tree = parse_html(scorer.decode_html(scorer._read_maybe_gz(doc["path"])))
        out: dict[str, str] = {}
        whole: dict[str, str] = {}
        turn = WRITERS[i % 3 :] + WRITERS[: i % 3]  # the writers take turns going first
        for w in turn:
            rendered: list[list[str]] = []
            with writing_with(w, before, rendered):
                start = time.perf_counter()
                out[w] = extract_module.extract(tree, base_url).markdown
                tally.seconds[w] += time.perf_counter() - start
            whole[w] = "\n\n".join(rendered[0]) if rendered else ""
        tally.pages += 1
        for w in WRITERS:
            tally.chars[w] += len(out[w])
            tally.backslashes[w] += out[w].count("\\")
            tally.escapes[w].update(m.group(1) for m in _ESCAPE.finditer(out[w]))
        page = f"{name}/{doc['id']}"
        diffs = {}
        for a, b in PAIRS:
            texts = (out[a], out[b]) if b != "reference" else (whole[a], whole[b])
            if render(texts[0]) != render(texts[1]):
                tally.differ[(a, b)].append(page)
                if a == "before" and b == "reference":
                    continue  # shown as before and after
                diffs[f"{a} -> {b}"] = _first_difference(*texts)
        if diffs:
            shown.append((page, diffs))
        if (i + 1) % 200 == 0:
            print(f"  [{name}] {i + 1}/{len(docs)}", file=sys.stderr, flush=True)
    return tally


def _row(label: str, t: Tally) -> str:
    before, after = t.chars["before"], t.chars["after"]
    saved = before - after
    share = f"{100 * saved / before:.3f}%" if before else "-"
    removed = t.backslashes["before"] - t.backslashes["after"]
    differ = " | ".join(str(len(t.differ.get(pair, []))) for pair in PAIRS)
    return (
        f"| {label} | {t.pages} | {before:,} | {after:,} | {saved:,} | {share} | {removed:,} "
        f"| {differ} |"
    )


def _first_difference(a: str, b: str, context: int = 0) -> str:
    """The first lines of a diff of two Markdown texts (unchanged lines left out)."""
    lines = list(difflib.unified_diff(a.splitlines(), b.splitlines(), n=context, lineterm=""))
    return "\n".join("      " + line[:300] for line in lines[2:10])


def report(tallies: dict[str, Tally], shown: list[tuple[str, dict[str, str]]], show: int) -> None:
    total = Tally(differ={pair: [] for pair in PAIRS})
    for t in tallies.values():
        total.add(t)
    print("\nMarkdown characters before and after, and pages rendered differently\n")
    print(
        "| set | pages | chars before | chars after | saved | share | backslashes removed "
        "| renders differ: before/after | after/reference | before/reference |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, t in tallies.items():
        print(_row(name, t))
    print(_row("all", total))
    before, after = total.escapes["before"], total.escapes["after"]
    print("\nbackslash escapes by character, before -> after (in all):")
    print(
        ", ".join(
            f"{c} {before[c]:,} -> {after[c]:,}"
            for c in sorted(before | after, key=lambda c: -(before[c] + after[c]))
            if before[c] != after[c]
        )
    )
    print(
        "\nextract on parsed trees, pages/s: "
        + ", ".join(
            f"{w} {total.pages / total.seconds[w]:.1f}" for w in WRITERS if total.seconds[w]
        )
    )
    for a, b in PAIRS:
        ids = total.differ[(a, b)]
        if ids:
            print(f"\n{a} and {b} render differently on {len(ids)} pages: " + ", ".join(ids))
    changed = total.differ[("before", "after")]
    if changed:
        # Where before misread the page, before and the reference differ on the same page.
        misread = [p for p in changed if p in total.differ[("before", "reference")]]
        print(
            f"of the {len(changed)} pages where before and after render differently, "
            f"before renders unlike the reference on {len(misread)}: "
            "text it let through as syntax, or syntax of its own it escaped"
        )
    for page, diffs in shown[:show]:
        print(f"\n  {page}")
        for pair, diff in diffs.items():
            print(f"    {pair}:\n{diff}")


def _renderer() -> Callable[[str], str]:
    try:
        markdown_it: Any = importlib.import_module("markdown_it")
    except ImportError:
        raise SystemExit(
            "markdown_escapes: markdown-it-py is not installed; use the bench venv "
            "(bench/README.md)"
        ) from None
    # CommonMark, and the tables the writer writes.
    md = markdown_it.MarkdownIt("commonmark").enable("table")
    return lambda text: str(md.render(text))


def parse_args(argv: Sequence[str] | None, sets: Sequence[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--data", metavar="DIR", help="the benchmark folder (default: its variable)")
    ap.add_argument("--set", dest="sets", action="append", choices=sets, default=[])
    ap.add_argument("--limit", type=int, default=0, metavar="N", help="first N pages of a set")
    ap.add_argument("--show", type=int, default=10, metavar="K", help="pages whose diff to show")
    ap.add_argument("--before", default=BEFORE, metavar="REV", help=f"default {BEFORE}")
    args = ap.parse_args(argv)
    args.sets = [s for s in sets if s in args.sets] or list(sets)
    return args


def main(argv: Sequence[str] | None = None) -> None:
    ex = extraction  # its data folder, scorer and sets
    args = parse_args(argv, ex.SETS)
    folder = ex.data_folder(args.data, os.environ, args.sets)
    scorer = ex.load_scorer(folder)
    render = _renderer()
    before = writer_before(args.before)
    print(f"before: {WRITER} at {args.before}; after: the work tree ({ex._revision()})")
    tallies: dict[str, Tally] = {}
    shown: list[tuple[str, dict[str, str]]] = []
    for name in args.sets:
        tallies[name] = run_set(
            scorer, folder, name, args.limit, before, render, ex.BASE_URL, shown
        )
    report(tallies, shown, args.show)


if __name__ == "__main__":
    main()
