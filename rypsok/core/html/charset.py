"""Bytes of a fetched document to text (REQ-PAGE-007).

The order, first match wins:

1. a byte order mark (UTF-8, UTF-16LE, UTF-16BE): as in browsers and in
   html5lib, a BOM wins even over the header, since it cannot be there by
   accident while a server's default charset often is;
2. the Content-Type ``charset`` when it names an encoding the WHATWG
   Encoding standard knows (labels are looked up as browsers do, so
   ``iso-8859-1`` means windows-1252);
3. a ``<meta charset>`` or ``<meta http-equiv="Content-Type">`` in the first
   1024 bytes (html5lib's prescan, the standard's algorithm; a UTF-16 label
   there means UTF-8, since the bytes were readable as ASCII);
4. nothing declared: UTF-8 when the whole body is valid UTF-8, else the legacy
   encoding a browser would pick (:mod:`rypsok.core.html.legacy`: only the
   standard's encodings, windows-1252 unless another is clearly better).

Two WHATWG encodings have no Python codec and are read as the standard says:
``x-user-defined`` (bytes 0x80-0xFF to U+F780-U+F7FF) and ``replacement``, the
label of ISO-2022-KR, HZ-GB-2312 and the like, whose escape sequences could hide
markup, so a non-empty body becomes one U+FFFD and nothing of it is read.

Undecodable bytes become U+FFFD; :func:`decode` never raises for any input.
The pipeline decodes here and hands ``str`` to the tree builder, so html5lib's
own byte sniffing (which stops at windows-1252 and never detects) is not used.
"""

from __future__ import annotations

import codecs

from html5lib._inputstream import EncodingParser, lookupEncoding

from rypsok.core.html import legacy
from rypsok.core.html.legacy import DETECT_BYTES

__all__ = [
    "BINARY_BYTES",
    "DETECT_BYTES",
    "PRESCAN_BYTES",
    "DecodedText",
    "binary",
    "decode",
    "open_text",
    "resolve",
]

PRESCAN_BYTES = 1024
# As git and grep do: a NUL in the first 8 KiB is what tells a binary file from text.
BINARY_BYTES = 8 * 1024
# Bytes decoded at a time when a page is read piece by piece: a few of the tree
# builder's 10240-character reads, small beside any page worth streaming.
_BLOCK_BYTES = 32 * 1024

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_UTF16 = frozenset({"utf-16le", "utf-16be", "utf-16"})
_UTF16_CODECS = frozenset({"utf-16-le", "utf-16-be"})
# x-user-defined: ASCII as it is, every other byte to the private-use row U+F780-U+F7FF.
_X_USER_DEFINED = {byte: 0xF700 + byte for byte in range(0x80, 0x100)}


def _lookup(label: str | None) -> str | None:
    """A label to a Python codec name, or None when the label is unknown."""
    # Every WHATWG label is ASCII; a lone surrogate in a label made the lookup raise.
    if not label or not label.isascii():
        return None
    encoding = lookupEncoding(label.strip().strip("\"'"))
    if encoding is None:
        return None
    name: str = encoding.codec_info.name
    return name


def _prescan(head: bytes) -> str | None:
    try:
        found = EncodingParser(head).getEncoding()
    except Exception:  # a prescan quirk must never fail a fetch
        return None
    if found is None:
        return None
    if found.name.lower() in _UTF16:
        return "utf-8"
    name: str = found.codec_info.name
    return name


def _detect(body: bytes) -> str:
    return "utf-8" if _valid_utf8(body) else legacy.detect(body)


