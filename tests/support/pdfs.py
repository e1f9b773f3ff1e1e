"""PDF files for the tests and the bench, written byte by byte with the standard library
(issue 33): no PDF library is needed to make them, so the tests of the PDF reader depend
on the reader only.

Two kinds. ``document()`` writes a valid PDF 1.7 from ``Page`` and ``Run`` values: the
standard 14 Helvetica fonts, text outside WinAnsi through a second font whose ToUnicode
CMap names each character, pages that are only an image, and the Standard security
handler (RC4 128-bit, revision 3). The layout helpers below it build the cases a reader
gets wrong (two columns drawn across, running headers, hyphens, ligatures, ...) and
return the text a good reader gives where one exists. The hostile builders at the end
write broken or abusive files by hand.
"""

from __future__ import annotations

import hashlib
import math
import struct
import unicodedata
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field

# --- the words the documents are made of ---------------------------------------------

WORDS = [
    "river",
    "stone",
    "market",
    "window",
    "garden",
    "letter",
    "silver",
    "engine",
    "harbor",
    "forest",
    "winter",
    "signal",
    "copper",
    "valley",
    "report",
    "planet",
    "marble",
    "circle",
    "anchor",
    "bridge",
    "meadow",
    "thunder",
    "lantern",
    "orchard",
    "canvas",
    "pocket",
    "saddle",
    "timber",
    "velvet",
    "walnut",
]
LEFT = [
    "apple",
    "banana",
    "cherry",
    "damson",
    "elder",
    "fig",
    "grape",
    "hazel",
    "iris",
    "juniper",
    "kiwi",
    "lemon",
    "mango",
    "nectar",
    "olive",
    "peach",
    "quince",
    "raisin",
    "sloe",
    "tangerine",
]
RIGHT = [
    "falcon",
    "heron",
    "osprey",
    "plover",
    "raven",
    "robin",
    "swallow",
    "thrush",
    "wren",
    "condor",
    "eagle",
    "finch",
    "gannet",
    "hawk",
    "ibis",
    "jay",
    "kestrel",
    "lark",
    "magpie",
    "owl",
]
# The ligature characters and the letters they stand for.
LIGATURES = str.maketrans({"ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl"})


def sentence(seed: int, vocabulary: Sequence[str], length: int = 12) -> str:
    return " ".join(vocabulary[(seed * 7 + i * 3) % len(vocabulary)] for i in range(length))


# --- low-level writing ---------------------------------------------------------------


