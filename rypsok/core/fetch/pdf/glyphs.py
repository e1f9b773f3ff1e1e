"""The text layer of a PDF as PDFium reads it: spans of one line's characters with their
place, size and weight (layout.Span). Runs in the worker process only (worker.py):
PDFium is native code, and a file can make it abort or run away.

PDFium is reached through pypdfium2's raw ctypes bindings, whose functions are PDFium's
own C API, alike in every pypdfium2 release the locks pin (4.30 on Intel macOS, 5.x
elsewhere).
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Iterator
from typing import Any, Final

from rypsok.core.fetch.pdf.layout import SAME_LINE, PageSpans, Span

# PDFium's FPDF_GetLastError codes (fpdfview.h).
ERR_PASSWORD: Final = 4
ERR_SECURITY: Final = 5
# A horizontal gap wider than this many font sizes starts a new span (a column gutter,
# a table's next cell); a word space is about a quarter of one.
SPAN_GAP: Final = 1.3
# A gap this wide with no space character between is a word break PDFium did not mark.
WORD_GAP: Final = 0.15
# The loose box of a character is its font's ascent to descent: about this many times
# the font size in the common fonts.
LOOSE_HEIGHT: Final = 1.15
BOLD_WEIGHT: Final = 600
# Characters that separate words (PDFium writes a space it infers as one), and line ends.
_SPACES: Final = frozenset("\x00\t \xa0" + "".join(map(chr, range(0x2000, 0x200B))))
_BREAKS: Final = frozenset("\r\n")
# The font descriptor's FixedPitch flag (PDF 32000-1, table 123), and names of
# monospaced families where a file has no descriptor.
FIXED_PITCH: Final = 1
_MONO_NAMES: Final = (
    b"mono",
    b"courier",
    b"consol",
    b"code",
    b"typewriter",
    b"cmtt",
    b"nimbusmon",
    b"menlo",
    b"monaco",
    b"cousine",
    b"andale",
    b"lettergothic",
    b"fixed",
)
_BOLD_NAMES: Final = (b"bold", b"black", b"heavy", b"semibold", b"demi")


class Unreadable(Exception):
    """The file could not be opened: ``kind`` is "encrypted" or "damaged"."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


