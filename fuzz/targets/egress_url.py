"""Fuzz target: the egress policy's judgment of a fetch URL.

rypsok.core.fetch.intake.parse_fetch_url reads the URL as a browser would, then
rypsok.core.net.egress.EgressPolicy judges its host (and its literal address)
under the built-in table alone, or with operator rules.

Input: one knob byte (bit 0 wide text, bit 1 plain http allowed, bits 2-3 the
privacy mode, bit 4 with operator rules), then the URL. Documented failures:
ToolError (invalid_request or denied), and nothing else. Checked besides: a
ToolError is one of the two kinds, a target's URL re-reads to itself (when it
is within LIM-F9: percent-encoding a path may lengthen it past the bound), and
a literal address the built-in table refuses is never admitted without an
allow rule.
"""

from __future__ import annotations

from fuzz.harness import Input, as_text, instrumented, main

with instrumented(__name__, ("ipaddress", "encodings.idna")):
    from rypsok.core.fetch.errors import URL_MAX_CHARS
    from rypsok.core.fetch.intake import parse_fetch_url
    from rypsok.core.model import ToolError
    from rypsok.core.net.egress import EgressPolicy, refused_builtin
    from rypsok.core.net.rules import parse_rule

_MODES = ("refuse", "mask", "warn", "off")
_PORTS = (80, 443)
_BARE = EgressPolicy(allow=(), deny=(), ports=_PORTS)
_RULED = EgressPolicy(
    allow=tuple(map(parse_rule, ("10.1.2.0/24", "intranet.example", "*.corp.example", "fd00::5"))),
    deny=tuple(map(parse_rule, ("denied.example", "*.bad.example", "198.51.100.7"))),
    ports=(*_PORTS, 8080),
)


def TestOneInput(data: bytes) -> None:
    source = Input(data)
    knob = source.byte()
    url = as_text(source.rest(), bool(knob & 1))
    allow_http = bool(knob & 2)
    mode = _MODES[(knob >> 2) & 3]
    policy = _RULED if knob & 16 else _BARE
    try:
        target = parse_fetch_url(url, allow_http=allow_http, secret_mode=mode)
    except ToolError as error:
        assert error.kind in ("invalid_request", "denied")
        return
    assert target.scheme == "https" or allow_http
    if len(target.url) <= URL_MAX_CHARS:  # percent-encoding may lengthen it past the bound
        again = parse_fetch_url(target.url, allow_http=allow_http, secret_mode=_MODES[3])
        assert again.url == target.url, "the URL fetched reads as another URL"

    verdict = policy.judge_host(target.host, target.port)
    if target.address is not None:
        by_address = policy.judge_address(target.address, target.host, target.port)
        if refused_builtin(target.address) is not None and by_address.reason != "allow_rule":
            assert not by_address.allowed and not verdict.allowed, "a refused address admitted"
    policy.admits_by_rule(target.host)


if __name__ == "__main__":
    main(TestOneInput)
