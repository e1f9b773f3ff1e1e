"""A dependent range names the key that sets it (REQ-CFG-005; issue 31, item 2).

Five keys have a range that another key narrows: search.max_results (its ceiling),
fetch.max_chars (its ceiling), search.engine_timeout_ms (deadline minus reserve),
resilience.first_cooldown_s (max_cooldown_s) and service.http.request_timeout_s
(fetch.deadline_ms plus 2 s). Whenever that other key sets an end of the range, the
message names it with its value; a range no other key narrows reads as before.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rypsok.core import limits
from rypsok.core.config import ConfigError, load
from tests.support.toml_documents import OPTIONAL_TABLES

HEADER = "config_version = 1\n"


def problems(write_config, body: str) -> list[str]:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError) as info:
        load(str(write_config(HEADER + body)), {})
    return [p.render() for p in info.value.problems]


def loads(write_config, body: str) -> bool:  # type: ignore[no-untyped-def]
    return load(str(write_config(HEADER + body)), {}) is not None


# -- each dependent range ---------------------------------------------------------------------


def test_a_dependent_range_names_the_key_that_sets_it_max_chars_ceiling(write_config) -> None:
    # The case of the issue: the 1000 comes from the ceiling, and the message says so.
    assert problems(write_config, "[fetch]\nmax_chars = 2000\nmax_chars_ceiling = 1000\n") == [
        "fetch.max_chars: expected an integer from 500 to 1000 (fetch.max_chars_ceiling = "
        "1000), found a number above that range (line 3, column 13)"
    ]
    # The ceiling at its default still sets the end: raising it is the operator's fix.
    assert problems(write_config, "[fetch]\nmax_chars = 30000\n") == [
        "fetch.max_chars: expected an integer from 500 to 20000 (fetch.max_chars_ceiling = "
        "20000), found a number above that range (line 3, column 13)"
    ]
    # Not written in the file: the default is what the ceiling excludes.
    assert problems(write_config, "[fetch]\nmax_chars_ceiling = 2000\n") == [
        "fetch.max_chars: expected an integer from 500 to 2000 (fetch.max_chars_ceiling = "
        "2000), found no value, and the default 3000 is above that range"
    ]


def test_a_dependent_range_names_the_key_that_sets_it_max_results_ceiling(write_config) -> None:
    body = "[search]\nmax_results_ceiling = 10\nmax_results = {}\n"
    assert problems(write_config, body.format(30)) == [
        "search.max_results: expected an integer from 1 to 10 (search.max_results_ceiling = "
        "10), found a number above that range (line 4, column 15)"
    ]
    assert problems(write_config, body.format('"8"')) == [
        "search.max_results: expected an integer from 1 to 10 (search.max_results_ceiling = "
        "10), found text (line 4, column 15)"
    ]
    assert problems(write_config, body.format(0)) == [
        "search.max_results: expected an integer from 1 to 10 (search.max_results_ceiling = "
        "10), found a number below that range (line 4, column 15)"
    ]


def test_a_dependent_range_names_the_keys_that_set_it_engine_timeout(write_config) -> None:
    assert problems(write_config, "[search]\ndeadline_ms = 500\nreserve_ms = 200\n") == [
        "search.engine_timeout_ms: expected an integer from 100 to 300 (search.deadline_ms = "
        "500 minus search.reserve_ms = 200), found no value, and the default 2000 is above "
        "that range"
    ]
    # At the defaults (2500 minus 200) the range ends at 2300, not at the deadline's 10000.
    assert problems(write_config, "[search]\nengine_timeout_ms = 5000\n") == [
        "search.engine_timeout_ms: expected an integer from 100 to 2300 (search.deadline_ms = "
        "2500 minus search.reserve_ms = 200), found a number above that range "
        "(line 3, column 21)"
    ]


def test_a_dependent_range_names_the_key_that_sets_it_first_cooldown(write_config) -> None:
    assert problems(write_config, "[resilience]\nmax_cooldown_s = 30\n") == [
        "resilience.first_cooldown_s: expected an integer from 10 to 30 "
        "(resilience.max_cooldown_s = 30), found no value, and the default 60 is above that range"
    ]
    # A value the row alone refuses (above 600) is told against the narrowed range at once,
    # so that one fix is enough.
    assert problems(
        write_config, "[resilience]\nmax_cooldown_s = 30\nfirst_cooldown_s = 700\n"
    ) == [
        "resilience.first_cooldown_s: expected an integer from 10 to 30 "
        "(resilience.max_cooldown_s = 30), found a number above that range (line 4, column 20)"
    ]


def test_a_dependent_range_names_the_key_that_sets_it_request_timeout(write_config) -> None:
    assert problems(write_config, "[fetch]\ndeadline_ms = 30000\n") == [
        "service.http.request_timeout_s: expected an integer from 32 to 600 "
        "(fetch.deadline_ms = 30000 plus 2 s), found no value, and the default 30 is below "
        "that range"
    ]
    # Below the row's own 3 too: the message gives the floor the deadline sets, not 3.
    body = "[fetch]\ndeadline_ms = 30000\n[service.http]\nrequest_timeout_s = 2\n"
    assert problems(write_config, body) == [
        "service.http.request_timeout_s: expected an integer from 32 to 600 "
        "(fetch.deadline_ms = 30000 plus 2 s), found a number below that range "
        "(line 5, column 21)"
    ]
    assert loads(
        write_config, "[fetch]\ndeadline_ms = 30000\n[service.http]\nrequest_timeout_s = 32\n"
    )


# -- hostile cases --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "message", "one_value"),
    [
        (
            "[fetch]\nmax_chars_ceiling = 500\n",
            "fetch.max_chars: expected the integer 500 (fetch.max_chars_ceiling = 500), found no "
            "value, and the default is 3000",
            "[fetch]\nmax_chars_ceiling = 500\nmax_chars = 500\n",
        ),
        (
            "[search]\nmax_results_ceiling = 1\n",
            "search.max_results: expected the integer 1 (search.max_results_ceiling = 1), found "
            "no value, and the default is 5",
            "[search]\nmax_results_ceiling = 1\nmax_results = 1\n",
        ),
        (
            "[resilience]\nmax_cooldown_s = 10\n",
            "resilience.first_cooldown_s: expected the integer 10 (resilience.max_cooldown_s = "
            "10), found no value, and the default is 60",
            "[resilience]\nmax_cooldown_s = 10\nfirst_cooldown_s = 10\n",
        ),
        (
            "[search]\ndeadline_ms = 500\nreserve_ms = 400\n",
            "search.engine_timeout_ms: expected the integer 100 (search.deadline_ms = 500 minus "
            "search.reserve_ms = 400), found no value, and the default is 2000",
            "[search]\ndeadline_ms = 500\nreserve_ms = 400\nengine_timeout_ms = 100\n",
        ),
    ],
    ids=["max_chars", "max_results", "first_cooldown", "engine_timeout"],
)
def test_a_dependent_range_at_its_minimum_names_the_one_value_and_its_key(
    write_config, body: str, message: str, one_value: str
) -> None:
    assert problems(write_config, body) == [message]
    assert loads(write_config, one_value)


def test_a_dependent_range_at_its_minimum_refuses_another_number_without_repeating_it(
    write_config,
) -> None:
    assert problems(write_config, "[fetch]\nmax_chars_ceiling = 500\nmax_chars = 501\n") == [
        "fetch.max_chars: expected the integer 500 (fetch.max_chars_ceiling = 500), found "
        "another number (line 4, column 13)"
    ]


def test_a_dependent_range_left_empty_says_no_value_fits_and_names_the_keys(write_config) -> None:
    # 500 minus 450 leaves 50, below the 100 an engine request needs: the keys it depends on
    # must change, whatever engine_timeout_ms holds.
    for extra in ("", "engine_timeout_ms = 100\n"):
        body = "[search]\ndeadline_ms = 500\nreserve_ms = 450\n" + extra
        place = " (line 5, column 21)" if extra else ""
        assert problems(write_config, body) == [
            "search.engine_timeout_ms: no value fits: the range from 100 to 50 is empty "
            f"(search.deadline_ms = 500 minus search.reserve_ms = 450){place}"
        ]


def test_a_dependent_range_is_not_named_by_a_key_that_is_itself_wrong(write_config) -> None:
    # The ceiling's own problem is told; the default it falls back to is not the file's
    # value, so max_chars is not judged against it (and never told "= 20000").
    body = '[fetch]\nmax_chars_ceiling = "x"\nmax_chars = 30000\n'
    assert problems(write_config, body) == [
        "fetch.max_chars_ceiling: expected an integer from 500 to 100000, found text "
        "(line 3, column 21)"
    ]
    body = "[search]\ndeadline_ms = 50\nengine_timeout_ms = 5000\n"
    assert problems(write_config, body) == [
        "search.deadline_ms: expected an integer from 500 to 10000, found a number below that "
        "range (line 3, column 15)"
    ]


def test_a_range_no_other_key_narrows_reads_as_before(write_config) -> None:
    # The ceiling at its default (20) narrows nothing of max_results' 1 to 20.
    assert problems(write_config, "[search]\nmax_results = 21\n") == [
        "search.max_results: expected an integer from 1 to 20, found a number above that range "
        "(line 3, column 15)"
    ]
    # fetch.deadline_ms at its minimum puts request_timeout_s' floor at the row's own 3.
    assert problems(
        write_config, "[fetch]\ndeadline_ms = 1000\n[service.http]\nrequest_timeout_s = 2\n"
    ) == [
        "service.http.request_timeout_s: expected an integer from 3 to 600, found a number "
        "below that range (line 5, column 21)"
    ]
    assert problems(write_config, "[search]\nquery_max_chars = 0\n") == [
        "search.query_max_chars: expected an integer from 1 to 600, found a number below that "
        "range (line 3, column 19)"
    ]


def test_every_range_another_key_narrows_names_that_key(tmp_path: Path) -> None:
    """Each keyed row set to each end of its range: a problem it causes on another key
    names it with its value; an end the row allows but another key's default excludes
    (request_timeout_s = 3 under the default fetch deadline) names that key. A dependent
    range added without its Bound fails here."""
    seen: set[str] = set()
    for key, row in limits.by_key().items():
        table, _, name = key.rpartition(".")
        for end in {row.low, row.high} - {None}:
            path = tmp_path / "c.toml"
            required = OPTIONAL_TABLES.get(table, "")
            path.write_text(f"{HEADER}[{table}]\n{name} = {end}\n{required}")
            try:
                load(str(path), {})
            except ConfigError as error:
                for problem in error.problems:
                    seen.add(problem.key)
                    if problem.key != key:
                        cause = rf"\([^)]*\b{re.escape(f'{key} = {end}')}\b[^)]*\)"
                        assert re.search(cause, problem.message), (key, end, problem.render())
                        continue
                    setter = re.search(r"\(([a-z_.]+) = \d+", problem.message)
                    assert setter is not None, (key, end, problem.render())
                    assert setter.group(1) in limits.by_key(), problem.render()
                    assert setter.group(1) != key, problem.render()
    assert seen == {
        "fetch.max_chars",
        "search.max_results",
        "search.engine_timeout_ms",
        "resilience.first_cooldown_s",
        "service.http.request_timeout_s",
    }
