"""Locating, reading and parsing the configuration file (REQ-CFG-001, REQ-MAIN-003)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rypsok.core.config import ConfigError, load
from rypsok.core.config.problems import Problem


def problems_of(path: Path | None, env: dict[str, str] | None = None) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load(None if path is None else str(path), env or {})
    return [p.render() for p in info.value.problems]


def test_req_cfg_001_no_file_means_all_defaults() -> None:
    config = load(None, {})
    assert config.source == "the defaults (no file)"
    assert config.search.max_results == 5


def test_req_cfg_001_config_flag_wins_over_environment(write_config) -> None:
    chosen = write_config("config_version = 1\n[search]\nmax_results = 7\n", "a.toml")
    other = write_config("config_version = 1\n[search]\nmax_results = 9\n", "b.toml")
    assert load(str(chosen), {"RYPSOK_CONFIG": str(other)}).search.max_results == 7
    assert load(None, {"RYPSOK_CONFIG": str(other)}).search.max_results == 9


def test_req_cfg_001_missing_file_names_the_flag(tmp_path: Path) -> None:
    assert problems_of(tmp_path / "nope.toml") == ["--config: the file does not exist"]
    with pytest.raises(ConfigError) as info:
        load(None, {"RYPSOK_CONFIG": str(tmp_path / "nope.toml")})
    assert info.value.problems[0].key == "RYPSOK_CONFIG"


def test_req_cfg_001_a_directory_or_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    import os

    assert problems_of(tmp_path) == ["--config: names a directory, not a file"]
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert problems_of(fifo) == ["--config: names something that is not a regular file"]


def test_req_main_003_config_version_is_required(write_config) -> None:
    assert problems_of(write_config("[search]\nmax_results = 3\n")) == [
        "config_version: is required; write config_version = 1 at the top"
    ]


@pytest.mark.parametrize("value", ["2", "0", '"1"', "1.0", "true"])
def test_req_main_003_unknown_config_version_is_refused(write_config, value: str) -> None:
    found = problems_of(write_config(f"config_version = {value}\n"))
    assert len(found) == 1 and found[0].startswith("config_version: ")
    assert "(line 1, column 18)" in found[0]


def test_toml_syntax_error_has_line_and_column(write_config) -> None:
    found = problems_of(write_config("config_version = 1\nmax = = 3\n"))
    assert found == ["TOML syntax error: an invalid value (line 2, column 7)"]


def test_toml_syntax_error_repeats_no_text(write_config) -> None:
    secret = "sk-proj-SUPERSECRET0123456789abcdefghijkl"
    found = problems_of(write_config(f"config_version = 1\nx = {secret}\n"))
    assert secret not in " ".join(found)
    assert found[0].startswith("TOML syntax error:") and "(line 2, column" in found[0]


def test_duplicate_table_is_named_with_its_place(write_config) -> None:
    text = (
        'config_version = 1\n[engines.w]\ntype = "wikipedia"\ncategories = ["general"]\n'
        "[engines.w]\n"
    )
    assert problems_of(write_config(text)) == [
        "engines.w: defined more than once (line 5, column 10)"
    ]


def test_duplicate_key_is_named_with_its_place(write_config) -> None:
    text = "config_version = 1\n[search]\nmax_results = 3\nmax_results = 4\n"
    assert problems_of(write_config(text)) == [
        "search.max_results: defined more than once (line 4, column 1)"
    ]


def test_binary_bytes_are_refused_with_a_place(write_config) -> None:
    found = problems_of(write_config(b"config_version = 1\n\xff\xfe\x00garbage\n"))
    assert found == ["--config: the file is not UTF-8 text (line 2, column 1)"]


def test_a_file_above_one_mib_is_refused_before_parsing(write_config) -> None:
    path = write_config("config_version = 1\n" + "# padding\n" * 1_100_000)
    assert problems_of(path) == ["--config: the file is larger than 1 MiB"]


def test_deep_nesting_gives_a_message_not_a_traceback(write_config) -> None:
    found = problems_of(write_config("config_version = 1\nx = " + "[" * 50_000 + "]" * 50_000))
    assert len(found) == 1 and found[0].startswith("TOML syntax error")


def test_byte_order_mark_is_accepted(write_config) -> None:
    config = load(str(write_config("\ufeffconfig_version = 1\n")), {})
    assert config.search.max_results == 5


def test_problem_render_is_bounded_to_200_characters() -> None:
    text = Problem("k" * 50, "m" * 400, (1, 1)).render()
    assert len(text) == 200
