"""The secret check on queries and fetch URLs (REQ-PRIV-002, REQ-TEST-008, LIM-P1).

Every example value is fake and built in tests/support/fake_secrets.py, but has the
real shape of its provider's format: prefix, alphabet and length.
"""

from __future__ import annotations

import dataclasses
import re
import time
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rypsok.core.boundary import Cleaned, clean_text
from rypsok.core.privacy import (
    KINDS,
    MODES,
    PLACEHOLDER,
    Finding,
    PrivacyDecision,
    UrlSecret,
    apply,
    check_url,
    find_secrets,
    mask,
)
from tests.support.fake_secrets import EXAMPLES, fake

LEAD = "how do I rotate "
TAIL = " after a leak"


def sample(kind: str, secret: str | None = None) -> tuple[str, int]:
    """A query carrying one secret of ``kind``, and the secret's position."""
    before, value, after = EXAMPLES[kind]
    text = LEAD + before + (value if secret is None else secret) + after + TAIL
    return text, len(LEAD) + len(before)


def kinds_found(text: str) -> list[str]:
    return [f.kind for f in find_secrets(text)]


# Lengths are fixed by the format for these kinds: one character more or less
# is not that credential.
FIXED_LENGTH: dict[str, tuple[int, str]] = {
    # kind -> (index in the value where a character is added or removed, a body character)
    "aws_access_key_id": (10, "A"),
    "aws_secret_access_key": (20, "a"),
    "github_token": (20, "a"),
    "gitlab_token": (12, "a"),
    "npm_token": (20, "a"),
    "hugging_face_token": (20, "a"),
    "google_api_key": (20, "a"),
    "google_client_secret": (20, "a"),
    "anthropic_key": (40, "a"),
    "sendgrid_key": (40, "a"),
    "telegram_bot_token": (20, "a"),
    "twilio_key": (10, "a"),
    "azure_account_key": (40, "a"),
    "azure_shared_access_key": (20, "a"),
}


# ---------------------------------------------------------------------------
# The vocabulary


