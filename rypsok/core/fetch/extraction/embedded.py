"""The prose a script-rendered page carries in its data (issue 34).

A page a framework renders in the browser arrives as an empty root element; its
text is in the data the framework hydrates from, which the parse keeps beside the
tree (``ParsedDocument.data``, LIM-F24). Nothing here runs a script: the JSON and
the frameworks' JavaScript are read with one small tokenizer that sees string
literals, brackets and object keys, and skips everything else. It builds no
objects, so memory is the strings it keeps; it reads at most LIM-F26 tokens of a
page and nothing nested deeper than LIM-F25.

What each framework carries (the shapes, see tests/core/fetch/html/test_embedded.py):

* JSON-LD: ``articleBody``/``text`` (else ``description``) of an article-like type,
  also inside ``@graph``;
* Next.js pages router ``__NEXT_DATA__``, Nuxt 3 ``__NUXT_DATA__`` (a devalue array:
  strings are its items), Angular ``ng-state``/``*-state`` (old ones escape quotes
  as ``&q;``), SvelteKit ``data-sveltekit-fetched`` (the response body is JSON in a
  string): JSON;
* Nuxt 2 ``window.__NUXT__=(function(a,...){return {...}}(...))``, Remix
  ``window.__remixContext = {...}``, SvelteKit's start script (``data: [...]``):
  JavaScript object literals, read for their string literals;
* Next.js app router: ``self.__next_f.push([1,"..."])`` chunks, joined into the RSC
  stream, whose rows are JSON or ``T`` rows of raw text;
* Gatsby: the HTML carries only ``window.pagePath``; the data is a separate
  ``/page-data/<path>/page-data.json`` (see :func:`gatsby_page_data_path`). The
  fetch pipeline asks the page's own origin for that file once, when the shell
  has no prose of its own, and reads it with :func:`data_blocks`: the same
  tokenizer and bounds as data a page carries inline.

Prose is found by what it looks like: enough words, mostly letters, not an
identifier, a URL, a path, a class list or base64. A string with tags is an HTML
fragment, turned into Markdown by the extractor's writer.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Sequence
from urllib.parse import urlsplit

from rypsok.core import limits
from rypsok.core.fetch.extraction.attributes import READ_ATTRIBUTES, attr
from rypsok.core.fetch.extraction.escape import plain_block
from rypsok.core.fetch.extraction.markdown import markdown_blocks
from rypsok.core.html.tree import Element, ParsedDocument, ScriptData, Text, parse_html

__all__ = [
    "data_blocks",
    "embedded_blocks",
    "gatsby_page_data_path",
    "is_shell",
    "prose_strings",
]

# Tokens of JSON and of JavaScript object literals: a string literal (three
# quotes), a bracket, or a bare key. Unrolled loops: linear, no backtracking. A
# string left open (truncated data) runs to the end of the text: otherwise the
# search would fail at every one of its characters in turn, in quadratic time.
_TOKEN = re.compile(
    r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\Z)'
    r"|'[^'\\]*(?:\\.[^'\\]*)*(?:'|\Z)"
    r"|`[^`\\]*(?:\\.[^`\\]*)*(?:`|\Z)"
    r"|[{}\[\]]"
    r"|(?<![\w$])[A-Za-z_$][\w$]*+(?=\s*:)"
    r"|:",
    re.S,
)
_ESCAPE = re.compile(r"\\(u\{[0-9a-fA-F]{1,6}\}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|\r\n|[\s\S])")
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}
_LINE_BREAKS = {"\n", "\r", "\r\n", "\u2028", "\u2029"}

# JSON-LD types whose body is the page's article.
_ARTICLE_TYPES = frozenset(
    {
        "article",
        "newsarticle",
        "blogposting",
        "report",
        "techarticle",
        "scholarlyarticle",
        "medicalscholarlyarticle",
        "socialmediaposting",
        "discussionforumposting",
        "liveblogposting",
        "analysisnewsarticle",
        "opinionnewsarticle",
        "reportagenewsarticle",
        "backgroundnewsarticle",
        "reviewnewsarticle",
        "askpublicnewsarticle",
        "satiricalarticle",
        "advertisercontentarticle",
        "apireference",
    }
)
_BODY_KEYS = ("articleBody", "text")
_SUMMARY_KEY = "description"
# Values under these keys are styling, addresses or names, never the page's prose.
_NOT_PROSE_KEYS = frozenset(
    {"className", "class", "style", "css", "src", "srcSet", "srcset", "href", "url", "image"}
)

# Prose: at least this many words, or (a script without spaces between words)
# this many characters, and mostly letters.
_MIN_WORDS = 8
_MIN_UNSPACED = 30
_LETTER_SHARE = 0.75
_PLAIN_WORD_SHARE = 0.7
_LABEL_LOWER = 0.25  # share of lower-case words below which a string is a title-case label
_PLAIN_WORD = re.compile(r"[(\"'“‘«¿¡]*[^\W\d_]+(?:['’-][^\W\d_]+)*[)\"'”’»,.;:!?…]*")
_TAG = re.compile(
    r"</?(?:p|div|h[1-6]|ul|ol|li|br|a|em|strong|b|i|blockquote|pre|code|span|"
    r"table|tr|td|figure|section|article|img)\b[^<>]*>",
    re.I,
)
_ZERO_WIDTH = re.compile("[\u200b-\u200d\u2060\ufeff]")
# RSC stream rows: "<hex id>:" then JSON, or "T<hex byte length>," and raw text.
_RSC_ROW = re.compile(r"([0-9a-fA-F]*):(?:T([0-9a-fA-F]+),)?")
_RSC_PUSH = re.compile(r'self\.__next_f\.push\(\[\s*1\s*,\s*("[^"\\]*(?:\\.[^"\\]*)*(?:"|\Z))')
# An app shell: the element a framework renders into.
_ROOT_IDS = frozenset({"__next", "__nuxt", "app", "root", "___gatsby", "svelte", "q-app"})
_ROOT_ELEMENTS = frozenset({"app-root"})
_THIN_CHARS = 250  # text of a page shorter than this is thin (a heuristic)
_ANGULAR_ESCAPES = (("&q;", '"'), ("&s;", "'"), ("&l;", "<"), ("&g;", ">"), ("&a;", "&"))


class _Budget:
    """Tokens still to be read from this page's data (LIM-F26)."""

    __slots__ = ("left",)

    def __init__(self, tokens: int) -> None:
        self.left = tokens


