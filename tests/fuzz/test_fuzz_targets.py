"""The fuzz targets of fuzz/ stay alive between releases (REQ-SEC-023, REQ-TEST-019).

The fuzzer itself runs only in the release checks (tools/release-checks fuzz).
Here every target is imported without atheris and its committed seeds go
through ``TestOneInput`` once, so a target that no longer imports, no longer
reaches its parser, or crashes on its own seeds fails CI at once. Well under a
second for all seeds.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from fuzz import run as fuzz_run
from fuzz import seeds
from tests.support.paths import REPO

TARGETS = REPO / "fuzz" / "targets"
CORPUS = REPO / "fuzz" / "corpus"

# REQ-SEC-023's list of parsers of external bytes, each with the target that
# drives it and the call the target must reach (a dotted path from the target
# module's own names).
PARSERS: dict[str, tuple[str, str]] = {
    "the text cleaner": ("text_cleaner", "boundary.clean_text"),
    "the content cleaner": ("content_cleaner", "boundary.clean_content"),
    "charset decoding": ("charset_decode", "charset.decode"),
    "the HTML document pipeline: tree": ("html_document", "parse_html"),
    "the HTML document pipeline: extraction": ("html_document", "extract"),
    "the scraping reader": ("duckduckgo_page", "duckduckgo.DuckDuckGoDriver.parse"),
    "URL normalization": ("result_url", "urls.normalize"),
    "the secret check": ("secret_check", "privacy.find_secrets"),
    "the secret check of a fetch URL": ("secret_check", "privacy.check_url"),
    "configuration parsing": ("config_toml", "load"),
    "the egress policy's judgment of a URL: intake": ("egress_url", "parse_fetch_url"),
    "the egress policy's judgment of a URL: policy": ("egress_url", "EgressPolicy.judge_host"),
    "an egress rule": ("egress_rule", "parse_rule"),
    "a robots.txt answer": ("robots_txt", "robots._parse"),
    "a provider's JSON answer: Wikipedia": ("wikipedia_json", "wikipedia.WikipediaDriver.parse"),
    "a provider's JSON answer: Brave": ("brave_json", "brave.BraveDriver.parse"),
    "the Retry-After value": ("retry_after", "delay_seconds"),
    "the charset header value": ("charset_header", "mediatype.charset"),
    "the media type of a fetched page": ("charset_header", "pipeline._media_kind"),
    "a PDF: PDFium's text layer and the layout": ("pdf_document", "worker.read"),
    "a PDF's layout": ("pdf_layout", "layout.to_markdown"),
    "the data a script-rendered page carries": ("embedded_data", "embedded_blocks"),
}


def target_names() -> list[str]:
    return sorted(p.stem for p in TARGETS.glob("*.py") if not p.name.startswith("_"))


def load(name: str) -> ModuleType:
    return importlib.import_module(f"fuzz.targets.{name}")


def seed_files(name: str) -> list[Path]:
    folder = CORPUS / name
    return sorted(p for p in folder.iterdir() if p.is_file()) if folder.is_dir() else []


def test_req_test_019_every_fuzz_target_has_committed_seeds() -> None:
    names = target_names()
    assert len(names) >= 14  # the book's fourteen, some split in two here
    assert not [n for n in names if not seed_files(n)], "a target without seeds"
    orphans = sorted(p.name for p in CORPUS.iterdir() if p.is_dir() and p.name not in names)
    assert not orphans, f"seeds of no target: {orphans}"
    assert sorted(seeds.TARGETS) == names, "fuzz/seeds.py and fuzz/targets/ name other targets"


def test_req_test_019_the_seed_corpus_stays_small() -> None:
    sizes = [p.stat().st_size for n in target_names() for p in seed_files(n)]
    assert max(sizes) <= seeds.MAX_SEED_BYTES
    assert sum(sizes) <= seeds.MAX_CORPUS_BYTES


@pytest.mark.parametrize("name", target_names())
def test_req_sec_023_the_committed_seeds_run_through_the_target(name: str) -> None:
    target = load(name)
    assert callable(target.TestOneInput)
    for path in seed_files(name):
        try:
            target.TestOneInput(path.read_bytes())
        except Exception as exc:  # name the seed, then fail
            pytest.fail(f"{name}: seed {path.name} raised {type(exc).__name__}: {exc}")


def _spy(monkeypatch: pytest.MonkeyPatch, module: ModuleType, dotted: str) -> list[int]:
    """Count the calls the target makes through ``dotted`` (resolved from ``module``)."""
    *path, last = dotted.split(".")
    owner: Any = module
    for part in path:
        owner = getattr(owner, part)
    original: Callable[..., Any] = getattr(owner, last)
    calls: list[int] = []

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return original(*args, **kwargs)

    # On a class the spy replaces the method for every instance; self comes first.
    monkeypatch.setattr(owner, last, counting)
    return calls


@pytest.mark.parametrize("parser", sorted(PARSERS))
def test_req_sec_023_every_parser_of_external_bytes_has_a_fuzz_target(
    parser: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    name, call = PARSERS[parser]
    assert (TARGETS / f"{name}.py").is_file(), f"no fuzz target for {parser}"
    target = load(name)
    calls = _spy(monkeypatch, target, call)
    for path in seed_files(name):
        target.TestOneInput(path.read_bytes())
        if calls:
            break
    assert calls, f"the seeds of {name} never reach {call}"


def test_req_sec_023_the_targets_import_without_the_fuzzer() -> None:
    # CI has no atheris: the harness must fall back, and the targets must still load.
    code = (
        "import sys; sys.modules['atheris'] = None\n"
        "import importlib\n"
        "from fuzz import harness\n"
        "assert harness.atheris is None\n"
        f"for name in {target_names()!r}:\n"
        "    importlib.import_module('fuzz.targets.' + name).TestOneInput(b'')\n"
        "try:\n"
        "    harness.main(lambda data: None)\n"
        "except SystemExit as exc:\n"
        "    assert 'atheris' in str(exc)\n"
        "else:\n"
        "    raise AssertionError('main ran without atheris')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]


CRASH_OUTPUT = b"""INFO: Seed: 1
#2\tINITED cov: 10 ft: 12 corp: 3/40b exec/s: 0 rss: 40Mb
#900\tNEW    cov: 55 ft: 80 corp: 9/300b lim: 4096 exec/s: 0 rss: 44Mb

 === Uncaught Python exception: ===
