"""layout.py, the PDF text's positions to Markdown (issue 33), on spans written by hand.

Every page here is US Letter (612 x 792 points); y is a baseline in PDF space, growing
upwards, so a page is read from y near 792 down to y near 0. The body is set in 11 pt.
Each test states the Markdown blocks it expects in full where it can.
"""

from __future__ import annotations

import html
import random
import time
from collections.abc import Sequence

import pytest

from rypsok.core.fetch.extraction.markdown import write_markdown
from rypsok.core.fetch.pdf import layout
from rypsok.core.fetch.pdf.layout import PageSpans, Span
from rypsok.core.html.tree import parse_html

WIDTH, HEIGHT = 612.0, 792.0
BODY = 11.0
LEADING = 14.0
# A column of prose: a line runs the column's width, so no line ends short.
COLUMN = 220.0
FULL = 460.0


def span(text: str, x: float, y: float, *, size: float = BODY, bold: bool = False) -> Span:
    """A span as wide as its text in a Helvetica-like font (half an em a character)."""
    return Span(x, x + len(text) * size * 0.5, y, size, bold, text)


def column(
    texts: Sequence[str],
    x: float,
    top: float,
    *,
    width: float = COLUMN,
    size: float = BODY,
    bold: bool = False,
) -> list[Span]:
    """Lines of one block set in a column ``width`` wide, each filling it."""
    return [Span(x, x + width, top - i * LEADING, size, bold, text) for i, text in enumerate(texts)]


def page(*spans: Span | Sequence[Span]) -> PageSpans:
    flat: list[Span] = []
    for item in spans:
        flat.extend([item] if isinstance(item, Span) else item)
    return PageSpans(WIDTH, HEIGHT, flat)


def convert(*pages: PageSpans) -> tuple[list[str], str | None]:
    """What the worker does with the pages' spans: pieces per page, then Markdown."""
    return layout.to_markdown([layout.page_pieces(p) for p in pages])


def markdown(*pages: PageSpans) -> list[str]:
    return convert(*pages)[0]


def prose(text: str, y: float = 700.0) -> list[Span]:
    """One full-width body line: a paragraph of its own."""
    return column([text], 72, y, width=FULL)


def html_markdown(text: str) -> str:
    """The HTML writer's Markdown for a paragraph holding ``text``: the escaping the PDF
    reader's paragraphs are held to."""
    doc = parse_html(f"<!doctype html><html><body><p>{html.escape(text)}</p></body></html>")
    root = next(e for e in doc.root.iter_elements() if e.name == "body")
    return write_markdown(root, set(), set(), "https://example.org/")


# -- reading order ----------------------------------------------------------------------------

# Each column ends its paragraph with a full stop: a column that ends mid-sentence runs
# on into the next (test_issue_33_a_sentence_runs_on_from_one_column_to_the_next).
LEFT = [
    "apple banana cherry damson elder fig grape",
    "hazel iris juniper kiwi lemon mango nectar",
    "olive peach quince raisin sloe tangerine",
    "apple cherry elder grape iris kiwi mango",
    "olive quince sloe banana damson fig hazel.",
]
RIGHT = [
    "falcon heron osprey plover raven robin",
    "swallow thrush wren condor eagle finch",
    "gannet hawk ibis jay kestrel lark magpie",
    "owl falcon osprey raven swallow wren",
    "eagle gannet ibis kestrel magpie heron.",
]


def test_issue_33_columns_drawn_line_by_line_are_read_one_after_another() -> None:
    left, right = column(LEFT, 72, 700), column(RIGHT, 330, 700)
    across = [s for pair in zip(left, right, strict=True) for s in pair]
    assert markdown(page(across)) == [" ".join(LEFT), " ".join(RIGHT)]


def test_issue_33_columns_drawn_column_by_column_are_read_one_after_another() -> None:
    # Right column first in the content stream: position, not drawing order, decides.
    assert markdown(page(column(RIGHT, 330, 700), column(LEFT, 72, 700))) == [
        " ".join(LEFT),
        " ".join(RIGHT),
    ]