# --------------------------------------------------------------------------- strings


def _unescape(match: re.Match[str]) -> str:
    code = match.group(1)
    if code in _LINE_BREAKS:
        return ""  # a line continuation
    if code[0] in "ux" and len(code) > 1:
        digits = code[2:-1] if code.startswith("u{") else code[1:]
        value = int(digits, 16)
        return chr(value) if value <= 0x10FFFF else "\ufffd"
    return _SIMPLE_ESCAPES.get(code, code)


def _decode(literal: str) -> str:
    """A JSON or JavaScript string literal's value (never evaluated)."""
    closed = len(literal) > 1 and literal[-1] == literal[0]
    body = literal[1:-1] if closed else literal[1:]
    if "\\" not in body:
        return body
    text = _ESCAPE.sub(_unescape, body)
    # \ud83d\ude00 written as two escapes: joined into one character.
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _looks_like_prose(text: str) -> bool:
    words = text.split()
    if len(words) < _MIN_WORDS:
        # A script without spaces (Chinese, Japanese, Thai): long and mostly letters.
        if len(text) < _MIN_UNSPACED or len(words) > 2:
            return False
        wide = sum(1 for c in text if ord(c) >= 0x0E00 and c.isalpha())
        return wide >= _LETTER_SHARE * len(text.replace(" ", ""))
    letters = sum(1 for c in text if c.isalpha() or c.isspace())
    if letters < _LETTER_SHARE * len(text):
        return False
    plain = sum(1 for w in words if _PLAIN_WORD.fullmatch(w))
    if plain < _PLAIN_WORD_SHARE * len(words):
        return False
    return not _label(text, words)


