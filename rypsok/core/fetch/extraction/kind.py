"""What kind of page was read, and how sure the extractor is of its read (issue 34).

Both come from what the extraction already measured (:mod:`score`): element
counts by tag, class/id/itemtype words counted by the measuring pass, the
chosen node's sizes and link density, whether the article path was taken,
plus a bounded look at the Markdown written (prices, code, lists) and weak
hints in the URL's path. No second walk of the tree.

Two small models turn these signals into answers; their constants are in
:mod:`kind_model`, fitted by ``bench/fit_confidence.py`` (the data are named
there). The kind is a multinomial logistic model; the confidence a logistic
model of "the read scores F1 >= 0.7" whose output is mapped through a
monotone table onto the mean F1 of the development pages of that score.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from rypsok.core.html.tree import Element
from rypsok.core.model import PAGE_KINDS

if TYPE_CHECKING:
    from rypsok.core.fetch.extraction.score import Analysis

__all__ = ["PAGE_KINDS", "Read", "judge", "signals"]

# The vocabulary is the answer's (core/model.py).

# Words of class, id and itemtype values, by the kind they hint at. Prefixes
# (no trailing \b): "product-card", "comments", "pricing-table".
_HINT_WORDS = {
    "forum": r"comment|reply|replies|thread|topic|forum|answer|vote|discussion|post-?body|"
    r"message|bbp|phpbb|xenforo|discourse",
    "product": r"price|cart|product|sku|basket|checkout|add-?to|offer|stock|variant|"
    r"quantity|rating|shop|woocommerce",
    "documentation": r"docs?\b|documentation|toc|api|highlight|syntax|language-|sphinx|"
    r"mkdocs|docusaurus|rst|markdown-body|signature|admonition",
    "listing": r"card|grid|tile|teaser|result|pagination|pager|archive|feed|listing|"
    r"itemlist|loop|collection",
    "service": r"contact|cta|pricing|plan|hero|testimonial|feature|service|solution|"
    r"booking|appointment|quote-?form|localbusiness|organization",
    "article": r"article|entry|byline|author|published|story|headline|blogposting|"
    r"newsarticle|dateline|post-?date",
}
_HINT = re.compile("|".join(f"(?P<{k}>{v})" for k, v in _HINT_WORDS.items()))

# Tags whose counts say something about the kind of page.
_TAGS = (
    "a",
    "article",
    "aside",
    "blockquote",
    "button",
    "code",
    "dl",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "header",
    "iframe",
    "img",
    "input",
    "li",
    "nav",
    "p",
    "pre",
    "section",
    "select",
    "svg",
    "table",
    "textarea",
    "time",
)

# URL path hints, weak: many sites name their paths otherwise.
_URL_HINTS = {
    "documentation": re.compile(r"/(?:docs?|documentation|manual|reference|api|guide|wiki|kb)/"),
    "forum": re.compile(r"/(?:forums?|threads?|topics?|t|community|questions|discussions?)/"),
    "product": re.compile(r"/(?:products?|p|dp|item|shop|store|artikel|produkt)/"),
    "listing": re.compile(r"/(?:category|categories|tag|tags|c|search|archive|page)/"),
    "collection": re.compile(r"/(?:collections?|gallery|lists?|best|top)/"),
    "article": re.compile(r"/(?:blog|news|article|articles|story|\d{4}/\d{2})/"),
    "service": re.compile(r"/(?:services?|pricing|contact|solutions|about|leistungen)/"),
}

# Prices with a currency sign or code, in any order; dates; code fences.
_PRICE = re.compile(r"[$€£¥₹₽₩]\s?\d|\d[\d.,]*\s?(?:€|EUR|USD|GBP|CHF|kr|zł|Kč|руб|円|元)(?!\w)")
_DATE = re.compile(r"\b(?:\d{4}-\d{2}-\d{2}|\d{1,2}[./]\d{1,2}[./]\d{2,4})\b")
# Words of the written text, by what they hint at, in many languages: one signal a
# concept, so a weight learnt on English pages reads a German or Japanese one too.
# Counted with str.count on the lowered text: a regular expression of this many
# alternatives cost 14 ms a page, more than the extraction itself.
_TEXT_WORDS: dict[str, tuple[str, ...]] = {
    "shop": (
        "add to cart",
        "add to basket",
        "add to bag",
        "buy now",
        "in stock",
        "out of stock",
        "free shipping",
        "in den warenkorb",
        "warenkorb",
        "lieferzeit",
        "auf lager",
        "ajouter au panier",
        "panier",
        "en stock",
        "livraison",
        "añadir al carrito",
        "agregar al carrito",
        "carrito",
        "envío",
        "aggiungi al carrello",
        "carrello",
        "spedizione",
        "adicionar ao carrinho",
        "carrinho",
        "in winkelwagen",
        "winkelwagen",
        "do koszyka",
        "koszyk",
        "в корзину",
        "корзин",
        "доставк",
        "купить",
        "カートに入れる",
        "カート",
        "送料",
        "在庫",
        "加入购物车",
        "购物车",
        "库存",
        "장바구니",
        "배송",
        "sepete ekle",
        "sepet",
        "kargo",
        "lägg i varukorg",
        "varukorg",
        "læg i kurv",
        "handlekurv",
        "ostoskori",
        "kosárba",
        "do košíku",
        "košík",
        "στο καλάθι",
        "أضف إلى السلة",
        "السلة",
        "הוסף לסל",
        "thêm vào giỏ",
        "keranjang",
        "ตะกร้า",
    ),
    "forum": (
        " reply ",
        "replies",
        "quote",
        "posted by",
        "joined:",
        "posts:",
        "member",
        "antworten",
        "zitieren",
        "beiträge",
        "mitglied",
        "répondre",
        "citer",
        "membre",
        "responder",
        "citar",
        "miembro",
        "rispondi",
        "cita ",
        "iscritto",
        "membro",
        "antwoord",
        "reageer",
        "odpowiedz",
        "cytuj",
        "ответить",
        "цитата",
        "сообщени",
        "участник",
        "返信",
        "引用",
        "投稿",
        "回复",
        "回帖",
        "楼主",
        "답글",
        "댓글",
        "yanıtla",
        "alıntı",
        "svara",
        "citera",
        "vastaa",
        "válasz",
        "odpovědět",
        "απάντηση",
        "השב",
        "trả lời",
    ),
    "docs": (
        "parameter",
        "return",
        "argument",
        "example",
        "syntax",
        "deprecated",
        "rückgabe",
        "beispiel",
        "paramètre",
        "exemple",
        "renvoie",
        "parámetro",
        "ejemplo",
        "devuelve",
        "parametri",
        "esempio",
        "parâmetro",
        "exemplo",
        "voorbeeld",
        "przykład",
        "параметр",
        "пример",
        "возвращает",
        "引数",
        "戻り値",
        "例",
        "参数",
        "返回",
        "示例",
        "매개변수",
        "반환",
        "예제",
        "örnek",
        "parametre",
        "esimerkki",
        "příklad",
        "παράμετρ",
        "مثال",
        "דוגמה",
        "ví dụ",
        "contoh",
    ),
    "service": (
        "contact us",
        "get in touch",
        "request a quote",
        "book a",
        "book now",
        "free consultation",
        "our services",
        "call us",
        "kontakt",
        "angebot",
        "beratung",
        "termin",
        "nous contacter",
        "devis",
        "rendez-vous",
        "contáctenos",
        "contacto",
        "presupuesto",
        "cita previa",
        "contattaci",
        "preventivo",
        "fale conosco",
        "orçamento",
        "neem contact",
        "offerte",
        "skontaktuj",
        "wycena",
        "свяжитесь",
        "заявк",
        "консультац",
        "お問い合わせ",
        "見積",
        "联系我们",
        "咨询",
        "报价",
        "문의",
        "상담",
        "iletişim",
        "teklif",
        "kontakta",
        "offert",
        "yhteystiedot",
        "kapcsolat",
        "ajánlat",
        "kontaktujte",
        "επικοινων",
        "اتصل بنا",
        "צור קשר",
        "liên hệ",
        "hubungi",
    ),
    "byline": (
        " by ",
        "posted on",
        "published",
        "updated",
        "min read",
        "von ",
        "veröffentlicht",
        "aktualisiert",
        "publié",
        "mis à jour",
        "publicado",
        "actualizado",
        "pubblicato",
        "aggiornato",
        "gepubliceerd",
        "opublikowano",
        "опубликовано",
        "обновлено",
        "公開",
        "更新",
        "发布",
        "发表",
        "작성",
        "게시",
        "yayınlan",
        "publicerad",
        "julkaistu",
        "publikováno",
        "δημοσιε",
        "نشر",
        "פורסם",
        "đăng",
        "diterbitkan",
    ),
}
_TEXT_LOOK = 20_000  # characters of the written Markdown looked at for vocabulary
# Of those, the start searched for the many-language words: each is a scan of its own,
# about 230 a page, and a page says what it is near its start.
_WORDS_LOOK = 5_000


def count_hints(classes: Mapping[str, int]) -> dict[str, int]:
    """The page's class and itemtype words by the kind they hint at, each value
    counted as often as it occurs (``Analysis.classes``). The id is left out: ids
    are unique, and the class says the same."""
    hints: dict[str, int] = {}
    for value, times in classes.items():
        for k in _hint_kinds(value):
            hints[k] = hints.get(k, 0) + times
    return hints


@functools.lru_cache(maxsize=4096)
def _hint_kinds(value: str) -> frozenset[str]:
    """The kinds one class/id/itemtype value hints at. Cached: a page repeats its
    classes many times, and the alternation is the costly part of the measuring pass."""
    return frozenset(m.lastgroup for m in _HINT.finditer(value.lower()) if m.lastgroup)


def _ratio(a: float, b: float) -> float:
    return a / b if b > 0 else 0.0


_TITLE_WORD = re.compile(r"[^\W\d_]{3,}")
_TITLE_LOOK = 3000  # characters of the read's start where its title should be


def _title_hit(title: str, text: str) -> float:
    """The share of the page title's words found at the start of the read: a read that
    does not name the page's subject read another part of the page (a longer article
    beside it, a teaser list). A script without spaces is matched by its characters."""
    words = set(_TITLE_WORD.findall(title.lower()))
    if not words:
        chars = {c for c in title if c.isalpha()}
        if not chars:
            return 1.0
        start = text[:_TITLE_LOOK]
        return sum(c in start for c in chars) / len(chars)
    start = text[:_TITLE_LOOK].lower()
    return sum(w in start for w in words) / len(words)


_REPEAT_PROSE = 80  # characters outside links: an item that says something of its own
_RUN_PARENTS = frozenset(
    {"div", "section", "main", "article", "aside", "ul", "ol", "dl", "table", "tbody", "body"}
)


def _repeats(an: Analysis) -> tuple[int, int]:
    """The longest run of like siblings (same tag and class, three or more) under one
    parent: of items with prose of their own (posts, comments, reviews), and of items
    without (cards, tiles, rows). A forum is a run of the first kind in any language."""
    prose_run = short_run = 0
    text_len = an.text_len
    for el in text_len:
        # Runs are boxes in a container; a paragraph's runs of inline tags are not.
        if len(el.children) < 3 or el.name not in _RUN_PARENTS or not text_len[el]:
            continue
        groups: dict[tuple[str, str], list[int]] = {}
        for c in el.children:
            if isinstance(c, Element) and an.text_len.get(c, 0):
                key = (c.name, str(c.attributes.get("class") or ""))
                groups.setdefault(key, []).append(an.unlinked.get(c, 0))
        for sizes in groups.values():
            if len(sizes) < 3:
                continue
            rich = sum(u >= _REPEAT_PROSE for u in sizes)
            prose_run = max(prose_run, rich)
            short_run = max(short_run, len(sizes) - rich)
    return prose_run, short_run


def signals(
    an: Analysis, node: Element, article: bool, blocks: Sequence[str], url: str
) -> dict[str, float]:
    """The page's signals, by name: what both models read."""
    body = an.body
    kept_body = an.kept_len.get(body, 0)
    kept_node = an.kept_len.get(node, 0)
    text = "\n\n".join(blocks)
    out_len = len(text)
    look = text[:_TEXT_LOOK]
    nblocks = len(blocks) or 1
    f: dict[str, float] = {
        "body_log": math.log1p(kept_body),
        "node_log": math.log1p(kept_node),
        "out_log": math.log1p(out_len),
        "share": _ratio(kept_node, kept_body),
        "plain_share": _ratio(an.plain_len.get(node, 0), an.plain_len.get(body, 0)),
        "out_share": min(2.0, _ratio(out_len, an.text_len.get(body, 0))),
        "link_body": _ratio(an.links.get(body, 0), kept_body),
        "link_node": _ratio(an.links.get(node, 0), kept_node),
        "article": 1.0 if article else 0.0,
        "shell": 1.0 if an.shell else 0.0,
        "blocks_log": math.log1p(len(blocks)),
        "score_ratio": max(-2.0, min(1.0, _ratio(an.score.get(node, 0.0), kept_node))),
        "cards_log": math.log1p(an.cards.get(body, 0)),
        "heads_log": math.log1p(an.heads.get(body, 0)),
        "node_heads_log": math.log1p(an.heads.get(node, 0)),
        "price_log": math.log1p(len(_PRICE.findall(look))),
        "date_log": math.log1p(len(_DATE.findall(look))),
        "fence_share": sum(b.startswith(("```", "~~~")) for b in blocks) / nblocks,
        "list_share": sum(b.lstrip()[:2] in ("- ", "* ", "1.") for b in blocks) / nblocks,
        "table_share": sum(b.startswith("|") for b in blocks) / nblocks,
        "head_share": sum(b.startswith("#") for b in blocks) / nblocks,
        "block_len_log": math.log1p(out_len / nblocks),
        # The margin of the choice (score.margin): a rival region, long prose left out.
        "rival": min(an.rival, 4.0),
        "missed_log": math.log1p(an.missed),
        "missed_share": min(4.0, _ratio(an.missed, kept_node)),
        "short_share": sum(len(b) < 40 for b in blocks) / nblocks,
        "long_share": sum(len(b) >= 200 for b in blocks) / nblocks,
    }
    f["title_hit"] = _title_hit(an.title, look)
    prose_run, short_run = _repeats(an)
    f["repeat_prose_log"] = math.log1p(prose_run)
    f["repeat_short_log"] = math.log1p(short_run)
    lowered = look[:_WORDS_LOOK].lower()
    for k, words in _TEXT_WORDS.items():
        f["word_" + k] = math.log1p(sum(lowered.count(w) for w in words))
    for tag in _TAGS:
        f["tag_" + tag] = math.log1p(an.tags.get(tag, 0))
    hints = count_hints(an.classes)
    for k in _HINT_WORDS:
        f["hint_" + k] = math.log1p(hints.get(k, 0))
    try:
        path = urlsplit(url).path.lower() + "/"
    except ValueError:
        path = "/"
    for k, rx in _URL_HINTS.items():
        f["url_" + k] = 1.0 if rx.search(path) else 0.0
    return f