def test_issue_33_columns_whose_paragraph_gaps_line_up_are_read_column_by_column() -> None:
    # Both columns leave a gap at the same height: the page cuts into two bands there,
    # and the bands, in the same columns, are one again.
    spans = [
        column(LEFT[:2], 72, 700),
        column(RIGHT[:2], 330, 700),
        column(LEFT[2:], 72, 640),
        column(RIGHT[2:], 330, 640),
    ]
    assert markdown(page(*spans)) == [
        " ".join(LEFT[:2]),
        " ".join(LEFT[2:]),
        " ".join(RIGHT[:2]),
        " ".join(RIGHT[2:]),
    ]


def test_issue_33_a_full_width_title_above_two_columns_comes_first() -> None:
    title = Span(72, 550, 740, 20, True, "Birds and Fruit of the Valley")
    blocks, heading = convert(page(column(RIGHT, 330, 700), column(LEFT, 72, 700), title))
    assert blocks == ["# Birds and Fruit of the Valley", " ".join(LEFT), " ".join(RIGHT)]
    assert heading == "Birds and Fruit of the Valley"


def test_issue_33_a_full_width_paragraph_between_column_sections_cuts_the_page() -> None:
    # Columns above a paragraph that spans the page, columns again below it.
    middle = "The middle paragraph runs across both columns of the page and ends here."
    left_top, right_top = [LEFT[0], LEFT[1] + "."], [RIGHT[0], RIGHT[1] + "."]
    spans = [
        column(left_top, 72, 700),
        column(right_top, 330, 700),
        prose(middle, 640),
        column(LEFT[2:], 72, 600),
        column(RIGHT[2:], 330, 600),
    ]
    assert markdown(page(*spans)) == [
        " ".join(left_top),
        " ".join(right_top),
        middle,
        " ".join(LEFT[2:]),
        " ".join(RIGHT[2:]),
    ]


TABLE = [["Item", "Quantity", "Price"], ["Lantern", "12", "4.50"], ["Rope | cord", "40", "0.75"]]


def table_spans(rows: Sequence[Sequence[str]], top: float = 520) -> list[Span]:
    return [
        span(cell, 72 + c * 120, top - r * 18, bold=r == 0)
        for r, row in enumerate(rows)
        for c, cell in enumerate(row)
    ]


def test_issue_33_rows_of_short_cells_become_a_markdown_table() -> None:
    assert markdown(page(table_spans(TABLE))) == [
        "| Item | Quantity | Price |\n"
        "| --- | --- | --- |\n"
        "| Lantern | 12 | 4.50 |\n"
        "| Rope \\| cord | 40 | 0.75 |"
    ]


def test_issue_33_a_table_cell_that_looks_like_markdown_is_escaped() -> None:
    rows = [["Name", "Note"], ["*bold*", "[x](y)"], ["Plain", "<b>"]]
    assert markdown(page(table_spans(rows))) == [
        "| Name | Note |\n| --- | --- |\n| \\*bold\\* | [x\\](y) |\n| Plain | \\<b> |"
    ]


def test_issue_33_a_table_after_a_paragraph_keeps_its_place() -> None:
    text = "The prices of the spring order, agreed by the board in winter."
    assert markdown(page(prose(text, 600), table_spans(TABLE[:2]))) == [
        text,
        "| Item | Quantity | Price |\n| --- | --- | --- |\n| Lantern | 12 | 4.50 |",
    ]


def test_issue_33_a_single_row_of_cells_is_a_line_of_text() -> None:
    assert markdown(page(table_spans(TABLE[1:2]))) == ["Lantern 12 4.50"]
    # The row is still escaped as a paragraph would be.
    assert markdown(page(table_spans([["# Item", "*a*"]]))) == ["\\# Item \\*a\\*"]


# -- paragraphs -------------------------------------------------------------------------------


def test_issue_33_lines_of_a_block_are_joined_with_spaces() -> None:
    lines = [
        "The harbor board met in winter to review",
        "the copper signal works along the",
        "valley.",
    ]
    assert markdown(page([span(t, 72, 700 - i * LEADING) for i, t in enumerate(lines)])) == [
        "The harbor board met in winter to review the copper signal works along the valley."
    ]


def test_issue_33_blocks_apart_are_separate_paragraphs() -> None:
    first = ["The first paragraph of the page has", "two lines and a full stop."]
    second = ["The second one stands a blank line", "below it and ends as well."]
    assert markdown(page(column(first, 72, 700), column(second, 72, 650))) == [
        " ".join(first),
        " ".join(second),
    ]


