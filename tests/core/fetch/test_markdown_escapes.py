"""The Markdown writer escapes the page's text only where CommonMark would misread it (issue 20).

Each rule is shown both ways: text a CommonMark reader takes literally gets no backslash,
and text it would take for syntax gets one. The reader is not run here (markdown-it-py
is a bench dependency, bench/markdown_escapes.py): its rules are written out below, in
`misreads`, independently of the writer, and the properties hold every output to them:
read back, the output is the text it was written from, and nothing in it is syntax.
"""

from __future__ import annotations

import html
import re
import string
import unicodedata
from html.entities import html5

from hypothesis import example, given, settings
from hypothesis import strategies as st

from rypsok.core.fetch.extraction.markdown import write_markdown
from rypsok.core.html.tree import parse_html

BASE = "https://example.org/"


def md(body: str) -> str:
    """The writer's Markdown for an HTML body, nothing removed or cut."""
    doc = parse_html(f"<!doctype html><html><body>{body}</body></html>")
    root = next(e for e in doc.root.iter_elements() if e.name == "body")
    return write_markdown(root, set(), set(), BASE)


def p(*lines: str) -> str:
    """One paragraph of text, its lines separated by <br>: the Markdown for it."""
    return md("<p>" + "<br>".join(html.escape(line, quote=False) for line in lines) + "</p>")


# --------------------------------------------------------------------------- CommonMark, written out

_ASCII_PUNCTUATION = frozenset(string.punctuation)


def _roles(text: str) -> list[str]:
    """Per character: "escape" (a backslash before ASCII punctuation), "escaped" (the
    character after it, literal), "raw" (anything else, read as it is)."""
    roles: list[str] = []
    i = 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text) and text[i + 1] in _ASCII_PUNCTUATION:
            roles += ["escape", "escaped"]
            i += 2
        else:
            roles.append("raw")
            i += 1
    return roles


def read_back(markdown: str) -> str:
    """A paragraph of plain text as a CommonMark reader shows it: escapes removed."""
    return "".join(c for c, r in zip(markdown, _roles(markdown), strict=True) if r != "escape")


def _space(c: str) -> bool:  # the start and the end of the text count as whitespace
    return not c or c in "\t\n\f\r" or unicodedata.category(c) == "Zs"


def _punctuation(c: str) -> bool:
    return bool(c) and (c in _ASCII_PUNCTUATION or unicodedata.category(c)[0] in "PS")


def _raw_runs(text: str, roles: list[str], pattern: str) -> list[tuple[int, int]]:
    """The spans of ``pattern``'s runs made of unescaped characters only: an escaped
    one splits a run."""
    raw = "".join(c if r == "raw" else "\0" for c, r in zip(text, roles, strict=True))
    return [m.span() for m in re.finditer(pattern, raw)]


def _delimiter_runs(text: str, roles: list[str]) -> list[str]:
    """The unescaped * and _ runs that could open or close emphasis (CommonMark 6.2)."""
    return [found for i, j in _raw_runs(text, roles, r"\*+|_+") for found in _judge(text, i, j)]


def _judge(text: str, i: int, j: int) -> list[str]:
    before = text[i - 1] if i else ""
    after = text[j] if j < len(text) else ""
    left = not _space(after) and (not _punctuation(after) or _space(before) or _punctuation(before))
    right = not _space(before) and (
        not _punctuation(before) or _space(after) or _punctuation(after)
    )
    if text[i] == "*":
        opens, closes = left, right
    else:
        opens = left and (not right or _punctuation(before))
        closes = right and (not left or _punctuation(after))
    return [f"emphasis delimiter {text[i:j]!r} at {i}"] if opens or closes else []


_EMAIL = re.compile(
    r"[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*>"
)
_ENTITY = re.compile(r"#[0-9]{1,7};|#[xX][0-9A-Fa-f]{1,6};|([A-Za-z][A-Za-z0-9]*;)")


def _entity(rest: str) -> bool:
    """Whether text after "&" is a character reference or names an HTML5 entity."""
    m = _ENTITY.match(rest)
    return m is not None and (not m.group(1) or m.group(1) in html5)


