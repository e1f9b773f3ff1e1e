"""Undeclared legacy pages read as a browser reads them (REQ-PAGE-007; issue 14, item 6).

Each page below declares no charset (Content-Type text/html with no parameter, no
<meta>) and is not UTF-8. It goes through web_fetch against a local HTTPS site and
must come back in its own characters: the candidates are the WHATWG Encoding
Standard's encodings only, and windows-1252 is kept when no other is clearly better.
"""

from __future__ import annotations

import codecs
import time
import unicodedata
from pathlib import Path
from typing import Any

import pytest
import webencodings
from html5lib._inputstream import lookupEncoding

from rypsok.core.html import charset, legacy
from tests.support.fetching import fetch, make
from tests.support.site import Page, site

# One paragraph per encoding, in a language that encoding was made for.
TEXTS: dict[str, str] = {
    "windows-1250": (
        "Zażółć gęślą jaźń to zdanie, którego polscy programiści używają do sprawdzania "
        "czcionek. Wszystkie litery ze znakami diakrytycznymi pojawiają się w nim co "
        "najmniej raz. Kiedy strona źle odczyta kodowanie, zamiast liter widać dziwne "
        "symbole i czytelnik szybko się gubi."
    ),
    "iso-8859-2": (
        "Příliš žluťoučký kůň úpěl ďábelské ódy. Tuto větu používají čeští typografové, "
        "protože obsahuje téměř všechna písmena s diakritikou. Když prohlížeč zvolí špatné "
        "kódování, místo háčků a čárek se objeví nesmyslné znaky."
    ),
    "windows-1251": (
        "Съешь же ещё этих мягких французских булок да выпей чаю. Эта фраза содержит все "
        "буквы русского алфавита и поэтому часто используется для проверки шрифтов. Если "
        "браузер ошибётся с кодировкой, читатель увидит непонятные символы вместо текста."
    ),
    "iso-8859-5": (
        "Българският език използва кирилицата от векове. Старите уебсайтове често "
        "записваха текста в кодировка, която днес браузърите трябва да разпознаят сами. "
        "Когато това не стане, читателят вижда безсмислени знаци вместо думи."
    ),
    "koi8-r": (
        "В чащах юга жил бы цитрус? Да, но фальшивый экземпляр! Многие старые русские "
        "сайты хранили страницы в кодировке КОИ-8, и браузеры до сих пор умеют её читать. "
        "Без правильного определения текст превращается в набор странных букв."
    ),
    "windows-1252": (
        "Le café de la place est ouvert dès sept heures. On y sert des crêpes, des "
        "croissants et un thé très parfumé. Les habitués s'installent près de la fenêtre "
        "et lisent le journal en attendant l'été."
    ),
    "windows-1253": (
        "Η ελληνική γλώσσα έχει ιστορία πολλών χιλιάδων ετών. Οι παλιές ιστοσελίδες συχνά "
        "αποθήκευαν το κείμενο σε κωδικοποίηση των Windows, χωρίς να τη δηλώνουν. Ο "
        "φυλλομετρητής πρέπει να τη μαντέψει σωστά, αλλιώς ο αναγνώστης βλέπει "
        "ακαταλαβίστικα σύμβολα."
    ),
    "iso-8859-7": (
        "Στην Αθήνα το καλοκαίρι είναι ζεστό και οι δρόμοι γεμίζουν τουρίστες. Πολλοί "
        "επισκέπτονται την Ακρόπολη νωρίς το πρωί, πριν ανέβει η θερμοκρασία. Το βράδυ οι "
        "ταβέρνες της Πλάκας σερβίρουν φρέσκο ψάρι και σαλάτα."
    ),
    "windows-1254": (
        "Türkçe, Latin alfabesinin özel harflerini kullanır: ğ, ş, ı ve İ gibi. Eski web "
        "sayfaları bu harfleri çoğu zaman Windows kodlamasıyla saklıyordu. Tarayıcı "
        "kodlamayı yanlış tahmin ederse okuyucu anlamsız işaretler görür ve sayfayı kapatır."
    ),
    "windows-1255": (
        "השפה העברית נכתבת מימין לשמאל ויש בה עשרים ושתיים אותיות. אתרים ישנים רבים שמרו "
        "את הטקסט בקידוד של חלונות בלי להצהיר עליו. אם הדפדפן טועה בזיהוי, הקורא רואה "
        "סימנים משונים במקום מילים."
    ),
    "iso-8859-8": (
        "ירושלים היא עיר עתיקה עם היסטוריה ארוכה מאוד. בכל שנה מגיעים אליה מבקרים רבים "
        "מכל העולם כדי לראות את העיר העתיקה ואת השווקים. בערב האוויר מתקרר והרחובות "
        "מתמלאים באנשים."
    ),
    "windows-1256": (
        "اللغة العربية من أقدم اللغات الحية في العالم ويتحدث بها مئات الملايين من الناس. "
        "كانت المواقع القديمة تحفظ النصوص بترميز ويندوز دون أن تعلن عنه. إذا أخطأ المتصفح "
        "في تخمين الترميز يرى القارئ رموزا غريبة بدلا من الكلمات."
    ),
    "windows-1257": (
        "Lietuvių kalba yra viena seniausių indoeuropiečių kalbų. Senose svetainėse "
        "tekstas dažnai buvo saugomas Windows koduote, jos nenurodant. Jei naršyklė "
        "neteisingai atspėja koduotę, skaitytojas mato keistus ženklus vietoj raidžių."
    ),
    "windows-1258": (
        "Tiếng Việt dùng chữ cái Latinh với nhiều dấu thanh. Các trang web cũ thường lưu "
        "văn bản bằng bảng mã của Windows mà không khai báo. Nếu trình duyệt đoán sai bảng "
        "mã, người đọc sẽ thấy những ký hiệu lạ thay vì chữ."
    ),
    "shift_jis": (
        "日本語のウェブページは、昔はシフトJISで書かれることが多かった。文字コードが"
        "宣言されていない場合、ブラウザは自分で判断しなければならない。判断を誤ると、"
        "読者には意味のない記号の列しか見えない。"
    ),
    "euc-jp": (
        "東京の春は桜の季節として知られている。多くの人が公園に集まり、花の下で食事を"
        "楽しむ。古いウェブサイトの中には、今でもEUC-JPという文字コードで書かれたものがある。"
    ),
    "gbk": (
        "中文网页在过去常常使用国标编码保存文字。如果网页没有声明字符集，浏览器就必须"
        "自己判断。判断错误的时候，读者看到的只是一串毫无意义的符号，而不是文章的内容。"
    ),
    "gb18030": (
        "北京的秋天天气晴朗，是一年中最舒适的季节。很多人喜欢在周末去香山看红叶，"
        "或者在胡同里散步，品尝各种小吃。"
    ),
    "big5": (
        "臺灣的舊網站常常使用大五碼來儲存中文字。如果網頁沒有宣告字元集，瀏覽器必須"
        "自己判斷。判斷錯誤的時候，讀者只會看到一堆奇怪的符號，而不是文章的內容。"
    ),
    "euc-kr": (
        "한국어 웹페이지는 예전에 완성형 코드로 저장되는 경우가 많았다. 문자 집합을 "
        "선언하지 않으면 브라우저가 스스로 판단해야 한다. 판단이 틀리면 독자는 글 대신 "
        "이상한 기호만 보게 된다."
    ),
}
_TONES = "\u0300\u0301\u0303\u0309\u0323"