def _label(text: str, words: list[str]) -> bool:
    """A name in title case ("Living Room Rug Size Guide PDP - Desktop"): a content
    system's label of an asset or a block, not a sentence. Prose in a cased script
    starts most words in lower case (German, which capitalises nouns, about half),
    or ends a sentence; a label does neither."""
    if text.rstrip().endswith((".", "!", "?", "…", ":", ";")):
        return False
    cased = [w for w in words if w[0].isalpha() and w[0].lower() != w[0].upper()]
    if len(cased) < _MIN_WORDS:
        return False
    lower = sum(1 for w in cased if w[0].islower())
    return lower < _LABEL_LOWER * len(cased)


def _clean(text: str) -> str:
    return _ZERO_WIDTH.sub("", unicodedata.normalize("NFC", text)).strip()


# --------------------------------------------------------------------------- the tokenizer


def _tokens(text: str, budget: _Budget) -> Iterator[str]:
    """The tokens of ``text``, while the page's budget lasts."""
    for match in _TOKEN.finditer(text):
        if budget.left <= 0:
            return
        budget.left -= 1
        yield match.group()


class _Frame:
    """An open object or array: its key being read, and for JSON-LD its types and
    the bodies found in it."""

    __slots__ = ("found", "key", "types")

    def __init__(self) -> None:
        self.key: str | None = None
        self.types: list[str] = []
        self.found: list[tuple[str, str]] = []


def _json_strings(text: str, budget: _Budget, max_depth: int, nested: bool = True) -> list[str]:
    """Every string value of ``text`` (JSON or a JS literal) in order, decoded, except
    the values of keys that hold no prose. A value that is JSON itself (a SvelteKit
    response body, a Remix stream chunk) is read too, once. A string is a key when a
    colon follows it: the tokenizer does not see commas."""
    out: list[str] = []
    stack: list[_Frame | None] = []  # None: deeper than max_depth
    pending: str | None = None  # a string literal, until the next token tells what it is

    def value(literal: str) -> None:
        frame = stack[-1] if stack else None
        if stack and frame is None:
            return  # deeper than the bound
        if frame is not None and frame.key in _NOT_PROSE_KEYS:
            return
        if len(literal) <= _MIN_UNSPACED:
            return  # too short to be prose: not even decoded
        decoded = _decode(literal)
        inner = decoded.strip()
        if nested and len(inner) > 1 and inner[0] in "[{" and inner[-1] in "]}":
            out.extend(_json_strings(inner, budget, max_depth, nested=False))
        else:
            out.append(decoded)

    for piece in _tokens(text, budget):
        if pending is not None:
            if piece == ":":
                if stack and stack[-1] is not None:
                    stack[-1].key = _decode(pending) if len(pending) < 100 else None
                pending = None
                continue
            value(pending)
            pending = None
        first = piece[0]
        if first in "{[":
            stack.append(_Frame() if len(stack) < max_depth else None)
        elif first in "}]":
            if stack:
                stack.pop()
        elif first in "\"'`":
            pending = piece
        elif first != ":" and stack and stack[-1] is not None:
            stack[-1].key = piece  # a bare key
    if pending is not None:
        value(pending)
    return out


def _ld_bodies(text: str, budget: _Budget, max_depth: int) -> list[str]:
    """The bodies of the article-like objects of a JSON-LD script, in order."""
    out: list[str] = []
    stack: list[_Frame | None] = []
    tokens = list(_tokens(text, budget))
    for i, token in enumerate(tokens):
        first = token[0]
        if first in "{[":
            stack.append(_Frame() if len(stack) < max_depth else None)
        elif first in "}]":
            frame = stack.pop() if stack else None
            if frame is not None and first == "}" and _is_article(frame.types):
                bodies = [v for k, v in frame.found if k in _BODY_KEYS]
                out.extend(bodies or [v for k, v in frame.found if k == _SUMMARY_KEY])
        elif first == '"':
            frame = stack[-1] if stack else None
            if frame is None:
                continue
            if i + 1 < len(tokens) and tokens[i + 1] == ":":
                frame.key = _decode(token) if len(token) < 100 else None
                continue
            owner = _owner(stack)
            if owner is None or owner.key is None:
                continue
            if owner.key == "@type":
                owner.types.append(_decode(token))
            elif frame is owner and (owner.key in _BODY_KEYS or owner.key == _SUMMARY_KEY):
                owner.found.append((owner.key, _decode(token)))
    return out


