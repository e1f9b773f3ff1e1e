"""Fit the page-kind model and the confidence model of issue 34 (kind.py).

    python -m bench.fit_confidence --data DIR [--cache FILE] [--write] [--sample N]

Runs rypsok's extractor over the three development sets of the extraction
benchmark (scrapinghub-aeb, trafilatura-dev, wcxb-dev; see bench/extraction.py),
records each page's signals (kind.signals) and its F1 under the set's metric
(bench.extraction.page_f1), then fits, with the standard library only:

- the kind: a multinomial logistic regression on wcxb-dev's page-type labels;
- the confidence: a logistic regression of "F1 >= 0.7" on all three sets,
  its output mapped by a monotone table (pooled adjacent violators over
  bins) onto the mean F1 of the pages of that score.

Pages are split by a hash of their id: 70 % fit, 30 % held out; figures are
printed for both. ``--write`` writes rypsok/core/fetch/extraction/kind_model.py
and the calibration sample fixtures/extraction/confidence_sample.json (N pages
of the held-out part: signals, kind and F1, no page text).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.extraction import (
    METRIC,
    SETS,
    calibration,
    data_folder,
    load_scorer,
    markdown_to_text,
    page_f1,
)
from rypsok.core.fetch.extraction import extract as extract_module
from rypsok.core.fetch.extraction import kind as kind_module
from rypsok.core.fetch.extraction.attributes import READ_ATTRIBUTES
from rypsok.core.html.tree import parse_html

REPO = Path(__file__).resolve().parent.parent
MODEL = REPO / "rypsok/core/fetch/extraction/kind_model.py"
SAMPLE = REPO / "fixtures/extraction/confidence_sample.json"
LABELLED = ("article", "forum", "documentation", "listing", "collection", "product", "service")
GOOD = 0.7  # the issue's line between a poor read and the others
Row = dict[str, Any]


BLIND = ("hint_", "url_")  # signals of English class names and URL paths


def blind(r: Row) -> Row:
    """The page with the signals of its class names and URL left out."""
    return {**r, "f": {k: v for k, v in r["f"].items() if not k.startswith(BLIND)}}


def held_out(doc_id: str) -> bool:
    return hashlib.sha256(doc_id.encode()).digest()[0] < 77  # about 30 %


def collect(folder: Path) -> list[Row]:
    """Every page's signals and F1, extracted as web_fetch extracts (filtered attributes)."""
    scorer = load_scorer(folder)
    captured: dict[str, dict[str, float]] = {}
    real_judge = kind_module.judge

    def spy(an: Any, node: Any, article: bool, blocks: Sequence[str], url: str) -> Any:
        captured["f"] = kind_module.signals(an, node, article, blocks, url)
        return real_judge(an, node, article, blocks, url)

    setattr(extract_module, "judge", spy)  # noqa: B010 - a spy on the module's name
    rows: list[Row] = []
    for name in SETS:
        ds = scorer.load_dataset(folder / name)
        outputs: dict[str, str] = {}
        feats: dict[str, dict[str, float]] = {}
        for i, doc in enumerate(ds["docs"]):
            html = scorer.decode_html(scorer._read_maybe_gz(doc["path"]))
            captured.clear()
            try:
                tree = parse_html(html, keep_attributes=READ_ATTRIBUTES)
                got = extract_module.extract_blocks(tree, doc.get("url") or "https://example.org/")
                outputs[doc["id"]] = markdown_to_text("\n\n".join(got.blocks))
            except Exception:
                outputs[doc["id"]] = ""
            feats[doc["id"]] = captured.get("f", {})
            if (i + 1) % 200 == 0:
                print(f"  [{name}] {i + 1}/{len(ds['docs'])}", file=sys.stderr, flush=True)
        ns = argparse.Namespace(ngram=4, tokenizer="word", bootstrap=0)
        res = scorer.score(ds, outputs, ns)
        types = {d["id"]: d.get("page_type") for d in ds["docs"]}
        for row in res["pages"]:
            f1 = page_f1(scorer, METRIC[name], row)
            if f1 is None or not feats.get(row["id"]):
                continue
            rows.append(
                {
                    "set": name,
                    "id": row["id"],
                    "type": types.get(row["id"]),
                    "f1": round(f1, 4),
                    "f": {k: round(v, 4) for k, v in feats[row["id"]].items()},
                }
            )
    setattr(extract_module, "judge", real_judge)  # noqa: B010
    return rows


# --------------------------------------------------------------------------- models


def _standardise(rows: Sequence[Row], names: Sequence[str]) -> tuple[list[float], list[float]]:
    n = len(rows)
    mean = [sum(r["f"].get(k, 0.0) for r in rows) / n for k in names]
    std = [
        math.sqrt(sum((r["f"].get(k, 0.0) - m) ** 2 for r in rows) / n) or 1.0
        for k, m in zip(names, mean, strict=True)
    ]
    return mean, std


