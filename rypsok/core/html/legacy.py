"""The encoding of a page that declares none and is not UTF-8, chosen as a browser would.

Only the legacy encodings of the WHATWG Encoding Standard are candidates (no cp775,
no EBCDIC: a browser never reads a page through them), and windows-1252, the
standard's default for most locales, is kept unless another candidate is clearly
better. UTF-16 is never guessed: browsers take it from a byte order mark only.

Two steps, both bounded:

1. the sample: at most :data:`DETECT_BYTES` from just before the first non-ASCII byte (a page
   whose first 64 KiB are ASCII markup is judged by its legacy part, not by its
   head), cut after a byte below 0x30, which no multi-byte encoding uses inside a
   character, so the sample never ends in half a character;
2. charset-normalizer, limited to :data:`CANDIDATES`, drops the encodings that make
   a mess of the sample and ranks the rest; then each survivor's reading of the
   first :data:`SCORE_BYTES` is scored by how many of its non-ASCII characters are
   implausible: a control, box drawing, a symbol between two letters, a word that mixes
   alphabets or puts a capital after a small letter, letters of a script other
   than the page's main one, and Latin letters that no one language writes
   together (``č`` beside ``ę`` in French words is a page read through the
   wrong table). The lowest share wins; a tie goes to charset-normalizer's
   order, and windows-1252 wins every tie it is part of.
"""

from __future__ import annotations

import codecs
import functools
import itertools
import re
import unicodedata
from typing import Final

import charset_normalizer

__all__ = ["CANDIDATES", "DEFAULT", "DETECT_BYTES", "SCORE_BYTES", "decode_default", "detect"]

DETECT_BYTES: Final = 64 * 1024
SCORE_BYTES: Final = 16 * 1024
DEFAULT: Final = "cp1252"
# Past this share of implausible characters every reading is noise: the default stays.
_NOISE: Final = 0.5
# The standard's legacy encodings by their Python codecs; on an equal score the earlier
# wins, so the Windows code pages come before the ISO ones sharing most of their letters.
# GBK is read by the gb18030 decoder, as the standard says; Shift_JIS, EUC-KR and Big5
# are the standard's supersets cp932, cp949 and big5hkscs.
CANDIDATES: Final = (
    "cp1252",
    "cp1250",
    "cp1251",
    "cp1253",
    "cp1254",
    "cp1255",
    "cp1256",
    "cp1257",
    "cp1258",
    "cp874",
    "iso8859_2",
    "iso8859_5",
    "iso8859_7",
    "iso8859_8",
    "iso8859_6",
    "iso8859_4",
    "iso8859_13",
    "iso8859_15",
    "iso8859_16",
    "iso8859_3",
    "iso8859_10",
    "iso8859_14",
    "koi8_r",
    "koi8_u",
    "cp866",
    "mac_roman",
    "mac_cyrillic",
    "cp932",
    "euc_jp",
    "gb18030",
    "big5hkscs",
    "cp949",
)
_FIRST_WIDE: Final = re.compile(rb"[\x80-\xff]")
_LEAD: Final = 64
_INSIDE: Final = bytes(range(0x30, 0x100))  # bytes that may sit inside a character
# A run of letters, or one non-ASCII character that is not a letter.
_TOKEN: Final = re.compile(r"(?P<run>[^\W\d_]+)|[^\x00-\x7f]")
# Scripts written together in one word of Chinese, Japanese or Korean text.
_EAST_ASIAN: Final = frozenset(
    {"CJK", "HIRAGANA", "KATAKANA", "KATAKANA-HIRAGANA", "HANGUL", "HALFWIDTH", "FULLWIDTH"}
)
_VIETNAMESE_MARKS: Final = frozenset("\u0300\u0301\u0303\u0309\u0323\u0302\u0306\u031b")


def _vietnamese() -> frozenset[str]:
    letters = {"đ"}
    for code in range(0xC0, 0x1F00):
        char = chr(code)
        parts = unicodedata.normalize("NFD", char)
        if char.islower() and parts[0] in "aeiouy" and set(parts[1:]) <= _VIETNAMESE_MARKS:
            letters.add(char)
    return frozenset(letters)


# The non-ASCII letters of the languages written in Latin script with a legacy encoding
# of the standard, lower case. A correct reading keeps a page's letters inside one set.
_ALPHABETS: Final = (
    frozenset("àâæçéèêëîïôœùûüÿ"),  # French
    frozenset("äöüß"),  # German
    frozenset("áéíóúñü"),  # Spanish
    frozenset("áâãàçéêíóôõú"),  # Portuguese
    frozenset("àèéìíîòóùú"),  # Italian
    frozenset("àçèéíïòóúü·"),  # Catalan
    frozenset("áéëèïóöü"),  # Dutch
    frozenset("åäöæøé"),  # Danish, Norwegian, Swedish
    frozenset("áéíóúýþðæö"),  # Icelandic
    frozenset("äöõüšžå"),  # Finnish, Estonian
    frozenset("ąćęłńóśźż"),  # Polish
    frozenset("áčďéěíňóřšťúůýž"),  # Czech
    frozenset("áäčďéíĺľňóôŕšťúýž"),  # Slovak
    frozenset("áéíóöőúüű"),  # Hungarian
    frozenset("ăâîșțşţ"),  # Romanian
    frozenset("čćđšž"),  # Croatian, Slovene, Bosnian
    frozenset("çğıöşüâîû"),  # Turkish
    frozenset("ąčęėįšųūž"),  # Lithuanian
    frozenset("āčēģīķļņšūž"),  # Latvian
    frozenset("çë"),  # Albanian
    frozenset("âêîôûŵŷäëïöüÿáéíóúýàèìòù"),  # Welsh
    _vietnamese(),
)


