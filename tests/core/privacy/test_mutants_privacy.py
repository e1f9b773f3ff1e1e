"""The secret check: cases mutation testing found unguarded (REQ-PRIV-002; tools/mutants.py).

Each test pins a behaviour that a surviving mutant of rypsok/core/privacy/ changed
while every other test passed. Values are fake, with the real shape of their format.
"""

from __future__ import annotations

import base64

import pytest

from rypsok.core.privacy import Finding, UrlSecret, apply, check_url, find_secrets


def fake(n: int, seed: str = "FakeExample0Token") -> str:
    return (seed * (n // len(seed) + 1))[:n]


GITHUB = "ghp_" + fake(36)


def pct(text: str) -> str:
    """Every UTF-8 byte of *text* percent-encoded, as a URL carries it."""
    return "".join(f"%{b:02X}" for b in text.encode("utf-8"))


def found(text: str) -> list[tuple[str, int, int]]:
    return [(f.kind, f.position, f.end) for f in find_secrets(text)]


# -- the decoded view: percent-encoded UTF-8 ---------------------------------------------------

# The first and last character of each UTF-8 length, where the lead byte's bounds are.
EDGE_CHARACTERS = ["\u0080", "\u07ff", "\u0800", "\ufffd", "\U00010000", "\U0010fffd"]


@pytest.mark.parametrize("ch", EDGE_CHARACTERS, ids=[f"U+{ord(c):04X}" for c in EDGE_CHARACTERS])
def test_req_priv_002_an_encoded_character_is_read_as_that_character(ch: str) -> None:
    # Decoded, the character is no letter or digit, so the token after it starts a
    # word. Left undecoded, the escape's last hex digit would run into the prefix.
    before = pct(ch)
    assert found(before + GITHUB) == [("github_token", len(before), len(before) + len(GITHUB))]


@pytest.mark.parametrize(
    "invisible",
    [
        "\u00ad",
        "\u200b",
        "\ufeff",
        "\U000e0001",
        "\x7f",
        "\u0090",
        "\ufe00",
        "\ufe0f",
        "\U000e0100",
        "\U000e01ef",
        "\U000e01f0",  # unassigned, but default-ignorable: invisible (the boundary's rule)
    ],
)
def test_req_priv_002_an_invisible_character_inside_a_token_is_dropped(invisible: str) -> None:
    raw = GITHUB[:20] + invisible + GITHUB[20:]
    assert found(raw) == [("github_token", 0, len(raw))]
    encoded = GITHUB[:20] + pct(invisible) + GITHUB[20:]
    assert found(encoded) == [("github_token", 0, len(encoded))]
    assert apply(encoded, "mask").text == "[masked]"


@pytest.mark.parametrize("visible", ["é", "\ufe10", "\U000e1000"])  # U+E1000: past the ignorables
def test_req_priv_002_a_visible_character_inside_a_token_ends_it(visible: str) -> None:
    assert found(GITHUB[:20] + visible + GITHUB[20:]) == []
    assert found(GITHUB[:20] + pct(visible) + GITHUB[20:]) == []


def test_req_priv_002_an_encoded_invisible_character_does_not_make_a_word_a_secret() -> None:
    # Dropped, it leaves the word "configuration"; kept as %C2%AD it would be a symbol.
    assert found("password%3Dconfiguration%C2%AD") == []
    assert found("password%3Dconfiguration%E2%80%8B") == []


def test_req_priv_002_a_byte_that_starts_no_character_stays_literal_text() -> None:
    assert found("password%3Dconfiguration%80") == [("password_assignment", 11, 27)]
    assert found("password%3Dconfiguration%FF") == [("password_assignment", 11, 27)]
    assert found("password%3Dconfiguration%C3") == [("password_assignment", 11, 27)]
    # A lead byte followed by no continuation byte: the lead stays literal, the next
    # byte is read on its own ("A").
    assert found("password%3Dconfiguration%C3%41") == [("password_assignment", 11, 30)]


def test_req_priv_002_positions_through_encoded_text_are_those_of_the_original() -> None:
    assert found("password%3Dab%31") == [("password_assignment", 11, 16)]
    assert found("password%3D%61%62%31") == [("password_assignment", 11, 20)]
    assert found("password%3Dab1%FF") == [("password_assignment", 11, 17)]
    assert found("password%3Dab1%C3%A9") == [("password_assignment", 11, 20)]
    assert found("password%3D%31%C3%A9%C3%A9") == [("password_assignment", 11, 26)]
    # A literal (undecodable) escape keeps its characters and their places: the bot id
    # starts at its "1".
    token = "23456789%3AAA" + fake(33)
    assert found("x=%F1" + token) == [("telegram_bot_token", 4, 5 + len(token))]


def test_req_priv_002_only_escapes_are_decoded() -> None:
    # "x41" after an escape is text, not a byte 0x41.
    assert found("password%3Dx41") == [("password_assignment", 11, 14)]
    # An escape that ends the text is decoded too: "xA" is a word.
    assert found("password%3Dx%41") == []


@pytest.mark.parametrize("text", ["%41%4", "%41%", "%41%4G", "%41%G1", "%C3%A9%4", "%E2%80"])
def test_req_priv_002_a_text_ending_in_a_partial_escape_is_read_without_error(text: str) -> None:
    assert find_secrets(text) == []
    assert check_url("https://qzx.example/?q=" + text) is None
    # The same ends after an assignment: the value is what is left, escapes literal.
    assert found("password%3D" + text) == [("password_assignment", 11, 11 + len(text))]


# -- the plain view and the merge ---------------------------------------------------------------


def test_req_priv_002_user_information_is_read_undecoded() -> None:
    # %3A is part of the user name, not a colon before a password.
    assert found("https://a%3Ab@qzx.example/") == []
    assert check_url("https://u%3Apw@qzx.example/") == UrlSecret("credential_in_url", None, 8, True)


def test_req_priv_002_a_longer_overlapping_finding_extends_the_first() -> None:
    text = "secret=" + GITHUB + ".more1"
    assert found(text) == [("github_token", 7, len(text))]


PEM_BODY = fake(64) + "\n" + fake(40) + "=="


def _pem(body: str = PEM_BODY, label: str = "RSA PRIVATE KEY") -> str:
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----"


def test_req_priv_002_two_touching_private_keys_are_two_findings() -> None:
    first, second = _pem(), _pem(label="EC PRIVATE KEY")
    assert found(first + second) == [
        ("pem_private_key", 0, len(first)),
        ("pem_private_key", len(first), len(first + second)),
    ]
    assert apply(first + second, "mask").text == "[masked][masked]"


def test_req_priv_002_a_private_key_block_is_judged_by_its_key_characters() -> None:
    # Encrypted keys start with headers, so the body after BEGIN is short; the whole
    # block counts: 32 key characters make a key, 31 do not.
    headers = "Proc-Type: 4,X\n\n"
    counted = sum(c.isalnum() or c in "+/" for c in headers)
    assert counted == 10
    exactly = _pem(headers + "a+/" + "b" * (32 - counted - 3))
    assert found(exactly) == [("pem_private_key", 0, len(exactly))]
    assert found(_pem(headers + "b" * (31 - counted))) == []
    # Symbols and spaces are not key characters.
    assert found(_pem(headers + "b" * (31 - counted) + ": ;,.\n" * 20)) == []


def test_req_priv_002_a_private_key_block_is_closed_up_to_100000_characters_away() -> None:
    # Far into a long text, the END line is looked for up to 100,000 characters after
    # the BEGIN line's body ("Proc" here: the header's "-" ends it), and no further.
    begin = "-----BEGIN RSA PRIVATE KEY-----"
    headers = "Proc-Type: 4,ENCRYPTED\n" + fake(40) + "\n"
    end = "-----END RSA PRIVATE KEY-----"
    lead = "x" * 200_000 + " "
    gap = len(headers) - len("Proc")
    at_limit = lead + begin + headers + "\n" * (100_000 - gap) + end
    assert found(at_limit) == [("pem_private_key", len(lead), len(at_limit))]
    beyond = lead + begin + headers + "\n" * (100_001 - gap) + end
    assert found(beyond) == []  # the body alone ("Proc") is no key


def test_req_priv_002_an_unclosed_private_key_ends_at_its_last_key_character() -> None:
    text = "-----BEGIN PRIVATE KEY-----\n" + fake(40) + "\n\n  \n"
    assert found(text) == [("pem_private_key", 0, text.rstrip().__len__())]


# -- formats at their edges --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "is_secret"),
    [
        ("abcdefg1", True),
        ("abcdefg+", True),
        ("abcdefg/", True),
        ("abcdef==", True),
        ("abcdEfgh", True),  # a case hump
        ("abcdefgh", False),  # a word
        ("abcdef1", False),  # seven characters
    ],
)
def test_req_priv_002_a_basic_credential_after_the_header_name(value: str, is_secret: bool) -> None:
    text = "Authorization: Basic " + value
    expected = [("basic_authorization", 21, len(text))] if is_secret else []
    assert found(text) == expected


def test_req_priv_002_a_basic_credential_after_a_basic_word() -> None:
    text = "basic words, then Authorization: Basic dXNlcjpwYXNzd29yZA=="
    assert found(text) == [("basic_authorization", 39, len(text))]


def test_req_priv_002_a_bare_basic_credential_must_decode_to_user_and_password() -> None:
    one_letter_user = base64.b64encode(b"a:secret1").decode()
    assert found("basic " + one_letter_user) == [("basic_authorization", 6, 18)]
    assert found("basic Abcdefg12") == []  # no valid base 64: a word
    assert found("basic " + base64.b64encode(b":secret1").decode()) == []  # no user


@pytest.mark.parametrize(
    ("token", "end"),
    [
        ("abcdefghijklmno1", 23),  # sixteen characters: the shortest
        ("abcdefghijklmno1.", 23),  # a full stop after it is punctuation
        ("abcdefghijklmno1..", 23),
        ("abcdefghijklmnoX1X", 25),  # only full stops are punctuation
    ],
)
def test_req_priv_002_a_bearer_token_from_16_characters(token: str, end: int) -> None:
    assert found("Bearer " + token) == [("bearer_token", 7, end)]


def test_req_priv_002_a_bearer_token_of_15_characters_is_text() -> None:
    assert found("Bearer abcdefghijklmn1") == []


def test_req_priv_002_a_bearer_token_after_dots_ends_where_it_ends() -> None:
    text = "Bearer ..abcdefghijklmno1"
    assert found(text) == [("bearer_token", 7, len(text))]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("password=abc1.", [("password_assignment", 9, 13)]),
        ("password=abc1)", [("password_assignment", 9, 13)]),
        ("password=..abc1", [("password_assignment", 9, 15)]),
        ("password=[masked] secret=abc1", [("password_assignment", 25, 29)]),
        ("password=letters\n2nd line", []),  # a line break ends the value
    ],
)
def test_req_priv_002_password_assignment_values(
    text: str, expected: list[tuple[str, int, int]]
) -> None:
    assert found(text) == expected


