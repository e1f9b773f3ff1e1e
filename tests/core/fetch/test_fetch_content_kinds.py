"""Pages that are not ordinary HTML, read end to end through web_fetch (issue 16, item 4):
plain text and Markdown come back as they were sent, a page served as XHTML is parsed
with XML's empty elements, and a page whose content is one <pre> or a table keeps it
whole (REQ-FETCH-004, REQ-FETCH-008, REQ-PAGE-005)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.fetching import fetch, make, refused
from tests.support.site import Page, site

# Every construct a Markdown reader would act on, and text that looks like markup: none
# of it may be escaped, rendered or re-wrapped on the way through.
MARKDOWN = """\
---
title: Release notes
---

# Release notes

Setext heading
==============

## 2.1.0 (2026-11-30)

* Faster start-up: **30 %** less time, _measured_ on `cold` caches.
* Fixed [issue 12](https://example.org/issues/12 "the title") and <https://example.org/x>.
  A continuation line, indented two spaces.
    - a nested item, indented four
1. one
2. two

> A quote with a [reference link][ref] and an image ![logo](/logo.png).

```python
def load(path: str) -> dict[str, int]:
    if not path:
        return {}
    return {"a": 1}  # <b>not bold</b> &amp; not an entity
```

~~~
tilde fence with ``` inside
~~~

    indented code block line
        deeper line

| Option | Default | Meaning |
|:-------|--------:|---------|
| `-v`   | off     | verbose \\| escaped pipe |

<div align="center">raw <em>HTML</em> &lt;kept&gt; &copy;</div>
<!-- a comment stays -->
\\*not emphasis\\* and 2 < 3 > 1 & 4 and a_b_c and trailing hard break\\
Second line.

[ref]: https://example.org/ref
"""

# A text file whose layout is its meaning: leading spaces, runs of spaces inside lines,
# characters a Markdown writer would escape.
PLAIN = """\
Network Working Group                                          J. Example
Request for Comments: 9999                                   November 2026

                      A Format With Indentation

1.  Introduction

   The figure below is drawn with spaces:

        +--------+        +--------+
        | client | -----> | server |
        +--------+        +--------+

   * not a list, [not a link](x), <not a tag>, # not a heading
      five spaces, then    four inside, then the end.
"""


@pytest.mark.parametrize("media", ["text/markdown", "text/x-markdown"])
def test_req_fetch_008_req_fetch_004_markdown_comes_back_unchanged(
    tmp_path: Path, media: str
) -> None:
    with site(
        {"/notes.md": Page(body=MARKDOWN.encode(), content_type=f"{media}; charset=utf-8")}
    ) as s:
        answer = fetch(make(tmp_path), url=s.url("/notes.md"), max_chars=20000)
    assert answer["outcome"] == "ok" and answer["notices"] == []
    assert answer["content"] == MARKDOWN.rstrip("\n")


def test_req_fetch_008_req_fetch_004_plain_text_keeps_its_indentation(tmp_path: Path) -> None:
    with site({"/rfc.txt": Page(body=PLAIN.encode(), content_type="text/plain")}) as s:
        answer = fetch(make(tmp_path), url=s.url("/rfc.txt"))
    assert answer["content"] == PLAIN.rstrip("\n")


def test_req_fetch_004_text_only_loses_line_end_forms_and_trailing_blanks(
    tmp_path: Path,
) -> None:
    body = b"  first line   \r\nsecond line\t \rthird\n\n  fourth, indented  \n\n"
    with site({"/t": Page(body=body, content_type="text/plain; charset=utf-8")}) as s:
        answer = fetch(make(tmp_path), url=s.url("/t"))
    assert answer["content"] == "  first line\nsecond line\nthird\n\n  fourth, indented"


# Blank-line runs carry layout: PEP 8 puts two blank lines between functions, a text file
# sets its sections apart with several. (No tab here: the boundary turns every tab of all
# content into a space, on purpose.)
CODE = "def first():\n    return 1\n\n\ndef second():\n    return 2\n\n\n\n# end"


def test_req_fetch_004_req_fetch_008_markdown_keeps_its_blank_line_runs(tmp_path: Path) -> None:
    body = f"# Code\n\n```python\n{CODE}\n```\n\n\n\nAfter three blank lines.\n"
    with site({"/m": Page(body=body.encode(), content_type="text/markdown")}) as s:
        answer = fetch(make(tmp_path), url=s.url("/m"))
    assert answer["content"] == body.rstrip("\n")


def test_req_fetch_004_req_fetch_008_plain_text_keeps_its_blank_line_runs(
    tmp_path: Path,
) -> None:
    body = "\ufeffPART ONE\r\n\r\n\r\n  one, indented\r\n\r\n\r\n\r\nPART TWO\r\n"
    with site({"/t": Page(body=body.encode(), content_type="text/plain; charset=utf-8")}) as s:
        answer = fetch(make(tmp_path), url=s.url("/t"))
    assert answer["content"] == "PART ONE\n\n\n  one, indented\n\n\n\nPART TWO"


def test_req_fetch_003_req_fetch_005_req_fetch_004_text_read_in_parts_is_the_whole_text(
    tmp_path: Path,
) -> None:
    # max_chars still cuts a document sent as text, and its parts put back together are
    # the document, blank-line runs included.
    body = "\n".join(f"## Section {i}\n\n```python\n{CODE}\n```\n\n" for i in range(20))
    assert len(body) > 1500
    core = make(tmp_path)
    parts: list[str] = []
    with site({"/long.md": Page(body=body.encode(), content_type="text/markdown")}) as s:
        start = 0
        while True:
            answer = fetch(core, url=s.url("/long.md"), max_chars=500, start_char=start)
            assert len(answer["content"]) <= 500
            parts.append(answer["content"])
            if not answer["truncated"]:
                break
            start = answer["next_start_char"]
            # Issue 36: a part ends at a line's end at least, in its last 5 %.
            assert body[start - 1] == "\n" and len(parts[-1]) >= 475
    assert len(parts) > 2
    assert "".join(parts) == body.rstrip("\n")


# -- XHTML (REQ-FETCH-008, REQ-PAGE-005) ---------------------------------------------------

PARAGRAPH = (
    "The Internet Protocol carries datagrams from a source to a destination, "
    "fragmenting them where a network needs smaller packets."
)
# Each self-closing tag here is an empty element in XML; parsed as HTML, <title/> makes
# the rest of the page the title and <script .../> makes it script.
XHTML_PAGE = f"""<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN" "http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">
<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en">
<head><title>Internet Protocol</title><script type="text/javascript" src="/site.js"/>
<link rel="stylesheet" href="/site.css"/></head>
<body><a id="top"/><div class="clear"/>
<h1>Internet Protocol</h1>
<p>{PARAGRAPH}</p>
<p>Header fields: <![CDATA[version < 6 & IHL >= 5]]>, then the options.</p>
<p>{PARAGRAPH}<br/>Second line of the paragraph.</p>
</body></html>""".encode()


def test_req_fetch_008_req_page_005_a_page_served_as_xhtml_reads_right(tmp_path: Path) -> None:
    with site({"/ip": Page(body=XHTML_PAGE, content_type="application/xhtml+xml")}) as s:
        answer = fetch(make(tmp_path), url=s.url("/ip"))
    assert answer["title"] == "Internet Protocol"
    content = answer["content"]
    assert content.startswith("# Internet Protocol\n\n" + PARAGRAPH)
    assert "version < 6 & IHL >= 5, then the options." in content
    assert "Second line of the paragraph." in content


def test_req_page_005_xhtml_served_as_text_html_is_parsed_as_html_like_a_browser(
    tmp_path: Path,
) -> None:
    # The same bytes as text/html: a browser runs the HTML parser, so the unclosed
    # <script .../> takes the rest of the page and nothing readable is left.
    with site({"/ip": Page(body=XHTML_PAGE, content_type="text/html; charset=utf-8")}) as s:
        error = refused(make(tmp_path), url=s.url("/ip"))
    assert error.kind == "unsupported_content"
    assert error.detail == {"reason": "extraction_failed"}


# -- a page that is one <pre>, or a table (REQ-FETCH-004) -----------------------------------

LOG = "\n".join(
    f"2026-11-30T12:{i // 60:02d}:{i % 60:02d}Z  INFO   worker[{i % 7}]  batch {i:4d}  done"
    + ("  (retried)" if i % 9 == 0 else "")
    for i in range(120)
)


def test_req_fetch_004_a_page_that_is_one_pre_keeps_every_line(tmp_path: Path) -> None:
    page = f"<html><head><title>build.log</title></head><body><pre>{LOG}</pre></body></html>"
    with site({"/log": Page(body=page.encode())}) as s:
        answer = fetch(make(tmp_path), url=s.url("/log"), max_chars=20000)
    lines = answer["content"].split("\n")
    assert lines[0].startswith("```") and lines[-1] == lines[0]  # one fenced block
    assert "\n".join(lines[1:-1]) == LOG


def test_req_fetch_004_a_pre_keeps_its_blank_line_runs(tmp_path: Path) -> None:
    page = f"<html><body><h1>Two functions</h1><pre>{CODE}</pre></body></html>"
    with site({"/p": Page(body=page.encode())}) as s:
        answer = fetch(make(tmp_path), url=s.url("/p"))
    lines = answer["content"].split("\n")
    assert lines[0] == "# Two functions" and lines[2] == "```" and lines[-1] == "```"
    assert "\n".join(lines[3:-1]) == CODE


def test_req_fetch_004_a_plain_text_document_wrapped_in_pre_keeps_its_layout(
    tmp_path: Path,
) -> None:
    page = "<html><body><pre>" + PLAIN.replace("<", "&lt;") + "</pre></body></html>"
    with site({"/rfc": Page(body=page.encode())}) as s:
        answer = fetch(make(tmp_path), url=s.url("/rfc"))
    lines = answer["content"].split("\n")
    assert "\n".join(lines[1:-1]) == PLAIN.rstrip("\n")


def test_req_fetch_004_a_data_table_keeps_every_cell(tmp_path: Path) -> None:
    rows = [(str(z), f"Element {z}", f"{z * 1.008:.3f}") for z in range(1, 61)]
    body = "".join(f"<tr><td>{a}</td><td>{b}</td><td>{c}</td></tr>" for a, b, c in rows)
    page = (
        "<html><head><title>Weights</title></head><body>"
        "<div class='nav'><a href='/'>Home</a> <a href='/about'>About</a></div>"
        "<h1>Atomic weights</h1><table><thead><tr><th>Z</th><th>Name</th><th>Weight</th>"
        f"</tr></thead><tbody>{body}</tbody></table><div class='footer'>(c) Example</div>"
        "</body></html>"
    )
    with site({"/w": Page(body=page.encode())}) as s:
        answer = fetch(make(tmp_path), url=s.url("/w"), max_chars=20000)
    cells = [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in answer["content"].split("\n")
        if line.startswith("|")
    ]
    assert cells[0] == ["Z", "Name", "Weight"]
    assert [tuple(row) for row in cells[2:]] == rows
    assert "Home" not in answer["content"]
