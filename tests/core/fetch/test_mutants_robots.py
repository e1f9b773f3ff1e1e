"""robots.txt: cases mutation testing found unguarded (REQ-CMP-005; tools/mutants.py).

Each test pins a behaviour that a surviving mutant of rypsok/core/fetch/robots.py changed
while every other test passed.
"""

from __future__ import annotations

import pytest

from rypsok.core.fetch.robots import parse_robots


@pytest.mark.parametrize("agent", ["* extra", "*\textra"])
def test_req_cmp_005_a_star_followed_by_more_text_is_still_the_star_group(agent: str) -> None:
    rules = parse_robots(f"User-agent: {agent}\nDisallow: /private\n".encode())
    assert not rules.allows("/private/x")
    assert rules.allows("/public")


def test_req_cmp_005_an_empty_rule_does_not_end_the_group() -> None:
    rules = parse_robots(b"User-agent: *\nDisallow:\nDisallow: /private\n")
    assert not rules.allows("/private/x")
    assert rules.allows("/public")


def test_req_cmp_005_a_pattern_that_starts_with_a_star_keeps_its_length() -> None:
    # "*.pdf" and "/docs" are equally long: allow wins the tie. Read as "/*.pdf" the
    # disallow rule would be one longer and win.
    rules = parse_robots(b"User-agent: *\nAllow: /docs\nDisallow: *.pdf\n")
    assert rules.allows("/docs/a.pdf")
    assert not rules.allows("/other/a.pdf")


def test_req_cmp_005_a_middle_segment_may_match_at_the_start_of_the_path() -> None:
    rules = parse_robots(b"User-agent: *\nDisallow: */private*\n")
    assert not rules.allows("/private/x")
    assert not rules.allows("/a/private/x")
    assert rules.allows("/public")


def test_req_cmp_005_any_product_name_reads_the_file_without_failing() -> None:
    # A name that strict UTF-8 cannot encode names no group: the * groups apply, and
    # the reader does not fall back to staying away from the whole site.
    rules = parse_robots(b"User-agent: *\nDisallow: /private\n", product="\ud800bot")
    assert not rules.allows("/private")
    assert rules.allows("/public")
