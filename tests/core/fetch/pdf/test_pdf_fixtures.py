"""The PDF generator of tests/support/pdfs.py checked on its own, in pure Python (issue
33): the tests of the PDF reader trust its files, so its cross-reference tables, its
encryption and its strings are checked here without any PDF library."""

from __future__ import annotations

import hashlib
import re
import time
import zlib
from collections.abc import Callable

import pytest

from tests.support import pdfs


def find(pattern: bytes, data: bytes) -> re.Match[bytes]:
    found = re.search(pattern, data)
    assert found is not None, pattern
    return found


def xref_offsets(data: bytes) -> dict[int, int]:
    """Object number -> offset, from the classic xref table the file ends with."""
    start = int(data.rsplit(b"startxref\n", 1)[1].split(b"\n", 1)[0])
    assert data[start:].startswith(b"xref\n0 ")
    head, rest = data[start + 5 :].split(b"\n", 1)
    count = int(head.split()[1])
    assert rest[:20] == b"0000000000 65535 f \n"
    find(rb"/Size %d\b" % count, data[start:])
    return {n: int(rest[n * 20 : n * 20 + 10]) for n in range(1, count)}


def obj(data: bytes, number: int) -> tuple[bytes, bytes]:
    """Object ``number``'s dictionary, and its stream's raw data (b"" if none)."""
    text = data[xref_offsets(data)[number] :].split(b" 0 obj\n", 1)[1]
    head = text.split(b"\nendobj", 1)[0]
    if b"\nstream\n" not in head:
        return head, b""
    head, tail = text.split(b"\nstream\n", 1)
    return head, tail[: int(find(rb"/Length (\d+)", head)[1])]


def string_entry(head: bytes, name: bytes) -> bytes:
    return bytes.fromhex(find(rb"/%s <([0-9a-f]*)>" % name, head)[1].decode())


def trailer_ref(data: bytes, name: bytes) -> int:
    return int(find(rb"/%s (\d+) 0 R" % name, data.rsplit(b"trailer", 1)[1])[1])


PAGES = [
    pdfs.Page([pdfs.Run("Hello (world) \\ ﬁne Ω", 72, 700), pdfs.Run("Bold", 72, 680, bold=True)]),
    pdfs.Page(image_only=True),
]
BUILDERS: dict[str, Callable[[], bytes]] = {
    "document": lambda: pdfs.document(PAGES, title="A title"),
    "uncompressed": lambda: pdfs.document(PAGES, compress=False),
    "encrypted": lambda: pdfs.document(PAGES, user_password="u", owner_password="o"),
    "descriptors": lambda: pdfs.document(PAGES, descriptors=True),
    "two-columns": lambda: pdfs.two_columns_across(10)[0],
    "running": lambda: pdfs.running_header_footer(3),
    "huge-page": lambda: pdfs.one_huge_page(50_000),
    "bomb": lambda: pdfs.bomb(1 << 20),
    "xref-loop": pdfs.xref_loop,
    "nesting": lambda: pdfs.deep_nesting(100),
    "empty-pages": lambda: pdfs.empty_pages(5),
    "actions": pdfs.actions,
}


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_issue_33_every_xref_offset_points_at_its_object(name: str) -> None:
    data = BUILDERS[name]()
    assert data.startswith(b"%PDF-1.7\n") and data.endswith(b"%%EOF\n")
    for number, offset in xref_offsets(data).items():
        assert data[offset:].startswith(b"%d 0 obj\n" % number), number


@pytest.mark.parametrize(
    ("key", "plain", "cipher"),
    [
        (b"Key", b"Plaintext", "bbf316e8d940af0ad3"),
        (b"Wiki", b"pedia", "1021bf0420"),
        (b"Secret", b"Attack at dawn", "45a01f645fc35b383552544b9bf5"),
    ],
)
def test_issue_33_rc4_gives_the_published_vectors(key: bytes, plain: bytes, cipher: str) -> None:
    assert pdfs.rc4(key, plain).hex() == cipher
    assert pdfs.rc4(key, bytes.fromhex(cipher)) == plain


def encryption(data: bytes) -> tuple[bytes, bytes, int, bytes]:
    """/O, /U, /P and the first /ID of an encrypted file."""
    encrypt, _ = obj(data, trailer_ref(data, b"Encrypt"))
    assert b"/Filter /Standard /V 2 /R 3 /Length 128" in encrypt
    file_id = bytes.fromhex(find(rb"/ID \[<([0-9a-f]+)>", data)[1].decode())
    permissions = int(find(rb"/P (-?\d+)", encrypt)[1])
    return string_entry(encrypt, b"O"), string_entry(encrypt, b"U"), permissions, file_id