def build_pdf(objects: Sequence[bytes], root: int = 1, trailer_extra: bytes = b"") -> bytes:
    """A PDF whose object N (from 1) is ``objects[N-1]``, with a correct xref table."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root %d 0 R %s>>\n" % (len(objects) + 1, root, trailer_extra)
    out += b"startxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


def stream(data: bytes, extra: bytes = b"") -> bytes:
    return b"<< /Length %d %s>>\nstream\n" % (len(data), extra) + data + b"\nendstream"


def num(value: float) -> bytes:
    """A PDF number: never an exponent, at most three decimals."""
    if value == int(value):
        return b"%d" % int(value)
    return (b"%.3f" % value).rstrip(b"0").rstrip(b".")


def literal(data: bytes) -> bytes:
    """A literal string: the three characters that end or escape one, escaped."""
    escaped = data.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")
    return b"(" + escaped.replace(b"\r", b"\\r") + b")"


def hex_string(data: bytes) -> bytes:
    return b"<" + data.hex().encode() + b">"


def text_string(text: str) -> bytes:
    """A text string's bytes: PDFDocEncoding where it matches Latin-1, else UTF-16BE
    with its byte order mark."""
    if all(" " <= c <= "~" or ("\xa1" <= c <= "\xff" and c != "\xad") for c in text):
        return text.encode("latin-1")
    return b"\xfe\xff" + text.encode("utf-16-be")


# --- RC4 and the Standard security handler (revision 3) --------------------------------

PAD = bytes.fromhex("28BF4E5E4E758A4164004E56FFFA01082E2E00B6D0683E802F0CA9FE6453697A")


def rc4(key: bytes, data: bytes) -> bytes:
    """RC4; the same call encrypts and decrypts."""
    s = list(range(256))
    j = 0
    for i in range(256):
        j = (j + s[i] + key[i % len(key)]) & 0xFF
        s[i], s[j] = s[j], s[i]
    stream_ = bytearray(len(data))
    i = j = 0
    for n in range(len(data)):
        i = (i + 1) & 0xFF
        j = (j + s[i]) & 0xFF
        s[i], s[j] = s[j], s[i]
        stream_[n] = s[(s[i] + s[j]) & 0xFF]
    # One XOR of two big integers instead of one a byte.
    mixed = int.from_bytes(data, "big") ^ int.from_bytes(stream_, "big")
    return mixed.to_bytes(len(data), "big")


def padded(password: str) -> bytes:
    """The password as 32 bytes: cut, or filled out with the padding string."""
    return (password.encode("latin-1") + PAD)[:32]


def _rc4_twenty(key: bytes, data: bytes) -> bytes:
    """Revision 3: RC4 with the key, then 19 more times with the key XOR 1..19."""
    for round_ in range(20):
        data = rc4(bytes(b ^ round_ for b in key), data)
    return data


def owner_entry(owner_password: str, user_password: str) -> bytes:
    """/O (algorithm 3, revision 3, 128-bit key)."""
    digest = hashlib.md5(padded(owner_password or user_password)).digest()
    for _ in range(50):
        digest = hashlib.md5(digest).digest()
    return _rc4_twenty(digest, padded(user_password))


def file_key(user_password: str, owner: bytes, permissions: int, file_id: bytes) -> bytes:
    """The file's encryption key (algorithm 2, revision 3, 16 bytes)."""
    digest = hashlib.md5(
        padded(user_password) + owner + struct.pack("<i", permissions) + file_id
    ).digest()
    for _ in range(50):
        digest = hashlib.md5(digest).digest()
    return digest


def user_entry(key: bytes, file_id: bytes) -> bytes:
    """/U (algorithm 5): 16 bytes that prove the key, padded to 32."""
    return _rc4_twenty(key, hashlib.md5(PAD + file_id).digest()) + bytes(16)


def object_key(key: bytes, number: int, generation: int = 0) -> bytes:
    """The key for one object's strings and streams (algorithm 1)."""
    salt = number.to_bytes(3, "little") + generation.to_bytes(2, "little")
    return hashlib.md5(key + salt).digest()[:16]


# --- documents -----------------------------------------------------------------------


@dataclass
class Run:
    """One piece of text drawn at a place. A run with characters outside WinAnsi (cp1252)
    is drawn whole with a second font whose ToUnicode CMap names them. Its glyphs are
    missing from Helvetica, and PDFium drops such a run when it is one character alone:
    give it a neighbour ("aΩ", not "Ω")."""

    text: str
    x: float  # left edge in points from the page's left
    y: float  # baseline in points from the page's bottom
    size: float = 11.0
    bold: bool = False  # Helvetica-Bold instead of Helvetica
    invisible: bool = False  # text render mode 3


@dataclass
class Page:
    runs: list[Run] = field(default_factory=list)
    width: float = 612
    height: float = 792
    image_only: bool = False  # one image XObject over the page and no text; runs unused


REGULAR, BOLD = 0, 1
FONT_NAMES = (b"Helvetica", b"Helvetica-Bold")
LIGATURE_GLYPHS = {"ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl", "ﬅ": "longs_t"}
LIGATURE_GLYPHS["ﬆ"] = "s_t"
GLYPH_WIDTHS = {"ff": 556, "fi": 500, "fl": 500, "ffi": 778, "ffl": 778}
IMAGE_SIDE = 64