def _inline(text: str) -> list[str]:
    """What a reader would take for inline syntax in ``text``."""
    roles = _roles(text)
    found = _delimiter_runs(text, roles)
    runs = [j - i for i, j in _raw_runs(text, roles, r"`+")]
    found += [f"code span of {n} backticks" for n in set(runs) if runs.count(n) > 1]
    opened = False
    for k, c in enumerate(text):
        if roles[k] != "raw":
            continue
        rest = text[k + 1 :]
        if c == "[":
            opened = True
        elif c == "]" and opened and rest.startswith("("):
            found.append(f"link at {k}")
        elif c == "<" and (re.match(r"[A-Za-z]|/[A-Za-z]|!|\?", rest) or _EMAIL.match(rest)):
            found.append(f"inline HTML or autolink at {k}")
        elif c == "&" and _entity(rest):
            found.append(f"entity at {k}")
        elif c == "\\" and rest.startswith("\n"):
            found.append(f"hard line break at {k}")
    return found


# A block a line opens: anywhere, or only where a paragraph starts (its first line).
_ANY_LINE = re.compile(
    r"#{1,6}(?:[ \t]|$)"  # ATX heading
    r"|>"  # block quote
    r"|[-+*][ \t]+\S|1[.)][ \t]+\S"  # a list item that may interrupt a paragraph
    r"|([-*_])(?:[ \t]*\1){2,}[ \t]*$"  # thematic break
    r"|`{3,}[^`]*$|~{3,}"  # code fence
    r"|<(?:[A-Za-z]|/[A-Za-z]|!|\?)"  # HTML block
    r"|=+[ \t]*$|-+[ \t]*$"  # setext underline
)
_FIRST_LINE = re.compile(r"[-+*](?:[ \t]|$)|[0-9]{1,9}[.)](?:[ \t]|$)| {4}")
# A link reference definition's label: it may run over lines and hold escaped brackets.
_DEFINITION = re.compile(r"\[((?:\\.|[^\[\]\\])*)\]:")
_DELIMITER_ROW = re.compile(r"\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")


def misreads(paragraph: str) -> list[str]:
    """Everything a CommonMark reader (with GFM tables) would take for syntax in a
    paragraph written from plain text."""
    found = _inline(paragraph)
    definition = _DEFINITION.match(paragraph)
    if definition and definition.group(1).strip():
        found.append("link reference definition")
    for n, line in enumerate(paragraph.split("\n")):
        if _ANY_LINE.match(line) or (n == 0 and _FIRST_LINE.match(line)):
            found.append(f"block start on line {n}: {line!r}")
        if "|" in line and _DELIMITER_ROW.match(line):
            found.append(f"table delimiter row on line {n}: {line!r}")
    return found


def test_issue_20_the_rules_written_out_catch_what_they_should() -> None:
    # The reader of this module, checked on its own before it judges the writer.
    for syntax in [
        "_x_", "a*b*c", "x**", "x*", "`a` b", "[a](b)", "<div>", "<a@b.co>", "&amp;", "a\\\nb",
        "# h", "> q", "- i", "1. i", "***", "~~~", "```", "<p>", "x\n===", "x\n---", "[a]: /u",
        "a | b\n--- | ---", "[a\n b]: /u", "[a\\]b]: /u", "\\``x`",
    ]:  # fmt: skip
        assert misreads(syntax), syntax
    for literal in [
        "a * b", "x_y_z", "[1]", "` alone", "a < b", "AT&T", "C# and F#", "\\_x\\_", "\\# h",
        "1\\. i", "2020 was", "x\n[a]: /u", "[a][b]",
    ]:  # fmt: skip
        assert not misreads(literal), literal
    assert read_back("a\\*b\\\\c\\d") == "a*b\\c\\d"


# --------------------------------------------------------------------------- no escape where none is needed