def test_issue_33_a_short_line_ending_a_sentence_ends_the_paragraph_in_a_block() -> None:
    # No vertical gap: the first paragraph's last line stops well short of the column's
    # right edge and ends with a full stop.
    spans = [
        Span(72, 292, 700, BODY, False, "The first paragraph goes on for a full"),
        Span(72, 140, 686, BODY, False, "line."),
        Span(72, 292, 672, BODY, False, "The second starts at once below it and"),
        Span(72, 292, 658, BODY, False, "ends on a full line."),
    ]
    assert markdown(page(spans)) == [
        "The first paragraph goes on for a full line.",
        "The second starts at once below it and ends on a full line.",
    ]


def test_issue_33_a_word_broken_by_a_hyphen_before_a_lower_case_line_is_joined() -> None:
    lines = [
        "The extraction of informa-",
        "tion from printed documents needs a hyphen-",
        "ated word.",
    ]
    assert markdown(page(column(lines, 72, 700))) == [
        "The extraction of information from printed documents needs a hyphenated word."
    ]


def test_issue_33_a_soft_hyphen_at_a_line_end_is_joined_too() -> None:
    assert markdown(page(column(["Written with soft\u00ad", "ware."], 72, 700))) == [
        "Written with software."
    ]


def test_issue_33_a_hyphen_before_an_upper_case_line_is_kept() -> None:
    # "Smith-Jones" broken after its hyphen: the hyphen is the name's, not the printer's.
    text = markdown(page(column(["The firm of Smith-", "Jones wrote the report."], 72, 700)))[0]
    assert "Smith-" in text
    assert "SmithJones" not in text


def test_issue_33_a_kept_line_end_hyphen_is_not_followed_by_a_space() -> None:
    # Defect (fails today): the lines are joined with a space after the kept hyphen,
    # "Smith- Jones"; the word the printer broke at its own hyphen is "Smith-Jones".
    assert markdown(page(column(["The firm of Smith-", "Jones wrote the report."], 72, 700))) == [
        "The firm of Smith-Jones wrote the report."
    ]


def test_issue_33_a_dash_after_a_space_at_a_line_end_is_not_a_broken_word() -> None:
    assert markdown(page(column(["The valley -", "the one by the river."], 72, 700))) == [
        "The valley - the one by the river."
    ]


@pytest.mark.parametrize("marker", ["\ufffe", "\x02"], ids=["U+FFFE", "U+0002"])
def test_issue_33_pdfium_line_end_hyphen_markers_are_joined(marker: str) -> None:
    # The worker normalises each span's text before layout; the marker becomes "-".
    lines = [layout.normalise(f"The extraction of informa{marker}"), "tion from documents."]
    assert lines[0] == "The extraction of informa-"
    assert markdown(page(column(lines, 72, 700))) == [
        "The extraction of information from documents."
    ]


def test_issue_33_ligatures_are_written_as_their_letters() -> None:
    drawn = "".join(chr(c) for c in range(0xFB00, 0xFB07))
    assert layout.normalise(drawn) == "fffiflffifflstst"
    text = layout.normalise("The \ufb01rst \ufb02oor of the o\ufb03ce had a \ufb01ne e\ufb00ect.")
    assert markdown(page(prose(text))) == ["The first floor of the office had a fine effect."]


def test_issue_33_normalise_leaves_other_text_alone() -> None:
    text = "naïve café Ωmega - plain \u00ad text"
    assert layout.normalise(text) == text


def test_issue_33_a_paragraph_running_on_to_the_next_page_is_one_paragraph() -> None:
    first = page(
        column(["The board met in winter to review the", "copper signal works along"], 72, 700)
    )
    second = page(column(["the valley and the marble bridge.", "It met again in spring."], 72, 700))
    assert markdown(first, second) == [
        "The board met in winter to review the copper signal works along the valley and "
        "the marble bridge. It met again in spring."
    ]


def test_issue_33_a_word_broken_at_a_page_end_is_joined() -> None:
    first = page(column(["The extraction of informa-"], 72, 700))
    second = page(column(["tion goes on here."], 72, 700))
    assert markdown(first, second) == ["The extraction of information goes on here."]


def test_issue_33_a_paragraph_ending_with_a_full_stop_is_not_joined_to_the_next_page() -> None:
    first = page(column(["The first page ends with a sentence."], 72, 700))
    second = page(column(["lower case starts the next page."], 72, 700))
    assert markdown(first, second) == [
        "The first page ends with a sentence.",
        "lower case starts the next page.",
    ]


