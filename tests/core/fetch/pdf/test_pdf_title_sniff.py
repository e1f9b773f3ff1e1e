"""A PDF's title (title.py) and whether a response is a PDF at all (sniff.py), issue 33."""

from __future__ import annotations

import pytest

from rypsok.core.fetch.pdf import sniff, title

# -- title ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "meta",
    [
        None,
        "",
        "   ",
        "Untitled",
        "untitled",
        "(Untitled)",
        "Untitled document",
        "Anonymous",
        "No Title",
        "Title",
        "Document",
        "Document1",
        "Blank",
        "Slide 1",
        "Presentation2",
        "report.pdf",
        "Microsoft Word - report.docx",
        "Annual Report.DOC",
        "draft_v2.tex",
        "  index.html  ",
    ],
)
def test_issue_33_placeholder_or_file_name_metadata_is_no_title(meta: str | None) -> None:
    assert not title.useful(meta)


@pytest.mark.parametrize(
    "meta",
    [
        "Harbor Works Review",
        "Untitled Goose Game: a review",
        "The .txt format explained",
        "Title IX compliance",
        "Document management at the harbor board",
    ],
)
def test_issue_33_metadata_that_names_the_document_is_its_title(meta: str) -> None:
    assert title.useful(meta)


@pytest.mark.parametrize(
    ("url", "name"),
    [
        ("https://example.org/papers/report.pdf", "report.pdf"),
        ("https://example.org/papers/Annual%20Report%202024.pdf", "Annual Report 2024.pdf"),
        ("https://example.org/get/report.pdf?download=1#page=3", "report.pdf"),
        ("https://example.org/download", "download"),
        ("https://example.org/caf%C3%A9.pdf", "café.pdf"),
        ("https://example.org/", None),
        ("https://example.org", None),
        ("https://example.org/papers/", None),
        ("https://example.org/%20", None),
    ],
)
def test_issue_33_the_file_name_is_the_url_paths_last_segment_decoded(
    url: str, name: str | None
) -> None:
    assert title.file_name(url) == name


def test_issue_33_the_title_is_metadata_then_first_heading_then_file_name() -> None:
    url = "https://example.org/papers/report.pdf"
    assert title.choose("Harbor Works Review", "Introduction", url) == "Harbor Works Review"
    assert title.choose("Untitled", "Introduction", url) == "Introduction"
    assert title.choose("Microsoft Word - report.docx", None, url) == "report.pdf"
    assert title.choose(None, None, url) == "report.pdf"
    assert title.choose(None, None, "https://example.org/") is None
    # An empty heading is no heading.
    assert title.choose(None, "", url) == "report.pdf"


# -- sniff ------------------------------------------------------------------------------------

PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n"
HTML = b"<!doctype html><html><body>Not a PDF</body></html>"


@pytest.mark.parametrize("body", [PDF, HTML, b""])
def test_issue_33_the_pdf_media_type_is_a_pdf_whatever_the_body(body: bytes) -> None:
    assert sniff.is_pdf("application/pdf", body)


@pytest.mark.parametrize(
    "media", [None, "application/octet-stream", "binary/octet-stream", "application/x-pdf"]
)
def test_issue_33_an_untyped_body_is_a_pdf_by_its_signature(media: str | None) -> None:
    assert sniff.is_pdf(media, PDF)
    assert not sniff.is_pdf(media, HTML)
    assert not sniff.is_pdf(media, b"")


@pytest.mark.parametrize("media", [None, "application/octet-stream"])
def test_issue_33_the_signature_counts_anywhere_in_the_first_kib(media: str | None) -> None:
    # Readers take a signature with junk before it (a BOM, a mail header) up to 1024 bytes.
    assert sniff.is_pdf(media, b"\xef\xbb\xbf" + PDF)
    assert sniff.is_pdf(media, b"x" * (sniff.HEAD - len(sniff.SIGNATURE)) + PDF)
    assert not sniff.is_pdf(media, b"x" * (sniff.HEAD - len(sniff.SIGNATURE) + 1) + PDF)


@pytest.mark.parametrize("media", ["text/html", "text/plain", "application/xhtml+xml"])
def test_issue_33_a_text_type_whose_body_starts_with_the_signature_is_a_pdf(media: str) -> None:
    assert sniff.is_pdf(media, PDF)
    assert not sniff.is_pdf(media, HTML)
    # Text that merely holds the signature later on is text (a page about PDFs).
    assert not sniff.is_pdf(media, b"<p>A file starts with %PDF-1.7</p>")
    assert not sniff.is_pdf(media, b" " + PDF)


@pytest.mark.parametrize("media", ["image/png", "application/json", "application/zip", "text/csv"])
def test_issue_33_another_declared_type_is_never_sniffed_as_a_pdf(media: str) -> None:
    assert not sniff.is_pdf(media, PDF)


def test_issue_33_signed_looks_only_at_the_head() -> None:
    assert sniff.signed(PDF)
    assert not sniff.signed(b"\0" * sniff.HEAD + PDF)
    assert not sniff.signed(b"%PDF")