KeyError: 'x'
Traceback (most recent call last):
  File "/somewhere/fuzz/targets/t.py", line 9, in TestOneInput
    run(data)
  File "/somewhere/rypsok/core/thing.py", line 42, in run
    table[key]
KeyError: 'x'

==1== ERROR: libFuzzer: fuzz target exited
artifact_prefix='fuzz/crashes/t/'; Test unit written to fuzz/crashes/t/crash-abc
stat::number_of_executed_units: 1234
stat::peak_rss_mb:              51
"""


def test_fuzz_run_reads_libfuzzer_output() -> None:
    report = fuzz_run.Report("t")
    fuzz_run._account(report, CRASH_OUTPUT)
    assert (report.executions, report.coverage, report.features) == (1234, 55, 80)
    assert (report.corpus, report.peak_rss_mb) == (9, 51)
    crash = fuzz_run._classify(CRASH_OUTPUT, "fuzz/crashes/t/crash-abc")
    assert crash.kind == "exception" and crash.summary == "KeyError: 'x'"
    assert crash.where.endswith("rypsok/core/thing.py:42 in run")
    hang = fuzz_run._classify(
        b"==1== ERROR: libFuzzer: timeout after 10 seconds\n", "fuzz/crashes/t/timeout-abc"
    )
    assert hang.kind == "timeout"
    oom = fuzz_run._classify(
        b"==1== ERROR: libFuzzer: out-of-memory (used: 3000Mb)\n", "fuzz/crashes/t/oom-abc"
    )
    assert oom.kind == "out-of-memory"


def test_fuzz_run_refuses_an_unknown_target() -> None:
    with pytest.raises(SystemExit) as exit_:
        fuzz_run.main(["--seconds", "1", "no_such_target"])
    assert exit_.value.code == 2


def test_req_test_019_release_checks_refuses_an_unknown_check() -> None:
    script = REPO / "tools" / "release-checks"
    assert os.access(script, os.X_OK), "tools/release-checks is not executable"
    # An unknown check is refused before any environment is built.
    done = subprocess.run(
        [str(script), "nonsense"], cwd=REPO, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 2
    assert "unknown check" in done.stderr and "fuzz --seconds N" in done.stderr