def test_issue_33_a_next_page_starting_in_upper_case_starts_a_new_paragraph() -> None:
    first = page(column(["The first page ends without a stop"], 72, 700))
    second = page(column(["The next page starts in upper case."], 72, 700))
    assert markdown(first, second) == [
        "The first page ends without a stop",
        "The next page starts in upper case.",
    ]


def test_issue_33_a_paragraph_runs_on_past_a_running_header_and_footer() -> None:
    def with_running(number: int, lines: list[str]) -> PageSpans:
        return page(
            span("Annual report of the harbor board", 72, 760, size=9),
            column(lines, 72, 700),
            span(f"Page {number} of 2", 290, 36, size=9),
        )

    first = with_running(1, ["The board met in winter to review the", "copper signal works along"])
    second = with_running(2, ["the valley and the marble bridge."])
    assert markdown(first, second) == [
        "The board met in winter to review the copper signal works along the valley and "
        "the marble bridge."
    ]


def test_issue_33_a_paragraph_finished_on_the_next_page_is_not_joined_to_the_page_after() -> None:
    # Defect (fails today): page 2 holds only the end of page 1's paragraph, full stop
    # included; the paragraph is left open, and page 3, which starts in lower case, is
    # joined to it. Got one block "The start ... ends here. lower case starts ...".
    pages = [
        page(column(["The start of a sentence that goes"], 72, 700)),
        page(column(["on and ends here."], 72, 700)),
        page(column(["lower case starts another paragraph."], 72, 700)),
    ]
    assert markdown(*pages) == [
        "The start of a sentence that goes on and ends here.",
        "lower case starts another paragraph.",
    ]


# -- headings ---------------------------------------------------------------------------------

BODY_TEXT = [
    "The harbor board met in winter to review the copper",
    "signal works along the valley and the marble bridge.",
]


def test_issue_33_larger_sizes_than_the_body_are_headings_by_rank() -> None:
    spans: list[Span | list[Span]] = [
        Span(72, 400, 740, 24, False, "Harbor Works Review"),
        Span(72, 300, 700, 16, False, "Introduction"),
        Span(72, 300, 670, 13, False, "The winter meeting"),
        column(BODY_TEXT, 72, 640, width=FULL),
    ]
    blocks, heading = convert(page(*spans))
    assert blocks == [
        "# Harbor Works Review",
        "## Introduction",
        "### The winter meeting",
        " ".join(BODY_TEXT),
    ]
    assert heading == "Harbor Works Review"


def test_issue_33_heading_ranks_are_shared_across_pages() -> None:
    first = page(Span(72, 400, 740, 24, False, "Review"), column(BODY_TEXT, 72, 700, width=FULL))
    second = page(Span(72, 400, 740, 16, False, "Details"), column(BODY_TEXT, 72, 700, width=FULL))
    assert markdown(first, second) == [
        "# Review",
        " ".join(BODY_TEXT),
        "## Details",
        " ".join(BODY_TEXT),
    ]


def test_issue_33_a_size_barely_above_the_body_is_not_a_heading() -> None:
    # 12 pt over an 11 pt body is within HEADING_RATIO: an emphasis, not a heading.
    blocks = markdown(
        page(Span(72, 300, 740, 12, False, "Slightly larger line"), column(BODY_TEXT, 72, 700))
    )
    assert blocks == ["Slightly larger line", " ".join(BODY_TEXT)]


def test_issue_33_a_short_bold_line_at_body_size_is_a_heading() -> None:
    spans: list[Span | list[Span]] = [
        Span(72, 400, 740, 24, False, "Harbor Works Review"),
        span("The winter meeting", 72, 700, bold=True),
        column(BODY_TEXT, 72, 670, width=FULL),
    ]
    assert markdown(page(*spans)) == [
        "# Harbor Works Review",
        "## The winter meeting",
        " ".join(BODY_TEXT),
    ]


def test_issue_33_a_bold_paragraph_is_not_a_heading() -> None:
    two_lines = column(
        ["A bold paragraph of two lines that is long", "and goes on to the second line"],
        72,
        740,
        width=FULL,
        bold=True,
    )
    long_line = "A single bold line that is far too long to be a heading " * 2
    sentence = "A bold sentence that ends with a full stop."
    spans: list[Span | list[Span]] = [
        two_lines,
        span(long_line.strip(), 72, 700, bold=True, size=BODY),
        span(sentence, 72, 670, bold=True),
        column(BODY_TEXT, 72, 640, width=FULL),
    ]
    blocks = markdown(page(*spans))
    assert blocks == [
        "A bold paragraph of two lines that is long and goes on to the second line",
        long_line.strip(),
        sentence,
        " ".join(BODY_TEXT),
    ]
    assert not any(b.startswith("#") for b in blocks)