class _Extra:
    """The second font of one style: a run with any character outside cp1252 is drawn
    whole in it (PDFium drops a one-character text object whose glyph the font lacks,
    so such characters are never shown alone). Characters of cp1252 keep their WinAnsi
    codes; the others take free codes, named in /Differences and in the ToUnicode CMap."""

    def __init__(self) -> None:
        self.chars: set[str] = set()
        self.codes: dict[str, int] = {}

    def assign(self) -> None:
        """Give each character its code, once every run has been seen."""
        outside = []
        for char in sorted(self.chars):
            try:
                self.codes[char] = char.encode("cp1252")[0]
            except UnicodeEncodeError:
                outside.append(char)
        used = set(self.codes.values())
        free = [code for code in range(1, 256) if code not in used and code != 0x20]
        if len(outside) > len(free):
            raise ValueError(f"{len(outside)} characters outside cp1252 in one style")
        self.codes.update(zip(outside, free, strict=False))

    def font(self, style: int, to_unicode: int, extra: bytes = b"") -> bytes:
        differences = b" ".join(
            b"%d /%s" % (code, _glyph_name(char).encode())
            for char, code in sorted(self.codes.items(), key=lambda item: item[1])
            if not _in_cp1252(char)
        )
        widths = dict.fromkeys(range(256), 0)
        widths.update({code: _glyph_width(char) for char, code in self.codes.items()})
        first, last = min(self.codes.values()), max(self.codes.values())
        return (
            b"<< /Type /Font /Subtype /Type1 /BaseFont /%s /Encoding << /Type /Encoding "
            b"/BaseEncoding /WinAnsiEncoding /Differences [%s] >> /FirstChar %d "
            b"/LastChar %d /Widths [%s] /ToUnicode %d 0 R %s>>"
            % (
                FONT_NAMES[style],
                differences,
                first,
                last,
                b" ".join(b"%d" % widths[code] for code in range(first, last + 1)),
                to_unicode,
                extra,
            )
        )

    def cmap(self) -> bytes:
        pairs = [b"<%02X> <%s>" % (code, _utf16_hex(c)) for c, code in self.codes.items()]
        blocks = b"".join(
            b"%d beginbfchar\n%s\nendbfchar\n" % (len(chunk), b"\n".join(chunk))
            for chunk in (pairs[i : i + 100] for i in range(0, len(pairs), 100))
        )
        return (
            b"/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n"
            b"/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n"
            b"/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n"
            b"1 begincodespacerange\n<00> <FF>\nendcodespacerange\n" + blocks + b"endcmap\n"
            b"CMapName currentdict /CMapResource defineresource pop\nend\nend\n"
        )


def _in_cp1252(text: str) -> bool:
    try:
        text.encode("cp1252")
    except UnicodeEncodeError:
        return False
    return True


def _utf16_hex(char: str) -> bytes:
    return char.encode("utf-16-be").hex().upper().encode()


def _glyph_name(char: str) -> str:
    if char in LIGATURE_GLYPHS:
        return LIGATURE_GLYPHS[char]
    point = ord(char)
    return f"uni{point:04X}" if point <= 0xFFFF else f"u{point:X}"


def _glyph_width(char: str) -> int:
    """Widths near Helvetica's: they place the characters, whatever glyph is drawn."""
    if char in LIGATURE_GLYPHS:
        return GLYPH_WIDTHS.get(LIGATURE_GLYPHS[char], 600)
    if unicodedata.east_asian_width(char) in "WF":
        return 1000
    if char in " .,;:!|'`()[]/\\ilfjtI":
        return 278
    return 833 if char in "mwMW%@" else 556


def _run_operators(run: Run, extras: tuple[_Extra, _Extra]) -> bytes:
    style = BOLD if run.bold else REGULAR
    if _in_cp1252(run.text):
        font, shown = style + 1, literal(run.text.encode("cp1252"))
    else:
        font, shown = style + 3, hex_string(bytes(extras[style].codes[c] for c in run.text))
    body = b"BT /F%d %s Tf %s %s Td %s Tj ET" % (font, num(run.size), num(run.x), num(run.y), shown)
    # Text render mode lasts past ET: q/Q keeps it to this run.
    return b"q 3 Tr " + body + b" Q" if run.invisible else body


