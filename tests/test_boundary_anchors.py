"""The anchors that let instruction-like patterns skip ordinary text never change a verdict."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rypsok.core import boundary

WORDS = [
    "ignore", "all", "previous", "instructions", "you", "are", "now", "dan", "from", "on",
    "will", "act", "attention", "ai", "llm", ":", "!", "dear", "if", "an", "reading", "this",
    "new", "reveal", "your", "system", "prompt", "<|", "im_start", "|>", "[inst]", "<<sys>>",
    "<start_of_turn>", "###", "instruction", "assistant", "</", "results", ">", "end of",
    "search", "begin", "untrusted", "content", "ignoriere", "vorherigen", "anweisungen",
    "oublie", "consignes", "précédentes", "olvida", "instrucciones", "anteriores", "игнорируй",
    "предыдущие", "инструкции", "忽略", "之前", "的", "指令", "これまで", "の", "指示", "を", "無視",
    "이전", "지시", "를", "무시", "the", "above", "and", "then", "-", ".", ",",
]


def _unfiltered(text: str, patterns: tuple[object, ...]) -> bool:
    return any(p.search(text) is not None for p in patterns)  # type: ignore[attr-defined]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(WORDS), min_size=1, max_size=12), st.sampled_from([" ", "_", ""]))
def test_anchored_checks_agree_with_every_pattern(words: list[str], joiner: str) -> None:
    text = joiner.join(words)
    assert boundary._any_match(text, boundary._LATIN_CHECKS) == _unfiltered(
        text, boundary._LATIN_PATTERNS)
    assert boundary._any_match(text, boundary._OTHER_CHECKS) == _unfiltered(
        text, boundary._OTHER_PATTERNS)


def test_every_pattern_has_its_anchors() -> None:
    assert len(boundary._LATIN_ANCHORS) == len(boundary._LATIN_PATTERNS)
    assert len(boundary._OTHER_ANCHORS) == len(boundary._OTHER_PATTERNS)
