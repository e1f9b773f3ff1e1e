"""tools/mutants.py, the mutation testing of the security modules (REQ-TEST-019): its
reading of mutmut's results and the committed exclusion file. mutmut itself is not run
here (a release check, not a CI one)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.support.paths import REPO


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "rypsok_tools_mutants", REPO / "tools" / "mutants.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


mutants = _tool()


def _survivor(
    line: str = "if a < b:", mutated: str = "if a <= b:", function: str = "EgressPolicy.judge_host"
) -> object:
    return mutants.Survivor(
        "rypsok.core.net.egress.xǁEgressPolicyǁjudge_host__mutmut_3",
        "rypsok/core/net/egress.py",
        function,
        "survived",
        line,
        mutated,
    )


def test_req_test_019_the_six_security_modules_are_mutated_with_their_own_tests() -> None:
    names = [g.name for g in mutants.GROUPS]
    assert names == ["egress", "privacy", "boundary", "robots", "http", "sessions"]
    for group in mutants.GROUPS:
        assert group.modules and group.tests, group.name
        for path in (*group.modules, *group.tests):
            assert (REPO / path).is_file(), path
        for test in group.wall_clock:
            assert (REPO / test.split("::")[0]).is_file(), test
    modules = [m for g in mutants.GROUPS for m in g.modules]
    assert len(modules) == len(set(modules))  # one group per module


def test_req_test_019_a_new_kill_test_joins_its_group() -> None:
    egress = mutants.BY_NAME["egress"]
    assert "tests/core/net/test_mutants_egress.py" in mutants.tests_of(egress, REPO)
    assert "tests/tools/test_mutants_tool.py" not in mutants.tests_of(egress, REPO)


@pytest.mark.parametrize(
    ("name", "function"),
    [
        ("rypsok.core.net.egress.x_parse_ipv4__mutmut_10", "parse_ipv4"),
        ("rypsok.core.net.egress.x__labels__mutmut_9", "_labels"),
        ("rypsok.core.net.egress.xǁEgressPolicyǁ_host__mutmut_11", "EgressPolicy._host"),
        ("rypsok.core.net.egress.xǁEgressPolicyǁ__init____mutmut_1", "EgressPolicy.__init__"),
    ],
)
def test_req_test_019_a_mutant_is_named_by_its_function(name: str, function: str) -> None:
    assert mutants.function_of(name, "rypsok/core/net/egress.py") == function


def test_req_test_019_a_mutant_of_another_module_is_an_error() -> None:
    with pytest.raises(ValueError):
        mutants.function_of("rypsok.core.privacy.x_apply__mutmut_1", "rypsok/core/net/egress.py")


def test_req_test_019_the_changed_lines_come_from_the_diff() -> None:
    diff = (
        "--- rypsok/core/net/egress.py\n+++ rypsok/core/net/egress.py\n@@ -1,3 +1,3 @@\n"
        " def _labels(host: str) -> list[str]:\n"
        '-    if labels[-1] == "" and len(labels) > 1:\n'
        '+    if labels[-1] == "" and len(labels) > 2:\n'
        "         labels.pop()"
    )
    assert mutants.diff_lines(diff) == (
        'if labels[-1] == "" and len(labels) > 1:',
        'if labels[-1] == "" and len(labels) > 2:',
    )


@pytest.mark.parametrize(
    ("code", "status"),
    [
        (1, "killed"),
        (3, "killed"),
        (37, "killed"),
        (36, "timeout"),
        (-24, "timeout"),
        (152, "timeout"),
        (-9, "timeout"),
        (0, "survived"),
        (33, "no tests"),
        (5, "no tests"),
        (35, "suspicious"),
        (None, "not checked"),
        (2, "not checked"),
        (34, "not checked"),
    ],
)
def test_req_test_019_timeouts_count_as_caught_and_no_test_as_a_survivor(
    code: int | None, status: str
) -> None:
    assert mutants.classify(code) == status


def _load(tmp_path: Path, text: str) -> list[object]:
    path = tmp_path / "exclusions.toml"
    path.write_text(text, encoding="utf-8")
    return mutants.load_exclusions(path)


def test_req_test_019_an_exclusion_matches_by_function_and_lines(tmp_path: Path) -> None:
    exclusions = _load(
        tmp_path,
        """