@dataclass(frozen=True, slots=True)
class Read:
    """The page's kind and the confidence in the read, 0..1."""

    kind: str
    confidence: float


def _linear(weights: Mapping[str, float], f: Mapping[str, float]) -> float:
    """A linear score; the weight named ``_bias`` is the constant term."""
    return weights.get("_bias", 0.0) + sum(
        w * f.get(name, 0.0) for name, w in weights.items() if name != "_bias"
    )


def kind_scores(f: Mapping[str, float]) -> dict[str, float]:
    """Each kind's linear score under the fitted kind model."""
    from rypsok.core.fetch.extraction import kind_model as m

    return {k: _linear(w, f) for k, w in m.KIND_WEIGHTS.items()}


def page_kind(f: Mapping[str, float]) -> str:
    """The most likely kind; ``other`` for a page with next to no text."""
    if f.get("body_log", 0.0) < math.log1p(_MIN_TEXT):
        return "other"
    scores = kind_scores(f)
    return max(scores, key=lambda k: scores[k]) if scores else "article"


_MIN_TEXT = 50  # characters: below this a page says too little to be of a kind


def confidence(f: Mapping[str, float], kind: str) -> float:
    """The fitted confidence: a logistic score mapped through the calibration table."""
    from rypsok.core.fetch.extraction import kind_model as m

    if f.get("out_log", 0.0) == 0.0:
        return 0.0
    z = _linear(m.CONFIDENCE_WEIGHTS, f) + m.CONFIDENCE_KIND.get(kind, 0.0)
    p = 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))
    return calibrate(p, m.CALIBRATION)


def calibrate(p: float, table: Sequence[tuple[float, float]]) -> float:
    """Piecewise-linear through (raw, calibrated) knots, raw ascending."""
    if not table:
        return p
    if p <= table[0][0]:
        return table[0][1]
    for (x0, y0), (x1, y1) in itertools.pairwise(table):
        if p <= x1:
            return y0 + (y1 - y0) * _ratio(p - x0, x1 - x0)
    return table[-1][1]


def judge(an: Analysis, node: Element, article: bool, blocks: Sequence[str], url: str) -> Read:
    """The kind and the confidence of one extraction."""
    f = signals(an, node, article, blocks, url)
    kind = page_kind(f)
    return Read(kind=kind, confidence=round(confidence(f, kind), 3))