def _owner(stack: list[_Frame | None]) -> _Frame | None:
    """The object a value belongs to: the top frame, or the object holding the array
    the value is in (``"@type": ["Article", "WebPage"]``)."""
    top = stack[-1]
    if top is not None and top.key is None and len(stack) > 1:
        return stack[-2]
    return top


def _is_article(types: list[str]) -> bool:
    for name in types:
        local = re.split(r"[/#:]", name.strip())[-1].lower()
        if local in _ARTICLE_TYPES:
            return True
    return False


# --------------------------------------------------------------------------- frameworks


def _rsc_stream(scripts: list[ScriptData]) -> str:
    """The Next.js app router's RSC stream: the string of every push, joined."""
    parts: list[str] = []
    for script in scripts:
        for match in _RSC_PUSH.finditer(script.text):
            parts.append(_decode(match.group(1)))
    return "".join(parts)


def _rsc_strings(stream: str, budget: _Budget, max_depth: int) -> list[str]:
    out: list[str] = []
    pos = 0
    while pos < len(stream) and budget.left > 0:
        row = _RSC_ROW.match(stream, pos)
        if row is not None and row.group(2) is not None:
            # A text row: its length is in UTF-8 bytes.
            size = int(row.group(2), 16)
            raw = stream[row.end() : row.end() + size].encode("utf-8", "surrogatepass")[:size]
            chunk = raw.decode("utf-8", "ignore")
            out.append(chunk)
            budget.left -= 1
            pos = row.end() + len(chunk)
            continue
        end = stream.find("\n", pos)
        end = len(stream) if end < 0 else end
        out.extend(_json_strings(stream[pos:end], budget, max_depth))
        pos = end + 1
    return out


def _script_strings(script: ScriptData, budget: _Budget, max_depth: int) -> list[str]:
    text = script.text
    if script.kind == "ld+json":
        return _ld_bodies(text, budget, max_depth)
    if script.kind == "json" and "&q;" in text:
        for escaped, plain in _ANGULAR_ESCAPES:
            text = text.replace(escaped, plain)
    return _json_strings(text, budget, max_depth)


def prose_strings(
    doc: ParsedDocument,
    *,
    max_tokens: int = limits.default("LIM-F26"),
    max_depth: int = limits.default("LIM-F25"),
) -> list[str]:
    """The strings of the page's data that read as prose, in the data's order,
    each once (frameworks repeat the page's text in several places)."""
    return _prose(doc.data, max_tokens, max_depth)


def _prose(scripts: Sequence[ScriptData], max_tokens: int, max_depth: int) -> list[str]:
    """:func:`prose_strings` of these scripts, read under one budget of tokens."""
    budget = _Budget(max_tokens)
    candidates: list[str] = []
    rsc = [s for s in scripts if s.kind == "js" and s.text.startswith("self.__next_f")]
    # By identity: a page of thousands of small pushes compared by value was quadratic.
    in_rsc = {id(s) for s in rsc}
    for script in scripts:
        if id(script) in in_rsc:
            if script is rsc[0]:
                candidates.extend(_rsc_strings(_rsc_stream(rsc), budget, max_depth))
            continue
        candidates.extend(_script_strings(script, budget, max_depth))
    seen: set[str] = set()
    out: list[str] = []
    for value in candidates:
        text = _clean(value)
        key = " ".join(text.split()).casefold()
        if not key or key in seen:
            continue
        visible = _TAG.sub(" ", text) if _TAG.search(text) else text
        if not _looks_like_prose(" ".join(visible.split())):
            continue
        seen.add(key)
        out.append(text)
    return out


# --------------------------------------------------------------------------- Markdown


