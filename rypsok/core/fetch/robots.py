"""robots.txt for agent-directed fetches (REQ-CMP-005, RFC 9309).

Pure and bounded: :func:`parse_robots` turns a body into :class:`RobotsRules`
and :func:`rules_for_status` maps the status of the robots.txt read; the store
keeps the rules per origin. Reading the file (egress policy, redirects, the
LIM-F13 byte bound) is the fetch service's job.

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

Matching is the rules' own (store/robots_rules.py).

Bounds: a file is read up to LIM-F13 bytes and the rules there apply
(:func:`parse_robots_prefix` drops a line the bound cut); at most
:data:`MAX_RULES` rules are kept (the first ones of the applicable groups,
in file order; the rest are ignored like bytes past LIM-F13), and a rule
with more than :data:`MAX_PATTERN_LITERAL` literal octets is dropped: it
cannot match the normal form of any URL of LIM-F9 characters, so dropping
it changes no verdict.
"""

from __future__ import annotations

import re
from typing import Final

from rypsok.core import limits
from rypsok.core.store.robots_rules import RobotsRules, Rule, normalise, priority

__all__ = [
    "ALLOW_ALL",
    "DISALLOW_ALL",
    "MAX_PATTERN_LITERAL",
    "MAX_RULES",
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
_TOKEN: Final = re.compile(rb"[A-Za-z_-]*")


def _rules(raw: list[tuple[bool, bytes]]) -> RobotsRules:
    kept: list[Rule] = []
    for allow, value in raw:
        if not value.startswith((b"/", b"*")):
            value = b"/" + value
        rule = Rule(allow, normalise(value))
        if rule.literal <= MAX_PATTERN_LITERAL:
            kept.append(rule)
    kept.sort(key=priority)
    return RobotsRules(tuple(kept))


ALLOW_ALL: Final = RobotsRules()
DISALLOW_ALL: Final = RobotsRules((Rule(False, "/"),))


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
