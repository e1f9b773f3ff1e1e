"""robots.txt rules as they are kept and matched (REQ-CMP-005, RFC 9309).

`RobotsRules` is what the fetch pipeline's parser (fetch/robots.py) makes of a file and
what the store keeps per origin; both backends pass it, so it lives below the pipelines.
Matching:

* patterns and targets are compared in one normal form: ``%XX`` of an
  unreserved character is decoded, other ``%XX`` upper-cased, every octet
  that may not stand literally in a URI (non-ASCII, controls, space, ``<``,
  ``"`` ...) percent-encoded, reserved characters kept as written (``%2F`` is
  not ``/``). The fragment of a target is dropped: it is never sent.
* ``*`` matches any run of octets, a final ``$`` anchors the end, any other
  ``$`` is literal. The rule with the longest normalised pattern wins; allow
  wins a tie; no matching rule allows. ``/robots.txt`` is always allowed.
* wildcards match greedily segment by segment (``str.find``), never by
  backtracking, so a rule costs time linear in the target. Runs of ``*`` are
  collapsed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

__all__ = ["RobotsRules", "Rule", "normalise", "priority"]

_ROBOTS_PATH: Final = "/robots.txt"
_UNRESERVED: Final = frozenset(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
)
# Either a percent escape, or one octet that is neither unreserved nor reserved
# (RFC 3986 section 2): both are rewritten, everything else is kept as it is.
_TO_NORMALISE: Final = re.compile(rb"%[0-9A-Fa-f]{2}|[^A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]")
_STARS: Final = re.compile(r"\*{2,}")


def _normalise_octet(match: re.Match[bytes]) -> bytes:
    text = match.group()
    if len(text) == 3:  # a percent escape
        value = int(text[1:], 16)
        if value in _UNRESERVED:
            return bytes((value,))
        return b"%" + text[1:].upper()
    return b"%%%02X" % text[0]


def normalise(raw: bytes) -> str:
    """The comparison form of a path or pattern: ASCII, percent-encoding canonical."""
    return _TO_NORMALISE.sub(_normalise_octet, raw).decode("ascii")


@dataclass(frozen=True, slots=True)
class Rule:
    allow: bool
    pattern: str  # normalised, as written: its length is the rule's specificity
    segments: tuple[str, ...] = field(init=False, repr=False, compare=False)
    anchored: bool = field(init=False, repr=False, compare=False)
    literal: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        body = self.pattern
        anchored = body.endswith("$")
        if anchored:
            body = body[:-1]
        segments = tuple(_STARS.sub("*", body).split("*"))
        object.__setattr__(self, "segments", segments)
        object.__setattr__(self, "anchored", anchored)
        object.__setattr__(self, "literal", sum(len(s) for s in segments))

    def matches(self, target: str) -> bool:
        if self.literal > len(target):
            return False
        segments = self.segments
        first = segments[0]
        if not target.startswith(first):
            return False
        if len(segments) == 1:
            return len(target) == len(first) if self.anchored else True
        pos = len(first)
        last = segments[-1]
        end = len(target)
        if self.anchored:
            end -= len(last)
            if end < pos or not target.endswith(last):
                return False
        # Leftmost placement of each middle segment is never worse than any
        # other, so one forward pass decides: no backtracking.
        for segment in segments[1:-1]:
            found = target.find(segment, pos, end)
            if found < 0:
                return False
            pos = found + len(segment)
        return self.anchored or target.find(last, pos) >= 0


def priority(rule: Rule) -> tuple[int, bool]:
    """The order `RobotsRules` keeps its rules in: longest pattern first, allow first."""
    return (-len(rule.pattern), not rule.allow)


@dataclass(frozen=True, slots=True)
class RobotsRules:
    """The rules that apply to rypsok on one origin, most specific first."""

    rules: tuple[Rule, ...] = ()

    def pairs(self) -> tuple[tuple[bool, str], ...]:
        """The rules as (allow, normalised pattern), in priority order: a form to keep
        elsewhere and rebuild with `from_pairs`, without parsing the file again."""
        return tuple((rule.allow, rule.pattern) for rule in self.rules)

    @classmethod
    def from_pairs(cls, pairs: Iterable[tuple[bool, str]]) -> RobotsRules:
        return cls(tuple(Rule(allow, pattern) for allow, pattern in pairs))

    def allows(self, target: str) -> bool:
        """Whether rypsok may fetch ``target``: the path and query as requested."""
        path = _normalise_target(target)
        if path.partition("?")[0] == _ROBOTS_PATH:
            return True  # RFC 9309 2.2.2: implicitly allowed
        for rule in self.rules:  # sorted: the first match is the longest, allow first
            if rule.matches(path):
                return rule.allow
        return True


def _normalise_target(target: str) -> str:
    raw = target.encode("utf-8", "surrogatepass").partition(b"#")[0]
    if not raw.startswith(b"/"):
        raw = b"/" + raw  # the origin-form of a request target starts with /
    return normalise(raw)
