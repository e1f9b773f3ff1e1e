"""REQ-PAGE-001, the content half of web_fetch's order: media type check -> charset
decoding -> parsing under the node and depth bounds -> main-content extraction ->
cleaning -> truncation to max_chars -> the response.

The first test records each stage where the pipeline looks it up (a module attribute at
call time), runs a real web_fetch against a local site, and checks both the order and that
each stage was handed what the stage before it produced. The second checks what that order
means for a caller: cleaning sees the extracted text, so what extraction drops is never
counted as removed, and truncation comes after cleaning, so removed characters do not
count against max_chars. The last two take the first arrows that tests/core/fetch/test_fetch_hostile.py
leaves out: validation before the privacy check, the egress policy before robots.txt.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from rypsok.core import boundary
from rypsok.core.fetch import pipeline
from rypsok.core.fetch.extraction.extract import extract_blocks, extract_text
from rypsok.core.fetch.pipeline import FetchService
from rypsok.core.html import charset
from rypsok.core.html.tree import parse_html
from tests.support.fetching import make, refused
from tests.support.site import Page, site

ZWSP = "\u200b"  # invisible: the cleaner removes it, extraction keeps it
# Latin-1 bytes (e9 = é) that only the declared charset decodes right; the invisible
# characters come as references, which only the parser turns into characters.
HTML = (
    "<!doctype html><html><head><title>Caf\xe9 notes</title></head><body>"
    "<nav><a href='/'>Home</a> <a href='/menu'>Me&#x200B;nu</a></nav>"
    "<main><article><h1>Caf\xe9 notes</h1>"
    "<p>The caf\xe9 opens at seven. Co&#x200B;ffee is served until noon, and the terrace stays "
    "open while the weather allows it, which in this town is most of the year.</p>"
    + "<p>Tables by the window are kept for those who come to read; the others are for those "
    "who come to talk, and the staff knows which is which.</p>"
    * 5
    + "</article></main></body></html>"
).encode("latin-1")
TEXT = (
    f"Plain notes.\r\nLine two has a hid{ZWSP}den mark.\r\n\r\n\r\n"
    + "A line of plain text, long enough to need a cut.\r\n" * 15
).encode()
MAX_CHARS = 500  # the smallest a caller may ask for


Calls = list[list[Any]]  # [name, positional arguments, result], in the order of entry


def record(calls: Calls, name: str, real: Callable[..., Any]) -> Callable[..., Any]:
    """*real*, noting its name and arguments when it starts (so a stage called from inside
    another is listed after it) and its result when it returns."""

    def recorder(*args: Any, **kwargs: Any) -> Any:
        entry = [name, args, None]
        calls.append(entry)
        entry[2] = real(*args, **kwargs)
        return entry[2]

    return recorder


def record_stages(monkeypatch: pytest.MonkeyPatch) -> Calls:
    calls: Calls = []
    # Each is patched where pipeline.py finds it when it runs: its own globals for the
    # names it imported, the module attribute for charset.decode and boundary.clean_content.
    monkeypatch.setattr(pipeline, "_media_kind", record(calls, "media", pipeline._media_kind))
    monkeypatch.setattr(charset, "decode", record(calls, "decode", charset.decode))
    monkeypatch.setattr(pipeline, "parse_html", record(calls, "parse", parse_html))
    monkeypatch.setattr(pipeline, "extract_blocks", record(calls, "extract", extract_blocks))
    monkeypatch.setattr(pipeline, "extract_text", record(calls, "extract_text", extract_text))
    monkeypatch.setattr(boundary, "clean_content", record(calls, "clean", boundary.clean_content))
    # Truncation has no function of its own: it is the slice _respond takes of the page.
    monkeypatch.setattr(FetchService, "_respond", record(calls, "truncate", FetchService._respond))
    return calls


def fetch_all(core: Any, *requests: dict[str, Any]) -> list[dict[str, Any]]:
    async def go() -> list[dict[str, Any]]:
        return [(await core.fetch(r)).to_json() for r in requests]

    return anyio.run(go)


def test_req_page_001_content_stages_run_in_order_each_on_the_last_ones_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pages = {
        "/notes": Page(body=HTML, content_type="text/html; charset=iso-8859-1"),
        "/notes.txt": Page(body=TEXT, content_type="text/plain; charset=utf-8"),
    }
    with site(pages) as s:
        core = make(tmp_path, '[egress]\nallow = ["127.0.0.1"]\n[fetch]\nrobots_txt = false\n')
        calls = record_stages(monkeypatch)
        (html_answer,) = fetch_all(core, {"url": s.url("/notes"), "max_chars": MAX_CHARS})
        html_calls = list(calls)
        calls.clear()
        (text_answer,) = fetch_all(core, {"url": s.url("/notes.txt"), "max_chars": MAX_CHARS})
        text_calls = list(calls)

    assert [name for name, _, _ in html_calls] == [
        "media",
        "decode",
        "parse",
        "extract",
        "clean",
        "truncate",
    ]
    stage = {name: (args, result) for name, args, result in html_calls}
    (response,), kind = stage["media"]
    assert kind == "html"
    # decoding gets the bytes as read, and its text (not the bytes) is what is parsed
    (body, declared), decoded = stage["decode"]
    assert body == response.body == HTML and declared == "iso-8859-1"
    assert "Caf\xe9 notes" in decoded
    (parsed_input,), tree = stage["parse"]
    assert parsed_input is decoded
    (extracted_from, base_url), extracted = stage["extract"]
    assert extracted_from is tree and base_url == s.url("/notes")
    # the Markdown's blocks, joined once the tree is let go of, are what is cleaned
    markdown = "\n\n".join(extracted.blocks)
    assert extracted.title == "Caf\xe9 notes" and ZWSP in markdown
    (cleaned_input,), (cleaned, removed) = stage["clean"]
    assert cleaned_input == markdown
    assert removed == 1 and ZWSP not in cleaned  # the article's one; the menu's was dropped
    (_, request, _, page), truncated = stage["truncate"]  # self, request, final, page
    assert request.max_chars == MAX_CHARS
    assert str(page.content) == cleaned and page.title == extracted.title
    end = truncated.next_start_char  # a block's edge or a space near MAX_CHARS (issue 36)
    assert end is not None and MAX_CHARS * 0.95 <= end <= MAX_CHARS
    assert truncated.content == cleaned[:end] and truncated.truncated is True
    assert html_answer["content"] == truncated.content

    # text/plain: no parse; the decoded text itself is extracted, then cleaned, then cut
    assert [name for name, _, _ in text_calls] == [
        "media",
        "decode",
        "extract_text",
        "clean",
        "truncate",
    ]
    stage = {name: (args, result) for name, args, result in text_calls}
    (_, decoded) = stage["decode"]
    assert stage["extract_text"][0] == (decoded,)
    assert stage["clean"][0] == (stage["extract_text"][1].markdown,)
    cleaned, removed = stage["clean"][1]
    assert removed == 1 and str(stage["truncate"][0][3].content) == cleaned
    assert text_answer["content"] == cleaned[: text_answer["next_start_char"]]
    assert text_answer["content"].startswith("Plain notes.\nLine two has a hidden mark.\n\n\nA")


def test_req_page_001_cleaning_follows_extraction_and_truncation_follows_cleaning(
    tmp_path: Path,
) -> None:
    """Invisible characters in the menu (dropped by extraction) and in every word of the
    article: the count covers the article's only, and a max_chars window is filled with
    visible characters, the same ones a whole read returns first."""
    words = " ".join(ZWSP.join(word) for word in ("visible", "words", "fill", "the", "window"))
    paragraph = (words + " ") * 10
    article_marks = 2 * paragraph.count(ZWSP)  # two paragraphs; the menu has six more
    html = (
        "<!doctype html><html><head><title>Marks</title></head><body>"
        f"<nav><a href='/'>Ho{ZWSP}me</a> <a href='/a'>Ab{ZWSP * 5}out</a></nav>"
        f"<main><article><h1>Marks</h1><p>{paragraph}</p><p>{paragraph}</p></article></main>"
        "</body></html>"
    ).encode()
    with site({"/marks": Page(body=html)}) as s:
        core = make(tmp_path, '[egress]\nallow = ["127.0.0.1"]\n[fetch]\nrobots_txt = false\n')
        whole, part = fetch_all(
            core, {"url": s.url("/marks")}, {"url": s.url("/marks"), "max_chars": MAX_CHARS}
        )
    assert {"code": "characters_removed", "count": article_marks} in whole["notices"]
    assert whole["truncated"] is False
    assert ZWSP not in whole["content"] and "Home" not in whole["content"]
    assert whole["content"].startswith("# Marks\n\nvisible words fill the window visible")
    # the window is cut from the cleaned text: full length, the same characters
    end = part["next_start_char"]  # a block's edge or a space near MAX_CHARS (issue 36)
    assert part["content"] == whole["content"][:end]
    assert MAX_CHARS * 0.95 <= len(part["content"]) <= MAX_CHARS
    assert part["truncated"] is True and whole["content"][end - 1].isspace()


# -- the first stages: validation, privacy, the egress policy, robots.txt ---------------------


def test_req_page_001_parameters_are_validated_before_the_url_is_checked(tmp_path: Path) -> None:
    """A URL the privacy check refuses, with a max_chars out of range: the parameter is what
    the caller hears about, since validation comes first."""
    core = make(tmp_path, "")
    url = "https://alice:pa55word@10.0.0.1/"
    assert refused(core, url=url).detail["reason"] == "secret_in_url"
    error = refused(core, url=url, max_chars=MAX_CHARS - 1)
    assert error.kind == "invalid_request" and error.detail["parameter"] == "max_chars"


def test_req_page_001_the_egress_policy_comes_before_robots_txt(tmp_path: Path) -> None:
    """A loopback site without an allow rule: the policy refuses the host before robots.txt
    is asked for (asking first would end in a connection refused at connect time, which the
    caller hears as a network failure, not as the policy's answer)."""
    with site({"/p": Page(body=HTML)}) as s:
        core = make(tmp_path, "[fetch]\nrobots_txt = true\n")
        error = refused(core, url=s.url("/p"))
    assert error.kind == "denied" and error.detail == {"reason": "egress"}
    assert s.requests == []