def test_issue_20_text_that_needs_no_escape_gets_none() -> None:
    for text in [
        "a [1] b",
        "x_y_z",
        "2 * 3 = 6",
        "C# and F# mid-line",
        "arr[0] is the first element [1]",
        "snake_case_name and module_name",
        "see [a][b], [c][] and [d]",
        "a < b, x <3 y, <= 5, -> <- and AT&T; a & b",
        "Hello! [1] Wow!",
        "C:\\Users\\me and a\\b",
        "1.5 litres, #hashtag, 5 + 3 - 2 > 1",
        '{"outcome": "ok", "notices": []}',
    ]:
        assert p(text) == text


_NO_SYNTAX = "abcXYZ019 ,.;:?'\"[]{}#%$=+/-|^~@é©"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=_NO_SYNTAX, max_size=40).map(lambda s: "w " + s))
def test_issue_20_a_line_of_text_without_inline_syntax_is_written_as_it_is(text: str) -> None:
    # Starting with a word, nothing in it starts a block; "(" is left out, so no "](".
    assert p(text) == " ".join(text.split())


# --------------------------------------------------------------------------- brackets and links


def test_issue_20_brackets_in_prose_are_not_escaped() -> None:
    assert p("arr[0] is the first element [1]") == "arr[0] is the first element [1]"
    assert p("[note] at the start") == "[note] at the start"


def test_issue_20_a_bracket_pair_followed_by_a_paren_is_escaped() -> None:
    assert p("[click](https://evil.example)") == "[click\\](https://evil.example)"
    assert p("see ![x](y.png)") == "see ![x\\](y.png)"
    assert p("[a [b](c)") == "[a [b\\](c)"
    # Not followed at once by "(": no link.
    assert p("[click] (https://evil.example)") == "[click] (https://evil.example)"


def test_issue_20_a_reference_form_is_text_while_no_definition_can_exist() -> None:
    # [a][b], [a][] and [a] only link to a definition, and none can be written (below).
    assert p("[a][b], [c][] and [d]") == "[a][b], [c][] and [d]"


def test_issue_20_a_paragraph_that_would_define_a_reference_is_escaped() -> None:
    assert p("[foo]: https://evil.example") == "\\[foo]: https://evil.example"
    # The label may run over lines.
    assert p("[foo", "bar]: https://evil.example") == "\\[foo\nbar]: https://evil.example"
    # A definition cannot interrupt a paragraph: on a later line it is text.
    assert p("text", "[foo]: https://x.example") == "text\n[foo]: https://x.example"


def test_issue_20_brackets_in_link_text_are_escaped() -> None:
    assert md('<p><a href="/c">see [1]</a></p>') == "[see \\[1\\]](https://example.org/c)"
    assert md('<p><a href="/c">a ] b</a></p>') == "[a \\] b](https://example.org/c)"
    # A card: the link goes around the heading, whose brackets are escaped all the same.
    assert md('<a href="/c"><h3>Title [beta]</h3><p>About it.</p></a><p>More.</p>') == (
        "### [Title \\[beta\\]](https://example.org/c)\n\nAbout it.\n\nMore."
    )
    # A link without a target kept is text: its brackets are prose.
    assert md('<p><a href="javascript:x()">see [1]</a> here</p>') == "see [1] here"


def test_issue_20_an_exclamation_mark_before_a_link_is_escaped() -> None:
    assert md('<p>Wow!<a href="/x">link</a></p>') == "Wow\\![link](https://example.org/x)"
    assert md('<p>Wow! <a href="/x">link</a></p>') == "Wow! [link](https://example.org/x)"
    assert p("Wow![1]") == "Wow![1]"


# --------------------------------------------------------------------------- emphasis


def test_issue_20_an_asterisk_between_spaces_is_not_escaped() -> None:
    assert p("2 * 3 = 6") == "2 * 3 = 6"
    assert p("a ** b") == "a ** b"


def test_issue_20_an_asterisk_that_could_open_or_close_is_escaped() -> None:
    assert p("*stars*") == "\\*stars\\*"
    assert p("a*b*c") == "a\\*b\\*c"
    assert p("5* rating") == "5\\* rating"
    assert p("**bold**") == "\\*\\*bold\\*\\*"


def test_issue_20_intraword_underscores_are_not_escaped() -> None:
    assert p("snake_case_name") == "snake_case_name"
    assert p("a _ b") == "a _ b"