def test_req_priv_002_the_kinds_vocabulary_is_fixed() -> None:
    assert KINDS == (
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
    assert all(re.fullmatch(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*", k) for k in KINDS)
    assert MODES == ("off", "warn", "mask", "refuse")
    assert set(EXAMPLES) == set(KINDS)


# ---------------------------------------------------------------------------
# What is found


@pytest.mark.parametrize("kind", KINDS)
def test_req_priv_002_each_kind_is_found_with_its_position(kind: str) -> None:
    text, position = sample(kind)
    value = EXAMPLES[kind][1]
    assert find_secrets(text) == [Finding(kind, position, position + len(value))]
    assert text[position] == value[0]


@pytest.mark.parametrize("kind", KINDS)
def test_req_priv_002_each_kind_alone_is_found(kind: str) -> None:
    before, value, after = EXAMPLES[kind]
    assert find_secrets(before + value + after) == [
        Finding(kind, len(before), len(before) + len(value))
    ]


@pytest.mark.parametrize("kind", sorted(FIXED_LENGTH))
def test_req_priv_002_one_character_more_or_less_is_not_the_format(kind: str) -> None:
    at, extra = FIXED_LENGTH[kind]
    value = EXAMPLES[kind][1]
    shorter = value[:at] + value[at + 1 :]
    longer = value[:at] + extra + value[at:]
    assert kind not in kinds_found(sample(kind, shorter)[0])
    assert kind not in kinds_found(sample(kind, longer)[0])


HARD_NEGATIVES = [
    # The book's list (Configuration, [privacy]).
    "sk-learn-model-selection-guide",
    "how to use sk-learn-model-selection with pandas",
    "bearer of bad news",
    "the Bearer of Bad News 2019 movie",
    "ASIAABCDEFGHIJKLMNOPQRST",
    "ASIA" + "ABCDEFGHIJKLMNOP",
    "ASIA ABCDEFGHIJKLMNOPQRST",
    "ASIAPACIFICECONOMICS outlook",
    "host.example:8080@mirror",
    "git clone host.example:8080@mirror and update",
    "password=configuration",
    "where is the password=configuration file",
    # Near them.
    "Bearer TokenAuthenticationHandler in aspnet",
    "basic auth vs bearer token",
    "Authorization: Basic authentication explained",
    "-----BEGIN OPENSSH PRIVATE KEY----- header meaning",
    "glpat-rotation-how-to-guides",
    "sk_test_integrationhelperforpy",
    "secret=sauce",
    "passwd=letmein",
    "password: hunter2 is a meme",
    "akia and asia are words",
    "eyJ is base64 for a brace",
    "mailto:someone@host.example",
    "ssh user@host.example",
    "https://host.example/docs?page=2",
    "12345678:Abstract art",
    "rust programming language",
]


@pytest.mark.parametrize("text", HARD_NEGATIVES)
def test_req_priv_002_hard_negatives_pass(text: str) -> None:
    assert find_secrets(text) == []
    assert not apply(text, "refuse").refused


PASSWORD_VALUES = [
    ("password=hunter2", "hunter2"),
    ("passwd=p@ss", "p@ss"),
    ("secret=abc!", "abc!"),
    ("client_secret=x-y", "x-y"),
    ("PASSWORD = Hunter2", "Hunter2"),
    ("db_password='open sesame1'", "open"),
    ("login?user=bob&password=s3cr3t&next=/", "s3cr3t"),
    ("set secret=0", "0"),
]


@pytest.mark.parametrize(("text", "value"), PASSWORD_VALUES)
def test_req_priv_002_a_password_value_with_a_digit_or_a_symbol_is_found(
    text: str, value: str
) -> None:
    # "open" (no digit) in the quoted case: the value ends at the space.
    if value == "open":
        assert find_secrets(text) == []
        return
    found = find_secrets(text)
    assert [(f.kind, f.position, f.end) for f in found] == [
        ("password_assignment", text.index(value), text.index(value) + len(value))
    ]


INVISIBLE = ["\u200b", "\u00ad", "\u200d", "\u2060", "\ufeff", "\u200e", "\U000e0041", "\ufe0f"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("invisible", INVISIBLE, ids=[f"U+{ord(c):04X}" for c in INVISIBLE])
def test_req_priv_002_invisible_character_inside_is_found(kind: str, invisible: str) -> None:
    value = EXAMPLES[kind][1]
    middle = len(value) // 2
    split = value[:middle] + invisible + value[middle:]
    text, position = sample(kind, split)
    assert find_secrets(text) == [Finding(kind, position, position + len(split))]
    masked = apply(text, "mask").text
    assert invisible not in masked and value[middle:] not in masked


# Default-ignorable code points this Python's Unicode tables leave unassigned: a renderer
# shows them as nothing, so both the cleaner and the secret check treat them as invisible.
UNASSIGNED_IGNORABLE = [0x2065, 0xFFF0, 0xE0080, 0xE0FFF]


@pytest.mark.parametrize(
    "cp", UNASSIGNED_IGNORABLE, ids=[f"U+{c:04X}" for c in UNASSIGNED_IGNORABLE]
)
def test_req_sec_015_req_priv_002_an_unassigned_default_ignorable_is_invisible_to_both_checks(
    cp: int,
) -> None:
    ch = chr(cp)
    assert unicodedata.category(ch) == "Cn"  # still unassigned in the running Python
    assert clean_text(f"a{ch}b", markup=False) == Cleaned("ab", 1)
    value = EXAMPLES["github_token"][1]
    split = value[:10] + ch + value[10:]
    text, position = sample("github_token", split)
    assert find_secrets(text) == [Finding("github_token", position, position + len(split))]
    assert ch not in apply(text, "mask").text


def test_req_priv_002_a_drawn_format_mark_inside_a_secret_is_read_through() -> None:
    # U+0600 is a format character that is drawn: the cleaner keeps it as writing, and the
    # secret check still reads through it, as it reads through every format character.
    assert clean_text("a\u0600b", markup=False) == Cleaned("a\u0600b", 0)
    value = EXAMPLES["github_token"][1]
    split = value[:10] + "\u0600" + value[10:]
    text, position = sample("github_token", split)
    assert find_secrets(text) == [Finding("github_token", position, position + len(split))]


@pytest.mark.parametrize("kind", KINDS)
def test_req_priv_002_lower_case_is_found(kind: str) -> None:
    text, position = sample(kind)
    lowered = text.lower()
    assert len(lowered) == len(text)
    found = find_secrets(lowered)
    assert [(f.kind, f.position) for f in found] == [(kind, position)]


@pytest.mark.parametrize(
    "kind",
    [
        "aws_access_key_id",
        "github_token",
        "gitlab_token",
        "npm_token",
        "slack_token",
        "stripe_key",
        "openai_key",
        "anthropic_key",
        "sendgrid_key",
        "json_web_token",
        "bearer_token",
        "password_assignment",
        "pem_private_key",
    ],
)
def test_req_priv_002_upper_case_is_found(kind: str) -> None:
    text, position = sample(kind)
    assert [(f.kind, f.position) for f in find_secrets(text.upper())] == [(kind, position)]


def test_req_priv_002_lower_case_aws_key_id_still_needs_a_digit() -> None:
    assert kinds_found("akiaiosfodnn7example") == ["aws_access_key_id"]
    assert kinds_found("asiapacificeconomics") == []
    assert kinds_found("Akiaiosfodnn7example") == []  # mixed case is not a case change of a key


def test_req_priv_002_google_key_in_another_case_needs_a_digit() -> None:
    assert kinds_found("AIza" + "a" * 35) == ["google_api_key"]
    assert kinds_found("aiza" + "a" * 35) == []
    assert kinds_found("aiza" + "a" * 34 + "7") == ["google_api_key"]


@pytest.mark.parametrize("at", range(1, 36))
@pytest.mark.parametrize("space", [" ", "\n"], ids=["space", "newline"])
def test_req_priv_002_github_token_split_by_a_space_is_found(at: int, space: str) -> None:
    token = "ghp_" + fake(36)
    wrapped = token[: 4 + at] + space + token[4 + at :]
    text = "my token " + wrapped + " leaked"
    assert find_secrets(text) == [Finding("github_token", 9, 9 + len(wrapped))]
    assert apply(text, "mask").text == "my token [masked] leaked"


def test_req_priv_002_github_token_split_twice_or_with_a_word_is_not_joined() -> None:
    token = "ghp_" + fake(36)
    assert kinds_found(token[:14] + "  " + token[14:]) == []
    assert kinds_found(token[:14] + " " + token[14:30] + " " + token[30:]) == []
    # A whole token followed by a word is the token alone.
    assert find_secrets(token + " rotate") == [Finding("github_token", 0, 40)]
    # One part too many characters is not a token.
    assert kinds_found(token[:14] + " " + token[14:] + "x") == []


def test_req_priv_002_a_near_token_before_a_github_token_does_not_hide_it() -> None:
    # "gho_0 ghp" reads as a token split by a space, and is none; the real token
    # that starts inside it is still found.
    token = "ghp_" + fake(36)
    text = "GHO_0 " + token
    assert find_secrets(text) == [Finding("github_token", 6, 6 + len(token))]
    fine = "github_pat_" + fake(22) + "_" + fake(59)
    assert find_secrets("github_pat_x " + fine) == [Finding("github_token", 13, 13 + len(fine))]


def test_req_priv_002_fine_grained_github_token_is_found() -> None:
    token = "github_pat_" + fake(22) + "_" + fake(59)
    assert find_secrets("use " + token) == [Finding("github_token", 4, 4 + len(token))]
    wrapped = token[:50] + " " + token[50:]
    assert find_secrets(wrapped) == [Finding("github_token", 0, len(wrapped))]


def test_req_priv_002_bearer_url_encoded_is_found() -> None:
    token = fake(32)
    text = "Authorization: Bearer%20" + token
    assert find_secrets(text) == [Finding("bearer_token", 24, 24 + len(token))]
    query = "curl -H Bearer+" + token
    assert find_secrets(query) == [Finding("bearer_token", 15, 15 + len(token))]
    assert find_secrets("bearer%20of%20bad%20news") == []


def test_req_priv_002_percent_encoded_forms_are_read_decoded() -> None:
    text = "login?password%3Dhunter2"
    assert find_secrets(text) == [Finding("password_assignment", 17, 24)]
    encoded = "%41KIAIOSFODNN7EXAMPLE"  # %41 is "A"
    assert find_secrets("key " + encoded) == [Finding("aws_access_key_id", 4, 4 + len(encoded))]
    zw = "ghp_" + fake(18) + "%E2%80%8B" + fake(18, "Token1")  # an encoded zero-width space
    assert find_secrets(zw) == [Finding("github_token", 0, len(zw))]


def test_req_priv_002_basic_needs_a_decodable_credential_without_the_header_name() -> None:
    assert kinds_found("Basic dXNlcjpwYXNzd29yZA==") == ["basic_authorization"]
    assert kinds_found("basic dGhpcyBpcyBub3QgYSBjcmVk") == []  # "this is not a cred": no colon
    assert kinds_found("authorization: basic dxnlcjpwyxnzd29yza==") == ["basic_authorization"]


def test_req_priv_002_pem_needs_a_body() -> None:
    assert kinds_found("-----BEGIN PRIVATE KEY-----") == []
    assert kinds_found("-----BEGIN PRIVATE KEY----- " + fake(31)) == []
    text = "-----BEGIN PRIVATE KEY----- " + fake(32)
    assert find_secrets(text) == [Finding("pem_private_key", 0, len(text))]
    encrypted = (
        "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00FF\n\n"
        + fake(64)
        + "\n-----END RSA PRIVATE KEY-----"
    )
    assert find_secrets("key: " + encrypted) == [Finding("pem_private_key", 5, 5 + len(encrypted))]


def test_req_priv_002_openai_keys_need_the_marker() -> None:
    legacy = "sk-" + fake(20) + "T3BlbkFJ" + fake(20)
    assert kinds_found(legacy) == ["openai_key"]
    assert kinds_found("sk-" + fake(19) + "T3BlbkFJ" + fake(20)) == []
    assert kinds_found("sk-" + fake(48)) == []
    assert kinds_found("sk-svcacct-" + fake(58) + "T3BlbkFJ" + fake(58)) == ["openai_key"]


def test_req_priv_002_findings_are_in_order_and_do_not_overlap() -> None:
    jwt = EXAMPLES["json_web_token"][1]
    text = "Bearer " + jwt + " and AKIAIOSFODNN7EXAMPLE"
    found = find_secrets(text)
    # The JWT after Bearer is one secret: the specific kind names it.
    assert found == [
        Finding("json_web_token", 7, 7 + len(jwt)),
        Finding("aws_access_key_id", text.index("AKIA"), text.index("AKIA") + 20),
    ]


# ---------------------------------------------------------------------------
# The modes of LIM-P1


@pytest.mark.parametrize("mode", MODES)
def test_req_test_008_each_mode_of_lim_p1(mode: str) -> None:
    text, position = sample("github_token")
    value = EXAMPLES["github_token"][1]
    decision = apply(text, mode)
    assert decision.mode == mode
    if mode == "off":
        assert decision == PrivacyDecision("off", False, (), text)
        assert decision.count == 0 and decision.kind is None and decision.position is None
    elif mode == "warn":
        assert not decision.refused and decision.text == text
        assert decision.count == 1
        assert (decision.kind, decision.position) == ("github_token", position)
    elif mode == "mask":
        assert not decision.refused
        assert decision.text == LEAD + PLACEHOLDER + TAIL
        assert value not in decision.text and decision.count == 1
        assert (decision.kind, decision.position) == ("github_token", position)
    else:
        assert decision.refused and decision.text == ""
        assert (decision.kind, decision.position) == ("github_token", position)


@pytest.mark.parametrize("mode", MODES)
def test_req_test_008_clean_text_is_unchanged_in_every_mode(mode: str) -> None:
    decision = apply("rust programming language", mode)
    assert decision == PrivacyDecision(mode, False, (), "rust programming language")  # type: ignore[arg-type]


def test_req_test_008_an_unknown_mode_is_an_error() -> None:
    with pytest.raises(ValueError, match="mode"):
        apply("x", "hush")


@pytest.mark.parametrize("kind", KINDS)
def test_req_test_008_mask_replaces_exactly_the_secret(kind: str) -> None:
    before, _value, after = EXAMPLES[kind]
    text, _ = sample(kind)
    decision = apply(text, "mask")
    assert decision.text == LEAD + before + PLACEHOLDER + after + TAIL
    assert decision.count == 1
    assert find_secrets(decision.text) == []


def test_req_test_008_mask_counts_every_secret() -> None:
    text = "AKIAIOSFODNN7EXAMPLE then password=hunter2 then ghp_" + fake(36)
    masked, count = mask(text)
    assert count == 3 and apply(text, "mask").count == 3
    assert masked == "[masked] then password=[masked] then [masked]"


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("mode", MODES)
def test_req_priv_002_the_value_never_appears_in_a_finding_or_decision(
    kind: str, mode: str
) -> None:
    text, _ = sample(kind)
    value = EXAMPLES[kind][1]
    pieces = [value, value[:8], value[-8:]]
    decision = apply(text, mode)
    rendered = [repr(decision), str(decision), *map(repr, decision.findings)]
    rendered += [repr(find_secrets(text)), repr(check_url("https://h.example/?q=" + text))]
    for shown in rendered:
        for piece in pieces:
            assert piece not in shown
    if mode in ("mask", "refuse"):
        assert value not in decision.text
    assert not next(f for f in dataclasses.fields(PrivacyDecision) if f.name == "text").repr


# ---------------------------------------------------------------------------
# Fetch URLs


URL_CASES = [
    (
        "https://user:pw@host.example/",
        UrlSecret("secret_in_url", "url_userinfo_password", 13, True),
    ),
    ("https://user@host.example/", UrlSecret("credential_in_url", None, 8, True)),
    ("https://user:@host.example/", UrlSecret("credential_in_url", None, 8, True)),
    ("https://:pw@host.example/", UrlSecret("secret_in_url", "url_userinfo_password", 9, True)),
    ("https://a@b@host.example/", UrlSecret("credential_in_url", None, 8, True)),
    ("https://a:b@c@host.example/", UrlSecret("secret_in_url", "url_userinfo_password", 10, True)),
    ("https:user:pw@host.example/", UrlSecret("secret_in_url", "url_userinfo_password", 11, True)),
    ("https:\\\\user@host.example/", UrlSecret("credential_in_url", None, 8, True)),
    ("HTTP://User:Pw@host.example/", UrlSecret("secret_in_url", "url_userinfo_password", 12, True)),
    (
        "https://us\u200ber:p\u200bw@host/",
        UrlSecret("secret_in_url", "url_userinfo_password", 14, True),
    ),
    (
        "https://host.example:8080@mirror/",
        UrlSecret("secret_in_url", "url_userinfo_password", 21, True),
    ),
    (
        "https://host.example/?token=AKIAIOSFODNN7EXAMPLE",
        UrlSecret("secret_in_url", "aws_access_key_id", 28, False),
    ),
    (
        "https://bob@host.example/?token=AKIAIOSFODNN7EXAMPLE",
        UrlSecret("secret_in_url", "aws_access_key_id", 32, True),
    ),
    (
        "https://api.telegram.org/bot123456789:AA" + fake(33) + "/getMe",
        UrlSecret("secret_in_url", "telegram_bot_token", 28, False),
    ),
    (
        "https://host.example/cb?access_token=" + EXAMPLES["json_web_token"][1],
        UrlSecret("secret_in_url", "json_web_token", 37, False),
    ),
    (
        "https://host.example/a?x=password%3Dhunter2",
        UrlSecret("secret_in_url", "password_assignment", 36, False),
    ),
    ("https://host.example/", None),
    ("https://host.example:8443/path?q=rust", None),
    ("https://@host.example/", None),
    ("https://host.example/?q=user:pw@x", None),
    ("https://host.example/#a@b", None),
    ("https://host.example/@user", None),
    ("mailto:user@host.example", None),
    ("not a url at all", None),
    ("", None),
]


@pytest.mark.parametrize(("url", "expected"), URL_CASES)
def test_req_priv_002_secret_in_url_and_credential_in_url(
    url: str, expected: UrlSecret | None
) -> None:
    assert check_url(url) == expected


def test_req_fetch_007_userinfo_is_flagged_whatever_else_the_url_carries() -> None:
    found = check_url("https://bob@host.example/?k=ghp_" + fake(36))
    assert found is not None and found.userinfo and found.reason == "secret_in_url"
    clean = check_url("https://host.example/?k=ghp_" + fake(36))
    assert clean is not None and not clean.userinfo


def test_req_priv_002_a_url_in_a_query_with_user_and_password_is_found() -> None:
    text = "why does https://alice:s3cret@db.example/ fail"
    assert find_secrets(text) == [Finding("url_userinfo_password", 23, 29)]
    assert apply(text, "mask").text == "why does https://alice:[masked]@db.example/ fail"
    assert find_secrets("why does https://alice@db.example/ fail") == []


# ---------------------------------------------------------------------------
# Properties

_SAFE_WORD = st.one_of(
    st.from_regex(r"[a-z]{1,24}", fullmatch=True),
    st.from_regex(r"[A-Z]{1,24}", fullmatch=True),
    st.from_regex(r"[A-Z][a-z]{0,23}", fullmatch=True),
    st.sampled_from(
        [
            "sk",
            "bearer",
            "Bearer",
            "basic",
            "Basic",
            "ASIA",
            "AKIA",
            "akia",
            "password",
            "secret",
            "passwd",
            "authorization",
            "AccountKey",
            "hf",
            "ghp",
            "glpat",
            "xoxb",
            "eyJ",
            "npm",
            "SG",
            "AIza",
            "GOCSPX",
            "BEGIN",
            "PRIVATE",
            "KEY",
        ]
    ),
)
_SAFE_TEXT = st.lists(
    st.tuples(_SAFE_WORD, st.sampled_from([" ", "-", ", ", ". ", "\n"])), max_size=40
).map(lambda parts: "".join(w + sep for w, sep in parts))


@given(_SAFE_TEXT)
@settings(max_examples=250, suppress_health_check=[HealthCheck.too_slow])
def test_req_priv_002_ordinary_words_are_never_flagged(text: str) -> None:
    # Words of letters in one case (or Title case), the trigger names among
    # them, joined by spaces, hyphens and sentence punctuation: none is a secret.
    assert find_secrets(text) == []


_SECRET = st.tuples(
    st.sampled_from(KINDS),
    st.sampled_from(["", *INVISIBLE]),
    st.booleans(),
)


def _planted(kind: str, invisible: str, lower: bool) -> str:
    before, value, after = EXAMPLES[kind]
    middle = len(value) // 2
    text = before + value[:middle] + invisible + value[middle:] + after
    return text.lower() if lower else text


@given(st.lists(st.tuples(_SAFE_TEXT, _SECRET), min_size=1, max_size=4), _SAFE_TEXT)
@settings(max_examples=120, suppress_health_check=[HealthCheck.too_slow])
def test_req_priv_002_masking_removes_every_finding(
    parts: list[tuple[str, tuple[str, str, bool]]], tail: str
) -> None:
    text = "".join(filler + " " + _planted(*secret) + " " for filler, secret in parts) + tail
    decision = apply(text, "mask")
    assert not decision.refused
    assert decision.count >= 1
    assert find_secrets(decision.text) == []
    for kind, _, _ in (secret for _, secret in parts):
        assert EXAMPLES[kind][1][:12].lower() not in decision.text.lower()


@given(_SAFE_TEXT, _SECRET, _SAFE_TEXT)
@settings(max_examples=120, suppress_health_check=[HealthCheck.too_slow])
def test_req_priv_002_the_position_points_at_the_first_character(
    head: str, secret: tuple[str, str, bool], tail: str
) -> None:
    kind, invisible, lower = secret
    before = EXAMPLES[kind][0]
    text = head + " " + _planted(kind, invisible, lower) + " " + tail
    start = len(head) + 1 + len(before)
    found = find_secrets(text)
    assert (kind, start) in [(f.kind, f.position) for f in found]
    first = EXAMPLES[kind][1][0]
    assert text[start] == (first.lower() if lower else first)


@given(st.text(max_size=300))
@settings(max_examples=400)
def test_req_priv_002_any_text_gives_well_formed_findings(text: str) -> None:
    found = find_secrets(text)
    previous_end = 0
    for f in found:
        assert f.kind in KINDS
        assert previous_end <= f.position < f.end <= len(text)
        previous_end = f.end
    decision = apply(text, "mask")
    if not decision.refused:
        assert find_secrets(decision.text) == []
    check_url(text)


@given(st.text(alphabet=st.sampled_from("sk-=%20@:/AKIAghp_ \u200bBearer.eyJ"), max_size=400))
@settings(max_examples=300)
def test_req_priv_002_mask_converges_on_secret_alphabet_noise(text: str) -> None:
    decision = apply(text, "mask")
    assert not decision.refused
    assert find_secrets(decision.text) == []


# ---------------------------------------------------------------------------
# Linear time

ADVERSARIAL = {
    "sk-": "sk-" * 100_000,
    "=": "=" * 100_000,
    "password=": "password=" * 12_000,
    "AKIA": "AKIA" * 25_000,
    "ghp_ space": "ghp_a " * 20_000,
    "Bearer": "Bearer " * 15_000,
    "BEGIN": "-----BEGIN PRIVATE KEY-----" * 4_000,
    "percent": "%" * 100_000,
    "%20": "%20" * 33_000,
    "scheme": "a://" * 25_000,
    "userinfo": "https://" + "a:" * 50_000 + "@",
    "zero width": "\u200b" * 100_000,
    "jwt dots": "eyJ." * 25_000,
    "letters": "a" * 100_000,
    "xoxb": "xoxb-1-" * 15_000,
    "basic": "Basic " + "A" * 100_000,
    "github split": ("ghp_" + "a1" * 10 + " ") * 4_000,
    "mixed": (
        "sk-ghp_AKIA bearer basic password=secret= eyJ.x :// -----BEGIN PRIVATE KEY----- %20\u200b"
    )
    * 1_200,
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
@pytest.mark.parametrize("call", ["find_secrets", "apply_mask", "check_url"])
def test_req_priv_002_long_adversarial_input_is_checked_in_linear_time(
    name: str, call: str
) -> None:
    # About 100,000 characters each; a backtracking pattern would take minutes.
    text = ADVERSARIAL[name]
    run = {
        "find_secrets": lambda: find_secrets(text),
        "apply_mask": lambda: apply(text, "mask"),
        "check_url": lambda: check_url(text),
    }[call]
    started = time.perf_counter()
    run()
    assert time.perf_counter() - started < 1.0