def _valid_utf8(body: bytes) -> bool:
    """Whether the whole body is UTF-8, checked block by block: decoding it at
    once would hold the page as text (4 bytes a character for most scripts
    beside an emoji) only to throw it away."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    view = memoryview(body)
    try:
        for start in range(0, len(view), _BLOCK_BYTES):
            decoder.decode(view[start : start + _BLOCK_BYTES])
        decoder.decode(b"", True)
    except UnicodeDecodeError:
        return False
    return True


def resolve(body: bytes, declared: str | None) -> tuple[str, int]:
    """The codec to read ``body`` with, and how many leading bytes (a BOM) to skip."""
    for bom, name in _BOMS:
        if body.startswith(bom):
            return name, len(bom)
    codec = _lookup(declared) or _prescan(body[:PRESCAN_BYTES]) or _detect(body)
    return codec, 0


def binary(body: bytes, declared: str | None) -> bool:
    """Whether ``body`` holds bytes that no text in its encoding has: NUL bytes outside
    UTF-16 (a control such as BEL is text, which the boundary removes and counts).

    One stray NUL is tolerated, as HTML replaces it; two or more in the first
    :data:`BINARY_BYTES` make the body binary. Cheap, without detection: a NUL
    byte is NUL in every candidate of detection, and UTF-16 comes only from a
    byte order mark or the header."""
    codec, _skip = (
        resolve(body[:PRESCAN_BYTES], declared) if _maybe_utf16(body, declared) else ("", 0)
    )
    if codec in _UTF16_CODECS:
        return False
    return body.count(0, 0, BINARY_BYTES) > 1


def _maybe_utf16(body: bytes, declared: str | None) -> bool:
    """A byte order mark or a header label can make NUL bytes text; nothing else can."""
    return (
        body.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))
        or _lookup(declared) in _UTF16_CODECS
    )


class DecodedText:
    """A UTF-8 body read as text a piece at a time, the way the tree builder's
    stream reads it (``read(n)`` answers the next ``n`` characters), so the page
    never exists as one decoded string beside its tree. The pieces are exactly
    the slices of :func:`decode`'s answer. Holds the body until its end is read."""

    __slots__ = ("_at", "_body", "_decoder", "_pending", "_used")

    def __init__(self, body: bytes, skip: int) -> None:
        self._body: memoryview | None = memoryview(body)[skip:]
        self._at = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._pending = ""  # decoded, not yet read from _used on
        self._used = 0

    def read(self, size: int = -1) -> str:
        everything = size is None or size < 0
        if everything or len(self._pending) - self._used < size:
            pieces = [self._pending[self._used :]]
            have = len(pieces[0])
            while self._body is not None and (everything or have < size):
                block = self._body[self._at : self._at + _BLOCK_BYTES]
                self._at += len(block)
                last = self._at >= len(self._body)
                piece = self._decoder.decode(block, last)
                if last:
                    self._body.release()
                    self._body = None
                pieces.append(piece)
                have += len(piece)
            self._pending = "".join(pieces)
            self._used = 0
        pending = self._pending
        end = len(pending) if everything else min(self._used + size, len(pending))
        out = pending[self._used : end]
        self._used = end
        return out


def open_text(body: bytes, declared: str | None) -> str | DecodedText:
    """``body`` as text for the tree builder: a UTF-8 page as a :class:`DecodedText`
    read piece by piece (most pages, and the ones whose text costs the most);
    any other encoding decoded at once, as :func:`decode` does."""
    codec, skip = resolve(body, declared)
    if codec == "utf-8":
        return DecodedText(body, skip)
    return decode(body, declared)


def decode(body: bytes, declared: str | None) -> str:
    """``body`` as text; ``declared`` is the Content-Type charset parameter, if any."""
    codec, skip = resolve(body, declared)
    data = memoryview(body)[skip:] if skip else body
    if codec == "replacement":
        return "\ufffd" if len(data) else ""
    if codec == "x-user-defined":
        return bytes(data).decode("latin-1").translate(_X_USER_DEFINED)
    if codec == legacy.DEFAULT:
        return legacy.decode_default(data)
    try:
        return codecs.decode(data, codec, errors="replace")
    except (LookupError, UnicodeError, TypeError):
        return bytes(data).decode("utf-8", errors="replace")