def sample(body: bytes) -> bytes:
    """The bytes detection looks at: from just before the first non-ASCII byte (the
    word it is in), whole characters."""
    first = _FIRST_WIDE.search(body)
    if first is None:
        return b""
    # Every byte before the first non-ASCII one is a character of its own.
    start = max(0, first.start() - _LEAD)
    window = body[start : start + DETECT_BYTES]
    if start + DETECT_BYTES < len(body):
        window = window.rstrip(_INSIDE) or window
    return window


def detect(body: bytes) -> str:
    """The Python codec to read an undeclared, non-UTF-8 ``body`` with."""
    window = sample(body)
    if not window:
        return DEFAULT
    try:
        ranked = [
            m.encoding for m in charset_normalizer.from_bytes(window, cp_isolation=[*CANDIDATES])
        ]
    except Exception:  # detection is a guess: a failure keeps the default
        return DEFAULT
    ranked = [name for name in ranked if name in CANDIDATES]
    if DEFAULT not in ranked:
        # charset-normalizer reads cp1252 strictly and drops it for one unmapped byte,
        # which a browser reads as a control; the default is always scored.
        ranked.append(DEFAULT)
    part = window[:SCORE_BYTES]
    scored: list[tuple[float, int, str]] = []
    seen: dict[str, tuple[int, int]] = {}
    for rank, name in enumerate(ranked):
        text = decode_default(part) if name == DEFAULT else part.decode(name, "replace")
        if text not in seen:  # ISO and Windows tables often read a page alike
            seen[text] = _implausible(text)
        bad, total = seen[text]
        share = bad / total if total else 0.0
        scored.append((share, 0 if name == DEFAULT else rank + 1, name))
    best = min(scored)
    return DEFAULT if best[0] > _NOISE else best[2]


def decode_default(data: bytes | memoryview) -> str:
    """windows-1252 as the standard has it: the five bytes Python leaves unmapped are
    the C1 controls of the same number (the boundary removes and counts them)."""
    return codecs.charmap_decode(data, "strict", _WINDOWS_1252)[0]


_WINDOWS_1252: Final = "".join(
    chr(byte) if byte in (0x81, 0x8D, 0x8F, 0x90, 0x9D) else bytes((byte,)).decode(DEFAULT)
    for byte in range(256)
)


@functools.lru_cache(maxsize=8192)
def _script(char: str) -> str:
    name = unicodedata.name(char, "")
    first = name.split(" ", 1)[0]
    return "CJK" if first in _EAST_ASIAN else first


def _capital_inside(word: str) -> bool:
    return any(b.isupper() and a.islower() for a, b in itertools.pairwise(word))


def _cased(char: str) -> bool:
    return char.lower() != char.upper()


def _implausible(text: str) -> tuple[int, int]:
    """How many of the non-ASCII characters of ``text`` are implausible, of how many."""
    text = unicodedata.normalize("NFC", text)  # windows-1258 writes tones as combining marks
    bad = total = 0
    latin: dict[str, int] = {}
    by_script: dict[str, int] = {}
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token.isascii():
            continue
        if match.group("run") is None:
            total += 1
            at = match.start()
            if unicodedata.category(token)[0] == "C" or "\u2500" <= token <= "\u259f":
                bad += 1  # a control, or box drawing: DOS and KOI8 tables read wrongly
            elif 0 < at < len(text) - 1 and _cased(text[at - 1]) and _cased(text[at + 1]):
                bad += 1  # a symbol inside a word: a letter read through the wrong table
            continue
        wide = [char for char in token if not char.isascii()]
        total += len(wide)
        scripts = {_script(char) for char in wide}
        if "CJK" not in scripts and len(wide) < len(token):
            scripts.add("LATIN")  # ASCII letters in the word: they are Latin
        if len(scripts) > 1 or _capital_inside(token):
            bad += len(wide)
            continue
        (script,) = scripts
        by_script[script] = by_script.get(script, 0) + len(wide)
        if script == "LATIN":
            for char in wide:
                lower = char.lower()
                latin[lower] = latin.get(lower, 0) + 1
    if by_script:  # a page is written in one script: letters of another are a misreading
        bad += sum(by_script.values()) - max(by_script.values())
    if latin:
        covered = max(
            sum(n for char, n in latin.items() if char in letters) for letters in _ALPHABETS
        )
        bad += sum(latin.values()) - covered
    return bad, total