def encode(text: str, label: str) -> bytes:
    """``text`` in the encoding ``label``; windows-1258 writes the five tone marks as
    combining characters after a base letter it has (ế is ê and U+0301), as its pages do."""
    if label != "windows-1258":
        return text.encode(label)
    out = bytearray()
    for char in text:
        try:
            out += char.encode("cp1258")
        except UnicodeEncodeError:
            parts = unicodedata.normalize("NFD", char)
            base = unicodedata.normalize("NFC", "".join(c for c in parts if c not in _TONES))
            out += (base + "".join(c for c in parts if c in _TONES)).encode("cp1258")
    return bytes(out)


def short_page(text: str) -> str:
    return f"<p>{text}</p>"


def long_page(text: str) -> str:
    """A page of some 10 KiB: a head, a menu, the paragraph in forty sections."""
    head = (
        "<!doctype html><html><head><title>Archive</title><style>body{margin:0 auto;"
        "max-width:40em;font-family:serif}</style></head><body><nav><a href='/'>Home</a> "
        "<a href='/archive'>Archive</a></nav><main><article>"
    )
    sections = "".join(f"<h2>{n}</h2>\n<p>{text}</p>\n" for n in range(1, 41))
    return head + sections + "</article></main></body></html>"


def ascii_first_page(text: str) -> str:
    """The first 64 KiB and more are ASCII (a big inline script); the text comes after."""
    script = "<script>var data = [" + ",".join(["1234567"] * 10_000) + "];</script>"
    return "<!doctype html><html><head>" + script + "</head><body>" + long_page(text)[15:]


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def read_undeclared(tmp_path: Path, body: bytes) -> dict[str, Any]:
    with site({"/p": Page(body=body, content_type="text/html")}) as s:
        return fetch(make(tmp_path), url=s.url("/p"), max_chars=20000)


