"""Hostile configuration files: never a traceback, never a hang, never an echo."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rypsok.core.config import ConfigError, Problem, load
from rypsok.core.config.load import parse
from rypsok.core.config.validate import TABLES, validate
from tests.support.toml_documents import KNOWN_KEYS, MARK, toml_value

scalars = st.one_of(
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.text(max_size=20).map(lambda s: MARK + s),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(KNOWN_KEYS), inner, max_size=4),
    ),
    max_leaves=12,
)
documents = st.dictionaries(
    st.sampled_from([*TABLES, "engines"]),
    st.one_of(
        values, st.dictionaries(st.sampled_from([*KNOWN_KEYS, "w", "b"]), values, max_size=6)
    ),
    max_size=8,
)


def to_toml(document: dict[str, Any]) -> str:
    return "\n".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in document.items()) + "\n"


def assert_clean(problems: list[Problem]) -> None:
    for problem in problems:
        text = problem.render()
        assert 0 < len(text) <= 200
        assert MARK not in text


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents)
def test_wrong_types_at_every_level_give_keyed_messages_only(document: dict[str, Any]) -> None:
    text = to_toml(document)
    try:
        parsed, positions = parse(text)
        validate(parsed, positions, "fuzz", {})
    except ConfigError as exc:
        assert_clean(exc.problems)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_arbitrary_text_never_raises_anything_but_config_error(text: str) -> None:
    try:
        parsed, positions = parse(text)
        validate(parsed, positions, "fuzz", {})
    except ConfigError as exc:
        for problem in exc.problems:
            assert len(problem.render()) <= 200


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=300))
def test_arbitrary_bytes_from_a_file_never_raise_anything_but_config_error(
    tmp_path_factory: Any, data: bytes
) -> None:
    path = tmp_path_factory.mktemp("fuzz") / "c.toml"
    path.write_bytes(data)
    try:
        load(str(path), {})
    except ConfigError as exc:
        for problem in exc.problems:
            assert len(problem.render()) <= 200
