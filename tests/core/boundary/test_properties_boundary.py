"""Properties of the text cleaner and the content cleaner (REQ-SEC-015, REQ-CTX-004,
REQ-CTX-006, REQ-TEST-013), beside the ones in test_boundary.py.

The joiner oracle here is written from the requirement's words and reads scripts from
Unicode character names, not from the cleaner's own tables: ZWNJ only between two letters
or marks of Arabic script or of one Indic script, ZWJ only next to a virama inside one
Indic script or between two pictographs, at most one in a row, never at an end.
"""

from __future__ import annotations

import html
import json
import unicodedata

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from rypsok.core.boundary import (
    ZWJ,
    ZWNJ,
    Cleaned,
    clean_content,
    clean_field,
    clean_text,
    count_instruction_like,
)

# Pieces that put joiners where the rules must decide: Arabic and Indic letters and marks,
# viramas of two scripts, emoji with their extenders, Latin letters, digits, spaces, markup.
PIECES = [
    ZWJ,
    ZWNJ,
    ZWJ + ZWJ,
    ZWNJ + ZWJ,
    "ی",
    "خ",
    "\u064e",
    "\u0670",
    "ﺏ",
    "\U0001ee01",
    "क",
    "ष",
    "\u094d",
    "\u093f",
    "ক",
    "\u09cd",
    "ක",
    "\u0dca",
    "ਕ",
    "\u0a4d",
    "த",
    "\u0bcd",
    "\u1cd0",
    "👨",
    "👩",
    "❤",
    "🏳",
    "🌈",
    "\ufe0f",
    "\ufe0e",
    "\U0001f3fd",
    "\u20e3",
    "1",
    "#",
    "\U000e0067",
    "\U000e007f",
    "ℹ",
    "a",
    "Z",
    "é",
    " ",
    "\n",
    "\t",
    "\u00a0",
    "\u200b",
    "\u00ad",
    "\u202e",
    "\ufeff",
    "\x00",
    "\x85",
    "\ud800",
    "<b>",
    "</p>",
    "&amp;",
    "&#x200d;",
    "&zwj;",
    "&zwnj;",
    "<!--",
    "-->",
    "<script>",
    "</script>",
    "\r\n",
]
texts = st.lists(st.one_of(st.sampled_from(PIECES), st.characters()), max_size=40).map("".join)
lines = st.lists(texts, max_size=6).map("\n".join)

_INDIC_SCRIPTS = (
    "DEVANAGARI",
    "BENGALI",
    "GURMUKHI",
    "GUJARATI",
    "ORIYA",
    "TAMIL",
    "TELUGU",
    "KANNADA",
    "MALAYALAM",
    "SINHALA",
)
_EXTENDERS = {"\ufe0e", "\ufe0f", "\u20e3"}


def _script(ch: str) -> str | None:
    """The script a joiner may join within, from the character's name; None otherwise."""
    if unicodedata.category(ch)[0] not in "LM":
        return None
    words = unicodedata.name(ch, "").replace("COMBINING ", "").split()
    first = words[0] if words else ""
    if first == "ARABIC":
        return "ARABIC"
    if first == "VEDIC":  # Vedic signs are written with Devanagari
        return "DEVANAGARI"
    return first if first in _INDIC_SCRIPTS else None


def _pictograph(ch: str) -> bool:
    # Generous: a symbol, a mark of punctuation, anything from U+1F000 on, or the one emoji
    # whose category is a letter (U+2139). Letters, digits and spaces are never pictographs.
    return (
        unicodedata.category(ch) in ("So", "Sm", "Sk", "Po", "Pd")
        or ord(ch) >= 0x1F000
        or ch == "ℹ"
    )


def _extender(ch: str) -> bool:
    return ch in _EXTENDERS or 0x1F3FB <= ord(ch) <= 0x1F3FF or 0xE0020 <= ord(ch) <= 0xE007F


def _joiner_faults(text: str) -> list[str]:
    faults: list[str] = []
    for i, ch in enumerate(text):
        if ch not in (ZWJ, ZWNJ):
            continue
        if i == 0 or i == len(text) - 1:
            faults.append(f"joiner at an end ({i})")
            continue
        prev, nxt = text[i - 1], text[i + 1]
        if nxt in (ZWJ, ZWNJ):
            faults.append(f"two joiners at {i}")
            continue
        if ch == ZWNJ:
            if _script(prev) is None or _script(prev) != _script(nxt):
                faults.append(f"ZWNJ between U+{ord(prev):04X} and U+{ord(nxt):04X}")
            continue
        conjunct = (
            _script(prev) is not None
            and _script(prev) == _script(nxt)
            and 9 in (unicodedata.combining(prev), unicodedata.combining(nxt))
        )
        k = i - 1
        while k > 0 and _extender(text[k]):
            k -= 1
        emoji = _pictograph(text[k]) and _pictograph(nxt)
        if not (conjunct or emoji):
            faults.append(f"ZWJ between U+{ord(prev):04X} and U+{ord(nxt):04X}")
    return faults