def test_issue_20_an_underscore_that_could_open_or_close_is_escaped() -> None:
    assert p("_x_") == "\\_x\\_"
    assert p("__init__") == "\\_\\_init\\_\\_"
    assert p("x_, _y") == "x\\_, \\_y"
    assert p("(_x_)") == "(\\_x\\_)"
    # Punctuation on both sides: both flanking, and "_" after punctuation may open.
    assert p("a._.b") == "a.\\_.b"


def test_issue_20_a_delimiter_beside_the_writers_emphasis_is_escaped() -> None:
    # Bare, the page's "*" would join the writer's run and change what pairs.
    assert md("<p>x <em>*y</em> z</p>") == "x *\\*y* z"
    assert md("<p>x <strong>y</strong>* z</p>") == "x **y**\\* z"
    assert md("<p>x <em>y</em> * z</p>") == "x *y* * z"


def test_issue_20_symbols_count_as_punctuation_for_underscores() -> None:
    # CommonMark 0.31 reads "©" as punctuation, so "_" after it may open emphasis.
    assert p("©_x_") == "©\\_x\\_"
    assert p("é_x_é") == "é_x_é"


# --------------------------------------------------------------------------- code


def test_issue_20_backticks_in_text_are_escaped() -> None:
    assert p("don`t") == "don\\`t"
    assert p("``` fence") == "\\`\\`\\` fence"


def test_issue_20_text_inside_code_is_never_escaped() -> None:
    code = "a*b [c](d) \\ _e_ <f> &amp; # g"
    escaped = html.escape(code, quote=False)
    assert md(f"<p>x <code>{escaped}</code> y</p>") == f"x `{code}` y"
    assert md(f"<pre>{escaped}\n1. h</pre>") == f"```\n{code}\n1. h\n```"
    assert md("<p><code>`tick`</code></p>") == "`` `tick` ``"


# --------------------------------------------------------------------------- backslashes, HTML, entities


def test_issue_20_a_backslash_is_escaped_only_where_it_would_escape_or_break() -> None:
    assert p("C:\\Users\\me") == "C:\\Users\\me"
    assert p("a\\*b") == "a\\\\\\*b"
    assert p("a\\[1]") == "a\\\\[1]"
    # At the end of a line it would be a hard break; at the end of the text a link's
    # "](" may follow it.
    assert p("foo\\", "bar\\") == "foo\\\\\nbar\\\\"
    assert md('<p><a href="/x">dir\\</a></p>') == "[dir\\\\](https://example.org/x)"


def test_issue_20_angle_brackets_that_open_html_or_an_autolink_are_escaped() -> None:
    for text, out in [
        ("<div>", "\\<div>"),
        ("</p>", "\\</p>"),
        ("<!-- c -->", "\\<!-- c -->"),
        ("<?php", "\\<?php"),
        ("<https://evil.example>", "\\<https://evil.example>"),
        ("<1@evil.example>", "\\<1@evil.example>"),
        ("watch <The Palace: Tale of Jang Noksu>", "watch \\<The Palace: Tale of Jang Noksu>"),
    ]:
        assert p(text) == out
    for text in ["a < b", "x <3 y", "<= 5", "<- back", "<<"]:
        assert p(text) == text


def test_issue_20_an_ampersand_that_forms_a_reference_is_escaped() -> None:
    assert p("&amp; is written literally") == "\\&amp; is written literally"
    assert p("&#38; &#x26; &copy;") == "\\&#38; \\&#x26; \\&copy;"
    # Not a reference: no ";", a name HTML5 does not have, or no digits.
    assert (
        p("AT&T, AT&T;, a & b, &foo bar;, &foo;, &#;")
        == "AT&T, AT&T;, a & b, &foo bar;, &foo;, &#;"
    )


# --------------------------------------------------------------------------- the start of a line