@pytest.mark.parametrize(
    ("text", "kind", "start"),
    [
        ("glpat-" + fake(27) + ".01234abcd", "gitlab_token", 0),  # routable: 27 characters
        ("glptt-" + "0123456789abcdef" * 2 + "01234567", "gitlab_token", 0),  # 40 hex digits
        ("AKIA2" + "ABCDEFGHIJKLMNO", "aws_access_key_id", 0),  # its one digit right after AKIA
        ("aws_secret_access_key=" + "a" * 39 + "/", "aws_secret_access_key", 22),
        ("aws_secret_access_key=" + "a" * 39 + "+", "aws_secret_access_key", 22),
        ("npm_" + "a" * 35 + "9", "npm_token", 0),  # 9 is a digit too
        ("xapp-1-A0123456789-0123456789-" + "0123456789abcdef" * 4, "slack_token", 0),
    ],
)
def test_req_priv_002_formats_at_their_edges_are_found(text: str, kind: str, start: int) -> None:
    assert found(text) == [(kind, start, len(text))]


@pytest.mark.parametrize(
    "text",
    [
        "glpat-" + fake(26) + ".01234abcd",  # routable needs 27
        "glptt-" + fake(20),  # glptt- takes only 40 hex digits
        "AKIA" + "X" * 16,  # letters only: a word
        "aws_secret_access_key=" + "a" * 40,  # letters only
        "SK" + "0123456789" * 3 + "01",  # digits only: no key
        "xoxb-1-" + "abcdefghijklmnop",  # lower-case letters only
        "npm_" + "a" * 36,  # the confirmed formats, a body of lower-case letters
        "sk_live_" + "a" * 24,
        "GOCSPX-" + "a" * 28,
        "123456789:A" + "a" * 34,  # an upper case letter then lower: no case hump
        "SK" + "abcdef" * 5 + "ab",  # hex letters only: no key
        "sk-proj-" + fake(19) + "T3BlbkFJ" + fake(20),  # 19 before the marker
        "sk-" + fake(20) + "T3BlbkFJ" + fake(12),  # 12 after it
    ],
)
def test_req_priv_002_shapes_short_of_a_format_are_text(text: str) -> None:
    assert found(text) == []