def test_issue_33_heading_text_that_looks_like_markdown_is_escaped() -> None:
    spans: list[Span | list[Span]] = [
        Span(72, 400, 740, 24, False, "Use *stars* and [x](y) `code`"),
        column(BODY_TEXT, 72, 700, width=FULL),
    ]
    blocks, heading = convert(page(*spans))
    assert blocks[0] == "# Use \\*stars\\* and [x\\](y) \\`code\\`"
    # The title is the heading's text, not its Markdown.
    assert heading == "Use *stars* and [x](y) `code`"


def test_issue_33_a_heading_ending_in_hashes_keeps_them() -> None:
    # Defect (fails today): "# Chapter #" is read as the heading "Chapter", the "#" a
    # closing sequence. The HTML writer escapes it ("# Chapter \\#"); got "# Chapter #".
    spans: list[Span | list[Span]] = [
        Span(72, 400, 740, 24, False, "Chapter #"),
        column(BODY_TEXT, 72, 700, width=FULL),
    ]
    assert markdown(page(*spans))[0] == "# Chapter \\#"


def test_issue_33_a_heading_closes_a_paragraph_left_open_by_the_page() -> None:
    first = page(column(["The first page ends without a stop"], 72, 700))
    second = page(Span(72, 300, 740, 16, False, "next section"), column(BODY_TEXT, 72, 700))
    assert markdown(first, second) == [
        "The first page ends without a stop",
        "# next section",
        " ".join(BODY_TEXT),
    ]


# -- lists ------------------------------------------------------------------------------------


def test_issue_33_bullets_and_numbers_become_list_items_in_one_block() -> None:
    spans = [
        prose("The board agreed on the spring work.", 720),
        column(["• New lanterns on the bridge", "• A second crane for the market"], 90, 690),
        column(["1. Survey the orchard wall", "2. Repair the meadow road"], 90, 640),
    ]
    assert markdown(page(*spans)) == [
        "The board agreed on the spring work.",
        "- New lanterns on the bridge\n- A second crane for the market\n"
        "1. Survey the orchard wall\n2. Repair the meadow road",
    ]


@pytest.mark.parametrize(
    ("drawn", "written"),
    [
        ("• item", "- item"),
        ("◦ item", "- item"),
        ("- item", "- item"),
        ("* item", "- item"),
        ("1. item", "1. item"),
        ("12) item", "12. item"),
        ("(3) item", "3. item"),
        ("a) item", "- a) item"),
    ],
)
def test_issue_33_list_marks_become_markdown_items(drawn: str, written: str) -> None:
    assert markdown(page(column([drawn, drawn], 90, 700))) == [f"{written}\n{written}"]


def test_issue_33_a_wrapped_list_item_is_one_item() -> None:
    lines = ["• New lanterns on the bridge and on", "the road to the market", "• A second crane"]
    assert markdown(page(column(lines, 90, 700))) == [
        "- New lanterns on the bridge and on the road to the market\n- A second crane"
    ]


def test_issue_33_list_items_on_two_pages_are_one_list() -> None:
    first = page(column(["• First item on one page"], 90, 700))
    second = page(column(["• Second item on the next"], 90, 700))
    assert markdown(first, second) == ["- First item on one page\n- Second item on the next"]


@pytest.mark.parametrize(
    ("drawn", "written"),
    [
        ("• # not a heading", "- \\# not a heading"),
        ("• > not a quote", "- \\> not a quote"),
        ("• - not a nested list", "- \\- not a nested list"),
        ("1. + not a nested list", "1. \\+ not a nested list"),
    ],
)
def test_issue_33_list_item_text_that_looks_like_markdown_is_escaped(
    drawn: str, written: str
) -> None:
    # Defect (fails today): an item's text is escaped as inline text (plain_inline), but
    # after "- " a line starts again for a Markdown reader, so "- # x" is an item holding
    # a heading. The HTML writer writes <li># x</li> as "- \\# x".
    assert markdown(page(column([drawn], 90, 700))) == [written]


