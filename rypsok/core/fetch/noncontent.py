"""Pages that are not content: a bot challenge, a soft 404, a login or a consent wall
(issue 20).

:func:`classify` reads what the extractor kept of a page (its title and the Markdown of
its main content) and says which of the four it is, or ``None``. It knows such pages by
what they say, never by the site: the title, phrasings in several languages, the short
lines a page names itself with ("404", "Page not found"), the field labels a log-in form
leaves on lines of their own ("Password:"), and how little else the page says.

The rule:

1. Points per kind. The title, or a short line of the content, that *is* one of the
   kind's names (whole, or one part of "Page not found | Site"): 2. A phrase only such
   pages say ("Verify you are human"): 2. A phrase they often say and other pages
   sometimes do ("Forgot your password?"): 1. A field label on a line of its own: 1. A
   status that says the same (401 for a log-in; 403, 429 or 503 for a challenge): 1, to a
   kind that has a point already. Each phrase counts once, wherever it is.
2. The kind with the most points, if it has ``NEEDED``; a tie goes to the first of
   challenge, soft 404, login wall, consent wall. A soft 404 only on a 2xx page.
3. Content wins (``None``) when the page says enough of its own. Its own prose is what
   is outside the wall's lines: the lines with a phrase, a name or a label, and the list a
   wall's line leads in with a colon ("We use cookies and data to:"). Content wins when
   the own prose reaches ``OWN_PROSE_WINS``, or all the prose ``PROSE_WINS``; or, if the
   title does not name the kind, when the own prose reaches ``OWN_PROSE_FLOOR`` and is
   more than the wall's (a short real page with a banner on it).

Prose is counted in letters and digits (any script) outside link text, link targets and
markup; a wide (CJK) character counts two, as it says about as much as two Latin letters.
Only the first ``SCAN_CHARS`` characters of the content and ``TITLE_CHARS`` of the title
are read. Phrases are found with ``str.find`` on case-folded NFKC text; the few regular
expressions are linear (no nested repetition, no attempt that runs past the next one's
start) and names are matched on lines of ``NAME_CHARS`` at most.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass
from http import HTTPStatus
from typing import Final, Literal

from rypsok.core.fetch.noncontent_words import VOCABULARY as _VOCABULARY
from rypsok.core.fetch.noncontent_words import Words

__all__ = ["KINDS", "NonContent", "Signs", "classify", "read_signs"]

NonContent = Literal["challenge", "soft_404", "login_wall", "consent_wall"]
# Also the order that settles a tie: a challenge hides whatever else the page is.
KINDS: Final[tuple[NonContent, ...]] = ("challenge", "soft_404", "login_wall", "consent_wall")

# --------------------------------------------------------------------------- thresholds

# Characters of content read: a wall says what it is in its first lines, and 8,000 holds
# a whole one with its link targets. Past them a page is long, and content.
SCAN_CHARS: Final = 8000
# Characters of title read: a wall's title is a few words.
TITLE_CHARS: Final = 300
# A line that names the page ("Page not found", "Sign in") is short; a longer one is a
# sentence and counts by its phrases only.
NAME_CHARS: Final = 80
# Points a kind needs: a name or a strong phrase, or two weak signs.
NEEDED: Final = 2
# Prose characters (see the module's docstring) outside the wall's own lines from which
# the page is content: more than any wall, challenge or not-found page says beside its
# phrases (the longest, a consent wall, lists a few purposes of a line each).
OWN_PROSE_WINS: Final = 500
# A real paragraph: with this much prose of its own, more than the wall's lines hold, a
# short page that carries a banner is the page (a 400-character notice).
OWN_PROSE_FLOOR: Final = 150
# All the prose a wall could have: a consent wall that explains every purpose runs to
# some 2,000 characters in German. A longer page is content even if every line quotes one.
PROSE_WINS: Final = 2500

_NAME_POINTS: Final = 2
_STRONG_POINTS: Final = 2
_WEAK_POINTS: Final = 1
_LABEL_POINTS: Final = 1
_STATUS_POINTS: Final = 1
# Statuses that say the same as the page: a challenge's and a log-in's.
_STATUS_SAYS: Final[dict[int, NonContent]] = {
    HTTPStatus.UNAUTHORIZED: "login_wall",
    HTTPStatus.FORBIDDEN: "challenge",
    HTTPStatus.TOO_MANY_REQUESTS: "challenge",
    HTTPStatus.SERVICE_UNAVAILABLE: "challenge",
}
_OK_CLASS: Final = 2  # status // 100 of a page served as found


# --------------------------------------------------------------------------- folding

# Invisible characters a page may put inside a word ("Just\u200ba moment").
_INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")
# One spelling for apostrophes, quotes and the Russian ё (often written е).
_SPELLING = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u02bc": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "ё": "е",
    }
)
_SPACES = re.compile(r"[^\S\n]+")


def _fold(text: str) -> str:
    """One spelling of a text for matching: NFKC (full-width letters, the ellipsis, the
    ligatures), Unicode case folding (ß is ss, as a phrase is folded the same way), one
    apostrophe, one space. Line breaks stay, so lines stay where they were."""
    text = _INVISIBLE.sub("", text)
    text = unicodedata.normalize("NFKC", text).casefold().translate(_SPELLING)
    return _SPACES.sub(" ", text)


# --------------------------------------------------------------------------- Markdown to text

# Linear on any line: the text stops at a bracket and the target (rypsok's, with spaces
# and parentheses escaped) at a space, a parenthesis or "[", so no attempt runs past where
# the next one starts. A target with "[" in it (an IPv6 host) is left as text.
_IMAGE = re.compile(r"!\[(?:\\.|[^\[\]\\\n])*\]\([^()\s\[]*\)")
_LINK = re.compile(r"\[((?:\\.|[^\[\]\\\n])*)\]\([^()\s\[]*\)")
_LINE_MARKS = re.compile(r"^[ \t]*(?:#{1,6}[ \t]+|>[ \t>]*|[-+*][ \t]+|\d{1,9}[.)][ \t]+)", re.M)
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_MARKUP = re.compile(r"[*_|~`]+")


def _visible(markdown: str, *, links: bool) -> str:
    """The text a reader sees, line for line: link text kept (``links``) or dropped."""
    text = _IMAGE.sub("", markdown)
    text = _LINK.sub(r"\1" if links else "", text)
    text = _LINE_MARKS.sub("", text)
    text = _MARKUP.sub(" ", text)
    return _ESCAPE.sub(r"\1", text)


# CJK ideographs, kana and Hangul, their full-width forms: two Latin letters' worth each.
_WIDE = re.compile("[\u1100-\u11ff\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uffdc]")


def _prose(line: str) -> int:
    return sum(map(str.isalnum, line)) + len(_WIDE.findall(line))


# --------------------------------------------------------------------------- compiled tables


def _spaced(ch: str) -> bool:
    """A letter of a script that puts spaces between words: a phrase written in one
    ends at a word's end ("sign in" is not in "design in")."""
    return ch.isalnum() and not _WIDE.match(ch)


