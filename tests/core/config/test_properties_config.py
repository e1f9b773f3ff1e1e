"""Properties of configuration parsing (REQ-CFG-005, REQ-SEC-023), beside
test_config_fuzz.py.

There the keys are the schema's own; here a key may be anything TOML can quote: a newline,
a terminal escape, a bidirectional override. A file that parses as TOML gets problems that
each name a key, and a strange key is shown only quoted with escapes (printable ASCII), never
as the file wrote it; nothing raises but ConfigError.
"""

from __future__ import annotations

import json
import re
import tomllib
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from rypsok.core.config import ConfigError
from rypsok.core.config.load import parse
from rypsok.core.config.validate import TABLES, validate
from tests.support.toml_documents import KNOWN_KEYS, MARK, toml_value

ODD = ["\n", "\x1b[2J", "\u202e", "\x00", " ", "\t", "'", '"', ".", "é", "\u200b", "=", "[0]"]
KEYS = st.one_of(
    st.sampled_from([*KNOWN_KEYS, *TABLES, "engines", "config_version"]),
    st.text(max_size=12),
    # A near miss of a real key with something odd attached: close enough for a suggestion.
    st.tuples(st.sampled_from(KNOWN_KEYS), st.sampled_from(ODD)).map("".join),
)
# Small documents: a key's spelling is what is under test, not the size of the file.
leaves = st.one_of(
    st.integers(-5, 5),
    st.booleans(),
    st.text(max_size=8).map(lambda s: MARK + s),
    st.lists(st.text(max_size=8).map(lambda s: MARK + s), max_size=2),
)
nested = st.recursive(leaves, lambda inner: st.dictionaries(KEYS, inner, max_size=3), max_leaves=6)
documents = st.dictionaries(
    st.one_of(st.sampled_from([*TABLES, "engines"]), KEYS), nested, max_size=4
)

# How a message may write a key: plain names, quoted names whose every character outside
# printable ASCII is an escape, and indices, dot-separated.
_NAME = r'(?:[A-Za-z0-9_-]+|"(?:[ !#-\[\]-~]|\\["\\]|\\u[0-9A-F]{4}|\\U[0-9A-F]{8})*")'
_SHOWN_KEY = re.compile(rf"{_NAME}(?:\.{_NAME}|\[\d+\])*")


def _value(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    return toml_value(value)


def _basic(name: str) -> str:
    """A TOML basic string: controls and DEL escaped (JSON leaves DEL raw), the rest as is."""
    return (
        '"'
        + "".join(
            f"\\u{ord(c):04x}" if ord(c) < 0x20 or ord(c) == 0x7F else "\\" + c if c in '"\\' else c
            for c in name
        )
        + '"'
    )


def _key(key: str) -> str:
    return json.dumps(key, ensure_ascii=False)  # a TOML basic string, control escapes kept


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents, st.booleans())
@example({"search": {"max_results\x1b[2J": 3}}, True)
@example({"search": {"max_results\n": 3}}, True)
@example({"egress": {"\u202eallow": []}}, True)
def test_req_cfg_005_every_problem_names_a_key_and_repeats_no_odd_text(
    document: dict[str, Any], versioned: bool
) -> None:
    if versioned:
        document = {"config_version": 1, **document}
    text = "\n".join(f"{_key(k)} = {_value(v)}" for k, v in document.items()) + "\n"
    try:
        parsed, positions = parse(text)
    except ConfigError:
        return  # not TOML: test_config_fuzz covers what syntax errors say
    try:
        validate(parsed, positions, "fuzz", {})
    except ConfigError as error:
        assert error.problems
        for problem in error.problems:
            # A problem without a key is one of a top-level key whose name cannot be shown.
            assert problem.key == "" or _SHOWN_KEY.fullmatch(problem.key), problem
            rendered = problem.render()
            assert rendered.isprintable() and MARK not in rendered, rendered


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["", *[t for t in TABLES if t not in ("config_version", "engines")]]),
    st.text(max_size=24),
)
@example("fetch", "\x1b]0;title\x07")
@example("", "\u202e\n")
@example("search", "max_result\u0301")
def test_req_cfg_005_an_unknown_key_is_named_in_full_at_its_first_column(
    table: str, name: str
) -> None:
    known = set(TABLES) if not table else set(KNOWN_KEYS)
    if name in known or name in ("service", "http", "auth"):
        return
    header = f"[{table}]\n" if table else ""
    text = f"config_version = 1\n{header}{_basic(name)} = 1\n"
    parsed, positions = parse(text)
    try:
        validate(parsed, positions, "fuzz", {})
    except ConfigError as error:
        [problem] = [p for p in error.problems if "unknown" in p.message]
        assert problem.place == (3 if table else 2, 1)
        if "(its name is not shown" in problem.message:
            assert problem.key == table
            return
        # The key as shown, read back as TOML, is the key of the file.
        shown = problem.key.removeprefix(f"{table}.") if table else problem.key
        assert tomllib.loads(f"{shown} = 1") == {name: 1}
        assert problem.render().isascii() and problem.render().isprintable()
    else:
        raise AssertionError("an unknown key was accepted")


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["", "fetch", "engines.w"]), st.text(max_size=24), st.integers(0, 3))
@example("fetch", "a\x1bb", 0)
@example("", "\u202e", 2)
def test_req_cfg_005_a_key_defined_twice_is_placed_at_its_second_definition(
    table: str, name: str, indent: int
) -> None:
    header = f"[{table}]\n" if table else ""
    key = _basic(name)
    text = f"{header}{key} = 1\n{' ' * indent}{key} = 2\n"
    with pytest.raises(ConfigError) as info:
        parse(text)
    [problem] = info.value.problems
    line = 3 if table else 2
    assert problem.place == (line, indent + 1), problem
    assert problem.render().isascii() and problem.render().isprintable()
    if "(its name is not shown" in problem.message:
        assert problem.key == table
    else:
        assert problem.message == "defined more than once"
        shown = problem.key.removeprefix(f"{table}.") if table else problem.key
        assert tomllib.loads(f"{shown} = 1") == {name: 1}