@pytest.mark.parametrize("label", sorted(TEXTS))
def test_req_page_007_a_short_undeclared_legacy_page_reads_in_its_own_characters(
    tmp_path: Path, label: str
) -> None:
    text = TEXTS[label]
    body = encode(short_page(text), label)
    with pytest.raises(UnicodeDecodeError):
        body.decode("utf-8")
    answer = read_undeclared(tmp_path, body)
    assert nfc(answer["content"]) == nfc(text)
    assert answer["notices"] == []  # nothing unreadable was removed


@pytest.mark.parametrize("label", sorted(TEXTS))
def test_req_page_007_a_long_undeclared_legacy_page_reads_in_its_own_characters(
    tmp_path: Path, label: str
) -> None:
    text = TEXTS[label]
    answer = read_undeclared(tmp_path, encode(long_page(text), label))
    assert nfc(answer["content"]).count(nfc(text)) == 40


@pytest.mark.parametrize("label", sorted(TEXTS))
def test_req_page_007_legacy_bytes_after_64_kib_of_ascii_are_read_in_their_encoding(
    tmp_path: Path, label: str
) -> None:
    body = encode(ascii_first_page(TEXTS[label]), label)
    assert body[: 64 * 1024].isascii()
    answer = read_undeclared(tmp_path, body)
    assert nfc(answer["content"]).count(nfc(TEXTS[label])) == 40


@pytest.mark.parametrize(
    "text",
    [
        "Café",
        "Grüße aus München",
        "¿Qué tal? Mañana es sábado.",
        "Ça va très bien, merci.",
        "Smørrebrød på Nørrebro",
    ],
)
def test_req_page_007_a_few_windows_1252_words_stay_windows_1252(tmp_path: Path, text: str) -> None:
    answer = read_undeclared(tmp_path, f"<p>{text}</p>".encode("cp1252"))
    assert answer["content"] == text


def test_req_page_007_an_unmapped_windows_1252_byte_does_not_change_the_reading(
    tmp_path: Path,
) -> None:
    """0x81 has no character in windows-1252: browsers read it as the control U+0081,
    which the boundary removes and counts; the rest of the page stays windows-1252."""
    body = "<p>Le café est prêt à l'été.".encode("cp1252") + b"\x81</p>"
    answer = read_undeclared(tmp_path, body)
    assert answer["content"] == "Le café est prêt à l'été."
    assert {"code": "characters_removed", "count": 1} in answer["notices"]


def test_req_page_007_only_the_standards_encodings_are_candidates() -> None:
    """Every candidate is the decoder of a label of the Encoding Standard; cp775, EBCDIC
    and the like, which no browser reads a page through, are not."""
    standard = set()
    for label in webencodings.LABELS:
        found = lookupEncoding(label)
        if found is not None and found.name not in ("replacement", "x-user-defined"):
            standard.add(codecs.lookup(found.codec_info.name).name)
    assert {codecs.lookup(name).name for name in legacy.CANDIDATES} <= standard
    assert codecs.lookup(legacy.DEFAULT).name == "cp1252"


def test_req_page_007_detection_reads_a_bounded_sample(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 5 MiB undeclared page: detection looks at no more than 64 KiB, and takes well under
    a second (it runs in the parse worker, under a parsing permit)."""
    seen: list[int] = []
    real = legacy.charset_normalizer.from_bytes

    def spy(data: bytes, **kwargs: Any) -> Any:
        seen.append(len(data))
        return real(data, **kwargs)

    monkeypatch.setattr(legacy.charset_normalizer, "from_bytes", spy)
    page = encode(long_page(TEXTS["windows-1254"]), "windows-1254")
    body = (page * (5 * 1024 * 1024 // len(page) + 1))[: 5 * 1024 * 1024]
    started = time.perf_counter()
    codec, _skip = charset.resolve(body, None)
    took = time.perf_counter() - started
    assert codec == "cp1254"
    assert seen and max(seen) <= legacy.DETECT_BYTES
    assert took < 2.0, took
