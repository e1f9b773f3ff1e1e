"""Properties of the secret check (REQ-PRIV-002, REQ-SEC-023), beside test_privacy.py.

There the filler around a planted secret is ordinary words; here it is any text at all
(any script, controls, invisible characters, percent escapes), in every mode and through
the fetch URL check: the check never raises, finds the secret, points inside the text at
it, and a masked text no longer holds it.
"""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from rypsok.core.privacy import KINDS, MODES, PLACEHOLDER, apply, check_url, find_secrets
from tests.support.fake_secrets import EXAMPLES

filler = st.one_of(
    st.text(max_size=40),
    st.lists(
        st.sampled_from(
            [
                "%",
                "%2",
                "%20",
                "=",
                ":",
                "@",
                "/",
                "\u200b",
                "\u00ad",
                "\n",
                "password",
                "Bearer",
                "sk-",
                "ghp_",
                "-----",
                "é",
                "x",
            ]
        ),
        max_size=12,
    ).map("".join),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(filler, st.sampled_from(sorted(EXAMPLES)), filler)
@example("%", "password_assignment", "")
@example("\u200b", "github_token", "\u200b")
def test_req_priv_002_a_secret_in_any_text_is_found_and_masked_away(
    head: str, kind: str, tail: str
) -> None:
    before, value, after = EXAMPLES[kind]
    text = f"{head} {before}{value}{after} {tail}"
    start = len(head) + 1 + len(before)
    found = find_secrets(text)
    assert any(f.position <= start < f.end for f in found), (kind, found)
    for f in found:
        assert f.kind in KINDS
        assert 0 <= f.position < f.end <= len(text)
    masked = apply(text, "mask")
    assert not masked.refused and masked.count >= 1
    assert value not in masked.text and PLACEHOLDER in masked.text
    assert find_secrets(masked.text) == []
    refused = apply(text, "refuse")
    assert refused.refused and refused.text == ""
    assert refused.position is not None and 0 <= refused.position <= start
    assert apply(text, "warn").text == text and apply(text, "off").findings == ()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(filler, st.sampled_from(MODES))
def test_req_priv_002_any_text_in_any_mode_gives_a_decision(text: str, mode: str) -> None:
    decision = apply(text, mode)
    assert decision.mode == mode
    assert decision.refused == (mode == "refuse" and bool(decision.findings))
    if decision.refused:
        assert decision.text == ""
    elif mode == "mask":
        assert find_secrets(decision.text) == []
    else:
        assert decision.text == text


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(["https://", "http://", "HTTPS:\\\\", " https://", "ftp://", "x:"]),
    filler,
    st.sampled_from(["", "@", ":@", "a@", "a:b@", "%40"]),
    filler,
)
def test_req_priv_002_a_fetch_url_check_points_inside_the_url(
    scheme: str, userinfo: str, at: str, rest: str
) -> None:
    url = f"{scheme}{userinfo}{at}example.org/{rest}"
    found = check_url(url)
    if found is None:
        return
    assert found.reason in ("secret_in_url", "credential_in_url")
    assert 0 <= found.position < len(url)
    assert (found.kind is None) == (found.reason == "credential_in_url")
    assert found.kind is None or found.kind in KINDS