def _matrix(
    rows: Sequence[Row], names: Sequence[str], mean: list[float], std: list[float]
) -> list[list[float]]:
    return [
        [(r["f"].get(k, 0.0) - m) / s for k, m, s in zip(names, mean, std, strict=True)] + [1.0]
        for r in rows
    ]


def fit_softmax(
    x: list[list[float]], y: list[int], classes: int, l2: float, steps: int, rate: float
) -> list[list[float]]:
    """Multinomial logistic regression by full-batch gradient descent."""
    d = len(x[0])
    w = [[0.0] * d for _ in range(classes)]
    n = len(x)
    for _ in range(steps):
        grad = [[0.0] * d for _ in range(classes)]
        for xi, yi in zip(x, y, strict=True):
            z = [sum(a * b for a, b in zip(wc, xi, strict=True)) for wc in w]
            top = max(z)
            e = [math.exp(v - top) for v in z]
            tot = sum(e)
            for c in range(classes):
                g = e[c] / tot - (1.0 if c == yi else 0.0)
                if g:
                    gc = grad[c]
                    for j in range(d):
                        gc[j] += g * xi[j]
        for c in range(classes):
            for j in range(d):
                reg = l2 * w[c][j] if j < d - 1 else 0.0
                w[c][j] -= rate * (grad[c][j] / n + reg)
    return w


def fit_logistic(
    x: list[list[float]], y: list[float], l2: float, steps: int, rate: float
) -> list[float]:
    """Binary logistic regression, the softmax of two classes written out."""
    d = len(x[0])
    w = [0.0] * d
    n = len(x)
    for _ in range(steps):
        grad = [0.0] * d
        for xi, yi in zip(x, y, strict=True):
            z = sum(a * b for a, b in zip(w, xi, strict=True))
            g = 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z)))) - yi
            for j in range(d):
                grad[j] += g * xi[j]
        for j in range(d):
            reg = l2 * w[j] if j < d - 1 else 0.0
            w[j] -= rate * (grad[j] / n + reg)
    return w


def fold(
    w: list[float], names: Sequence[str], mean: list[float], std: list[float]
) -> dict[str, float]:
    """Weights on standardised signals as weights on raw signals, the bias as ``_bias``."""
    out = {k: wj / s for k, wj, s in zip(names, w, std, strict=False)}
    out["_bias"] = w[-1] - sum(wj * m / s for wj, m, s in zip(w, mean, std, strict=False))
    return out


