"""The fetch path's share of memory (LIM-M1, LIM-M2): nothing of the parser loaded
before the first fetch, and a page's body and text let go of as soon as each is used."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from rypsok.core import boundary
from rypsok.core.fetch import pipeline
from tests.support.fetching import make as make_fetcher
from tests.support.paths import REPO
from tests.support.site import Page, site

# Loaded on the first fetch: a session that never fetches does not hold them.
ON_FIRST_USE = (
    "html5lib",
    "charset_normalizer",
    "rypsok.core.html.charset",
    "rypsok.core.html.legacy",
    "rypsok.core.html.tree",
    "rypsok.core.fetch.extraction.extract",
)


def loaded_after(code: str) -> list[str]:
    probe = f"import sys\n{code}\nprint(' '.join(m for m in {ON_FIRST_USE!r} if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True
    )
    return out.stdout.split()


def test_lim_m1_the_fetch_pipeline_loads_the_parser_and_charset_detection_on_first_use() -> None:
    assert loaded_after("import rypsok.core.fetch.pipeline") == []
    # Reading one of them (as the first page does) loads them all.
    assert loaded_after("import rypsok.core.fetch.pipeline as p\np.parse_html") == list(
        ON_FIRST_USE
    )


def test_lim_m2_the_body_is_let_go_of_once_the_page_is_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """By extraction time nothing the call holds reaches the body any more: the box it was
    handed over in is empty and the text source has read it to its end."""
    seen: dict[str, Any] = {}
    real_read, real_parse = pipeline.FetchService._read, pipeline.parse_html

    async def watched_read(self: Any, held: list[bytes], *args: Any) -> Any:
        seen["held"] = held
        return await real_read(self, held, *args)

    def watched_parse(source: Any, **options: Any) -> Any:
        seen["source"] = source
        return real_parse(source, **options)

    def watched_extract(doc: Any, url: str) -> Any:
        seen["held at extraction"] = list(seen["held"])
        seen["source body at extraction"] = seen["source"]._body
        seen["thread"] = threading.current_thread().name
        return extract(doc, url)

    extract = pipeline.extract_blocks
    monkeypatch.setattr(pipeline.FetchService, "_read", watched_read)
    monkeypatch.setattr(pipeline, "parse_html", watched_parse)
    monkeypatch.setattr(pipeline, "extract_blocks", watched_extract)
    body = ("<html><body><article><p>" + "Word in a sentence. " * 400 + "</p></article>").encode()
    with site({"/page": Page(body=body)}) as s:
        core = make_fetcher(tmp_path)

        async def go() -> Any:
            return await core.fetch({"url": s.url("/page")})

        answer = anyio.run(go)
    assert answer.content.startswith("Word in a sentence.")
    assert seen["held at extraction"] == []
    assert seen["source body at extraction"] is None


lines = st.lists(
    st.text(
        st.sampled_from(["a", "é", "😀", " ", "\t", "\r", "\n", "\u200b", "\u202e", "\x07"]),
        max_size=8,
    ),
    max_size=30,
)


@settings(max_examples=300, deadline=None)
@given(lines, st.integers(0, 12))
@example(["\u200b", "a", "\n\u200b"], 0)  # end lines that clean to nothing, a piece a block
@example(["a\n\u200b", "", "b"], 1)
def test_req_sec_015_the_markdown_cleaned_in_pieces_is_the_whole_cleaned(
    blocks: list[str], piece: int
) -> None:
    """The fetch path cleans a large page's Markdown a few blocks at a time, once the
    tree is let go of (so the page's text is not held three times at once): the answer
    and the count of removed characters are those of cleaning the joined Markdown."""
    whole = boundary.clean_content("\n\n".join(blocks))
    kept, pipeline.CLEAN_PIECE = pipeline.CLEAN_PIECE, piece
    try:
        text, removed = pipeline._clean(list(blocks))
        assert (str(text), removed) == whole
        assert len(text) == len(whole[0])
    finally:
        pipeline.CLEAN_PIECE = kept