def _content(page: Page, extras: tuple[_Extra, _Extra]) -> bytes:
    if page.image_only:
        return b"q %s 0 0 %s 0 0 cm /Im1 Do Q" % (num(page.width), num(page.height))
    return b"\n".join(_run_operators(run, extras) for run in page.runs)


def scan_image() -> bytes:
    """A 64x64 grey image of dark bars on white, like lines of text seen from afar."""
    rows = []
    for y in range(IMAGE_SIDE):
        inked = y % 6 in (2, 3) and 6 <= y < 58
        row = bytearray(b"\xff" * IMAGE_SIDE)
        if inked:
            for x in range(6, 58 - (y * 7) % 13):
                row[x] = 0x20 if (x + y) % 9 else 0xFF  # word gaps
        rows.append(bytes(row))
    return zlib.compress(b"".join(rows))


class _Objects:
    """Object bodies by number; streams kept apart until the key for them is known."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        self.streams: dict[int, tuple[bytes, bytes]] = {}

    def add(self, body: bytes = b"") -> int:
        self.bodies.append(body)
        return len(self.bodies)

    def add_stream(self, data: bytes, extra: bytes = b"") -> int:
        number = self.add()
        self.streams[number] = (data, extra)
        return number

    def set(self, number: int, body: bytes) -> None:
        self.bodies[number - 1] = body

    def finish(self, key: bytes | None) -> list[bytes]:
        for number, (data, extra) in self.streams.items():
            if key is not None:
                data = rc4(object_key(key, number), data)
            self.bodies[number - 1] = stream(data, extra)
        return self.bodies


def document(
    pages: Sequence[Page],
    *,
    title: str | None = None,
    compress: bool = True,
    user_password: str | None = None,
    owner_password: str | None = None,
    permissions: int = -4,
    descriptors: bool = False,
) -> bytes:
    """A PDF 1.7 of the pages. A password (either) encrypts it with RC4 128-bit
    (V 2, R 3); ``user_password=""`` with an owner password opens without one.
    ``permissions`` is /P (-4 allows all; -3904 forbids all, copying included).
    ``descriptors`` gives the fonts a /FontDescriptor (the standard 14 need none, and
    without one PDFium reports weight 0 for regular and bold alike)."""
    extras = (_Extra(), _Extra())
    for page in pages:
        for run in [] if page.image_only else page.runs:
            if not _in_cp1252(run.text):
                extras[BOLD if run.bold else REGULAR].chars.update(run.text)
    for extra in extras:
        extra.assign()
    contents = [_content(page, extras) for page in pages]
    if compress:
        contents = [zlib.compress(c, 6) for c in contents]
    objects = _Objects()
    objects.add(b"<< /Type /Catalog /Pages 2 0 R >>")
    page_tree = objects.add()
    resources = objects.add()
    described = [b"", b""]
    if descriptors:
        described = [b"/FontDescriptor %d 0 R " % objects.add(d) for d in DESCRIPTORS]
    fonts = [
        b"/F%d %d 0 R" % (style + 1, objects.add(_standard_font(style, described[style])))
        for style in (REGULAR, BOLD)
    ]
    for style, extra in enumerate(extras):
        if extra.codes:
            cmap = objects.add_stream(extra.cmap())
            font = objects.add(extra.font(style, cmap, described[style]))
            fonts.append(b"/F%d %d 0 R" % (style + 3, font))
    xobjects = b""
    if any(page.image_only for page in pages):
        image = objects.add_stream(
            scan_image(),
            b"/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray "
            b"/BitsPerComponent 8 /Filter /FlateDecode " % (IMAGE_SIDE, IMAGE_SIDE),
        )
        xobjects = b"/XObject << /Im1 %d 0 R >> " % image
    objects.set(resources, b"<< /Font << %s >> %s>>" % (b" ".join(fonts), xobjects))
    kids = []
    for page, content in zip(pages, contents, strict=True):
        content_number = objects.add_stream(content, b"/Filter /FlateDecode " if compress else b"")
        kids.append(
            b"%d 0 R"
            % objects.add(
                b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 %s %s] /Resources %d 0 R "
                b"/Contents %d 0 R >>"
                % (page_tree, num(page.width), num(page.height), resources, content_number)
            )
        )
    objects.set(
        page_tree, b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(kids), len(kids))
    )

    file_id = hashlib.md5(b"".join(contents) + (title or "").encode()).digest()
    trailer = b"/ID [%s %s] " % (hex_string(file_id), hex_string(file_id))
    key = None
    if user_password is not None or owner_password is not None:
        user = user_password or ""
        owner = owner_entry(owner_password or user, user)
        key = file_key(user, owner, permissions, file_id)
        encrypt = objects.add(
            b"<< /Filter /Standard /V 2 /R 3 /Length 128 /O %s /U %s /P %d >>"
            % (hex_string(owner), hex_string(user_entry(key, file_id)), permissions)
        )
        trailer += b"/Encrypt %d 0 R " % encrypt
    info = objects.add()
    entries = {b"Producer": "rypsok tests.support.pdfs"}
    if title is not None:
        entries[b"Title"] = title
    strings = []
    for name, value in entries.items():
        data = text_string(value)
        if key is not None:
            data = rc4(object_key(key, info), data)
        strings.append(b"/%s %s" % (name, hex_string(data)))
    objects.set(info, b"<< %s >>" % b" ".join(strings))
    trailer += b"/Info %d 0 R " % info
    return build_pdf(objects.finish(key), trailer_extra=trailer)


def _standard_font(style: int, extra: bytes = b"") -> bytes:
    return b"<< /Type /Font /Subtype /Type1 /BaseFont /%s /Encoding /WinAnsiEncoding %s>>" % (
        FONT_NAMES[style],
        extra,
    )


# Helvetica's and Helvetica-Bold's descriptors as their AFM files give them; PDFium's
# FPDFText_GetFontWeight is computed from /StemV (88 gives 440, 140 gives 700).
DESCRIPTORS = (
    b"<< /Type /FontDescriptor /FontName /Helvetica /Flags 32 /FontBBox [-166 -225 1000 931] "
    b"/ItalicAngle 0 /Ascent 718 /Descent -207 /CapHeight 718 /StemV 88 /FontWeight 400 >>",
    b"<< /Type /FontDescriptor /FontName /Helvetica-Bold /Flags 262176 "
    b"/FontBBox [-170 -228 1003 962] /ItalicAngle 0 /Ascent 718 /Descent -207 "
    b"/CapHeight 718 /StemV 140 /FontWeight 700 >>",
)


def lines_at(lines: Sequence[str], x: float, top: float, leading: float, size: float) -> list[Run]:
    return [Run(text, x, top - i * leading, size) for i, text in enumerate(lines)]


# --- layout cases --------------------------------------------------------------------


def two_columns_across(lines: int) -> tuple[bytes, list[str], list[str]]:
    """One page of two columns (fruit on the left, birds on the right) whose lines are
    drawn left, right, left, right: the content stream interleaves the columns."""
    left = [f"{sentence(i, LEFT, 5)} {i + 1}" for i in range(lines)]
    right = [f"{sentence(i, RIGHT, 5)} {i + 1}" for i in range(lines)]
    # Each column's paragraph ends with its column (one that ended mid-sentence would
    # run on into the next column, as a reader takes it).
    left[-1] += "."
    right[-1] += "."
    leading = min(14.0, 680 / max(lines, 1))
    size = min(10.0, leading * 0.8)
    runs = []
    for i in range(lines):
        y = 740 - i * leading
        runs += [Run(left[i], 72, y, size), Run(right[i], 330, y, size)]
    return document([Page(runs)]), left, right


HEADER = "Annual report of the harbor board"


def running_line(page: int, line: int) -> str:
    """Line ``line`` of the body of page ``page`` (both from 1) of running_header_footer."""
    return f"Entry {page}.{line} {sentence(page * 31 + line, WORDS, 9)}"


def running_header_footer(
    pages: int, *, footer: str = "Page {page} of {pages}", lines: int = 30
) -> bytes:
    """Each page: HEADER at the top, ``footer`` at the bottom ("{page}" for a bare
    number), and body lines ``running_line(page, 1..lines)`` between them."""
    out = []
    for page in range(1, pages + 1):
        runs = [Run(HEADER, 72, 760, 9)]
        body = [running_line(page, line) for line in range(1, lines + 1)]
        runs += lines_at(body, 72, 720, min(20.0, 640 / max(lines, 1)), 11)
        runs.append(Run(footer.format(page=page, pages=pages), 290, 36, 9))
        out.append(Page(runs))
    return document(out)


HYPHENATED = [
    ("The extraction of informa-", "The extraction of information"),
    ("tion from printed documents needs", "from printed documents needs"),
    ("care and patience: a hyphen-", "care and patience: a hyphenated"),
    ("ated word at the end of a line is", "word at the end of a line is"),
    ("one word, broken for the print-", "one word, broken for the printer"),
    ("er and joined again by the reader.", "and joined again by the reader."),
]


def hyphenated() -> tuple[bytes, str]:
    """A paragraph with words broken at line ends by "-", and its text joined again
    (line ends as spaces)."""
    runs = lines_at([drawn for drawn, _ in HYPHENATED], 72, 720, 15, 12)
    return document([Page(runs)]), " ".join(joined for _, joined in HYPHENATED)


LIGATURE_LINES = [
    "The ﬁrst ﬂoor of the oﬃce had a ﬁne eﬀect on the staﬀ",
    "who reﬂected on the conﬁguration of the ﬂow of work,",
    "and the baﬄing ﬁgures were ﬁnally ﬁled.",
]


def with_ligatures() -> tuple[bytes, str]:
    """Text drawn with ligature glyphs (U+FB00..FB04 by ToUnicode), and its letters
    (line ends as spaces)."""
    runs = lines_at(LIGATURE_LINES, 72, 720, 16, 12)
    return document([Page(runs)]), " ".join(LIGATURE_LINES).translate(LIGATURES)


NON_LATIN_LINES = [
    "Greek: Καλημέρα κόσμε",
    "Cyrillic: Здравствуй, мир",
    "Mixed: naïve café ﬁnal Ωmega",
]


def beyond_winansi() -> tuple[bytes, str]:
    """Greek and Cyrillic letters (outside cp1252) beside Latin ones, and the text
    (lines joined by newlines)."""
    runs = lines_at(NON_LATIN_LINES, 72, 720, 16, 12)
    return document([Page(runs)]), "\n".join(NON_LATIN_LINES)


TITLE = "Harbor Works Review"
SECTION = "1 Introduction"
PARAGRAPH = [
    "The harbor board met in winter to review the copper signal",
    "works along the valley, the marble bridge and the timber",
    "anchor store, and to plan the spring work on the river.",
]
BULLETS = ["• New lanterns on the bridge", "• A second crane for the market"]
NUMBERED = ["1. Survey the orchard wall", "2. Repair the meadow road"]
TABLE = [["Item", "Quantity", "Price"], ["Lantern", "12", "4.50"], ["Rope", "40", "0.75"]]


def headings_lists_table() -> bytes:
    """A 24 pt bold title, a 16 pt bold heading, an 11 pt paragraph of three lines, a
    bulleted and a numbered list and a 3x3 table (cells as runs in three columns);
    the texts are TITLE, SECTION, PARAGRAPH, BULLETS, NUMBERED and TABLE."""
    runs = [Run(TITLE, 72, 730, 24, bold=True), Run(SECTION, 72, 690, 16, bold=True)]
    runs += lines_at(PARAGRAPH, 72, 666, 14, 11)
    runs += lines_at(BULLETS, 90, 610, 14, 11)
    runs += lines_at(NUMBERED, 90, 570, 14, 11)
    for r, row in enumerate(TABLE):
        for c, cell in enumerate(row):
            runs.append(Run(cell, 72 + c * 120, 520 - r * 18, 11, bold=r == 0))
    return document([Page(runs)])


def many_pages_lines(page: int, words_per_page: int = 300) -> list[str]:
    """The lines of page ``page`` (from 1) of many_pages: "Page N", then lines of twelve
    words that each start with their place, "N.K" (so every line is distinct)."""
    lines = [f"Page {page}"]
    for line in range(1, max(1, math.ceil((words_per_page - 2) / 12)) + 1):
        words = [WORDS[(page * 7 + line * 11 + i * 3) % len(WORDS)] for i in range(11)]
        lines.append(f"{page}.{line} " + " ".join(words))
    return lines


def many_pages(count: int, words_per_page: int = 300) -> bytes:
    """A long report: page N holds many_pages_lines(N, words_per_page)."""
    out = []
    for page in range(1, count + 1):
        lines = many_pages_lines(page, words_per_page)
        leading = min(14.0, 648 / max(len(lines), 1))
        out.append(Page(lines_at(lines, 72, 720, leading, min(10.0, leading * 0.8))))
    return document(out)


def one_huge_page(chars: int) -> bytes:
    """One page holding about ``chars`` characters in 1 pt type, the page made as large
    as the text: lines of whole words, each starting with its number, at most about
    10,000 of them."""
    per_line = max(100, math.ceil(chars / 10_000))
    words, template = " ".join(WORDS * (per_line // 50 + 1)).split(" "), ""
    for word in words:
        if len(template) + len(word) + 8 > per_line:
            break
        template += " " + word
    count = max(1, round(chars / (len(template) + 5)))
    lines = [b"%d%s" % (i, template.encode()) for i in range(1, count + 1)]
    width, height = per_line * 0.6 + 20, len(lines) * 1.2 + 20
    content = b"BT /F1 1 Tf 1.2 TL 10 %s Td\n(" % num(height - 10)
    content += b") '\n(".join(lines) + b") '\nET"  # words only: nothing to escape
    page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %s %s] /Contents 4 0 R " % (
        num(width),
        num(height),
    )
    page += b"/Resources << /Font << /F1 5 0 R >> >> >>"
    data = zlib.compress(content, 1)
    return build_pdf(
        [CATALOG, PAGES_ONE, page, stream(data, b"/Filter /FlateDecode "), _standard_font(0)]
    )


# --- the hostile set, written by hand ----------------------------------------------

FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def text_page(parent: int, contents: int, font: int, extra: bytes = b"") -> bytes:
    return (
        b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
        b"/Resources << /Font << /F1 %d 0 R >> >> %s>>" % (parent, contents, font, extra)
    )


HELLO = b"BT /F1 12 Tf 72 720 Td (Hello hostile world) Tj ET"
CATALOG = b"<< /Type /Catalog /Pages 2 0 R >>"
PAGES_ONE = b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>"


def bomb(inflated: int = 1 << 30) -> bytes:
    """A page whose content stream is FlateDecode and inflates to ``inflated`` bytes of
    spaces."""
    compressor = zlib.compressobj(9)
    chunk = b" " * (1 << 20)
    whole, rest = divmod(inflated, len(chunk))
    parts = [compressor.compress(chunk) for _ in range(whole)]
    parts.append(compressor.compress(chunk[:rest]))
    data = b"".join(parts) + compressor.flush()
    return build_pdf(
        [CATALOG, PAGES_ONE, text_page(2, 4, 5), stream(data, b"/Filter /FlateDecode "), FONT]
    )


def xref_loop() -> bytes:
    """A valid one-page file whose trailer's /Prev is the offset of its own xref."""
    objects = [CATALOG, PAGES_ONE, text_page(2, 4, 5), stream(HELLO), FONT]
    plain = build_pdf(objects)
    xref = int(plain.rsplit(b"startxref\n", 1)[1].split(b"\n", 1)[0])
    return build_pdf(objects, trailer_extra=b"/Prev %d " % xref)


