"""The anchors that let instruction-like patterns skip ordinary text never change a verdict."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rypsok.core import boundary

WORDS = [
    "ignore",
    "all",
    "previous",
    "instructions",
    "you",
    "are",
    "now",
    "dan",
    "from",
    "on",
    "will",
    "act",
    "attention",
    "ai",
    "llm",
    ":",
    "!",
    "dear",
    "if",
    "an",
    "reading",
    "this",
    "new",
    "reveal",
    "your",
    "system",
    "prompt",
    "<|",
    "im_start",
    "|>",
    "[inst]",
    "<<sys>>",
    "<start_of_turn>",
    "###",
    "instruction",
    "assistant",
    "</",
    "results",
    ">",
    "end of",
    "search",
    "begin",
    "untrusted",
    "content",
    "ignoriere",
    "vorherigen",
    "anweisungen",
    "oublie",
    "consignes",
    "précédentes",
    "olvida",
    "instrucciones",
    "anteriores",
    "игнорируй",
    "предыдущие",
    "инструкции",
    "忽略",
    "之前",
    "的",
    "指令",
    "これまで",
    "の",
    "指示",
    "を",
    "無視",
    "이전",
    "지시",
    "를",
    "무시",
    "the",
    "above",
    "and",
    "then",
    "-",
    ".",
    ",",
]


def _unfiltered(text: str, patterns: tuple[object, ...]) -> bool:
    return any(p.search(text) is not None for p in patterns)  # type: ignore[attr-defined]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(WORDS), min_size=1, max_size=12), st.sampled_from([" ", "_", ""]))
def test_anchored_checks_agree_with_every_pattern(words: list[str], joiner: str) -> None:
    text = joiner.join(words)
    assert boundary._any_match(text, boundary._LATIN_CHECKS) == _unfiltered(
        text, boundary._LATIN_PATTERNS
    )
    assert boundary._any_match(text, boundary._OTHER_CHECKS) == _unfiltered(
        text, boundary._OTHER_PATTERNS
    )


def test_every_pattern_has_its_anchors() -> None:
    assert len(boundary._LATIN_ANCHORS) == len(boundary._LATIN_PATTERNS)
    assert len(boundary._OTHER_ANCHORS) == len(boundary._OTHER_PATTERNS)


ALPHABET = [
    "a",
    "b",
    " ",
    "\t",
    "\u200d",
    "\u200c",
    "\ufe0f",
    "\ufe0e",
    "\U0001f468",
    "\U0001f469",
    "\U0001f3fd",
    "\u20e3",
    "1",
    "\u0915",
    "\u094d",
    "\u0937",
    "\u0645",
    "\u06cc",
    "\U000e0067",
    "\U0001f3f4",
    "\u200b",
    "\u00ad",
    "\u202e",
    "\x07",
    "é",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(ALPHABET), min_size=260, max_size=1200))
def test_req_sec_015_islands_give_the_same_result_as_the_whole_text(chars: list[str]) -> None:
    text = "".join(chars)
    assert boundary._remove_invisible(text) == boundary._remove_invisible_passes(text)


def test_req_sec_015_a_long_run_of_skin_tones_before_a_joiner_is_judged_whole() -> None:
    text = "x" * 300 + "\U0001f468" + "\U0001f3fd" * 60 + "\u200d\U0001f469" + "y" * 300
    assert boundary._remove_invisible(text) == boundary._remove_invisible_passes(text)