def test_issue_20_what_opens_a_block_at_the_start_of_a_line_is_escaped() -> None:
    for line, out in [
        ("# x", "\\# x"),
        ("###### x", "\\###### x"),
        ("#", "\\#"),
        ("> q", "\\> q"),
        (">q", "\\>q"),
        ("- x", "\\- x"),
        ("-", "\\-"),
        ("+ x", "\\+ x"),
        ("* x", "\\* x"),
        ("1. x", "1\\. x"),
        ("1) x", "1\\) x"),
        ("2020. It was", "2020\\. It was"),
        ("***", "\\*\\*\\*"),
        ("* * *", "\\* \\* \\*"),
        ("___", "\\_\\_\\_"),
        ("---", "\\---"),
        ("- - -", "\\- - -"),
        ("~~~", "\\~~~"),
        ("```", "\\`\\`\\`"),
        ("<div>", "\\<div>"),
        ("|---|---|", "|\\---|---|"),
        (":-- | --:", ":\\-- | --:"),
    ]:
        assert p(line) == out, line
        assert p("text", line) == "text\n" + out, line


def test_issue_20_a_setext_underline_is_escaped() -> None:
    assert p("Title", "=") == "Title\n\\="
    assert p("Title", "===") == "Title\n\\==="
    assert p("Title", "--") == "Title\n\\--"


def test_issue_20_what_opens_no_block_is_not_escaped_at_the_start_of_a_line() -> None:
    for line in [
        "#hashtag",
        "####### seven",
        "-x",
        "+1",
        "1.5 litres",
        "1234567890. ten digits",
        "~~ two",
        "= x",
        "| a | b |",
        "C# and F#",
        "a - b > c",
        "** x",
    ]:
        assert p(line) == line, line
        assert p("text", line) == "text\n" + line, line


def test_issue_20_a_heading_is_inline_and_keeps_its_closing_hashes() -> None:
    # A heading's text is not at the start of a line: "1." and "-" are text there.
    assert md("<h2>1. Intro</h2><p>Text.</p>") == "## 1. Intro\n\nText."
    assert md("<h2>- dash</h2><p>Text.</p>") == "## - dash\n\nText."
    # A closing sequence ("space #" at the end) would be dropped by a reader.
    assert md("<h2>Learn C #</h2><p>Text.</p>") == "## Learn C \\#\n\nText."
    assert md("<h2>#</h2><p>Text.</p>") == "## \\#\n\nText."
    assert md("<h2>C#</h2><p>Text.</p>") == "## C#\n\nText."


def test_issue_20_table_cells_are_inline_and_their_pipes_stay_escaped() -> None:
    out = md(
        "<table><tr><th>n</th><th>note</th></tr>"
        "<tr><td>1. one</td><td>-</td></tr><tr><td>a|b</td><td>[x](y)</td></tr></table>"
    )
    assert out == "| n | note |\n| --- | --- |\n| 1. one | - |\n| a\\|b | [x\\](y) |"


def test_issue_31_a_table_cell_wrapped_in_p_gets_no_line_start_escapes() -> None:
    # A cell's text is inline, its own or a <p>'s (or a <div>'s) inside it.
    out = md(
        "<table><tr><th><p>n</p></th><th><p>note</p></th></tr>"
        "<tr><td><p>1. one</p></td><td><p>- x</p></td></tr>"
        "<tr><td><p># y</p></td><td><div><p>&gt; q</p></div></td></tr>"
        "<tr><td><p>[a]: b</p></td><td><p>***</p></td></tr>"
        "<tr><td><p>|---|</p></td><td><p>===</p></td></tr></table>"
    )
    assert out == (
        "| n | note |\n| --- | --- |\n| 1. one | - x |\n| # y | > q |\n"
        "| [a]: b | *** |\n| \\|---\\| | === |"
    )


def test_issue_31_inline_syntax_in_a_cell_wrapped_in_p_stays_escaped() -> None:
    out = md(
        "<table><tr><th>a</th><th>b</th></tr>"
        "<tr><td><p>*x* a|b</p></td><td><p>[x](y) &lt;div&gt; `c`</p></td></tr></table>"
    )
    assert out.split("\n")[2] == "| \\*x\\* a\\|b | [x\\](y) \\<div> \\`c\\` |"