@dataclass(frozen=True, slots=True)
class _Phrase:
    text: str
    kind: NonContent
    points: int
    left: bool  # the character before must not be a letter
    right: bool  # the character after must not be a letter


def _phrases() -> tuple[_Phrase, ...]:
    out: dict[tuple[str, NonContent], _Phrase] = {}
    for kind, words in _VOCABULARY.items():
        for group, points in ((words.strong, _STRONG_POINTS), (words.weak, _WEAK_POINTS)):
            for raw in group:
                text = _fold(raw)
                out.setdefault(
                    (text, kind),
                    _Phrase(text, kind, points, _spaced(text[0]), _spaced(text[-1])),
                )
    return tuple(out.values())


# Decorations around a name: "Oops! That page can't be found." is the name "that page
# can't be found"; "«Login»" is "login".
_DECORATION = " .,;:!?¡¿…-–—|·•*#\"'«»()[]{}<>。、"
_INTERJECTION = r"(?:(?:oops|whoops|sorry|uh oh|hoppla|ups|oups|oh non|vaya|ops|oeps|упс)[!.,]* )?"
# "404", "error 404", "HTTP 404", "404 error", in the languages of the names.
_CODE_404 = r"(?:(?:http|error|fehler|erreur|errore|erro|fout|ошибка) ?)?404(?: ?(?:error|fehler))?"
_JOIN = r" ?[-:–—.!|]? ?"


def _names_pattern(kind: NonContent, words: Words) -> re.Pattern[str]:
    names = sorted({_fold(n) for n in words.names}, key=len, reverse=True)
    either = "|".join(re.escape(n) for n in names)
    parts = [rf"{_INTERJECTION}(?:{either})"]
    parts += [_fold(p) for p in words.name_patterns]
    if kind == "soft_404":
        parts.append(rf"{_INTERJECTION}{_CODE_404}(?:{_JOIN}(?:{either}))?")
        parts.append(rf"(?:{either}) ?\(?{_CODE_404}\)?")
    return re.compile("|".join(f"(?:{p})" for p in parts))


_PHRASES: Final = _phrases()
_NAMES: Final = {kind: _names_pattern(kind, w) for kind, w in _VOCABULARY.items()}
_LABELS: Final = {kind: frozenset(_fold(x) for x in w.labels) for kind, w in _VOCABULARY.items()}
# Where a title or a short line splits into its parts: "Page not found | Site",
# "404 — Page not found", "Error 404: not found" (NFKC has made "｜" and "：" ASCII).
_SEGMENTS = re.compile(r"[|·•»]|: ?| [-–—/]+ ")


def _names_in(text: str) -> set[NonContent]:
    """The kinds one of whose names the folded text is, whole or one of its parts; a
    part longer than ``NAME_CHARS`` is a sentence, and names nothing."""
    parts = [text, *_SEGMENTS.split(text)]
    kinds: set[NonContent] = set()
    for part in parts:
        part = part.strip(_DECORATION)
        if not part or len(part) > NAME_CHARS:
            continue
        kinds.update(kind for kind, names in _NAMES.items() if names.fullmatch(part))
    return kinds