def test_req_priv_002_openai_marker_counted_from_its_first_occurrence() -> None:
    text = "sk-" + fake(20) + "T3BlbkFJ" + fake(20) + "T3BlbkFJ" + fake(5)
    assert found(text) == [("openai_key", 0, len(text))]


def test_req_priv_002_every_key_after_the_first_is_found_too() -> None:
    anthropic = "sk-ant-api03-" + fake(93) + "AA"
    openai = "sk-" + fake(20) + "T3BlbkFJ" + fake(20)
    text = anthropic + " " + openai
    assert [f.kind for f in find_secrets(text)] == ["anthropic_key", "openai_key"]


# -- URL user information -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "password"),
    [
        ("https://u:p:w@qzx.example/", "p:w"),  # the first colon separates
        ("https://u:p@w@qzx.example/", "p@w"),  # the last @ ends the user information
        ("https://:pw1@qzx.example/", "pw1"),  # no user name
        ("https://qzx.example/ https://u:pw1@qzx.example/", "pw1"),  # a second URL
    ],
)
def test_req_priv_002_the_password_of_a_url(text: str, password: str) -> None:
    at = text.index(password, text.rindex("//"))
    assert found(text) == [("url_userinfo_password", at, at + len(password))]


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "ht\ttps://u:pw@qzx.example/",
            UrlSecret("secret_in_url", "url_userinfo_password", 11, True),
        ),
        ("https://u:p@qzx.example/", UrlSecret("secret_in_url", "url_userinfo_password", 10, True)),
        (
            "https://u:p:w@qzx.example/",
            UrlSecret("secret_in_url", "url_userinfo_password", 10, True),
        ),
        (
            "https://u@v:pw@qzx.example/",
            UrlSecret("secret_in_url", "url_userinfo_password", 12, True),
        ),
        ("ssh://u:pw@qzx.example/", UrlSecret("secret_in_url", "url_userinfo_password", 8, True)),
        (
            "ssh://uXs:pw@qzx.example/",
            UrlSecret("secret_in_url", "url_userinfo_password", 10, True),
        ),
        ("ssh://u:p\\w@qzx.example/", UrlSecret("secret_in_url", "url_userinfo_password", 8, True)),
        (
            "https://uXs:pw@qzx.example/",
            UrlSecret("secret_in_url", "url_userinfo_password", 12, True),
        ),
        ("ssh://user@qzx.example/", UrlSecret("credential_in_url", None, 6, True)),
        ("https://Xuser@qzx.example/", UrlSecret("credential_in_url", None, 8, True)),
        ("https:/user@qzx.example/", UrlSecret("credential_in_url", None, 7, True)),
        ("https://user@qzx.example", UrlSecret("credential_in_url", None, 8, True)),
        ("https://:@qzx.example/", None),  # ":@" carries nothing
        ("https://a/b@qzx.example/", None),  # the @ is in the path
        ("https://qzx.example\\u:pw@evil.example/", None),  # \ ends a special URL's authority
        ("https://", None),
        ("https:\\\\", None),
        # A tab is removed by a URL parser; the secret scan of the raw text stops at it,
        # so these are found by the user-information reading alone.
        (
            "https://u@v:p\tw@qzx.example/",
            UrlSecret("secret_in_url", "url_userinfo_password", 12, True),
        ),
        (
            "https://u:\tp@qzx.example/",
            UrlSecret("secret_in_url", "url_userinfo_password", 11, True),
        ),
    ],
)
def test_req_priv_002_user_information_as_a_url_parser_reads_it(
    url: str, expected: UrlSecret | None
) -> None:
    assert check_url(url) == expected


# -- modes ----------------------------------------------------------------------------------


def test_req_priv_002_an_unknown_mode_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"^unknown secret_detection mode$"):
        apply("text", "block")


def test_req_priv_002_a_finding_is_never_empty() -> None:
    for f in find_secrets("x " + GITHUB + " password=a1 Bearer abcdefghijklmno1"):
        assert isinstance(f, Finding)
        assert f.end > f.position