def test_issue_31_a_heading_wrapped_around_p_gets_no_line_start_escapes() -> None:
    assert md("<h2><p>1. Intro</p></h2><p>Text.</p>") == "## 1. Intro\n\nText."
    assert md("<h3><div>- dash</div></h3><p>Text.</p>") == "### - dash\n\nText."


def test_issue_31_where_a_cells_text_starts_a_line_it_keeps_its_escapes() -> None:
    # A row with spans is one line "a | b": only its first cell starts it.
    assert (
        md(
            "<table><tr><td colspan='2'><p>1. one</p></td></tr>"
            "<tr><td><p>2. two</p></td><td><p>3. three</p></td></tr></table>"
        )
        == "1\\. one\n\n2\\. two | 3. three"
    )
    # A layout grid: each cell's paragraphs are blocks of the page.
    assert md("<table><tr><td><p>1. one</p><p>- two</p></td><td>x</td></tr></table>") == (
        "1\\. one\n\n\\- two\n\nx"
    )
    # In a list item or a quote, a cell's paragraph is still a line's start.
    assert md("<ul><li><p>1. one</p></li></ul><blockquote><p># q</p></blockquote>") == (
        "- 1\\. one\n\n> \\# q"
    )


def test_issue_31_the_line_start_mark_in_the_page_text_does_not_leak() -> None:
    # The writer marks a line-start escape with U+FDD4; the page's own is taken out,
    # in text, in code and in a code block.
    assert p("\ufdd41. x\ufdd4") == "1\\. x"
    assert md("<p><code>a\ufdd4b</code></p><pre>c\ufdd4d</pre>") == "`ab`\n\n```\ncd\n```"


def test_issue_20_the_writers_marks_in_the_page_text_do_not_leak() -> None:
    # The writer marks its own syntax with noncharacters; the page's are taken out.
    text = "a\ufdd0*b\ufdd1[c\ufdd2d\ufdd3e"
    assert p(text) == "a\\*b[cde"
    assert md(f'<p><a href="/x">{text}</a> <code>{text}</code></p>') == (
        "[a\\*b\\[cde](https://example.org/x) `a*b[cde`"
    )


# --------------------------------------------------------------------------- any text


_ANY = "ab Z09_*`[]()!<>&#;:-+=~|\\./@é©\u00a0"


@settings(max_examples=400, deadline=None)
@given(st.lists(st.text(alphabet=_ANY, max_size=24), min_size=1, max_size=3))
@example(["*** _a_ [b](c) <d> &amp; \\"])
@example(["x", "==="])
@example(["[a]:", "/u"])
def test_issue_20_any_text_reads_back_as_itself_and_holds_no_syntax(lines: list[str]) -> None:
    expected = "\n".join(x for x in (" ".join(line.split()) for line in lines) if x)
    out = p(*lines)
    assert read_back(out) == expected
    assert misreads(out) == []


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=_ANY, max_size=24).filter(lambda s: s.strip()))
def test_issue_20_any_link_text_reads_back_as_itself(text: str) -> None:
    out = md(f'<p><a href="/u">{html.escape(text, quote=False)}</a></p>')
    assert out.startswith("[") and out.endswith("](https://example.org/u)")
    inner = out[1 : -len("](https://example.org/u)")]
    assert read_back(inner) == " ".join(text.split())
    roles = _roles(inner)
    assert all(roles[k] != "raw" for k, c in enumerate(inner) if c in "[]")
    assert _inline("[" + inner + "]") == []


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=_ANY, max_size=24).filter(lambda s: s.strip()))
@example("1. x")
@example("[a]: b")
@example("- - -")
def test_issue_31_any_text_in_a_cell_reads_back_as_itself(text: str) -> None:
    out = md(
        "<table><tr><th>h</th><th>i</th></tr>"
        f"<tr><td>x</td><td><p>{html.escape(text, quote=False)}</p></td></tr></table>"
    )
    row = out.split("\n")[2]
    assert row.startswith("| x | ") and row.endswith(" |")
    cell = row[len("| x | ") : -len(" |")]
    assert read_back(cell) == " ".join(text.split())
    assert _inline(cell) == []
    roles = _roles(cell)
    assert all(roles[k] != "raw" for k, c in enumerate(cell) if c == "|")  # no new cell
