"""robots.txt for agent-directed fetches (REQ-CMP-005, RFC 9309).

Pure and bounded: :func:`parse_robots` turns a body into :class:`RobotsRules`,
:func:`rules_for_status` maps the status of the robots.txt read, and
:class:`RobotsCache` keeps verdicts per origin. Reading the file (egress policy,
redirects, the LIM-F13 byte bound) is the fetch service's job.

Reading of the file:

* lines end with CR, LF or CRLF; a UTF-8 byte order mark is skipped; ``#``
  starts a comment; a line is ``key: value`` with the key compared
  case-insensitively. Only ``user-agent``, ``allow`` and ``disallow`` mean
  anything: ``crawl-delay``, ``sitemap``, other keys and lines without a colon
  are ignored and do not end a group.
* a group is one or more ``user-agent`` lines and the rules after them; a
  ``user-agent`` line after a rule starts a new group; rules before the first
  ``user-agent`` line belong to no group and are ignored.
* the product token of a ``user-agent`` value is its leading run of letters,
  ``-`` and ``_`` (``rypsok/2.0`` names ``rypsok``), compared
  case-insensitively. Every group naming the product applies, merged; only
  when none names it, every ``*`` group, merged; when neither, everything is
  allowed. A product group without rules therefore allows everything.
* a rule with an empty value is no rule (``Disallow:`` allows everything).
  A value that begins with neither ``/`` nor ``*`` is read with a leading
  ``/``: what the site evidently meant, not a pattern that can never match.

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
  backtracking, so a rule costs time linear in the target.

Bounds: a file is read up to LIM-F13 bytes and the rules there apply
(:func:`parse_robots_prefix` drops a line the bound cut); at most
:data:`MAX_RULES` rules are kept (the first ones of the applicable groups,
in file order; the rest are ignored like bytes past LIM-F13), and a rule
with more than :data:`MAX_PATTERN_LITERAL` literal octets is dropped: it
cannot match the normal form of any URL of LIM-F9 characters, so dropping
it changes no verdict. Runs of ``*`` are collapsed.
"""

from __future__ import annotations

import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Final

from rypsok.core import limits

__all__ = [
    "ALLOW_ALL",
    "DISALLOW_ALL",
    "MAX_PATTERN_LITERAL",
    "MAX_RULES",
    "RobotsCache",
    "RobotsRules",
    "parse_robots",
    "parse_robots_prefix",
    "rules_for_status",
]

MAX_RULES: Final = 8192
# Each character of a URL of LIM-F9 characters normalises to at most 12 octets
# (4 UTF-8 octets, each as %XX); a pattern needing more literal octets never matches.
MAX_PATTERN_LITERAL: Final = 12 * limits.default("LIM-F9")

_BOM: Final = b"\xef\xbb\xbf"
_ROBOTS_PATH: Final = "/robots.txt"
_UNRESERVED: Final = frozenset(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
)
# Either a percent escape, or one octet that is neither unreserved nor reserved
# (RFC 3986 section 2): both are rewritten, everything else is kept as it is.
_TO_NORMALISE: Final = re.compile(rb"%[0-9A-Fa-f]{2}|[^A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]")
_STARS: Final = re.compile(r"\*{2,}")
_TOKEN: Final = re.compile(rb"[A-Za-z_-]*")


def _normalise_octet(match: re.Match[bytes]) -> bytes:
    text = match.group()
    if len(text) == 3:  # a percent escape
        value = int(text[1:], 16)
        if value in _UNRESERVED:
            return bytes((value,))
        return b"%" + text[1:].upper()
    return b"%%%02X" % text[0]


def _normalise(raw: bytes) -> str:
    """The comparison form of a path or pattern: ASCII, percent-encoding canonical."""
    return _TO_NORMALISE.sub(_normalise_octet, raw).decode("ascii")


@dataclass(frozen=True, slots=True)
class _Rule:
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


def _priority(rule: _Rule) -> tuple[int, bool]:
    return (-len(rule.pattern), not rule.allow)


@dataclass(frozen=True, slots=True)
class RobotsRules:
    """The rules that apply to rypsok on one origin, most specific first."""

    rules: tuple[_Rule, ...] = ()

    def pairs(self) -> tuple[tuple[bool, str], ...]:
        """The rules as (allow, normalised pattern), in priority order: a form to keep
        elsewhere and rebuild with `from_pairs`, without parsing the file again."""
        return tuple((rule.allow, rule.pattern) for rule in self.rules)

    @classmethod
    def from_pairs(cls, pairs: Iterable[tuple[bool, str]]) -> RobotsRules:
        return cls(tuple(_Rule(allow, pattern) for allow, pattern in pairs))

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
    return _normalise(raw)


def _rules(raw: list[tuple[bool, bytes]]) -> RobotsRules:
    kept: list[_Rule] = []
    for allow, value in raw:
        if not value.startswith((b"/", b"*")):
            value = b"/" + value
        rule = _Rule(allow, _normalise(value))
        if rule.literal <= MAX_PATTERN_LITERAL:
            kept.append(rule)
    kept.sort(key=_priority)
    return RobotsRules(tuple(kept))