# -- running headers and footers ------------------------------------------------------------


def entry(n: int) -> str:
    """Page ``n``'s body: longer than any margin line, so 11 pt is the body's size."""
    return f"Entry {n} of the report, a sentence of the body that ends here."


def report_pages(count: int, *, header_on: int = 0, footer: str | None = None) -> list[PageSpans]:
    """``count`` pages of one sentence each; a header on the first ``header_on``, and
    ``footer`` (formatted with page=n, pages=count) at the bottom of every page."""
    out = []
    for n in range(1, count + 1):
        spans = prose(entry(n))
        if n <= header_on:
            spans.append(span("Annual report of the harbor board", 72, 760, size=9))
        if footer is not None:
            spans.append(span(footer.format(page=n, pages=count), 250, 36, size=9))
        out.append(page(spans))
    return out


def entries(count: int) -> list[str]:
    return [entry(n) for n in range(1, count + 1)]


def test_issue_33_a_margin_line_on_half_the_pages_is_dropped() -> None:
    assert markdown(*report_pages(4, header_on=2)) == entries(4)


def test_issue_33_a_margin_line_on_fewer_than_half_the_pages_is_kept() -> None:
    assert markdown(*report_pages(4, header_on=1)) == [
        "Annual report of the harbor board",
        *entries(4),
    ]


def test_issue_33_a_margin_line_on_one_page_of_one_is_kept() -> None:
    assert markdown(*report_pages(1, header_on=1)) == [
        "Annual report of the harbor board",
        entry(1),
    ]


def test_issue_33_margin_lines_that_differ_only_in_digits_are_one_running_line() -> None:
    footer = "Harbor board report, volume 3, issue {page}"
    assert markdown(*report_pages(5, footer=footer)) == entries(5)


@pytest.mark.parametrize("footer", ["Page {page} of {pages}", "{page}", "- {page} -", "{page} / 9"])
def test_issue_33_page_number_footers_are_dropped(footer: str) -> None:
    assert markdown(*report_pages(3, footer=footer)) == entries(3)


@pytest.mark.parametrize("number", ["7", "- 7 -", "[7]", "iv", "Page 7", "p. 7", "7 of 9"])
@pytest.mark.parametrize("y", [36.0, 770.0], ids=["bottom", "top"])
def test_issue_33_a_page_number_alone_in_a_margin_is_dropped_on_one_page(
    number: str, y: float
) -> None:
    assert markdown(page(prose("A single page of text."), span(number, 300, y, size=9))) == [
        "A single page of text."
    ]


def test_issue_33_a_number_alone_in_the_body_is_kept() -> None:
    assert markdown(page(prose("A single page of text."), span("7", 300, 400))) == [
        "A single page of text.",
        "7",
    ]


def test_issue_33_body_text_repeated_outside_the_margins_is_kept() -> None:
    repeated = "The same sentence stands on every page."
    pages = [
        page(prose(f"Entry {n} of the report ends here."), prose(repeated, 400)) for n in (1, 2, 3)
    ]
    assert markdown(*pages) == [
        line for n in (1, 2, 3) for line in (f"Entry {n} of the report ends here.", repeated)
    ]


# -- escaping ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("# not a heading, a hash sign.", "\\# not a heading, a hash sign."),
        ("> not a quote, a greater sign.", "\\> not a quote, a greater sign."),
        ("+ not a list, a plus sign.", "\\+ not a list, a plus sign."),
        ("1986. A year, not a list item.", "1986\\. A year, not a list item."),
        ("See [x](y) for a link that is not.", "See [x\\](y) for a link that is not."),
        ("The *a* is not emphasis.", "The \\*a\\* is not emphasis."),
        ("A `tick` is not code.", "A \\`tick\\` is not code."),
        ("<b>not bold</b> text.", "\\<b>not bold\\</b> text."),
        ("=====", "\\====="),
    ],
)
def test_issue_33_paragraph_text_that_looks_like_markdown_is_escaped(
    text: str, written: str
) -> None:
    assert markdown(page(prose(text))) == [written]
    # The same as the HTML writer gives for the text in a <p>.
    assert html_markdown(text) == written


def test_issue_33_syntax_on_a_later_line_of_a_paragraph_needs_no_escape() -> None:
    # Joined to the line before, "# " no longer starts a line.
    assert markdown(
        page(column(["The count is kept in the column", "# of the ledger."], 72, 700))
    ) == ["The count is kept in the column # of the ledger."]