def self_reference() -> bytes:
    """Objects that point at themselves: an object stream listed as holding itself
    (cross-reference stream, type-2 entry), contents and a length that are their own
    references."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    bodies = {
        1: CATALOG,
        2: PAGES_ONE,
        3: text_page(2, 4, 5, b"/Annots 6 0 R "),
        4: b"4 0 R",  # the page's contents: itself
        5: FONT,
        # 6 is said (by the xref stream) to live in object stream 7 ...
        7: b"<< /Type /ObjStm /N 2 /First 8 /Length 7 0 R >>\nstream\n6 0 7 4 [6 0 R]\n7 0 R"
        b"\nendstream",  # ... which holds itself and has its own /Length
    }
    offsets: dict[int, int] = {}
    for number in sorted(bodies):
        offsets[number] = len(out)
        out += b"%d 0 obj\n" % number + bodies[number] + b"\nendobj\n"
    rows = bytearray(b"\x00" + (0).to_bytes(4, "big") + (65535).to_bytes(2, "big"))
    for number in range(1, 9):
        if number == 6:
            rows += b"\x02" + (7).to_bytes(4, "big") + (0).to_bytes(2, "big")
        elif number == 8:
            rows += b"\x01" + len(out).to_bytes(4, "big") + (0).to_bytes(2, "big")
        else:
            rows += b"\x01" + offsets[number].to_bytes(4, "big") + (0).to_bytes(2, "big")
    xref = len(out)
    out += b"8 0 obj\n" + stream(bytes(rows), b"/Type /XRef /Size 9 /W [1 4 2] /Root 1 0 R ")
    out += b"\nendobj\nstartxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


def deep_nesting(levels: int = 100_000) -> bytes:
    """A page dictionary carrying an array nested ``levels`` deep."""
    nest = b"/Nest " + b"[" * levels + b"]" * levels + b" "
    return build_pdf([CATALOG, PAGES_ONE, text_page(2, 4, 5, nest), stream(HELLO), FONT])


def empty_pages(count: int = 10_000) -> bytes:
    kids = b" ".join(b"%d 0 R" % (3 + i) for i in range(count))
    pages = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, count)
    page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>"
    return build_pdf([CATALOG, pages, *([page] * count)])


def actions() -> bytes:
    """Text, an /OpenAction running JavaScript and a link annotation that launches."""
    launch = (
        b"<< /Type /Annot /Subtype /Link /Rect [0 0 612 792] "
        b"/A << /S /Launch /F (calc.exe) /Win << /F (cmd.exe) /P (/c calc) >> >> >>"
    )
    catalog = (
        b"<< /Type /Catalog /Pages 2 0 R /OpenAction << /S /JavaScript /JS (app.alert(1);) >> "
        b"/Names << /JavaScript << /Names [(x) << /S /JavaScript /JS (this.print();) >>] >> >> >>"
    )
    return build_pdf(
        [catalog, PAGES_ONE, text_page(2, 4, 5, b"/Annots [6 0 R] "), stream(HELLO), FONT, launch]
    )


def hostile_files(truncate: bytes | None = None) -> dict[str, bytes]:
    """The hand-written hostile set. ``truncate`` is a good file to cut; without it a
    small hand-written one is cut."""
    whole = truncate if truncate is not None else xref_loop()
    return {
        "truncated": whole[: len(whole) * 6 // 10],
        "bomb-1GiB": bomb(),
        "xref-loop": xref_loop(),
        "self-reference": self_reference(),
        "nesting-100k": deep_nesting(),
        "empty-10k-pages": empty_pages(),
        "js-launch": actions(),
    }
