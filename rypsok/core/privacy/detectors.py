"""The secret check's detectors: credentials in a query or a fetch URL (REQ-PRIV-002).

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
from bisect import bisect_left
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import pairwise
from typing import Final

from rypsok.core.privacy.views import _View, _view

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

# What a masked secret becomes. It contains brackets, which no format here
# accepts inside a token, and the assignment forms skip it by name, so a
# masked text is never flagged again.
PLACEHOLDER: Final = "[masked]"


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


def _whole_matches(
    s: str, pattern: re.Pattern[str], kind: str, confirm: Callable[[str], bool] | None = None
) -> Iterator[_Hit]:
    """Each match of ``pattern`` as a whole ``kind`` hit; with ``confirm``, only the
    matches whose group ``v`` it confirms. Most formats need no more than this."""
    for m in pattern.finditer(s):
        if confirm is None or confirm(m.group("v")):
            yield kind, m.start(), m.end()


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


def _split_tokens(
    pattern: re.Pattern[str], s: str, length: int
) -> Iterator[tuple[re.Match[str], tuple[str, int] | None]]:
    """Each match with its joined body, or None. A match that is no token does not
    hide one that starts inside it: the search goes on from the end of its first
    part ("gho_0 ghp_<36>" holds the second token)."""
    pos = 0
    while (m := pattern.search(s, pos)) is not None:
        got = _joined(s, m, length, _WORD)
        yield m, got
        pos = got[1] if got is not None else m.end("a")


def _github_token(s: str) -> Iterator[_Hit]:
    for m, got in _split_tokens(_GITHUB_CLASSIC, s, 36):
        if got is not None and _digit_or_case_hump(got[0]):
            yield "github_token", m.start(), got[1]
    for m, got in _split_tokens(_GITHUB_FINE, s, 82):
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
    return _whole_matches(s, _NPM, "npm_token", _digit_or_case_hump)


# Hugging Face: hf_ + 34 letters (no digits in the real format); the older
# organization form api_org_ + 34 letters. Exact length and letters only is
# the whole structure, and a lower-cased token keeps it.
_HF = re.compile(r"(?<![A-Za-z0-9_])(?i:hf_|api_org_)[A-Za-z]{34}(?![A-Za-z0-9_])")


def _hugging_face_token(s: str) -> Iterator[_Hit]:
    return _whole_matches(s, _HF, "hugging_face_token")


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
    yield from _whole_matches(s, _SLACK, "slack_token", _digit_or_case_hump)
    yield from _whole_matches(s, _SLACK_APP, "slack_token")
    for m in _SLACK_HOOK.finditer(s):
        yield "slack_webhook", m.start("v"), m.end("v")


# Stripe: secret and restricted keys, sk_/rk_ + live_/test_ + 24 to 247
# characters. Publishable keys (pk_) are public by design and not flagged.
_STRIPE = re.compile(
    r"(?<![A-Za-z0-9_])(?i:[sr]k_(?:live|test)_)(?P<v>[A-Za-z0-9]{24,247}+)(?![A-Za-z0-9_])"
)


def _stripe_key(s: str) -> Iterator[_Hit]:
    return _whole_matches(s, _STRIPE, "stripe_key", _digit_or_case_hump)


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
    yield from _whole_matches(s, _GOOGLE_SECRET, "google_client_secret", _digit_or_case_hump)


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
    return _whole_matches(s, _SENDGRID, "sendgrid_key")


# Telegram: <bot id>:<35 characters starting with A>. The bot id may follow
# letters, as in the API path /bot123456:AA...
_TELEGRAM = re.compile(r"(?<![0-9])[0-9]{6,12}:(?P<v>[Aa][A-Za-z0-9_-]{34})(?![A-Za-z0-9_-])")


def _telegram_bot_token(s: str) -> Iterator[_Hit]:
    return _whole_matches(s, _TELEGRAM, "telegram_bot_token", _digit_or_case_hump)


# Twilio API keys: SK + 32 hex digits.
_TWILIO = re.compile(r"(?<![A-Za-z0-9_])(?:SK|sk)(?P<v>[0-9a-fA-F]{32})(?![A-Za-z0-9_])")


def _digit_and_letter(s: str) -> bool:
    return _has_digit(s) and any(c.isalpha() for c in s)


def _twilio_key(s: str) -> Iterator[_Hit]:
    return _whole_matches(s, _TWILIO, "twilio_key", _digit_and_letter)


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
    return _whole_matches(s, _JWT, "json_web_token")


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


#: Each detector's literals, flattened: (literal, index of its detector in _DETECTORS).
_LITERALS: Final = tuple(
    (literal, i) for i, (_, literals) in enumerate(_DETECTORS) for literal in literals
)


# ---------------------------------------------------------------------------
# Every detector over the views of a text.


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
        # One pass over every literal, then the detectors they open, in table order.
        opened = {i for literal, i in _LITERALS if literal in lowered}
        for i in sorted(opened):
            collect(view, _DETECTORS[i][0](view.text))
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