def isotonic(points: list[tuple[float, float]], bins: int) -> list[tuple[float, float]]:
    """(raw, mean F1) knots: equal-count bins, then pooled adjacent violators."""
    points.sort()
    size = max(1, len(points) // bins)
    blocks: list[list[float]] = []  # [sum raw, sum f1, count]
    for i in range(0, len(points), size):
        chunk = points[i : i + size]
        blocks.append([sum(p for p, _ in chunk), sum(f for _, f in chunk), float(len(chunk))])
        while len(blocks) > 1 and blocks[-2][1] / blocks[-2][2] >= blocks[-1][1] / blocks[-1][2]:
            last = blocks.pop()
            for j in range(3):
                blocks[-1][j] += last[j]
    return [(round(b[0] / b[2], 4), round(b[1] / b[2], 4)) for b in blocks]


# --------------------------------------------------------------------------- figures


def figures(rows: Sequence[Row], conf: Callable[[Row], float]) -> tuple[float, int, float]:
    """Mean F1 of the pages of confidence >= 0.8, how many, and the AUC for F1 < 0.7."""
    return calibration([conf(r) for r in rows], [r["f1"] for r in rows])


def row_confidence(r: Row) -> float:
    kind = kind_module.page_kind(r["f"])
    return kind_module.confidence(r["f"], kind)


def report(rows: Sequence[Row], label: str) -> None:
    for name in (*SETS, "all"):
        part = [r for r in rows if name in ("all", r["set"])]
        if not part:
            continue
        m, n, a = figures(part, row_confidence)
        print(
            f"  {label:8} {name:16} pages {len(part):5}  conf>=0.8: {n:5} "
            f"mean F1 {m:.3f}  AUC(F1<0.7) {a:.3f}"
        )
    typed = [r for r in rows if r["type"]]
    if typed:
        right = sum(kind_module.page_kind(r["f"]) == r["type"] for r in typed)
        print(
            f"  {label:8} kind accuracy on wcxb-dev {right}/{len(typed)} = {right / len(typed):.3f}"
        )
        right = sum(kind_module.page_kind(blind(r)["f"]) == r["type"] for r in typed)
        print(
            f"  {label:8} the same, blind to class names and URL: "
            f"{right}/{len(typed)} = {right / len(typed):.3f}"
        )


# --------------------------------------------------------------------------- writing


def _table(d: dict[str, float]) -> str:
    rows = "".join(f"        {json.dumps(k)}: {v:.5g},\n" for k, v in d.items() if v)
    return "{\n" + rows + "    }"


def write_model(
    kinds: dict[str, dict[str, float]],
    conf: dict[str, float],
    table: list[tuple[float, float]],
    note: str,
) -> None:
    text = [
        '"""Fitted constants of kind.py, written by ``bench/fit_confidence.py --write``.',
        "",
        note,
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "# Kind model: a linear score per kind over kind.signals (``_bias`` a constant 1).",
        "KIND_WEIGHTS: dict[str, dict[str, float]] = {",
    ]
    for k, w in kinds.items():
        text.append(f"    {json.dumps(k)}: {_table(w)},")
    text += [
        "}",
        "# Confidence model: logistic score of F1 >= 0.7 over kind.signals.",
        f"CONFIDENCE_WEIGHTS: dict[str, float] = {_table(conf)}".replace("\n    }", "\n}").replace(
            "\n        ", "\n    "
        ),
        "CONFIDENCE_KIND: dict[str, float] = {}",
        "# (logistic score, mean F1 of the fitting pages of about that score), ascending.",
        "CALIBRATION: tuple[tuple[float, float], ...] = (",
        *(f"    ({x}, {y})," for x, y in table),
        ")",
        "",
    ]
    MODEL.write_text("\n".join(text))


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--data", metavar="DIR")
    ap.add_argument(
        "--cache",
        default="",
        metavar="FILE",
        help="signals and F1 per page: read if present, else written",
    )
    ap.add_argument(
        "--write", action="store_true", help="write kind_model.py and the sample fixture"
    )
    ap.add_argument("--sample", type=int, default=60, metavar="N")
    ap.add_argument("--report-only", action="store_true", help="figures of the current constants")
    args = ap.parse_args(argv)
    cache = Path(args.cache) if args.cache else None
    if cache and cache.exists():
        rows: list[Row] = json.loads(cache.read_text())
    else:
        rows = collect(data_folder(args.data, os.environ))
        if cache:
            cache.write_text(json.dumps(rows))
    fit = [r for r in rows if not held_out(r["id"])]
    hold = [r for r in rows if held_out(r["id"])]
    print(f"{len(rows)} pages: {len(fit)} to fit, {len(hold)} held out")
    if args.report_only:
        report(fit, "fit")
        report(hold, "held-out")
        return
    names = sorted({k for r in rows for k in r["f"]})
    # The kind, on wcxb-dev's labels, each page twice: as it is, and blind to the
    # words of its class names and URL (English on nearly every page of the set), so
    # that the structure and the text's many-language words carry the kind too.
    typed = [r for r in fit if r["type"] in LABELLED]
    typed = typed + [blind(r) for r in typed]
    mean, std = _standardise(typed, names)
    w = fit_softmax(
        _matrix(typed, names, mean, std),
        [LABELLED.index(r["type"]) for r in typed],
        len(LABELLED),
        0.01,
        150,
        1.0,
    )
    kinds = {k: fold(w[i], names, mean, std) for i, k in enumerate(LABELLED)}
    # The confidence, on every set.
    mean, std = _standardise(fit, names)
    cw = fit_logistic(
        _matrix(fit, names, mean, std),
        [1.0 if r["f1"] >= GOOD else 0.0 for r in fit],
        0.01,
        300,
        1.0,
    )
    conf = fold(cw, names, mean, std)

    def raw(r: Row) -> float:
        z = sum(v * r["f"].get(k, 0.0) for k, v in conf.items() if k != "_bias") + conf["_bias"]
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))

    table = isotonic([(raw(r), r["f1"]) for r in fit], 20)
    note = (
        f"Fitted on {len(fit)} pages of the extraction benchmark's development sets\n"
        "(scrapinghub-aeb, trafilatura-dev, wcxb-dev; the kind on wcxb-dev's page-type labels),\n"
        "the 70 % whose id hashes below 77/256 (bench/fit_confidence.py held_out); the rest\n"
        "is held out to check the fit. Signals: kind.signals."
    )
    write_model(kinds, conf, table, note) if args.write else None
    if args.write:
        import importlib

        from rypsok.core.fetch.extraction import kind_model

        importlib.reload(kind_model)
        rng = random.Random(34)
        sample = rng.sample(hold, min(args.sample, len(hold)))
        SAMPLE.parent.mkdir(parents=True, exist_ok=True)
        # One page a line: signals, kind-free, and F1; no page text.
        lines = [json.dumps({"set": r["set"], "f1": r["f1"], "f": r["f"]}) for r in sample]
        SAMPLE.write_text("[\n" + ",\n".join(lines) + "\n]\n")
    report(fit, "fit")
    report(hold, "held-out")


if __name__ == "__main__":
    main()