# --------------------------------------------------------------------------- the rule


@dataclass(frozen=True, slots=True)
class Signs:
    """What :func:`classify` decides on: the points of each kind, the kinds the title
    names, and the page's prose (see the module's docstring) outside and inside the
    lines that carry a phrase, a name or a label."""

    points: dict[NonContent, int]
    titled: frozenset[NonContent]
    own_prose: int
    wall_prose: int

    def strongest(self) -> NonContent | None:
        """The kind with the most points, if it has enough; the first of equals wins."""
        best = max(KINDS, key=lambda kind: self.points[kind])
        return best if self.points[best] >= NEEDED else None

    def content_wins(self, kind: NonContent) -> bool:
        """Whether the page says enough of its own to be content, though it has the signs
        of ``kind``. A short page keeps the floor only if its title does not name it."""
        if self.own_prose >= OWN_PROSE_WINS or self.own_prose + self.wall_prose >= PROSE_WINS:
            return True
        return (
            kind not in self.titled
            and self.own_prose >= OWN_PROSE_FLOOR
            and self.own_prose > self.wall_prose
        )


def classify(title: str | None, content: str, *, status: int = HTTPStatus.OK) -> NonContent | None:
    """What kind of non-content the page is, or None when it is content (the rule is the
    module's docstring). ``title`` and ``content`` are the extracted title and Markdown;
    ``status`` the HTTP status the page came with."""
    signs = read_signs(title, content, status=status)
    kind = signs.strongest()
    return None if kind is None or signs.content_wins(kind) else kind


def read_signs(title: str | None, content: str, *, status: int = HTTPStatus.OK) -> Signs:
    """The points and the prose of a page, read from its title and at most the first
    ``SCAN_CHARS`` characters of its content."""
    window = content[:SCAN_CHARS]
    points = dict.fromkeys(KINDS, 0)
    titled = frozenset(_names_in(_fold((title or "")[:TITLE_CHARS])))
    for kind in titled:
        points[kind] += _NAME_POINTS

    # Three views of the window, line for line: the Markdown (for its lists), what is
    # searched for phrases (link text kept), and what names a page and counts as its
    # prose (links dropped: a row of links is navigation, not what the page says).
    marked = window.split("\n")
    said = _fold(_visible(window, links=True))
    said_lines = said.split("\n")
    own_lines = _visible(window, links=False).split("\n")
    wall_lines: set[int] = set()

    starts: list[int] = []
    at = 0
    for line in said_lines:
        starts.append(at)
        at += len(line) + 1
    for phrase in _PHRASES:
        hit = _find(said, phrase)
        if hit < 0:
            continue
        points[phrase.kind] += phrase.points
        while hit >= 0:
            wall_lines.add(bisect_right(starts, hit) - 1)
            hit = _find(said, phrase, hit + len(phrase.text))

    prose = [_prose(line) for line in own_lines]
    named: set[NonContent] = set()
    for i, line in enumerate(own_lines):
        if not prose[i]:
            continue
        folded = _fold(line).strip(_DECORATION)
        if len(folded) > NAME_CHARS:
            continue
        kinds = _names_in(folded)
        named |= kinds
        for kind, labels in _LABELS.items():
            if folded in labels:
                points[kind] += _LABEL_POINTS
                kinds.add(kind)
        if kinds:
            wall_lines.add(i)
    for kind in named:
        points[kind] += _NAME_POINTS
    _lists_follow(marked, said_lines, wall_lines)

    says = _STATUS_SAYS.get(status)
    if says is not None and points[says]:
        points[says] += _STATUS_POINTS
    if status // 100 != _OK_CLASS:
        points["soft_404"] = 0  # a not-found status is a plain 404: the status says so
    wall = sum(prose[i] for i in wall_lines)
    return Signs(points, titled, sum(prose) - wall, wall)


_LIST_ITEM = re.compile(r"[ \t]*(?:[-+*]|\d{1,9}[.)])[ \t]")


def _lists_follow(marked: list[str], said: list[str], wall: set[int]) -> None:
    """A list that a wall's line leads in ("We use cookies and data to:") is the wall's
    too: its items are the purposes, the steps or the links it names."""
    for i in sorted(wall):
        if not said[i].rstrip().endswith(":"):
            continue
        j = i + 1
        while j < len(marked) and not marked[j].strip():
            j += 1
        while j < len(marked) and _LIST_ITEM.match(marked[j]):
            wall.add(j)
            j += 1


def _find(text: str, phrase: _Phrase, start: int = 0) -> int:
    """The next place the phrase stands as words of its own, or -1."""
    p = phrase.text
    i = text.find(p, start)
    while i >= 0:
        before_ok = not phrase.left or i == 0 or not text[i - 1].isalnum()
        end = i + len(p)
        after_ok = not phrase.right or end == len(text) or not text[end].isalnum()
        if before_ok and after_ok:
            return i
        i = text.find(p, i + 1)
    return -1
