"""Fuzz target: the secret check on a query or a fetch URL (rypsok.core.privacy).

Input: one knob byte (bit 0 wide text), then the text. Documented failures:
none for ``find_secrets`` and ``check_url`` ("never raises"); ``apply`` raises
ValueError only for a mode outside LIM-P1, which is never given here. Checked
besides: findings lie inside the text with a known kind, refuse refuses exactly
when something is found, and mask leaves nothing to find.
"""

from __future__ import annotations

from fuzz.harness import Input, as_text, instrumented, main

with instrumented(__name__):
    from rypsok.core import privacy


def TestOneInput(data: bytes) -> None:
    source = Input(data)
    wide = bool(source.byte() & 1)
    text = as_text(source.rest(), wide)

    findings = privacy.find_secrets(text)
    for finding in findings:
        assert finding.kind in privacy.KINDS
        assert 0 <= finding.position < finding.end <= len(text)

    refused = privacy.apply(text, "refuse")
    assert refused.refused == bool(findings)
    masked = privacy.apply(text, "mask")
    if not masked.refused:
        assert not privacy.find_secrets(masked.text), "mask left a secret behind"
    privacy.apply(text, "warn")
    privacy.apply(text, "off")

    found = privacy.check_url(text)
    if found is not None:
        assert 0 <= found.position <= len(text)


if __name__ == "__main__":
    main(TestOneInput)