def _fragment_blocks(fragment: str, base_url: str) -> list[str]:
    """An HTML fragment as Markdown, written as a page's content is."""
    doc = parse_html(fragment, keep_attributes=READ_ATTRIBUTES, max_data_bytes=0)
    html = next((c for c in doc.root.children if isinstance(c, Element)), None)
    body = None
    if html is not None:
        body = next((c for c in html.children if isinstance(c, Element) and c.name == "body"), None)
    if body is None:
        return []
    return markdown_blocks(body, set(), set(), base_url)


def _text_blocks(text: str) -> list[str]:
    """Plain text as Markdown: a paragraph for each run between blank lines."""
    paragraphs = re.split(r"\n\s*\n", text)
    return [plain_block(p) for p in paragraphs if p.strip()]


def embedded_blocks(doc: ParsedDocument, base_url: str) -> list[str]:
    """Markdown blocks of the prose found in the page's data, in the data's order.

    Empty when the page carries no data or none of it reads as prose. Each block
    is NFC; a block that repeats an earlier one is left out."""
    return _blocks(prose_strings(doc), base_url)


def data_blocks(text: str, base_url: str, *, truncated: bool = False) -> list[str]:
    """:func:`embedded_blocks` of a page's data that came as a file of its own (a
    Gatsby page's ``page-data.json``), read as JSON under the same bounds (LIM-F25,
    LIM-F26). ``truncated``: the caller kept only the file's first bytes."""
    script = ScriptData("json", "application/json", None, text, truncated)
    strings = _prose((script,), limits.default("LIM-F26"), limits.default("LIM-F25"))
    return _blocks(strings, base_url)


def _blocks(strings: list[str], base_url: str) -> list[str]:
    """Prose strings as Markdown blocks, NFC, each once."""
    blocks: list[str] = []
    shown: set[str] = set()
    for text in strings:
        made = _fragment_blocks(text, base_url) if _TAG.search(text) else _text_blocks(text)
        for block in made:
            block = unicodedata.normalize("NFC", block)
            key = " ".join(block.split())
            if key and key not in shown:
                shown.add(key)
                blocks.append(block)
    return blocks


# --------------------------------------------------------------------------- the shell


def _body(doc: ParsedDocument) -> Element | None:
    for el in doc.root.iter_elements():
        if el.name == "body" and el.namespace is None:
            return el
    return None


def _visible_chars(body: Element) -> int:
    """Characters of the body's text outside <noscript>, white space collapsed."""
    count = 0
    stack: list[Element | Text] = [body]
    while stack:
        node = stack.pop()
        if isinstance(node, Text):
            count += len(" ".join(node.data.split()))
        elif node.name != "noscript":
            stack.extend(node.children)
    return count


def _has_root(body: Element) -> bool:
    for el in body.iter_elements():
        if el.name in _ROOT_ELEMENTS or attr(el, "id") in _ROOT_IDS:
            return True
    return False


def is_shell(doc: ParsedDocument, rendered: str | None = None) -> bool:
    """Whether the page is an application shell: its text is thin (``rendered``, the
    extractor's Markdown, when given; else the body's text outside <noscript>) and
    it has a framework's root element or carries a framework's data."""
    body = _body(doc)
    if body is None:
        return False
    chars = len(" ".join(rendered.split())) if rendered is not None else _visible_chars(body)
    if chars >= _THIN_CHARS:
        return False
    return _has_root(body) or any(s.kind in ("json", "js", "sveltekit") for s in doc.data)


def gatsby_page_data_path(doc: ParsedDocument, base_url: str) -> str | None:
    """Where a Gatsby page keeps its data (``/page-data/<path>/page-data.json``),
    from the ``window.pagePath`` its HTML carries; None on other pages. Reading it
    is a second request, for the caller to decide."""
    for script in doc.data:
        found = re.match(r'window\.pagePath\s*=\s*("[^"\\\n]*")', script.text)
        if found is None:
            continue
        path = _decode(found.group(1)).strip("/")
        if urlsplit(path).scheme or ".." in path.split("/"):
            return None
        return "/page-data/" + (path or "index") + "/page-data.json"
    return None
