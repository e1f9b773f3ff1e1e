"""worker.read on PDFs written by tests/support/pdfs.py (issue 33).

read() is the worker process's whole work: PDFium opens the file, glyphs.py reads the
spans, layout.py writes Markdown. Here it runs in the test process (PDFium is trusted
with these files); the process bounds around it are reader.py's and tested with it.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from rypsok.core.fetch.pdf import worker
from tests.support import pdfs

MAX_PAGES = 1000
MAX_CHARS = 1 << 20
SENTENCE = "The harbor board met in winter to review the works."


def read(data: bytes, *, max_pages: int = MAX_PAGES, max_chars: int = MAX_CHARS) -> dict[str, Any]:
    return worker.read(data, max_pages=max_pages, max_chars=max_chars)


def one_page(text: str = SENTENCE, **options: Any) -> bytes:
    return pdfs.document([pdfs.Page([pdfs.Run(text, 72, 700)])], **options)


def test_issue_33_the_title_comes_from_the_metadata() -> None:
    answer = read(one_page(title="Harbor Works Review"))
    assert answer == {
        "outcome": "ok",
        "title": "Harbor Works Review",
        "heading": None,
        "blocks": [SENTENCE],
        "pages": 1,
        "read": 1,
        "partial": False,
        "removed": 0,
    }


def test_issue_33_a_title_outside_latin_1_is_read_from_utf16() -> None:
    assert read(one_page(title="Καλημέρα Report"))["title"] == "Καλημέρα Report"


def test_issue_33_no_metadata_title_is_none() -> None:
    assert read(one_page())["title"] is None


def test_issue_33_headings_lists_and_a_table_are_read() -> None:
    answer = read(pdfs.headings_lists_table())
    assert answer["heading"] == pdfs.TITLE
    assert answer["blocks"] == [
        f"# {pdfs.TITLE}",
        f"## {pdfs.SECTION}",
        " ".join(pdfs.PARAGRAPH),
        "- New lanterns on the bridge\n- A second crane for the market\n"
        "1. Survey the orchard wall\n2. Repair the meadow road",
        "| Item | Quantity | Price |\n| --- | --- | --- |\n"
        "| Lantern | 12 | 4.50 |\n| Rope | 40 | 0.75 |",
    ]


def test_issue_33_an_image_only_page_has_no_text() -> None:
    assert read(pdfs.document([pdfs.Page(image_only=True)])) == {"outcome": "no_text", "pages": 1}


def test_issue_33_ten_thousand_empty_pages_have_no_text() -> None:
    started = time.perf_counter()
    answer = read(pdfs.empty_pages(10_000), max_pages=10_000)
    assert answer == {"outcome": "no_text", "pages": 10_000}
    assert time.perf_counter() - started < 5.0


def test_issue_33_a_user_password_is_encrypted() -> None:
    assert read(one_page(user_password="secret", owner_password="owner")) == {
        "outcome": "encrypted"
    }


@pytest.mark.parametrize("user", [None, ""], ids=["no-user-password", "empty-user-password"])
def test_issue_33_an_owner_password_alone_is_read(user: str | None) -> None:
    answer = read(one_page(user_password=user, owner_password="owner", title="Locked Review"))
    assert answer["outcome"] == "ok"
    assert answer["blocks"] == [SENTENCE]
    # The metadata is encrypted too, and read.
    assert answer["title"] == "Locked Review"


def test_issue_33_an_owner_password_forbidding_copying_is_still_read() -> None:
    answer = read(one_page(owner_password="owner", permissions=-3904))
    assert answer["blocks"] == [SENTENCE]


@pytest.mark.parametrize("data", [b"", b"not a pdf at all", b"%PDF-1.7\n"])
def test_issue_33_bytes_that_are_no_pdf_are_damaged(data: bytes) -> None:
    assert read(data) == {"outcome": "damaged"}


@pytest.mark.parametrize(
    ("drawn", "text"),
    [
        ("Bell\x07 and\x1b escape\x01 text.", "Bell and escape text."),
        # Outside WinAnsi, through the ToUnicode font: C1 controls as well.
        ("Ωmega\x07 and\x85 escape\x9f text.", "Ωmega and escape text."),
    ],
)
def test_issue_33_control_characters_are_removed_and_counted(drawn: str, text: str) -> None:
    answer = read(one_page(drawn))
    assert answer["blocks"] == [text]
    assert answer["removed"] == 3


def test_issue_33_max_pages_reads_that_many_and_is_partial() -> None:
    answer = read(pdfs.many_pages(20), max_pages=7)
    assert (answer["pages"], answer["read"], answer["partial"]) == (20, 7, True)
    words = " ".join(answer["blocks"]).split()
    assert words == " ".join(" ".join(pdfs.many_pages_lines(p)) for p in range(1, 8)).split()


def test_issue_33_max_pages_equal_to_the_page_count_is_not_partial() -> None:
    answer = read(pdfs.many_pages(5), max_pages=5)
    assert (answer["pages"], answer["read"], answer["partial"]) == (5, 5, False)


def test_issue_33_max_chars_cuts_the_blocks_and_is_partial() -> None:
    max_chars = 5000
    answer = read(pdfs.many_pages(50), max_chars=max_chars)
    assert answer["partial"] is True
    assert answer["blocks"]
    assert sum(len(b) for b in answer["blocks"]) <= max_chars
    # It stops reading pages soon after the characters are there.
    assert answer["read"] < 50
    # What is kept is the start of the document, in order.
    words = " ".join(answer["blocks"]).split()
    everything = " ".join(" ".join(pdfs.many_pages_lines(p)) for p in range(1, 51)).split()
    assert words == everything[: len(words)]


def test_issue_33_300_pages_come_back_in_page_order() -> None:
    answer = read(pdfs.many_pages(300))
    assert (answer["pages"], answer["read"], answer["partial"]) == (300, 300, False)
    words = " ".join(answer["blocks"]).split()
    assert words == " ".join(" ".join(pdfs.many_pages_lines(p)) for p in range(1, 301)).split()


def test_issue_33_columns_drawn_across_are_read_column_by_column() -> None:
    data, left, right = pdfs.two_columns_across(30)
    assert read(data)["blocks"] == [" ".join(left), " ".join(right)]


def test_issue_33_running_headers_and_page_footers_are_dropped() -> None:
    answer = read(pdfs.running_header_footer(4))
    assert answer["blocks"] == [
        " ".join(pdfs.running_line(page, line) for line in range(1, 31)) for page in range(1, 5)
    ]


def test_issue_33_hyphenated_words_and_ligatures_are_mended() -> None:
    data, text = pdfs.hyphenated()
    assert read(data)["blocks"] == [text]
    data, text = pdfs.with_ligatures()
    assert read(data)["blocks"] == [text]


def test_issue_33_text_beyond_winansi_is_read() -> None:
    data, text = pdfs.beyond_winansi()
    assert read(data)["blocks"] == [" ".join(text.split("\n")).translate(pdfs.LIGATURES)]


def test_issue_33_invisible_text_is_read_as_text() -> None:
    # Render mode 3 is how a scanned page's OCR layer is written: it is the page's text.
    data = pdfs.document([pdfs.Page([pdfs.Run(SENTENCE, 72, 700, invisible=True)])])
    assert read(data)["blocks"] == [SENTENCE]


def test_issue_33_a_long_document_past_its_time_gives_its_first_pages() -> None:
    # The reader stops taking pages when its share of the call's time has gone, so a
    # long report answers its first pages (partial) before the deadline, not nothing.
    answer = worker.read(
        pdfs.many_pages(50, words_per_page=40), max_pages=1000, max_chars=1 << 20, budget_s=0.0
    )
    assert answer["outcome"] == "ok" and answer["partial"] is True
    assert answer["read"] == 1
    text = "\n\n".join(answer["blocks"])
    assert " ".join(pdfs.many_pages_lines(1, 40))[:40] in text
    assert " ".join(pdfs.many_pages_lines(2, 40))[:40] not in text
