"""bench/extraction.py's options and its message when the benchmark's data is absent.

The benchmark's pages are not in this repository (issue 14, item 11), so nothing here
runs an extractor on them: the options are parsed, and the data folder is looked for
in made-up folders under tmp_path.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import extraction as bench

ALL_SETS = ["scrapinghub-aeb", "trafilatura-dev", "wcxb-dev"]


def _one_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


def test_extraction_bench_without_data_says_where_in_one_line_and_exits_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("RYPSOK_EXTRACTION_BENCH", raising=False)
    with pytest.raises(SystemExit) as exit_info:
        bench.main(["--set", "wcxb-dev", "--limit", "3"])
    assert exit_info.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    line = _one_line(err)
    assert line.startswith("extraction: ")
    assert "--data DIR" in line and "RYPSOK_EXTRACTION_BENCH" in line
    assert "bench/extraction/" in line and "not part of this repository" in line


def test_extraction_bench_names_what_the_given_folder_lacks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "score.py").write_text("", encoding="utf-8")
    (tmp_path / "scrapinghub-aeb").mkdir()
    # From the environment when --data is not given.
    monkeypatch.setenv("RYPSOK_EXTRACTION_BENCH", str(tmp_path))
    with pytest.raises(SystemExit) as exit_info:
        bench.main([])
    assert exit_info.value.code == 2
    line = _one_line(capsys.readouterr().err)
    assert line.startswith(f"extraction: {tmp_path} has no trafilatura-dev, wcxb-dev; ")
    assert "--data DIR" in line
    # --data wins over the environment.
    with pytest.raises(SystemExit):
        bench.main(["--data", str(tmp_path / "elsewhere"), "--set", "scrapinghub-aeb"])
    line = _one_line(capsys.readouterr().err)
    assert line.startswith(
        f"extraction: {tmp_path / 'elsewhere'} has no score.py, scrapinghub-aeb; "
    )


def test_extraction_bench_needs_only_the_sets_asked_for(tmp_path: Path) -> None:
    (tmp_path / "score.py").write_text("", encoding="utf-8")
    (tmp_path / "wcxb-dev").mkdir()
    assert bench.data_folder(str(tmp_path), {}, ["wcxb-dev"]) == tmp_path
    assert bench.data_folder(None, {"RYPSOK_EXTRACTION_BENCH": str(tmp_path)}, ["wcxb-dev"]) == (
        tmp_path
    )
    with pytest.raises(SystemExit):
        bench.data_folder(str(tmp_path), {}, ["wcxb-dev", "trafilatura-dev"])


def test_extraction_bench_options() -> None:
    args = bench.parse_args([])
    assert args.sets == ALL_SETS
    assert args.only == ["rypsok", "trafilatura", "readability"]
    assert (args.data, args.limit, args.worst) == (None, 0, 0)

    args = bench.parse_args(
        ["--set", "wcxb-dev", "--set", "trafilatura-dev", "--set", "wcxb-dev", "--limit", "25"]
    )
    assert args.sets == ["trafilatura-dev", "wcxb-dev"]  # the benchmark's order, once each
    assert args.limit == 25

    args = bench.parse_args(["--data", "D", "--only", "rypsok", "--worst", "4"])
    assert (args.data, args.only, args.worst, args.sets) == ("D", ["rypsok"], 4, ALL_SETS)

    # Each set is judged by its own metric, as the benchmark's README says.
    assert bench.METRIC == {"scrapinghub-aeb": "aeb", "trafilatura-dev": "seg", "wcxb-dev": "bow"}


def test_extraction_bench_takes_texts_saved_by_another_interpreter() -> None:
    args = bench.parse_args(["--saved", "rs-trafilatura=/tmp/rs", "--saved", "x=y"])
    assert args.saved == {"rs-trafilatura": Path("/tmp/rs"), "x": Path("y")}
    assert bench.parse_args([]).saved == {}


def test_extraction_bench_reads_saved_texts_of_exactly_the_sets_pages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = tmp_path / "wcxb-dev.json"
    saved.write_text(
        json.dumps({"pages_per_s": 50.0, "errors": 1, "texts": {"1": "one", "2": "two"}}),
        encoding="utf-8",
    )
    kept = bench.load_saved(saved, ["2", "1"])
    assert kept["texts"] == {"2": "two", "1": "one"}
    assert (kept["pages_per_s"], kept["errors"]) == (50.0, 1)
    # Other pages, a missing file, or no texts: one line and exit 2, never a partial score.
    for bad_ids, path in ((["1"], saved), (["1", "2"], tmp_path / "none.json")):
        with pytest.raises(SystemExit) as exit_info:
            bench.load_saved(path, bad_ids)
        assert exit_info.value.code == 2
        assert len(capsys.readouterr().err.strip().splitlines()) == 1
    saved.write_text("[]", encoding="utf-8")
    with pytest.raises(SystemExit):
        bench.load_saved(saved, ["1", "2"])


@pytest.mark.parametrize(
    "argv",
    [
        ["--set", "news"],
        ["--limit", "-1"],
        ["--limit", "ten"],
        ["--only", "newspaper"],
        ["--saved", "rs-trafilatura"],
        ["--saved", "=dir"],
        ["--saved", "trafilatura=dir"],  # a label of the run's own extractors
        ["--saved", "a=x", "--saved", "a=y"],
    ],
)
def test_extraction_bench_refuses_bad_options(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        bench.parse_args(argv)
    assert exit_info.value.code == 2
    assert "usage:" in capsys.readouterr().err


def test_extraction_bench_scores_the_words_not_the_markdown_syntax() -> None:
    # The scorer wants the content's text: emphasis markers and table pipes
    # are syntax (a snippet "a bold word" must match "a **bold** word"), an
    # escaped star or pipe is a character of the page.
    text = bench.markdown_to_text(
        "A **bold** and *slanted* word, \\* kept.\n\n| a | b |\n| --- | --- |\n| c \\| d | e |"
    )
    words = " ".join(text.split())
    assert "A bold and slanted word, * kept." in words
    assert "a b" in words and "c | d e" in words
    assert "**" not in text and "---" not in text
