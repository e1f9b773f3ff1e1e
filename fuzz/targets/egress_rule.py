"""Fuzz target: one egress rule of the configuration (rypsok.core.net.rules.parse_rule).

Input: one knob byte (bit 0 wide text), then the rule. Documented failures:
RuleError, whose message "repeats nothing of the rule". Checked besides: a rule
has the fields its kind needs, and matching it against names and addresses
never fails.
"""

from __future__ import annotations

import ipaddress

from fuzz.harness import Input, as_text, instrumented, main

with instrumented(__name__, ("ipaddress", "encodings.idna")):
    from rypsok.core.net.rules import Rule, RuleError, parse_rule

_NAMES = ("example.org", "a.example.org", "xn--bcher-kva.example", "localhost", "")
_ADDRESSES = tuple(
    map(
        ipaddress.ip_address,
        (
            "10.1.2.3",
            "127.0.0.1",
            "169.254.169.254",
            "::1",
            "::ffff:10.1.2.3",
            "2001:db8::1",
        ),
    )
)


def TestOneInput(data: bytes) -> None:
    source = Input(data)
    wide = bool(source.byte() & 1)
    text = as_text(source.rest(), wide)
    try:
        rule = parse_rule(text)
    except RuleError as error:
        message = str(error)
        assert message
        # A rule long enough not to be a word of our own sentences is never quoted.
        assert len(text) < 12 or text not in message, "a rule's text in its error"
        return
    assert isinstance(rule, Rule)
    if rule.kind in ("network", "address"):
        assert rule.network is not None and rule.name is None
    else:
        assert rule.name is not None and rule.name.isascii() and rule.network is None
    for name in _NAMES:
        rule.matches_name(name)
    for address in _ADDRESSES:
        rule.matches_address(address)
    rule.wider_than(8, 32)


if __name__ == "__main__":
    main(TestOneInput)
