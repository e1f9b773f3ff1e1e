"""Properties of charset decoding (REQ-PAGE-007, REQ-SEC-023): rypsok.core.html.charset.

Whatever the bytes and whatever the Content-Type says (a real label, a mangled one, or
garbage a server made up), decoding gives text and never raises; replaced bytes never
become lone surrogates; and a UTF-8 body that declares nothing reads as itself.
"""

from __future__ import annotations

import codecs

import webencodings
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from rypsok.core.html import charset

LABELS = sorted(webencodings.LABELS)
labels = st.one_of(
    st.none(),
    st.sampled_from(LABELS),
    st.sampled_from(LABELS).map(lambda s: f' "{s.upper()}"\t'),  # quoted, padded, shouting
    st.text(max_size=30),  # garbage, lone surrogates included
    st.sampled_from(
        [
            "utf-7",
            "utf-32",
            "rot13",
            "base64",
            "hex",
            "zlib",
            "idna",
            "punycode",
            "undefined",
            "mbcs",
            "unicode_escape",
            "raw-unicode-escape",
            "x" * 5000,
        ]
    ),
)
# Bytes with the shapes decoders trip on: BOMs, escapes, truncated sequences, a meta prescan.
PIECES = [
    b"\xef\xbb\xbf",
    b"\xff\xfe",
    b"\xfe\xff",
    b"\x00",
    b"\x1b$B",
    b"\x1b(B",
    b"~{",
    b"\xed\xa0\x80",
    b"\xf4\x90\x80\x80",
    b"\xc3",
    b"\x80",
    b"+AGE-",
    b"<meta charset=",
    b"utf-16",
    b"gb18030",
    b"iso-2022-jp",
    b'">',
    b"<meta http-equiv=content-type content='text/html; charset=x-user-defined'>",
]
bodies = st.one_of(
    st.binary(max_size=400),
    st.lists(st.one_of(st.sampled_from(PIECES), st.binary(max_size=8)), max_size=30).map(b"".join),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bodies, labels)
@example(b"abc", "\ud800")  # a lone surrogate in the label used to raise
@example(b"\x81\x30\x81", "gb18030")
@example(b"\xff\xfe\x00\xd8", None)
def test_req_page_007_decoding_never_raises_and_gives_encodable_text(
    body: bytes, label: str | None
) -> None:
    text = charset.decode(body, label)
    assert isinstance(text, str)
    text.encode("utf-8")  # strict: no lone surrogate
    assert len(text) <= len(body)  # each character comes from at least one byte
    _codec, skip = charset.resolve(body, label)
    assert skip in (0, 2, 3) and skip <= len(body)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300), st.sampled_from([None, "", "utf-8", "UTF8", "unicode-1-1-utf-8"]))
def test_req_page_007_valid_utf8_that_declares_nothing_else_reads_as_itself(
    text: str, label: str | None
) -> None:
    assume(not text.startswith("\ufeff"))  # a BOM is a declaration, and it is dropped
    assume("<meta" not in text.lower())  # nor a <meta> that names another charset
    assert charset.decode(text.encode("utf-8"), label) == text


@settings(max_examples=200, deadline=None)
@given(
    st.text(max_size=200),
    labels,
    st.sampled_from(
        [
            (codecs.BOM_UTF8, "utf-8"),
            (codecs.BOM_UTF16_LE, "utf-16-le"),
            (codecs.BOM_UTF16_BE, "utf-16-be"),
        ]
    ),
)
def test_req_page_007_a_byte_order_mark_wins_over_any_label(
    text: str, label: str | None, bom: tuple[bytes, str]
) -> None:
    mark, codec = bom
    assert charset.decode(mark + text.encode(codec), label) == text


# -- a UTF-8 page read piece by piece (charset.DecodedText) -----------------------------

utf8_bodies = st.one_of(
    st.text(max_size=200).map(lambda t: t.encode("utf-8")),
    st.lists(
        st.one_of(
            st.text(max_size=12).map(lambda t: t.encode("utf-8")),
            st.sampled_from([b"\xf0\x9f", b"\x98\x80", b"\xe2\x82", b"\xc3", b"\xff", b"\xed\xa0"]),
        ),
        max_size=40,
    ).map(b"".join),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    utf8_bodies,
    st.sampled_from([None, "utf-8", "x"]),
    st.integers(1, 9),
    st.lists(st.integers(-1, 20), min_size=1, max_size=20),
)
@example(b"ab\xf0\x9f", "utf-8", 1, [3])  # a sequence cut by the end of the body
@example("x\u00e9\U0001f600y".encode() + b"\xff\xc3", "utf-8", 2, [1, 1, 1])
@example(b"\xef\xbb\xbfab\xe2\x82", None, 3, [2])  # a BOM, then a cut sequence
def test_req_page_007_a_utf8_page_read_in_pieces_is_its_whole_decoding_sliced(
    body: bytes, label: str | None, block: int, sizes: list[int]
) -> None:
    # Blocks of a few bytes, so that characters and invalid sequences straddle them.
    kept, charset._BLOCK_BYTES = charset._BLOCK_BYTES, block
    try:
        source = charset.open_text(body, label)
        whole = charset.decode(body, label)
        if charset.resolve(body, label)[0] != "utf-8":
            assert source == whole
            return
        assert isinstance(source, charset.DecodedText)
        assert source.read(0) == ""  # html5lib's probe reads nothing
        read: list[str] = []
        for size in sizes:
            piece = source.read(size)
            if size >= 0:
                at = sum(map(len, read))
                assert piece == whole[at : at + size]  # exactly size, fewer only at the end
            read.append(piece)
        read.append(source.read())
        assert "".join(read) == whole
        assert source.read(5) == ""
        assert source._body is None  # the body is let go of once read to its end
    finally:
        charset._BLOCK_BYTES = kept


@settings(max_examples=300, deadline=None)
@given(utf8_bodies, st.integers(1, 9))
def test_req_page_007_utf8_is_recognised_block_by_block_as_a_whole(body: bytes, block: int) -> None:
    kept, charset._BLOCK_BYTES = charset._BLOCK_BYTES, block
    try:
        try:
            body.decode("utf-8")
            valid = True
        except UnicodeDecodeError:
            valid = False
        assert charset._valid_utf8(body) is valid
    finally:
        charset._BLOCK_BYTES = kept