@pytest.mark.parametrize(("user", "owner"), [("s3cret", "own3r"), ("", "own3r"), ("pw", None)])
def test_issue_33_the_user_password_finds_the_key_that_decrypts(
    user: str, owner: str | None
) -> None:
    title = "Encrypted Ω title"
    data = pdfs.document(PAGES, title=title, user_password=user, owner_password=owner)
    o_entry, u_entry, permissions, file_id = encryption(data)
    key = pdfs.file_key(user, o_entry, permissions, file_id)
    # Algorithm 6: the password is right when /U's first 16 bytes come out again.
    assert pdfs.user_entry(key, file_id)[:16] == u_entry[:16]
    wrong = pdfs.file_key(user + "x", o_entry, permissions, file_id)
    assert pdfs.user_entry(wrong, file_id)[:16] != u_entry[:16]
    info = trailer_ref(data, b"Info")
    sealed = string_entry(obj(data, info)[0], b"Title")
    assert pdfs.rc4(pdfs.object_key(key, info), sealed).decode("utf-16") == title
    contents = int(find(rb"/Contents (\d+) 0 R", data)[1])
    raw = pdfs.rc4(pdfs.object_key(key, contents), obj(data, contents)[1])
    assert b"(Bold) Tj" in zlib.decompress(raw)


def test_issue_33_the_owner_password_recovers_the_user_password() -> None:
    o_entry, *_ = encryption(pdfs.document(PAGES, user_password="u1", owner_password="o1"))
    # Algorithm 7: the owner's digest undoes the twenty RC4 passes that made /O.
    digest = hashlib.md5(pdfs.padded("o1")).digest()
    for _ in range(50):
        digest = hashlib.md5(digest).digest()
    for round_ in reversed(range(20)):
        o_entry = pdfs.rc4(bytes(b ^ round_ for b in digest), o_entry)
    assert o_entry == pdfs.padded("u1")


@pytest.mark.parametrize(
    ("title", "written"),
    [("Café report", b"Caf\xe9 report"), ("Ωmega", b"\xfe\xff" + "Ωmega".encode("utf-16-be"))],
)
def test_issue_33_the_title_is_pdfdoc_or_utf16_with_a_bom(title: str, written: bytes) -> None:
    data = pdfs.document([], title=title)
    assert string_entry(obj(data, trailer_ref(data, b"Info"))[0], b"Title") == written
    assert b"/Title" not in pdfs.document([])


def test_issue_33_text_outside_cp1252_is_named_by_a_tounicode_cmap() -> None:
    data = pdfs.document([pdfs.Page([pdfs.Run("aﬁΩ", 72, 700)])], compress=False)
    pairs = re.findall(rb"<([0-9A-F]{2})> <([0-9A-F]{4})>", data)
    mapped = {int(code, 16): chr(int(char, 16)) for code, char in pairs}
    shown = bytes.fromhex(find(rb"/F3 11 Tf 72 700 Td <([0-9a-f]+)> Tj", data)[1].decode())
    # The whole run is shown in the second font, "a" under its WinAnsi code.
    assert "".join(mapped[code] for code in shown) == "aﬁΩ" and shown[0] == ord("a")
    assert find(rb"/Differences \[(.*?)\]", data)[1].split() == [b"1", b"/uni03A9", b"2", b"/fi"]


def test_issue_33_an_image_only_page_draws_an_image_and_no_text() -> None:
    data = pdfs.document([pdfs.Page(image_only=True)], compress=False)
    assert b"/Im1 Do" in data and b" Tj" not in data and b"BT " not in data
    assert find(rb"/Subtype /Image /Width (\d+) /Height (\d+)", data).groups() == (b"64", b"64")


def test_issue_33_the_layout_helpers_are_fast_and_tell_their_text() -> None:
    started = time.perf_counter()
    data = pdfs.many_pages(300)
    assert time.perf_counter() - started < 2.0  # about 0.04 s on a quiet machine
    assert data.count(b"/Type /Page ") == 300
    lines = pdfs.many_pages_lines(7)
    assert lines[0] == "Page 7"
    assert all(line.startswith(f"7.{i} ") for i, line in enumerate(lines[1:], 1))
    _, joined = pdfs.hyphenated()
    assert "information" in joined and "-" not in joined
    _, letters = pdfs.with_ligatures()
    assert "office" in letters and not any(0xFB00 <= ord(c) <= 0xFB06 for c in letters)
    _, left, right = pdfs.two_columns_across(4)
    assert len(left) == len(right) == 4 and len(set(left + right)) == 8
