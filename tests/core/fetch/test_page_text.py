"""A page's Markdown kept in pieces reads exactly as the one string it stands for."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rypsok.core.fetch.content import PageText

pieces = st.lists(
    st.text(st.sampled_from(["a", "é", "😀", " ", "\n", "\t"]), max_size=6), max_size=8
)


@settings(max_examples=400, deadline=None)
@given(pieces, st.integers(0, 60), st.integers(0, 60))
def test_page_text_is_its_join_stripped(parts: list[str], start: int, length: int) -> None:
    whole = "\n\n".join(parts).strip("\n")
    text = PageText.joined(parts, "\n\n", "\n")
    assert str(text) == whole
    assert len(text) == len(whole)
    assert text.blank() == (not whole.strip())
    assert text.window(start, start + length) == whole[start : start + length]


@given(st.lists(st.text(max_size=5), max_size=6), st.integers(0, 40), st.integers(0, 40))
def test_page_text_of_given_parts_reads_as_their_concatenation(
    parts: list[str], start: int, end: int
) -> None:
    text = PageText(parts)
    whole = "".join(parts)
    assert (str(text), len(text)) == (whole, len(whole))
    assert text.window(start, end) == whole[start:end]
