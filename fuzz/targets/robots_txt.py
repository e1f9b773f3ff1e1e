"""Fuzz target: a robots.txt answer (rypsok.core.fetch.robots).

Input: one byte giving the length of a request target, one choosing the status
of the robots.txt read, the target, then the file. The parser proper (``_parse``)
is driven, not ``parse_robots``: the latter turns any defect into "disallow
all" on purpose, which would hide it from the fuzzer. Documented failures: none
("never raises, linear in the body"). Checked besides: at most MAX_RULES rules
are kept, sorted most specific first, and /robots.txt itself stays allowed.
"""

from __future__ import annotations

from fuzz.harness import Input, instrumented, main

with instrumented(__name__):
    from rypsok.core import limits
    from rypsok.core.fetch import robots

_STATUSES = (200, 204, 301, 304, 400, 404, 429, 500, 503, 100, 0, 999)
_PRODUCTS = ("rypsok", "rypsok/2.0", "*", "")


def TestOneInput(data: bytes) -> None:
    source = Input(data)
    size = source.byte()
    knob = source.byte()
    status = _STATUSES[knob % len(_STATUSES)]
    product = _PRODUCTS[(knob >> 4) % len(_PRODUCTS)]
    target = source.take(size).decode("utf-8", "surrogateescape")
    body = source.rest()[: limits.default("LIM-F13")]

    rules = robots._parse(body, product)
    assert len(rules.rules) <= robots.MAX_RULES
    keys = [(-len(rule.pattern), not rule.allow) for rule in rules.rules]
    assert keys == sorted(keys)
    rules.allows(target)
    assert rules.allows("/robots.txt")
    assert robots.parse_robots(body) is not None
    answer = robots.rules_for_status(status)
    if answer is not None:
        answer.allows(target)


if __name__ == "__main__":
    main(TestOneInput)