_REMOVED_FORMATS = (
    frozenset(range(0x200B, 0x2010))
    | frozenset(range(0x202A, 0x202F))
    | frozenset(range(0x2060, 0x2070))
    | {0x00AD, 0x034F, 0x061C, 0x180E, 0xFEFF}
)


def _leftovers(text: str) -> list[str]:
    """Code points REQ-SEC-015 removes, found in cleaned text (joiners judged apart)."""
    found = []
    for ch in text:
        cp = ord(ch)
        if ch in (ZWJ, ZWNJ):
            continue
        if unicodedata.category(ch) in ("Cc", "Cs") and ch != "\n":
            found.append(f"control U+{cp:04X}")
        elif cp in _REMOVED_FORMATS or 0xE0000 <= cp <= 0xE007F:
            found.append(f"invisible U+{cp:04X}")
        elif 0xFDD0 <= cp <= 0xFDEF or (cp & 0xFFFE) == 0xFFFE:
            found.append(f"noncharacter U+{cp:04X}")
    return found


# -- joiners only where the rules keep them ----------------------------------------------------


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts, st.booleans())
@example("a\u200cb", False)
@example("क्\u200dष", False)
@example("👩🏽\u200d💻", False)
@example("1\u200d\u20e3", False)
def test_req_sec_015_a_kept_joiner_always_stands_where_the_rule_keeps_it(
    raw: str, markup: bool
) -> None:
    assert _joiner_faults(clean_text(raw, markup=markup).text) == []


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines)
def test_req_sec_015_content_cleaner_keeps_joiners_only_where_the_rule_keeps_them(raw: str) -> None:
    content, _ = clean_content(raw)
    for line in content.split("\n"):
        assert _joiner_faults(line) == []
        assert _leftovers(line) == []


# -- the content cleaner ------------------------------------------------------------------------


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines)
def test_req_sec_015_content_cleaning_is_idempotent_and_bounded(raw: str) -> None:
    content, removed = clean_content(raw)
    assert clean_content(content) == (content, 0)
    assert len(content) <= len(raw)
    assert 0 <= removed <= len(raw)
    assert content.count("\n") <= raw.count("\n")  # the Markdown's lines stay lines
    assert "\r" not in content
    count_instruction_like(content)  # never raises on cleaned content


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=30),
        max_size=6,
    )
)
def test_req_ctx_005_visible_ascii_content_comes_back_as_written(rows: list[str]) -> None:
    # Nothing in printable ASCII is invisible: only trailing spaces and outer blank lines go.
    content, removed = clean_content("\n".join(rows))
    assert removed == 0
    assert content == "\n".join(r.rstrip() for r in rows).strip("\n")


# -- the text cleaner: bounded, escaped text round trip, JSON round trip ----------------------


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts, st.booleans(), st.integers(0, 80))
def test_req_ctx_006_cleaning_never_lengthens_and_the_field_holds_its_bound(
    raw: str, markup: bool, limit: int
) -> None:
    cleaned = clean_text(raw, markup=markup)
    assert len(cleaned.text) <= len(raw)  # no reference decodes to more than it spells
    assert 0 <= cleaned.removed <= len(raw)
    field = clean_field(raw, markup=markup, limit=limit)
    assert len(field.text) <= limit
    again = clean_field(field.text, markup=False, limit=limit)
    assert (again.text, again.removed, again.truncated) == (field.text, 0, False)
    assert again.instruction_like == field.instruction_like


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
@example("&amp;lt;b&amp;gt;")
@example("<3 &copy=2")
def test_req_ctx_004_escaped_text_comes_back_as_written(raw: str) -> None:
    # Entities are decoded once: text a provider escaped is the text it meant, never markup.
    assert clean_text(html.escape(raw), markup=True) == clean_text(raw, markup=False)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts, lines, st.booleans())
def test_req_sec_002_cleaned_text_survives_a_json_round_trip(
    raw: str, page: str, markup: bool
) -> None:
    title = clean_field(raw, markup=markup, limit=60)
    content, _ = clean_content(page)
    payload = {
        "title": title.text,
        "snippet": clean_text(raw, markup=markup).text,
        "content": content,
    }
    for ascii_only in (True, False):
        encoded = json.dumps(payload, ensure_ascii=ascii_only)
        encoded.encode("utf-8")  # no lone surrogate reaches the encoder
        assert json.loads(encoded) == payload


def test_req_sec_015_a_lone_surrogate_never_survives() -> None:
    assert clean_text("a\ud800b\udfff", markup=False) == Cleaned("ab", 2)
    assert clean_content("x\udc00\ny") == ("x\ny", 1)