class Document:
    """One open document; close() frees PDFium's copy."""

    def __init__(self, data: bytes) -> None:
        import pypdfium2.raw as pdfium  # type: ignore[import-untyped]  # worker only

        self._pdfium: Any = pdfium
        pdfium.FPDF_InitLibrary()
        # PDFium reads from this buffer for as long as the document is open.
        self._buffer = ctypes.create_string_buffer(data, len(data))
        self._doc = pdfium.FPDF_LoadMemDocument64(self._buffer, len(data), None)
        if not self._doc:
            error = pdfium.FPDF_GetLastError()
            raise Unreadable("encrypted" if error in (ERR_PASSWORD, ERR_SECURITY) else "damaged")
        self.pages = max(pdfium.FPDF_GetPageCount(self._doc), 0)

    def title(self) -> str | None:
        p = self._pdfium
        size = p.FPDF_GetMetaText(self._doc, b"Title", None, 0)
        if size <= 2:
            return None
        size = min(size, 4096)  # a title is shown in at most a few hundred characters
        buffer = ctypes.create_string_buffer(size)
        p.FPDF_GetMetaText(self._doc, b"Title", buffer, size)
        text = buffer.raw[: size - 2].decode("utf-16-le", "replace").strip()
        return text or None

    def page(self, index: int) -> PageSpans:
        p = self._pdfium
        page = p.FPDF_LoadPage(self._doc, index)
        if not page:
            return PageSpans(0.0, 0.0, [])
        try:
            box = p.FS_RECTF()
            p.FPDF_GetPageBoundingBox(page, ctypes.byref(box))
            text_page = p.FPDFText_LoadPage(page)
            if not text_page:
                return PageSpans(0.0, 0.0, [])
            try:
                spans = list(self._spans(text_page, box.left, box.bottom))
            finally:
                p.FPDFText_ClosePage(text_page)
            return PageSpans(box.right - box.left, box.top - box.bottom, spans)
        finally:
            p.FPDF_ClosePage(page)

    def _spans(self, text_page: Any, left: float, bottom: float) -> Iterator[Span]:
        """The page's characters, in PDFium's order, gathered into spans. The loop keeps
        its state in locals: it runs once a character (a million on a long report)."""
        p = self._pdfium
        count = max(p.FPDFText_CountChars(text_page), 0)
        text = self._text(text_page, count)
        loose = p.FS_RECTF()
        box = ctypes.byref(loose)
        get_box = p.FPDFText_GetLooseCharBox
        parts: list[str] = []  # the open span's characters; empty: no span is open
        x0 = x1 = y = size = last_x0 = 0.0
        space = False
        # The font of each word's first character, looked up once a text object: a span is
        # bold or monospaced when most of its words are.
        words = bold_words = mono_words = 0
        styles = _Styles(self, text_page)
        for index, char in enumerate(text):
            if char in _SPACES:
                space = True
                continue
            if char in _BREAKS:
                if parts:
                    yield _span(x0, x1, y, size, parts, words, bold_words, mono_words)
                    parts = []
                space = False
                continue
            get_box(text_page, index, box)
            left_, right_, top_, bottom_ = loose.left, loose.right, loose.top, loose.bottom
            if not all(map(math.isfinite, (left_, right_, top_, bottom_))):
                continue  # a character PDFium could not place
            # The baseline: a fifth of the loose box above its bottom (the descent).
            here = bottom_ + (top_ - bottom_) * 0.2 - bottom
            start = left_ - left
            if parts:
                gap = start - x1
                if (
                    abs(y - here) <= SAME_LINE * size
                    and start >= last_x0 - 0.1 * size
                    and gap <= SPAN_GAP * size
                ):
                    if space or gap > WORD_GAP * size:
                        parts.append(" ")
                        bold, mono = styles.at(index)
                        words, bold_words, mono_words = (
                            words + 1,
                            bold_words + bold,
                            mono_words + mono,
                        )
                    parts.append(char)
                    end = right_ - left
                    if end > x1:
                        x1 = end
                    last_x0 = start
                    space = False
                    continue
                yield _span(x0, x1, y, size, parts, words, bold_words, mono_words)
            height = (top_ - bottom_) / LOOSE_HEIGHT
            size = height if height > 0 else float(p.FPDFText_GetFontSize(text_page, index))
            if not 0.1 <= size < 1e6:  # NaN, zero, negative or absurd: a tiny size
                size = 0.1
            x0, x1, y, last_x0 = start, right_ - left, here, start
            bold, mono = styles.at(index)
            words, bold_words, mono_words = 1, int(bold), int(mono)
            parts = [char]
            space = False
        if parts:
            yield _span(x0, x1, y, size, parts, words, bold_words, mono_words)

    def _text(self, text_page: Any, count: int) -> str:
        """The page's characters, one for each of PDFium's indexes."""
        codes = self._codes(text_page, count)
        return "".join(map(_char, codes))

    def _codes(self, text_page: Any, count: int) -> list[int]:
        """The page's code points, in one call where each character is one UTF-16 unit."""
        p = self._pdfium
        buffer = (ctypes.c_ushort * (count + 1))()
        written = p.FPDFText_GetText(text_page, 0, count, buffer)
        units = list(buffer[: max(written - 1, 0)])
        if len(units) == count and not any(0xD800 <= u <= 0xDFFF for u in units):
            return units
        return [p.FPDFText_GetUnicode(text_page, i) for i in range(count)]

    def style(self, text_page: Any, index: int) -> tuple[bool, bool]:
        """(bold, monospaced) of the font of a character: its weight, else its name, and
        the descriptor's fixed-pitch flag or a name that says so."""
        p = self._pdfium
        name = ctypes.create_string_buffer(128)
        flags = ctypes.c_int()
        p.FPDFText_GetFontInfo(text_page, index, name, 128, ctypes.byref(flags))
        lowered = name.value.lower()
        mono = bool(flags.value & FIXED_PITCH) or any(w in lowered for w in _MONO_NAMES)
        if p.FPDFText_GetFontWeight(text_page, index) >= BOLD_WEIGHT:
            return True, mono
        return any(word in lowered for word in _BOLD_NAMES), mono

    def close(self) -> None:
        if self._doc:
            self._pdfium.FPDF_CloseDocument(self._doc)
            self._doc = None


class _Styles:
    """The style of a character's font, kept for the text object it belongs to: the
    characters of one object share one font."""

    def __init__(self, document: Document, text_page: Any) -> None:
        self._document = document
        self._text_page = text_page
        self._object = document._pdfium.FPDFText_GetTextObject
        self._key: int | None = -1
        self._style = (False, False)

    def at(self, index: int) -> tuple[bool, bool]:
        handle = self._object(self._text_page, index)
        key = ctypes.cast(handle, ctypes.c_void_p).value if handle else None
        if key != self._key or key is None:
            self._style = self._document.style(self._text_page, index)
            self._key = key
        return self._style


def _span(
    x0: float, x1: float, y: float, size: float, parts: list[str], words: int, bold: int, mono: int
) -> Span:
    return Span(x0, x1, y, size, bold * 2 > words, "".join(parts), mono * 2 > words)


def _char(code: int) -> str:
    try:
        return chr(code)
    except ValueError:
        return "\ufffd"
