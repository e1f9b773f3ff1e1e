"""Whether a response is a PDF: by its media type, or by its first bytes where the type
says nothing useful (missing, octet-stream) or says text that the bytes contradict."""

from __future__ import annotations

from typing import Final

PDF_TYPE: Final = "application/pdf"
# Types that do not say what the body is: the body's signature decides.
UNTYPED: Final = frozenset({"application/octet-stream", "binary/octet-stream", "application/x-pdf"})
# A text type whose body starts with a PDF's signature is a PDF (a misconfigured server);
# HTML or text cannot start with these bytes.
TEXT_TYPES: Final = frozenset({"text/html", "text/plain", "application/xhtml+xml"})
SIGNATURE: Final = b"%PDF-"
# PDF readers accept the signature anywhere in the first KiB (PDF 32000-1, annex H.3).
HEAD: Final = 1024


def signed(body: bytes) -> bool:
    """Whether the body carries a PDF signature where readers look for it."""
    return SIGNATURE in body[:HEAD]


def is_pdf(media: str | None, body: bytes) -> bool:
    if media == PDF_TYPE:
        return True
    if media is None or media in UNTYPED:
        return signed(body)
    return media in TEXT_TYPES and body.startswith(SIGNATURE)