[[exclude]]
module = "rypsok/core/net/egress.py"
function = "EgressPolicy.judge_host"
line = "if  a < b:"
mutated = ["if a <= b:", "if a < b + 1:"]
reason = "a equals b never reaches here"
""",
    )
    hit, other_line, other_function = (
        _survivor(),
        _survivor(mutated="if a > b:"),
        _survivor(function="judge_address"),
    )
    mutants.apply_exclusions([hit, other_line, other_function], exclusions)
    assert hit.excluded == "a equals b never reaches here"
    assert other_line.excluded is None and other_function.excluded is None


def test_req_test_019_an_exclusion_may_name_the_mutant(tmp_path: Path) -> None:
    exclusions = _load(
        tmp_path,
        """
[[exclude]]
module = "rypsok/core/net/egress.py"
function = "EgressPolicy.judge_host"
mutant = "rypsok.core.net.egress.xǁEgressPolicyǁjudge_host__mutmut_3"
reason = "equivalent"
""",
    )
    survivor = _survivor()
    mutants.apply_exclusions([survivor], exclusions)
    assert survivor.excluded == "equivalent"


@pytest.mark.parametrize(
    "entry",
    [
        'module = "m.py"\nfunction = "f"\nline = "x"\nmutated = "y"\n',  # no reason
        'module = "m.py"\nfunction = "f"\nreason = "r"\n',  # neither lines nor a name
        'module = "m.py"\nfunction = "f"\nline = "x"\nmutated = "y"\nmutant = "n"\nreason = "r"\n',
        'module = "m.py"\nfunction = "f"\nline = "x"\nmutated = "y"\nreason = "r"\nwhy = "?"\n',
        'module = "m.py"\nfunction = "f"\nline = "x"\nmutated = [1]\nreason = "r"\n',
    ],
)
def test_req_test_019_an_exclusion_without_a_reason_or_identity_is_refused(
    tmp_path: Path, entry: str
) -> None:
    with pytest.raises(mutants.ExclusionError):
        _load(tmp_path, "[[exclude]]\n" + entry)


def test_req_test_019_an_exclusion_no_survivor_needs_is_reported(tmp_path: Path) -> None:
    exclusions = _load(
        tmp_path,
        """
[[exclude]]
module = "rypsok/core/net/egress.py"
function = "EgressPolicy.judge_host"
line = "if a < b:"
mutated = "if a > b:"
reason = "stale"
""",
    )
    result = mutants.GroupResult(
        "egress", ["rypsok/core/net/egress.py"], [], complete=True, survivors=[_survivor()]
    )
    assert mutants.unused_exclusions([result], exclusions) == exclusions
    result.complete = False  # a partial run proves nothing stale
    assert mutants.unused_exclusions([result], exclusions) == []


def test_req_test_019_the_committed_exclusions_are_well_formed() -> None:
    exclusions = mutants.load_exclusions(mutants.EXCLUSIONS)
    modules = {m for g in mutants.GROUPS for m in g.modules}
    for exclusion in exclusions:
        assert exclusion.module in modules, exclusion
        assert len(exclusion.reason) >= 20, exclusion  # a reason, not a label
        assert exclusion.mutant is None, "name mutants by their lines: names change per run"
        source = (REPO / exclusion.module).read_text(encoding="utf-8")
        first = (exclusion.line or "").splitlines()[0]
        assert first in source, ("the excluded line is no longer in the module", exclusion)


def test_req_test_019_the_mutmut_configuration_selects_module_tests_and_mypy() -> None:
    group = mutants.BY_NAME["privacy"]
    text = mutants.mutmut_config(group, ["tests/core/privacy/test_privacy.py"], [])
    assert (
        'only_mutate = ["rypsok/core/privacy/views.py", "rypsok/core/privacy/detectors.py"' in text
    )
    assert 'pytest_add_cli_args_test_selection = ["tests/core/privacy/test_privacy.py"]' in text
    assert (
        '"--deselect", "tests/core/privacy/test_privacy.py::test_req_priv_002_long_adversarial'
        in text
    )
    assert '"mypy"' in text and "type_check_command" in text
