"""The secret check: credentials in a query or a fetch URL (REQ-PRIV-002, LIM-P1).

Rules of this module
- It is pure: text in, findings out. No I/O, no logging, no state.
- A finding carries a kind (from `KINDS`) and a position, never the value. No
  object returned here holds a secret, except the caller's own text handed back
  untouched in ``warn`` and ``off`` modes, and that field is left out of ``repr``.
- Each kind is recognized by its real structure: a fixed prefix or name and
  the length of the provider's real format, plus, where the shape alone could
  be ordinary text, a structural confirmation (a digit, a lower-to-upper case
  change, a decodable ``user:password``, a marker). Never a guess from entropy.
- Time is linear in the text: every pattern either has bounded repetition or
  consumes its run possessively, and starts only at the left edge of a run, so
  no position is scanned more than a bounded number of times.

Theory of operation
The text is read through two views. Both drop the characters a reader does not
see (format characters such as zero-width spaces, soft hyphens, bidirectional
marks, tag characters; control characters other than tab and line breaks;
variation selectors). The second view also percent-decodes ``%XX`` sequences,
so ``Bearer%20...`` and ``password%3D...`` read as their decoded forms. Each
view keeps, for every character, the span of the original text it came from,
so a finding is reported in the original text's indices (0-based Unicode
scalar values) and masking removes the invisible characters inside it too.
User information in a URL is read in the first view only: decoding would turn
``%40`` into a delimiter that the URL does not have.

Case: a caller (or an agent) may change the case of a whole query. A prefix is
matched in either case when a case change leaves the rest of the format intact:
upper-case AWS key ids are also found entirely in lower case (``akia...``, still
confirmed by a base-32 digit), lower-case provider prefixes (``ghp_``,
``glpat-``, ``xoxb-`` ...) also in upper case, and names such as
``password=``, ``Bearer``, ``AccountKey=`` in any case. ``AIza`` in another case
needs a digit in the key. A Basic credential is confirmed by decoding it, which
a case change breaks; after an ``Authorization:`` name it is found in any case.
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Final, Literal

# The vocabulary of kinds, in the order that breaks a tie between two findings
# at the same position: specific formats first, generic forms last.
KINDS: Final[tuple[str, ...]] = (
    "pem_private_key",
    "url_userinfo_password",
    "aws_access_key_id",
    "aws_secret_access_key",
    "github_token",
    "gitlab_token",
    "npm_token",
    "hugging_face_token",
    "slack_token",
    "slack_webhook",
    "stripe_key",
    "google_api_key",
    "google_client_secret",
    "anthropic_key",
    "openai_key",
    "sendgrid_key",
    "telegram_bot_token",
    "twilio_key",
    "azure_account_key",
    "azure_shared_access_key",
    "json_web_token",
    "basic_authorization",
    "bearer_token",
    "password_assignment",
)
_RANK: Final = {kind: i for i, kind in enumerate(KINDS)}

Mode = Literal["off", "warn", "mask", "refuse"]
MODES: Final[tuple[Mode, ...]] = ("off", "warn", "mask", "refuse")

# What a masked secret becomes. It contains brackets, which no format here
# accepts inside a token, and the assignment forms skip it by name, so a
# masked text is never flagged again.
PLACEHOLDER: Final = "[masked]"

UrlReason = Literal["secret_in_url", "credential_in_url"]


@dataclass(frozen=True, slots=True)
class Finding:
    """One secret: its kind and where it is in the original text, never its value.

    ``position`` is the index of the secret's first character, ``end`` the index
    after its last one (0-based, in Unicode scalar values of the text given).
    For a ``name=value`` form the secret is the value.
    """

    kind: str
    position: int
    end: int


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


@dataclass(frozen=True, slots=True)
class UrlSecret:
    """Why a fetch URL is refused: ``secret_in_url`` or ``credential_in_url``.

    ``kind`` is None for ``credential_in_url`` (a user name is not a secret).
    ``userinfo`` says the URL carries user information at all: REQ-FETCH-007
    refuses such a URL whatever the privacy mode, while a key-shaped text
    elsewhere in the URL follows the mode (LIM-P1).
    """

    reason: UrlReason
    kind: str | None
    position: int
    userinfo: bool


# ---------------------------------------------------------------------------
# Views: the text as a reader sees it, with a map back to the original.

_HEX: Final = frozenset("0123456789abcdefABCDEF")
_KEEP_CONTROLS: Final = frozenset("\t\n\r")
# Default-ignorable code points that are not format characters (Cf).
_OTHER_INVISIBLE: Final = frozenset(
    (0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180B, 0x180C, 0x180D, 0x180F, 0x3164, 0xFFA0)
)


def _invisible(ch: str, keep: frozenset[str]) -> bool:
    if ch in keep:
        return False
    cp = ord(ch)
    if 0x20 <= cp < 0x7F:  # printable ASCII, the common case
        return False
    if cp in _OTHER_INVISIBLE or 0xFE00 <= cp <= 0xFE0F or 0xE0100 <= cp <= 0xE01EF:
        return True
    return unicodedata.category(ch) in ("Cf", "Cc")


@dataclass(frozen=True, slots=True)
class _View:
    text: str
    starts: Sequence[int]  # original index of each character's first code point
    ends: Sequence[int]  # original index after each character's last code point

    def span(self, start: int, end: int) -> tuple[int, int]:
        return self.starts[start], self.ends[end - 1]


def _utf8_length(lead: int) -> int:
    if lead < 0x80:
        return 1
    if 0xC2 <= lead <= 0xDF:
        return 2
    if 0xE0 <= lead <= 0xEF:
        return 3
    if 0xF0 <= lead <= 0xF4:
        return 4
    return 0


def _percent_run(text: str, i: int) -> tuple[list[tuple[str, int, int]], int]:
    """Decode the run of %XX triplets at ``i`` as UTF-8, one character at a time.

    A byte that does not start a valid character stays literal text. Returns
    the characters with their original spans, and the index after the run.
    """
    n = len(text)
    raw = bytearray()
    offsets: list[int] = []
    j = i
    while j + 2 < n and text[j] == "%" and text[j + 1] in _HEX and text[j + 2] in _HEX:
        raw.append(int(text[j + 1 : j + 3], 16))
        offsets.append(j)
        j += 3
    out: list[tuple[str, int, int]] = []
    k = 0
    while k < len(raw):
        if raw[k] < 0x80:  # the common case: one ASCII byte
            out.append((chr(raw[k]), offsets[k], offsets[k] + 3))
            k += 1
            continue
        size = _utf8_length(raw[k])
        decoded: str | None = None
        if size and k + size <= len(raw):
            try:
                decoded = bytes(raw[k : k + size]).decode("utf-8")
            except UnicodeDecodeError:
                decoded = None
        if decoded is None:
            o = offsets[k]
            out.extend((text[o + m], o + m, o + m + 1) for m in range(3))
            k += 1
        else:
            out.append((decoded, offsets[k], offsets[k + size - 1] + 3))
            k += size
    return out, j


# Runs of printable ASCII copy through a view unchanged; they are taken in
# bulk so that only the rare other characters cost a step of Python each.
_ASCII_RUN: Final = re.compile(r"[\x20-\x7e]+")
_ASCII_RUN_NO_PERCENT: Final = re.compile(r"[\x20-\x24\x26-\x7e]+")


def _view(text: str, *, decode: bool, keep: frozenset[str] = _KEEP_CONTROLS) -> _View:
    n = len(text)
    if text.isascii() and text.isprintable() and not (decode and "%" in text):
        return _View(text, range(n), range(1, n + 1))  # nothing to drop or decode
    bulk = _ASCII_RUN_NO_PERCENT if decode else _ASCII_RUN
    pieces: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    i = 0
    while i < n:
        run = bulk.match(text, i)
        if run is not None:
            pieces.append(run.group())
            starts.extend(range(i, run.end()))
            ends.extend(range(i + 1, run.end() + 1))
            i = run.end()
            continue
        ch = text[i]
        if decode and ch == "%" and i + 2 < n and text[i + 1] in _HEX and text[i + 2] in _HEX:
            decoded, i = _percent_run(text, i)
        else:
            decoded = [(ch, i, i + 1)]
            i += 1
        for c, start, end in decoded:
            if not _invisible(c, keep):
                pieces.append(c)
                starts.append(start)
                ends.append(end)
    return _View("".join(pieces), starts, ends)


# ---------------------------------------------------------------------------
# Confirmations: structure that tells a credential from a word of the same shape.


def _has_digit(s: str) -> bool:
    return any("0" <= c <= "9" for c in s)


def _digit_or_case_hump(s: str) -> bool:
    """A digit, or a lower-case letter directly followed by an upper-case one.

    Generated tokens nearly always have one; words, hyphenated phrases and
    Title-Case identifiers have neither.
    """
    if _has_digit(s):
        return True
    return any(a.islower() and b.isupper() for a, b in pairwise(s))


def _is_placeholder(value: str) -> bool:
    return value == PLACEHOLDER


# ---------------------------------------------------------------------------
# Detectors. Each yields (kind, start, end) in the indices of the view it reads.

_Hit = tuple[str, int, int]

_AWS_ID = re.compile(
    r"(?<![A-Za-z0-9])(?:(?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}|(?:akia|asia|abia|acca)[a-z2-7]{16})"
    r"(?![A-Za-z0-9])"
)


def _aws_access_key_id(s: str) -> Iterator[_Hit]:
    for m in _AWS_ID.finditer(s):
        # Key ids are base 32 (A-Z, 2-7); one that is all letters is a word
        # such as ASIA + 16 letters, and a real one almost always has a digit.
        if any(c in "234567" for c in m.group()[4:]):
            yield "aws_access_key_id", m.start(), m.end()


_AWS_SECRET = re.compile(
    r"(?<![A-Za-z0-9])(?i:(?:aws[_-]?)?secret[_-]?access[_-]?key)[\"']?[ \t]{0,4}[:=][ \t]{0,4}"
    r"[\"']?(?P<v>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
)


def _aws_secret_access_key(s: str) -> Iterator[_Hit]:
    for m in _AWS_SECRET.finditer(s):
        v = m.group("v")
        if _digit_or_case_hump(v) or "/" in v or "+" in v:
            yield "aws_secret_access_key", m.start("v"), m.end("v")


# GitHub: ghp_/gho_/ghu_/ghs_/ghr_ + 36 base-62 characters; fine-grained
# github_pat_ + 22 + "_" + 59. A token wrapped by one whitespace character is
# joined back (it was pasted across a line or split by an editor).
_GITHUB_CLASSIC = re.compile(
    r"(?<![A-Za-z0-9_])(?i:gh[pousr]_)(?P<a>[A-Za-z0-9]{1,36})(?:\s(?P<b>[A-Za-z0-9]{1,36}))?"
)
_GITHUB_FINE = re.compile(
    r"(?<![A-Za-z0-9_])(?i:github_pat_)(?P<a>[A-Za-z0-9_]{1,82})(?:\s(?P<b>[A-Za-z0-9_]{1,82}))?"
)
_GITHUB_FINE_BODY = re.compile(r"[A-Za-z0-9]{22}_[A-Za-z0-9]{59}")


def _ends_at(s: str, i: int, word: frozenset[str]) -> bool:
    return i >= len(s) or s[i] not in word


def _joined(s: str, m: re.Match[str], length: int, word: frozenset[str]) -> tuple[str, int] | None:
    """The token body and its end, whole or joined across one whitespace."""
    a, b = m.group("a"), m.group("b")
    if len(a) == length and _ends_at(s, m.end("a"), word):
        return a, m.end("a")
    if b is not None and len(a) + len(b) == length and _ends_at(s, m.end(), word):
        return a + b, m.end()
    return None


_WORD: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def _github_token(s: str) -> Iterator[_Hit]:
    for m in _GITHUB_CLASSIC.finditer(s):
        got = _joined(s, m, 36, _WORD)
        if got is not None and _digit_or_case_hump(got[0]):
            yield "github_token", m.start(), got[1]
    for m in _GITHUB_FINE.finditer(s):
        got = _joined(s, m, 82, _WORD)
        if got is not None and _GITHUB_FINE_BODY.fullmatch(got[0]) and _has_digit(got[0]):
            yield "github_token", m.start(), got[1]


# GitLab: glpat-/gldt-/glrt- + 20 characters (classic), glptt- + 40 hex, or
# the routable form: 27 or more characters, a dot and 9 lower-case characters.
_GITLAB = re.compile(
    r"(?<![A-Za-z0-9_-])(?P<p>(?i:glpat|gldt|glrt|glptt)-)(?P<v>[A-Za-z0-9_-]{1,300}+)"
    r"(?P<r>\.[0-9a-zA-Z]{9})?(?![A-Za-z0-9_.-])"
)
_HEX40 = re.compile(r"[0-9a-fA-F]{40}")


def _gitlab_token(s: str) -> Iterator[_Hit]:
    for m in _GITLAB.finditer(s):
        v, routable = m.group("v"), m.group("r") is not None
        if routable:
            ok = len(v) >= 27
        elif m.group("p").lower() == "glptt-":
            ok = _HEX40.fullmatch(v) is not None
        else:
            ok = len(v) == 20
        # "glpat-" followed by hyphenated lower-case words is a phrase, not a token.
        if ok and _digit_or_case_hump(v):
            yield "gitlab_token", m.start(), m.end()


_NPM = re.compile(r"(?<![A-Za-z0-9_])(?i:npm_)(?P<v>[A-Za-z0-9]{36})(?![A-Za-z0-9_])")


def _npm_token(s: str) -> Iterator[_Hit]:
    for m in _NPM.finditer(s):
        if _digit_or_case_hump(m.group("v")):
            yield "npm_token", m.start(), m.end()


# Hugging Face: hf_ + 34 letters (no digits in the real format); the older
# organization form api_org_ + 34 letters. Exact length and letters only is
# the whole structure, and a lower-cased token keeps it.
_HF = re.compile(r"(?<![A-Za-z0-9_])(?i:hf_|api_org_)[A-Za-z]{34}(?![A-Za-z0-9_])")


def _hugging_face_token(s: str) -> Iterator[_Hit]:
    for m in _HF.finditer(s):
        yield "hugging_face_token", m.start(), m.end()


# Slack: xoxb-/xoxp-/xoxa-/xoxe-/xoxo-/xoxr-/xoxs- followed by one to three
# numeric segments and a final segment of at least 16 characters; app-level
# tokens xapp-<digit>-<id>-<digits>-<64 hex>; incoming webhooks by their path.
_SLACK = re.compile(
    r"(?<![A-Za-z0-9_-])(?i:xox[abeoprs]-)(?:[0-9]{1,16}-){1,3}(?P<v>[A-Za-z0-9]{16,255}+)"
    r"(?![A-Za-z0-9_-])"
)
_SLACK_APP = re.compile(
    r"(?<![A-Za-z0-9_-])(?i:xapp-)[0-9]-[A-Za-z0-9]{8,14}-[0-9]{8,16}-[0-9a-fA-F]{64}"
    r"(?![A-Za-z0-9_-])"
)
_SLACK_HOOK = re.compile(
    r"(?i:hooks\.slack\.com/(?:services|workflows|triggers)/)"
    r"(?P<v>[A-Za-z0-9]{8,14}/[A-Za-z0-9]{8,14}/[A-Za-z0-9]{20,40})(?![A-Za-z0-9])"
)


def _slack(s: str) -> Iterator[_Hit]:
    for m in _SLACK.finditer(s):
        if _digit_or_case_hump(m.group("v")):
            yield "slack_token", m.start(), m.end()
    for m in _SLACK_APP.finditer(s):
        yield "slack_token", m.start(), m.end()
    for m in _SLACK_HOOK.finditer(s):
        yield "slack_webhook", m.start("v"), m.end("v")


# Stripe: secret and restricted keys, sk_/rk_ + live_/test_ + 24 to 247
# characters. Publishable keys (pk_) are public by design and not flagged.
_STRIPE = re.compile(
    r"(?<![A-Za-z0-9_])(?i:[sr]k_(?:live|test)_)(?P<v>[A-Za-z0-9]{24,247}+)(?![A-Za-z0-9_])"
)


def _stripe_key(s: str) -> Iterator[_Hit]:
    for m in _STRIPE.finditer(s):
        if _digit_or_case_hump(m.group("v")):
            yield "stripe_key", m.start(), m.end()


# Google: API keys are AIza + 35 characters; OAuth client secrets GOCSPX- + 28.
_GOOGLE_KEY = re.compile(r"(?<![A-Za-z0-9_-])(?i:aiza)(?P<v>[A-Za-z0-9_-]{35})(?![A-Za-z0-9_-])")
_GOOGLE_SECRET = re.compile(
    r"(?<![A-Za-z0-9_-])(?i:gocspx-)(?P<v>[A-Za-z0-9_-]{28})(?![A-Za-z0-9_-])"
)


def _google(s: str) -> Iterator[_Hit]:
    for m in _GOOGLE_KEY.finditer(s):
        # The exact prefix is confirmation enough; another case needs a digit.
        if m.group().startswith("AIza") or _has_digit(m.group("v")):
            yield "google_api_key", m.start(), m.end()
    for m in _GOOGLE_SECRET.finditer(s):
        if _digit_or_case_hump(m.group("v")):
            yield "google_client_secret", m.start(), m.end()


# sk- starts Anthropic and OpenAI keys, and also plenty of ordinary words
# ("sk-learn"). The whole run is taken possessively and judged in code:
# Anthropic keys are sk-ant-<api|admin|oat|ort><2 digits>- + 93 + "AA";
# OpenAI keys carry the marker T3BlbkFJ (base 64 of "OpenAI") with at least
# 20 characters on each side, after an optional scope (proj-, svcacct-, admin-).
_SK_RUN = re.compile(r"(?<![A-Za-z0-9_-])(?i:sk-)(?P<v>[A-Za-z0-9_-]{1,400}+)(?![A-Za-z0-9_-])")
_ANTHROPIC_BODY = re.compile(r"(?i:ant-(?:api|admin|oat|ort)[0-9]{2}-)[A-Za-z0-9_-]{93}(?i:aa)")
_OPENAI_SCOPE = re.compile(r"(?i:proj|svcacct|admin|none)-")
_OPENAI_MARKER: Final = "t3blbkfj"


def _sk_keys(s: str) -> Iterator[_Hit]:
    for m in _SK_RUN.finditer(s):
        v = m.group("v")
        if _ANTHROPIC_BODY.fullmatch(v):
            yield "anthropic_key", m.start(), m.end()
            continue
        scope = _OPENAI_SCOPE.match(v)
        body = v[scope.end() :] if scope else v
        at = body.lower().find(_OPENAI_MARKER)
        if at >= 20 and len(body) - at - len(_OPENAI_MARKER) >= 20:
            yield "openai_key", m.start(), m.end()


_SENDGRID = re.compile(
    r"(?<![A-Za-z0-9_-])(?i:sg)\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])"
)


def _sendgrid_key(s: str) -> Iterator[_Hit]:
    for m in _SENDGRID.finditer(s):
        yield "sendgrid_key", m.start(), m.end()


# Telegram: <bot id>:<35 characters starting with A>. The bot id may follow
# letters, as in the API path /bot123456:AA...
_TELEGRAM = re.compile(r"(?<![0-9])[0-9]{6,12}:(?P<v>[Aa][A-Za-z0-9_-]{34})(?![A-Za-z0-9_-])")


def _telegram_bot_token(s: str) -> Iterator[_Hit]:
    for m in _TELEGRAM.finditer(s):
        if _digit_or_case_hump(m.group("v")):
            yield "telegram_bot_token", m.start(), m.end()


# Twilio API keys: SK + 32 hex digits.
_TWILIO = re.compile(r"(?<![A-Za-z0-9_])(?:SK|sk)(?P<v>[0-9a-fA-F]{32})(?![A-Za-z0-9_])")


def _twilio_key(s: str) -> Iterator[_Hit]:
    for m in _TWILIO.finditer(s):
        v = m.group("v")
        if _has_digit(v) and any(c.isalpha() for c in v):
            yield "twilio_key", m.start(), m.end()


_AZURE = re.compile(
    r"(?<![A-Za-z0-9])(?P<n>(?i:accountkey|sharedaccesskey))[ \t]{0,4}=[ \t]{0,4}"
    r"(?P<v>[A-Za-z0-9+/]{43}=|[A-Za-z0-9+/]{86}==)(?![A-Za-z0-9+/=])"
)


def _azure(s: str) -> Iterator[_Hit]:
    for m in _AZURE.finditer(s):
        # A storage account key is 64 bytes (88 characters), a shared access
        # key 32 bytes (44 characters); each name takes only its own length.
        account = m.group("n").lower() == "accountkey"
        if account == (len(m.group("v")) == 88):
            kind = "azure_account_key" if account else "azure_shared_access_key"
            yield kind, m.start("v"), m.end("v")


# JSON Web Tokens: two base64url segments that start with eyJ ('{"') and a
# signature, possibly empty.
_JWT = re.compile(
    r"(?<![A-Za-z0-9_-])(?i:eyj)[A-Za-z0-9_-]{4,8192}+\.(?i:eyj)[A-Za-z0-9_-]{4,65536}+"
    r"\.[A-Za-z0-9_-]{0,8192}+(?![A-Za-z0-9_-])"
)


def _json_web_token(s: str) -> Iterator[_Hit]:
    for m in _JWT.finditer(s):
        yield "json_web_token", m.start(), m.end()


# Bearer tokens: "Bearer", a space (also %20 through the decoded view, or +
# in a query string), and a b64token of at least 16 characters with a digit
# and a letter. "bearer of bad news" and "Bearer TokenHandler" stay text.
_BEARER = re.compile(
    r"(?<![A-Za-z0-9])(?i:bearer)(?:[ \t]{1,8}|\+)(?P<t>[A-Za-z0-9._~+/-]{1,8192}+=*)"
)


def _bearer_token(s: str) -> Iterator[_Hit]:
    for m in _BEARER.finditer(s):
        t = m.group("t").rstrip(".")
        if len(t) >= 16 and _has_digit(t) and any(c.isalpha() for c in t):
            yield "bearer_token", m.start("t"), m.start("t") + len(t)


# Authorization: Basic <base64 of user:password>.
_BASIC = re.compile(
    r"(?<![A-Za-z0-9])(?P<auth>(?i:authorization)[ \t]{0,4}[:=][ \t]{0,4})?(?i:basic)"
    r"(?:[ \t]{1,8}|\+)(?P<v>[A-Za-z0-9+/]{1,4096}+={0,2})(?![A-Za-z0-9+/=])"
)


def _basic_decodes(v: str) -> bool:
    try:
        raw = base64.b64decode(v, validate=True)
    except (binascii.Error, ValueError):
        return False
    text = raw.decode("latin-1")
    return ":" in text[1:] and text.isprintable()


def _basic_authorization(s: str) -> Iterator[_Hit]:
    for m in _BASIC.finditer(s):
        v = m.group("v")
        shaped = len(v) >= 8 and (_digit_or_case_hump(v) or "+" in v or "/" in v or "=" in v)
        if not shaped:
            continue
        # After the header name the value is a credential whatever its case;
        # a bare "basic <word>" must decode to user:password.
        if (m.group("auth") is not None and len(v) % 4 == 0) or _basic_decodes(v):
            yield "basic_authorization", m.start("v"), m.end("v")


# PEM private keys: the BEGIN line and a body. A BEGIN line alone is a
# heading someone searches for; the key needs at least 32 base-64 characters
# after it, or a complete block up to its END line (encrypted keys start
# with Proc-Type: headers, PGP blocks with Version:).
_PEM_LABEL = r"[ ](?:[A-Za-z0-9]{1,16}[ ]){0,3}(?i:private[ ]key)(?:[ ](?i:block))?-----"
_PEM_BEGIN = re.compile(r"-----(?i:begin)" + _PEM_LABEL + r"(?P<body>[A-Za-z0-9+/=\s]{0,100000}+)")
_PEM_END = re.compile(r"-----(?i:end)" + _PEM_LABEL)
_PEM_SPAN_LIMIT: Final = 100_000


def _pem_private_key(s: str) -> Iterator[_Hit]:
    begins = list(_PEM_BEGIN.finditer(s))
    if not begins:
        return
    end_marks = list(_PEM_END.finditer(s))
    end_starts = [e.start() for e in end_marks]
    for m in begins:
        body = m.group("body")
        k = bisect_left(end_starts, m.end())
        closing = end_marks[k] if k < len(end_marks) else None
        if closing is not None and closing.start() - m.end() > _PEM_SPAN_LIMIT:
            closing = None
        if closing is not None:
            inside = s[m.end("body") - len(body) : closing.start()]
            if sum(c.isalnum() or c in "+/" for c in inside) >= 32:
                yield "pem_private_key", m.start(), closing.end()
                continue
        if sum(not c.isspace() for c in body) >= 32:
            yield "pem_private_key", m.start(), m.end("body") - (len(body) - len(body.rstrip()))


# password=, passwd=, secret=, client_secret= with a value that has a digit or
# a symbol. "password=configuration" is a word and passes.
_ASSIGNMENT = re.compile(
    r"(?<![A-Za-z0-9])(?i:client_secret|password|passwd|secret)[ \t]{0,4}=[ \t]{0,4}[\"']?"
    r"(?P<v>[^\s\"'&,;<>]{1,4096}+)"
)
_TRAILING_PUNCTUATION: Final = ".:)"


def _password_assignment(s: str) -> Iterator[_Hit]:
    for m in _ASSIGNMENT.finditer(s):
        v = m.group("v").rstrip(_TRAILING_PUNCTUATION)
        if not v or _is_placeholder(v):
            continue
        if any(not c.isalpha() for c in v):
            yield "password_assignment", m.start("v"), m.start("v") + len(v)


# scheme://user:password@host. The authority ends at the first / ? # or \;
# the user information ends at its last @ (as WHATWG URL parsing reads it).
_AUTHORITY = re.compile(
    r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,31}://(?P<a>[^\s/?#\\]{1,8192}+)"
)


def _url_userinfo_password(s: str) -> Iterator[_Hit]:
    for m in _AUTHORITY.finditer(s):
        authority = m.group("a")
        at = authority.rfind("@")
        colon = authority.find(":", 0, max(at, 0))
        if at <= 0 or colon < 0:
            continue
        password = authority[colon + 1 : at]
        if password and not _is_placeholder(password):
            base = m.start("a")
            yield "url_userinfo_password", base + colon + 1, base + at


# Each detector with the lower-case literals one of which any of its matches
# contains: a detector whose literals are absent does not scan the text.
_DETECTORS: Final[tuple[tuple[Callable[[str], Iterator[_Hit]], tuple[str, ...]], ...]] = (
    (_pem_private_key, ("-----begin",)),
    (_aws_access_key_id, ("akia", "asia", "abia", "acca")),
    (_aws_secret_access_key, ("access",)),
    (_github_token, ("gh", "github_pat_")),
    (_gitlab_token, ("gl",)),
    (_npm_token, ("npm_",)),
    (_hugging_face_token, ("hf_", "api_org_")),
    (_slack, ("xox", "xapp-", "hooks.slack.com/")),
    (_stripe_key, ("k_live_", "k_test_")),
    (_google, ("aiza", "gocspx-")),
    (_sk_keys, ("sk-",)),
    (_sendgrid_key, ("sg.",)),
    (_telegram_bot_token, (":a",)),
    (_twilio_key, ("sk",)),
    (_azure, ("accesskey", "accountkey")),
    (_json_web_token, ("eyj",)),
    (_basic_authorization, ("basic",)),
    (_bearer_token, ("bearer",)),
    (_password_assignment, ("passw", "secret")),
)


# ---------------------------------------------------------------------------
# The public functions.


def find_secrets(text: str) -> list[Finding]:
    """Every secret in ``text``, in order of position, overlapping ones merged.

    Linear in the length of the text; never raises for any string.
    """
    plain = _view(text, decode=False)
    views = [plain]
    if "%" in text:  # the decoded view differs only when something was decoded
        decoded = _view(text, decode=True)
        if decoded.text != plain.text:
            views.append(decoded)
    spans: list[tuple[int, int, int, str]] = []

    def collect(view: _View, hits: Iterator[_Hit]) -> None:
        for kind, start, end in hits:
            if end > start:
                o_start, o_end = view.span(start, end)
                spans.append((o_start, _RANK[kind], o_end, kind))

    for view in views:
        lowered = view.text.lower()
        for detector, literals in _DETECTORS:
            if any(literal in lowered for literal in literals):
                collect(view, detector(view.text))
    if "://" in plain.text:
        collect(plain, _url_userinfo_password(plain.text))

    spans.sort()
    merged: list[Finding] = []
    for start, _rank, end, kind in spans:
        if merged and start < merged[-1].end:
            last = merged[-1]
            if end > last.end:
                merged[-1] = Finding(last.kind, last.position, end)
            continue
        merged.append(Finding(kind, start, end))
    return merged


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


# ---------------------------------------------------------------------------
# Fetch URLs.

_SPECIAL_SCHEMES: Final = frozenset(("http", "https", "ws", "wss", "ftp"))
_URL_KEEP: Final = frozenset[str]()  # a URL parser removes tabs and line breaks too
_SCHEME = re.compile(r"[\x00-\x20]{0,2048}+(?P<s>[A-Za-z][A-Za-z0-9+.-]{0,63}+):")


@dataclass(frozen=True, slots=True)
class _Userinfo:
    start: int  # where the user information starts in the URL
    has_name: bool
    password: int | None  # where a non-empty password starts, if there is one


def _userinfo(url: str) -> _Userinfo | None:
    """The user information of ``url``, or None when it carries none.

    Read the way a WHATWG URL parser reads it, so that what is judged here is
    what a client would send: tabs and line breaks are ignored, after a special
    scheme any run of / and \\ ends the scheme, the authority ends at / ? # (and
    \\ for special schemes), and the user information ends at its last @.
    """
    view = _view(url, decode=False, keep=_URL_KEEP)
    s = view.text
    m = _SCHEME.match(s)
    if m is None:
        return None
    i = m.end()
    special = m.group("s").lower() in _SPECIAL_SCHEMES
    if special:
        while i < len(s) and s[i] in "/\\":
            i += 1
    elif s.startswith("//", i):
        i += 2
    else:
        return None
    stops = "/?#\\" if special else "/?#"
    j = i
    while j < len(s) and s[j] not in stops:
        j += 1
    at = s.rfind("@", i, j)
    if at <= i:  # no @, or an empty user information: nothing is carried
        return None
    colon = s.find(":", i, at)
    name_end = at if colon < 0 else colon
    password = view.starts[colon + 1] if 0 <= colon < at - 1 else None
    if name_end == i and password is None:  # ":@" carries neither
        return None
    return _Userinfo(view.starts[i], name_end > i, password)


def check_url(url: str) -> UrlSecret | None:
    """Why ``url`` must not be fetched as it is, or None.

    ``secret_in_url`` for ``user:password@`` (at the password) and for a
    key-shaped text anywhere in the URL (its kind and position);
    ``credential_in_url`` for a user name alone, at the name. A password wins
    over anything else in the URL, and a secret over a name. Never raises.
    """
    info = _userinfo(url)
    if info is not None and info.password is not None:
        return UrlSecret("secret_in_url", "url_userinfo_password", info.password, True)
    findings = find_secrets(url)
    if findings:
        first = findings[0]
        return UrlSecret("secret_in_url", first.kind, first.position, info is not None)
    if info is not None:
        return UrlSecret("credential_in_url", None, info.start, True)
    return None
