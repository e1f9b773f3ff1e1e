"""Every example configuration passes check with the warnings the docs name and no other
(REQ-DOC-002, configuration part). The list is the table "The example files" of
docs/configuration.md: the page is the source, so a warning that appears or disappears
fails here until the page says so."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.examples import materialize
from tests.support.paths import EXAMPLES, REPO
from tests.support.run import check, clean_env

CONFIGURATION_PAGE = REPO / "docs" / "configuration.md"


def documented_warnings() -> dict[str, list[str]]:
    """File name -> the warning keys the configuration page lists for it."""
    text = CONFIGURATION_PAGE.read_text(encoding="utf-8")
    section = text.split("\n## The example files\n", 1)[1].split("\n## ", 1)[0]
    out: dict[str, list[str]] = {}
    for line in section.splitlines():
        row = re.fullmatch(r"\| `([a-z0-9-]+\.toml)` \|[^|]*\|(.*)\|", line)
        if row:
            out[row[1]] = re.findall(r"`([^`]+)`", row[2])
    return out


def warned(lines: list[str]) -> list[str]:
    """The keys of check's warning lines (`rypsok: warning: <key>: ...`)."""
    return [line.split(": ")[2] for line in lines if line.startswith("rypsok: warning:")]


def test_req_doc_002_the_docs_list_every_example_configuration() -> None:
    assert sorted(documented_warnings()) == sorted(p.name for p in EXAMPLES.glob("*.toml"))


@pytest.mark.parametrize("example", sorted(EXAMPLES.glob("*.toml")), ids=lambda p: p.name)
def test_req_doc_002_example_configuration_passes_check(example: Path, tmp_path: Path) -> None:
    path, env = materialize(example, tmp_path)
    run = check(path, env)
    assert run.code == 0, run.err
    expected = documented_warnings().get(example.name)
    assert expected is not None, f"{example.name} is not in docs/configuration.md"
    assert sorted(warned(run.lines)) == sorted(expected), (
        f"{example.name}: check warns {warned(run.lines)}, the docs say {expected}"
    )


def test_req_doc_002_a_warning_the_docs_do_not_name_fails(tmp_path: Path) -> None:
    # The comparison above is strict both ways: one more warning is a difference.
    text = (EXAMPLES / "tutorial-1.toml").read_text(encoding="utf-8")
    path = tmp_path / "t1.toml"
    path.write_text(text + "[fetch]\nrobots_txt = false\n", encoding="utf-8")
    run = check(path)
    assert run.code == 0
    assert sorted(warned(run.lines)) != sorted(documented_warnings()["tutorial-1.toml"])


def test_req_doc_002_examples_cover_every_configuration_the_book_shows() -> None:
    names = {p.name for p in EXAMPLES.glob("*.toml")}
    assert names >= {
        "smallest.toml",
        "tutorial-1.toml",
        "tutorial-2.toml",
        "tutorial-3.toml",
        "strict-mode.toml",
        "tutorial-4.toml",
        "tutorial-5.toml",
        "configuration-example.toml",
    }


def test_tutorial_4_without_its_tokens_is_refused_by_check(tmp_path: Path) -> None:
    run = check(EXAMPLES / "tutorial-4.toml", clean_env())
    assert run.code == 1
    assert (
        "rypsok: error: service.http.auth.callers[0].token_env: environment variable "
        "RYPSOK_TOKEN_MIMLYS is unset or empty (line 13, column 13)"
    ) in run.lines


def test_tutorial_5_without_the_switch_is_refused_with_one_sentence(tmp_path: Path) -> None:
    text = (EXAMPLES / "tutorial-5.toml").read_text().replace("enabled = true", "enabled = false")
    path = tmp_path / "t5.toml"
    path.write_text(text)
    run = check(path)
    assert run.code == 1
    assert [x for x in run.lines if "error" in x] == [
        'rypsok: error: engines.ddg: type "duckduckgo" scrapes a human-facing interface; it runs '
        "only with [scraping] enabled = true, at the operator's risk under the provider's terms. "
        "(line 14, column 10)"
    ]
