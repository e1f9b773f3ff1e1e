"""Run an extractor that cannot share the benchmark's interpreter, and save its texts.

rs-trafilatura (the page-type-aware Rust port of trafilatura, the best published
extractor on the seven-kind set) ships on PyPI only as a wheel for CPython 3.12;
the benchmark's venv is 3.11. This script needs nothing but the standard library
and the extractor, so it runs in a venv of its own:

    python3.12 -m venv /tmp/rsv && /tmp/rsv/bin/pip install rs-trafilatura==0.1.1
    /tmp/rsv/bin/python bench/other_extractor.py rs-trafilatura --data DIR --out OUT

It writes ``OUT/<set>.json`` for each set: the texts by page id, the pages per
second of that run and the versions. ``python -m bench.extraction --saved
rs-trafilatura=OUT`` then scores them beside rypsok and trafilatura on the same
pages, halves and page types; its speed comes from another process and is shown
as such, never compared.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import platform
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType

SETS = ("scrapinghub-aeb", "trafilatura-dev", "wcxb-dev")


def _rs_trafilatura() -> Callable[[str, str | None], str]:
    import rs_trafilatura  # type: ignore[import-not-found]  # only in its own venv

    def run(html: str, url: str | None) -> str:
        # Its defaults: comments left out, tables kept; the URL feeds its page-type model.
        return str(rs_trafilatura.extract(html, url=url).main_content or "")

    return run


EXTRACTORS: dict[str, tuple[str, Callable[[], Callable[[str, str | None], str]]]] = {
    "rs-trafilatura": ("rs-trafilatura", _rs_trafilatura),
}


def _scorer(folder: Path) -> ModuleType:
    # bench.extraction.load_scorer's twin: this script runs where rypsok is not installed.
    spec = importlib.util.spec_from_file_location("aeb_score", folder / "score.py")
    if spec is None or spec.loader is None:
        raise SystemExit(f"no scorer in {folder}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("extractor", choices=sorted(EXTRACTORS))
    ap.add_argument("--data", required=True, metavar="DIR", help="the benchmark folder")
    ap.add_argument("--out", required=True, metavar="DIR", help="where the texts go")
    ap.add_argument("--set", dest="sets", action="append", choices=SETS, default=[])
    args = ap.parse_args(argv)
    folder, out = Path(args.data), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    distribution, load = EXTRACTORS[args.extractor]
    run = load()
    scorer = _scorer(folder)
    for name in [s for s in SETS if s in args.sets] or SETS:
        docs = scorer.load_dataset(folder / name)["docs"]
        pages = [
            (d["id"], scorer.decode_html(scorer._read_maybe_gz(d["path"])), d.get("url"))
            for d in docs
        ]
        texts: dict[str, str] = {}
        errors = 0
        spent = 0.0
        for doc_id, html, url in pages:
            start = time.perf_counter()
            try:
                texts[doc_id] = run(html, url)
            except Exception:  # an extractor's crash scores as an empty page
                texts[doc_id] = ""
                errors += 1
            spent += time.perf_counter() - start
        saved = {
            "extractor": args.extractor,
            "version": importlib.metadata.version(distribution),
            "python": platform.python_version(),
            "pages_per_s": len(pages) / spent if spent else 0.0,
            "errors": errors,
            "texts": texts,
        }
        (out / f"{name}.json").write_text(json.dumps(saved), encoding="utf-8")
        print(f"{name}: {len(pages)} pages, {saved['pages_per_s']:.1f} pages/s, {errors} errors")


if __name__ == "__main__":
    main()