# -- robustness -------------------------------------------------------------------------------


def test_issue_33_a_carry_chain_of_300_pages_is_one_paragraph_and_fast() -> None:
    # Every page ends mid-sentence and the next goes on in lower case: one paragraph of
    # 15,000 lines. Escaping the open paragraph again on each page (quadratic) took
    # 1.5 s here when tried; done once, the whole test takes under 0.1 s.
    def lines(n: int) -> list[str]:
        return [f"words {n}.{k} of a page that go on and on" for k in range(50)]

    pages = [page(column(lines(n), 72, 760, width=FULL)) for n in range(300)]
    started = time.perf_counter()
    blocks = markdown(*pages)
    elapsed = time.perf_counter() - started
    assert blocks == [" ".join(" ".join(lines(n)) for n in range(300))]
    assert elapsed < 1.0


def test_issue_33_a_page_of_5000_spans_at_random_places_is_laid_out_fast() -> None:
    rng = random.Random(33)
    # No letter of a Roman numeral: a lone "iv" in a margin is a page number and goes.
    letters = "abefghjknoprstu"
    spans = []
    for _ in range(5000):
        x0 = rng.uniform(0, 580)
        word = "".join(rng.choice(letters) for _ in range(rng.randint(1, 10)))
        spans.append(
            Span(
                x0,
                x0 + rng.uniform(2, 80),
                rng.uniform(0, 790),
                rng.choice([8, 10, 11, 14]),
                rng.random() < 0.2,
                word,
            )
        )
    started = time.perf_counter()
    blocks = markdown(page(spans))
    elapsed = time.perf_counter() - started
    assert elapsed < 2.0
    # Every word is in the Markdown, whatever the layout made of it.
    written = [w for b in blocks for w in b.split() if w.strip("#|-") and w.isalpha()]
    assert sorted(written) == sorted(s.text for s in spans)


def test_issue_33_empty_documents_and_pages_give_no_blocks() -> None:
    assert convert() == ([], None)
    assert convert(page(), PageSpans(0.0, 0.0, [])) == ([], None)
    assert convert(page(span("   ", 72, 700), span("", 72, 680))) == ([], None)


def test_issue_33_empty_pages_between_do_not_break_a_running_paragraph() -> None:
    first = page(column(["The first page ends without a stop"], 72, 700))
    assert markdown(first, page(), page(column(["and goes on after a blank page."], 72, 700))) == [
        "The first page ends without a stop and goes on after a blank page."
    ]


@pytest.mark.parametrize("size", [0.0, -5.0, 1e-9])
def test_issue_33_spans_with_zero_or_negative_sizes_do_not_crash(size: float) -> None:
    spans: list[Span | list[Span]] = [
        Span(72, 100, 700, size, False, "odd"),
        Span(72, 100, 690, size, True, "bold"),
        Span(100, 72, 680, BODY, False, "backwards"),  # x1 left of x0
        prose("Body text of the page.", 600),
    ]
    blocks = markdown(page(*spans))
    words = " ".join(blocks).split()
    for word in ("odd", "bold", "backwards", "Body"):
        assert word in words


def test_issue_33_a_page_of_zero_size_does_not_crash() -> None:
    blocks = markdown(PageSpans(0.0, 0.0, prose("Text on a page with no size.")))
    assert " ".join(blocks).endswith("Text on a page with no size.")


@pytest.mark.parametrize(("marker", "mark"), [("\uf0b7", "-"), ("•", "-"), ("1.", "1.")])
def test_issue_33_a_marker_drawn_apart_from_its_text_makes_one_item(marker: str, mark: str) -> None:
    # Word processors draw a list's bullet (often a Symbol-font code point) at one tab
    # stop and its text at the next: the item is one line, not a column of bullets.
    spans = [
        Span(72, 77, 700, 11, False, marker),
        Span(90, 300, 700, 11, False, "First item text"),
        Span(72, 77, 686, 11, False, marker),
        Span(90, 280, 686, 11, False, "Second item"),
        Span(72, 400, 660, 11, False, "After the list a paragraph goes on."),
    ]
    assert markdown(PageSpans(612, 792, spans)) == [
        f"{mark} First item text\n{mark} Second item",
        "After the list a paragraph goes on.",
    ]