ALLOW_ALL: Final = RobotsRules()
DISALLOW_ALL: Final = RobotsRules((_Rule(False, "/"),))


def _product_token(value: bytes) -> bytes:
    value = value.strip()
    if value == b"*" or value.startswith((b"* ", b"*\t")):
        return b"*"
    match = _TOKEN.match(value)
    return match.group().lower() if match else b""


def parse_robots(body: bytes, product: str = "rypsok") -> RobotsRules:
    """The rules of ``body`` for ``product``; never raises, linear in the body.

    The caller reads at most LIM-F13 bytes; a longer body is cut here as well,
    so the bound holds whoever calls.
    """
    try:
        return _parse(body[: limits.default("LIM-F13")], product)
    except Exception:  # pragma: no cover - a defect: stay away rather than fail the fetch
        return DISALLOW_ALL


def parse_robots_prefix(body: bytes) -> RobotsRules:
    """The rules of a file read up to LIM-F13 bytes (RFC 9309 2.5: a parser reads at least
    500 KiB of it), which may have cut the file: a body that reaches the bound loses its
    last line when no line end follows it, since the rest of that rule was never read
    (``Disallow: /private/area`` cut to ``Disallow: /pri`` would refuse far more)."""
    bound = limits.default("LIM-F13")
    if len(body) >= bound:
        body = body[:bound]
        end = max(body.rfind(b"\n"), body.rfind(b"\r"))
        body = body[: end + 1]
    return parse_robots(body)


def _parse(body: bytes, product: str) -> RobotsRules:
    if body.startswith(_BOM):
        body = body[len(_BOM) :]
    wanted = _product_token(product.encode("utf-8", "surrogatepass"))
    mine: list[tuple[bool, bytes]] = []
    star: list[tuple[bool, bytes]] = []
    named = False  # some group names the product: the * groups no longer apply
    for_mine = for_star = False  # the current group names the product / *
    in_agents = False  # the previous meaningful line was a user-agent line
    for line in body.splitlines():
        key, colon, value = line.partition(b"#")[0].partition(b":")
        if not colon:
            continue
        key = key.strip().lower()
        value = value.strip()
        if key == b"user-agent":
            if not in_agents:
                for_mine = for_star = False
                in_agents = True
            token = _product_token(value)
            if token == b"*":
                for_star = True
            elif token and token == wanted != b"*":
                for_mine = named = True
        elif key in (b"allow", b"disallow"):
            in_agents = False
            if not value:
                continue  # an empty rule is no rule: everything stays allowed
            rule = (key == b"allow", value)
            if for_mine and len(mine) < MAX_RULES:
                mine.append(rule)
            if for_star and len(star) < MAX_RULES:
                star.append(rule)
    return _rules(mine if named else star)


def rules_for_status(status: int) -> RobotsRules | None:
    """What a robots.txt answer with ``status`` means (RFC 9309 2.3.1).

    * 2xx: None, parse the body with :func:`parse_robots`;
    * 3xx: the caller follows the redirect itself, at most five hops (RFC 9309
      2.3.1.2); a 3xx that reaches this function (hops exhausted, no usable
      Location, 304) means the file is unavailable: ALLOW_ALL;
    * 429: DISALLOW_ALL. RFC 9309 is silent on it; the server asks for less
      traffic rather than saying there is no file, so rypsok stays away;
    * other 4xx: unavailable, ALLOW_ALL;
    * 5xx, and anything else (1xx, nonsense): unreachable, DISALLOW_ALL.

    A failed connection or a timeout has no status: the caller uses
    DISALLOW_ALL, as for 5xx.
    """
    if status == 429:
        return DISALLOW_ALL
    klass = status // 100
    if klass == 2:
        return None
    if klass in (3, 4):
        return ALLOW_ALL
    return DISALLOW_ALL


class RobotsCache:
    """Rules per origin (``https://host:port``), for LIM-F12, at most ``entries``.

    The least recently used origin goes first when the cache is full; an entry
    older than LIM-F12 is never returned. Thread-safe; ``clock`` is seconds.
    """

    def __init__(self, entries: int, clock: Callable[[], float] = time.monotonic) -> None:
        if entries < 1:
            raise ValueError("entries must be at least 1")
        self._entries = entries
        self._clock = clock
        self._ttl = float(limits.default("LIM-F12"))
        self._lock = threading.Lock()
        self._data: OrderedDict[str, tuple[float, RobotsRules]] = OrderedDict()

    def get(self, origin: str) -> RobotsRules | None:
        key = origin.lower()  # scheme and host are case-insensitive
        with self._lock:
            item = self._data.get(key)
            if item is None:
                return None
            expires, rules = item
            if self._clock() >= expires:
                del self._data[key]
                return None
            self._data.move_to_end(key)
            return rules

    def put(self, origin: str, rules: RobotsRules) -> None:
        key = origin.lower()
        with self._lock:
            self._data[key] = (self._clock() + self._ttl, rules)
            self._data.move_to_end(key)
            while len(self._data) > self._entries:
                self._data.popitem(last=False)

    def __len__(self) -> int:
        with self._lock:
            return len(self._data)
