"""The modes of the secret check: off, warn, mask and refuse (LIM-P1, REQ-PRIV-002)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Literal

from rypsok.core.privacy.detectors import PLACEHOLDER, Finding, find_secrets

Mode = Literal["off", "warn", "mask", "refuse"]
MODES: Final[tuple[Mode, ...]] = ("off", "warn", "mask", "refuse")


@dataclass(frozen=True, slots=True)
class PrivacyDecision:
    """What the check decided for one text under one mode.

    ``text`` is what may leave the host: the original in ``off`` and ``warn``
    modes, the masked text in ``mask`` mode, the empty string when refused. It is
    kept out of ``repr`` because in ``warn`` mode it still carries the secret.
    """

    mode: Mode
    refused: bool
    findings: tuple[Finding, ...]
    text: str = field(repr=False)

    @property
    def count(self) -> int:
        """How many secrets were found (the count of ``credential_masked``)."""
        return len(self.findings)

    @property
    def kind(self) -> str | None:
        """The first finding's kind, for ``denied`` and the warning event."""
        return self.findings[0].kind if self.findings else None

    @property
    def position(self) -> int | None:
        """The first finding's position, for ``denied`` and the warning event."""
        return self.findings[0].position if self.findings else None


def _replace(text: str, findings: list[Finding]) -> str:
    parts: list[str] = []
    cursor = 0
    for f in findings:
        parts.append(text[cursor : f.position])
        parts.append(PLACEHOLDER)
        cursor = f.end
    parts.append(text[cursor:])
    return "".join(parts)


_MASK_PASSES: Final = 4


def _mask(text: str, findings: list[Finding]) -> tuple[str, int, bool]:
    """Replace, check again, and repeat in case a replacement joined two pieces
    into a new shape; the bound keeps it finite. Returns the text, how many
    secrets were replaced, and whether the result is clean."""
    count = 0
    for _ in range(_MASK_PASSES):
        if not findings:
            return text, count, True
        count += len(findings)
        text = _replace(text, findings)
        findings = find_secrets(text)
    return text, count, not findings


def mask(text: str) -> tuple[str, int]:
    """``text`` with every secret replaced by `PLACEHOLDER`, and how many there were."""
    masked, count, _clean = _mask(text, find_secrets(text))
    return masked, count


def apply(text: str, mode: str) -> PrivacyDecision:
    """Apply one LIM-P1 mode to a query (or URL) before any outbound request.

    - ``off``: nothing is checked; the text goes as it is.
    - ``warn``: the text goes as it is; ``findings`` says what to log (kind and
      position, never the value).
    - ``mask``: each secret becomes `PLACEHOLDER`; ``count`` is the
      ``credential_masked`` count.
    - ``refuse``: any finding refuses the call; ``kind`` and ``position`` are
      the first finding's, for ``denied`` with ``secret_in_query``.

    Raises ValueError for a mode outside LIM-P1 (configuration validates it).
    """
    if mode == "off":
        return PrivacyDecision("off", False, (), text)
    findings = tuple(find_secrets(text))
    if mode == "warn":
        return PrivacyDecision("warn", False, findings, text)
    if mode == "refuse":
        if findings:
            return PrivacyDecision("refuse", True, findings, "")
        return PrivacyDecision("refuse", False, (), text)
    if mode == "mask":
        if not findings:
            return PrivacyDecision("mask", False, (), text)
        masked, _count, clean = _mask(text, list(findings))
        if not clean:  # pragma: no cover - never seen; refusing is the safe side
            return PrivacyDecision("mask", True, findings, "")
        return PrivacyDecision("mask", False, findings, masked)
    raise ValueError("unknown secret_detection mode")