def test_issue_33_monospaced_lines_are_a_code_block_with_their_indentation() -> None:
    # Courier at 10 pt: 6 points a character. The prose around it is proportional.
    code = [
        Span(72, 198, 600, 10, False, "<mime-info xmlns='x'>", True),
        Span(84, 234, 588, 10, False, "<mime-type type='a/b'>", True),
        Span(96, 204, 576, 10, False, "<glob pattern='*'/>", True),
        Span(84, 156, 564, 10, False, "</mime-type>", True),
        Span(72, 144, 552, 10, False, "</mime-info>", True),
    ]
    prose = [
        Span(72, 400, 640, 10, False, "Here is an example source file, named diff.xml:"),
        Span(72, 400, 520, 10, False, "Such a file is installed in the packages directory."),
    ]
    assert markdown(PageSpans(612, 792, prose + code)) == [
        "Here is an example source file, named diff.xml:",
        "```\n<mime-info xmlns='x'>\n  <mime-type type='a/b'>\n    <glob pattern='*'/>\n"
        "  </mime-type>\n</mime-info>\n```",
        "Such a file is installed in the packages directory.",
    ]


def test_issue_33_a_document_set_in_a_monospaced_font_is_text_not_code() -> None:
    lines = [
        Span(72, 400, 700 - 12 * i, 10, False, f"A typewritten line number {i} of the memo", True)
        for i in range(6)
    ]
    got = markdown(PageSpans(612, 792, lines))
    assert not any(block.startswith("```") for block in got)
    assert got == [" ".join(s.text for s in lines)]


def test_issue_33_a_code_block_holding_backticks_gets_a_longer_fence() -> None:
    code = [Span(72, 300, 600, 10, False, "echo ```quoted```", True)]
    prose = [
        Span(72, 500, 640, 10, False, "A long line of prose that makes most of the page text.")
    ]
    assert markdown(PageSpans(612, 792, prose * 3 + code))[-1] == "````\necho ```quoted```\n````"


def test_issue_33_contents_leaders_become_one_ellipsis_and_entries_stay_apart() -> None:
    spans = [
        Span(72, 90, 700, 11, True, "1"),
        Span(100, 500, 700, 11, True, "Introduction . . . . . . . . . . . . 1"),
        Span(90, 110, 686, 11, False, "1.1"),
        Span(120, 500, 686, 11, False, "Scope . . . . . . . . . . . . . . . 2"),
        Span(90, 110, 672, 11, False, "1.2"),
        Span(120, 500, 672, 11, False, "Terms . . . . . . . . . . . . . . . 3"),
    ]
    body = [Span(72, 500, 600 - 14 * i, 11, False, "Body text " * 6) for i in range(8)]
    got = markdown(PageSpans(612, 792, spans + body))
    assert got[:3] == ["1 Introduction … 1", "1.1 Scope … 2", "1.2 Terms … 3"]


def test_issue_33_a_list_item_that_runs_on_to_the_next_page_is_one_item() -> None:
    first = PageSpans(
        612,
        792,
        [
            Span(72, 500, 700, 11, False, "An opening paragraph of the section."),
            Span(72, 400, 672, 11, False, "• A glob-deleteall element, which means that patterns"),
        ],
    )
    second = PageSpans(
        612,
        792,
        [
            Span(90, 400, 700, 11, False, "from earlier folders are discarded."),
            Span(72, 500, 672, 11, False, "The next paragraph starts here."),
        ],
    )
    assert markdown(first, second) == [
        "An opening paragraph of the section.",
        "- A glob-deleteall element, which means that patterns from earlier folders are discarded.",
        "The next paragraph starts here.",
    ]


def test_issue_33_a_sentence_runs_on_from_one_column_to_the_next() -> None:
    # The left column ends mid-sentence and the right one goes on in lower case: one
    # paragraph. A paragraph that ends with its column stays apart (the tests above).
    left = column(["The harbor board met in winter to review", "the copper signal works"], 72, 700)
    right = column(["along the valley and the bridge.", "A new paragraph starts here."], 330, 700)
    right[1] = Span(330, 400, 700 - 3 * LEADING, BODY, False, "A new paragraph starts here.")
    assert markdown(page(left, right)) == [
        "The harbor board met in winter to review the copper signal works along the valley "
        "and the bridge.",
        "A new paragraph starts here.",
    ]
