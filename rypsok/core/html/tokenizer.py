"""A faster front for html5lib's tokenizer.

html5lib tokenizes one character per method call; on a typical article page
that is two thirds of the parse. This subclass recognises the common, well-formed
cases in the data state with anchored regular expressions over the current
chunk, and builds the very tokens html5lib's own states would build:

* a text run, or a run of white space (cut at the chunk's end, as our bounded
  ``charsUntil`` already cuts text runs);
* a start tag whose attributes are well formed (quoted values may carry
  character references, decoded by html5lib's rules for attributes);
* an end tag without attributes;
* a character reference whose end lies inside the chunk.

Anything else (a NUL, a comment, a doctype, a tag that spans two chunks or
carries a parse error) is handed to html5lib's own state for that character,
with the stream exactly where html5lib expects it, so the result never
depends on which path ran. ``tests/core/fetch/html/test_html_tokenizer.py`` compares the two
token streams on pages made to reach every branch.

Parse errors are not reported: our parser ignores them (they never change the
tree), so producing them would only cost time.

With ``xhtml`` set (a page served as ``application/xhtml+xml``) two XML rules
are added, and nothing else changes: a self-closing start tag of a non-void
element is an empty element (the tag the parser left open is closed by an end
tag made here, and a raw-text or RCDATA state it switched to is left at
once), and a CDATA section is text wherever it is. An HTML page
(``xhtml`` unset, the default) is tokenized exactly as before.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from html5lib._tokenizer import HTMLTokenizer, entitiesTrie
from html5lib.constants import (
    asciiLetters,
    asciiUpper2Lower,
    digits,
    entities,
    hexDigits,
    replacementCharacters,
    spaceCharacters,
    tokenTypes,
)

__all__ = ["FastTokenizer", "numeric_reference"]

_CHARACTERS: int = tokenTypes["Characters"]
_SPACE_CHARACTERS: int = tokenTypes["SpaceCharacters"]
_START_TAG: int = tokenTypes["StartTag"]
_END_TAG: int = tokenTypes["EndTag"]
_PARSE_ERROR: int = tokenTypes["ParseError"]

# "\r" never reaches the tokenizer: the input stream turns it into "\n".
_TEXT_RUN = re.compile(r"[^&<\x00\t\n\f ][^&<\x00]*+")
_SPACE_RUN = re.compile(r"[\t\n\f ]++")
# A text run whose first character is its chunk's last: html5lib reads that
# character, then the run on into the next chunk (tree.py bounds the reading
# to that chunk), white space included: there it is text, not a space token.
_SPACES = frozenset("\t\n\f ")
_RUN_GOES_ON = re.compile(r"[^&<\x00]++")
# One attribute after white space: a name, then optionally "=" and a value.
# Whatever stops a match early (a character that is a parse error, an "&" in
# an unquoted value, a quote run into the next name) is then neither white
# space nor the tag's end, so the whole tag fails there and html5lib takes it.
_ATTRIBUTE = re.compile(
    r"[\t\n\f ]++"
    r"([^\t\n\f />\"'<=\x00][^\t\n\f />=\"'<\x00]*+)"
    r"(?:[\t\n\f ]*+=[\t\n\f ]*+"
    r"(?:\"([^\"\x00]*+)\"|'([^'\x00]*+)'|([^\t\n\f &>\"'=<`\x00]++)))?+"
)
# A start tag from its name to its ">": the name, the span of its attributes
# (each as _ATTRIBUTE, without the groups; findall then splits the span as this
# match did) and the "/" if any.
_WHOLE_START_TAG = re.compile(
    r"([A-Za-z][^\t\n\f />\x00]*+)"
    r"((?:[\t\n\f ]++"
    r"[^\t\n\f />\"'<=\x00][^\t\n\f />=\"'<\x00]*+"
    r"(?:[\t\n\f ]*+=[\t\n\f ]*+"
    r"(?:\"[^\"\x00]*+\"|'[^'\x00]*+'|[^\t\n\f &>\"'=<`\x00]++))?+)*+)"
    r"[\t\n\f ]*+(/?)>"
)
# An end tag without attributes, from its "/" to its ">".
_WHOLE_END_TAG = re.compile(r"/([A-Za-z][^\t\n\f />\x00]*+)[\t\n\f ]*+>")
_DECIMAL = re.compile(r"[0-9]++")
_HEXADECIMAL = re.compile(r"[0-9A-Fa-f]++")
_AFTER_LEGACY_NAME = frozenset("0123456789=ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
# Digits beyond this many (after leading zeros) can only denote a value above
# U+10FFFF; int() is never asked to read them (CPython refuses over 4300).
_MAX_DIGITS = 8


# Tag and attribute names as lowered, and one string object per name:
# pages repeat a few dozen names, and html5lib's tables then compare them by
# identity. Bounded: only short names, and emptied when full.
_NAMES: dict[str, str] = {}
_NAMES_KEPT = 1024
_NAME_KEPT_LENGTH = 40


def _lower(name: str) -> str:
    # html5lib lowers ASCII letters only; str.lower would also fold "İ".
    lowered = name.lower() if name.isascii() else name.translate(asciiUpper2Lower)
    if len(name) <= _NAME_KEPT_LENGTH:
        if len(_NAMES) >= _NAMES_KEPT:  # the common names come back at once
            _NAMES.clear()
        _NAMES[name] = lowered
    return lowered


def numeric_reference(number: str, radix: int) -> str:
    """The character a numeric reference denotes, by html5lib's rules: the
    legacy replacements, U+FFFD for surrogates and values past U+10FFFF."""
    significant = number.lstrip("0")
    if len(significant) > _MAX_DIGITS:
        return "\ufffd"
    value = int(significant or "0", radix)
    if value in replacementCharacters:
        replaced: str = replacementCharacters[value]
        return replaced
    if 0xD800 <= value <= 0xDFFF or value > 0x10FFFF:
        return "\ufffd"
    return chr(value)


def _reference(text: str, at: int, allowed: str | None, attribute: bool) -> tuple[str, int] | None:
    """Decode the character reference whose "&" ends just before ``at``.

    Returns what html5lib's consumeEntity would produce and the index after
    what it consumes, or None when deciding needs a character past the end
    of ``text`` (then html5lib's own code must read on)."""
    end = len(text)
    if at >= end:
        return None
    first = text[at]
    if first in spaceCharacters or first == "<" or first == "&" or first == allowed:
        return "&", at
    if first == "#":
        if at + 1 >= end:
            return None
        hexadecimal = text[at + 1] in "xX"
        start = at + 2 if hexadecimal else at + 1
        if start >= end:
            return None
        run = (_HEXADECIMAL if hexadecimal else _DECIMAL).match(text, start)
        if run is None:
            return "&" + text[at:start], start
        stop = run.end()
        if stop >= end:
            return None
        character = numeric_reference(run.group(), 16 if hexadecimal else 10)
        return character, stop + 1 if text[stop] == ";" else stop
    stop = at
    while stop < end and entitiesTrie.has_keys_with_prefix(text[at : stop + 1]):
        stop += 1
    if stop >= end:
        return None
    try:
        name: str = entitiesTrie.longest_prefix(text[at:stop])
    except KeyError:
        return "&" + text[at:stop], stop
    if name[-1] != ";" and attribute and text[at + len(name)] in _AFTER_LEGACY_NAME:
        return "&" + text[at:stop], stop
    decoded: str = entities[name]
    return decoded + text[at + len(name) : stop], stop


def _attribute_value(value: str, quote: str) -> str:
    """A quoted attribute value with its character references decoded."""
    text = value + quote  # the closing quote is what html5lib reads last
    parts: list[str] = []
    position = 0
    while True:
        amp = text.find("&", position)
        if amp < 0:
            parts.append(value[position:])
            return "".join(parts)
        parts.append(text[position:amp])
        found = _reference(text, amp + 1, quote, True)
        if found is None:  # impossible: names never contain the quote
            raise AssertionError("a reference ran past its attribute value")
        decoded, position = found
        parts.append(decoded)


class FastTokenizer(HTMLTokenizer):  # type: ignore[misc]  # html5lib has no stubs
    """html5lib's tokenizer with fast paths in the data state."""

    # Set by the parser for a page served as XHTML (see the module's docstring).
    xhtml: bool = False
    # The last text run was one character, its chunk's last (see _RUN_GOES_ON).
    _run_cut: bool = False
    state: Callable[[], bool]  # the current state's method, as in html5lib

    def __iter__(self) -> Iterator[dict[str, Any]]:
        tokens = self._tokens()
        return self._xhtml_tokens(tokens) if self.xhtml else tokens

    def _tokens(self) -> Iterator[dict[str, Any]]:
        queue: deque[dict[str, Any]] = deque()
        self.tokenQueue = queue
        stream = self.stream
        while True:
            # The commonest tokens of the data state (a text or white-space run,
            # a well-formed tag) are made here and handed over at once, as
            # dataState would make them; everything else takes the state method
            # and the queue.
            if self.state.__func__ is _DATA_STATE and not self._run_cut:  # type: ignore[attr-defined]
                at: int = stream.chunkOffset
                if at < stream.chunkSize:
                    chunk: str = stream.chunk
                    first = chunk[at]
                    fast: dict[str, Any] | None = None
                    if first == "<":
                        fast = self._tag(chunk, at + 1)
                    elif first != "&" and first != "\x00":
                        fast = self._run(chunk, at)
                    if fast is not None:
                        yield fast
                        continue
            if not self.state():
                return
            if stream.errors:
                stream.errors.clear()
            while queue:
                token = queue.popleft()
                if token["type"] != _PARSE_ERROR:
                    yield token

    def _xhtml_tokens(self, tokens: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        for token in tokens:
            kind = token["type"]
            yield token
            # The parser has taken the token when the generator resumes: a
            # slash it did not acknowledge (it does for void and foreign
            # elements) left open an element that XML says is empty. Where it
            # ignored the start tag (a stray <body/>, a <br/> in a <select>), it
            # ignores this end tag too (</br> never reaches the in-body rule).
            if kind == _START_TAG and token["selfClosing"] and not token["selfClosingAcknowledged"]:
                yield {
                    "type": _END_TAG,
                    "name": token["name"],
                    "data": [],
                    "selfClosing": False,
                }
                # <script/>, <title/>, <textarea/> ... switched the tokenizer to a
                # raw-text state that would read the rest of the page as their text.
                self.state = self.dataState

    def markupDeclarationOpenState(self) -> bool:
        # html5lib reads "<![CDATA[" as a section only in SVG or MathML; XHTML
        # allows it anywhere, and its content is text.
        if self.xhtml:
            stream = self.stream
            read: list[str | None] = []
            for expected in "[CDATA[":
                character = stream.char()
                read.append(character)
                if character != expected:
                    break
            else:
                self.state = self.cdataSectionState
                return True
            for character in reversed(read):
                stream.unget(character)  # html5lib's unget ignores the end of input
        result: bool = super().markupDeclarationOpenState()
        return result

    def consumeNumberEntity(self, isHex: bool) -> str:
        # html5lib's own hands int() any number of digits: over 4300 decimal
        # digits CPython raises, and a page would end the parse.
        stream = self.stream
        allowed = hexDigits if isHex else digits
        found: list[str] = []
        while True:
            character = stream.char()
            if character is None or character not in allowed:
                break
            found.append(character)
        if character != ";":
            stream.unget(character)
        return numeric_reference("".join(found), 16 if isHex else 10)

    def attributeNameState(self) -> bool:
        # html5lib's own compares each finished name with every earlier name of the tag
        # only to report a duplicate, a parse error our parser drops; a tag of thousands
        # of attributes (read here once it spans two chunks) made that quadratic. The
        # same transitions, without the comparison (the first duplicate still wins when
        # the tag is emitted).
        stream = self.stream
        character = stream.char()
        attribute: list[str] = self.currentToken["data"][-1]
        if character == "=":
            self.state = self.beforeAttributeValueState
        elif character == ">":
            attribute[0] = attribute[0].translate(asciiUpper2Lower)
            self.emitCurrentToken()
            return True
        elif character is not None and character in spaceCharacters:
            self.state = self.afterAttributeNameState
        elif character == "/":
            self.state = self.selfClosingStartTagState
        elif character is None:  # end of input
            self.state = self.dataState
        else:  # the name goes on
            if character in asciiLetters:
                attribute[0] += character + stream.charsUntil(asciiLetters, True)
            else:
                attribute[0] += "\ufffd" if character == "\x00" else character
            return True
        attribute[0] = attribute[0].translate(asciiUpper2Lower)
        return True

    def dataState(self) -> bool:
        stream = self.stream
        if stream.chunkOffset >= stream.chunkSize and not stream.readChunk():
            return False
        chunk: str = stream.chunk
        at: int = stream.chunkOffset
        first = chunk[at]
        if self._run_cut:
            self._run_cut = False
            if first in _SPACES:
                run = _RUN_GOES_ON.match(chunk, at)
                assert run is not None  # it starts with a space
                self.tokenQueue.append({"type": _CHARACTERS, "data": run.group()})
                stream.chunkOffset = run.end()
                return True
        if first == "<":
            tag = self._tag(chunk, at + 1)
            if tag is not None:
                self.tokenQueue.append(tag)
                return True
            stream.chunkOffset = at + 1
            self.state = self.tagOpenState
            return True
        if first == "&":
            found = _reference(chunk, at + 1, None, False)
            if found is None:
                stream.chunkOffset = at + 1
                self.state = self.entityDataState
                return True
            decoded, stream.chunkOffset = found
            kind = _SPACE_CHARACTERS if decoded in spaceCharacters else _CHARACTERS
            self.tokenQueue.append({"type": kind, "data": decoded})
            return True
        if first == "\x00":
            result: bool = super().dataState()
            return result
        self.tokenQueue.append(self._run(chunk, at))
        return True

    def _run(self, chunk: str, at: int) -> dict[str, Any]:
        """The white-space or text run at ``at`` (not "<", "&" or NUL), the
        stream then past it."""
        stream = self.stream
        run = _SPACE_RUN.match(chunk, at)
        if run is not None:
            token = {"type": _SPACE_CHARACTERS, "data": run.group()}
        else:
            run = _TEXT_RUN.match(chunk, at)
            assert run is not None  # the first character is neither of the above
            token = {"type": _CHARACTERS, "data": run.group()}
            self._run_cut = run.end() - at == 1 and run.end() >= stream.chunkSize
        stream.chunkOffset = run.end()
        return token

    def _tag(self, chunk: str, at: int) -> dict[str, Any] | None:
        """The token of the tag starting at ``at`` (just after "<") if it is one
        of the well-formed cases, the stream then past it; otherwise None, and
        nothing changed."""
        # One match reads a whole well-formed tag; its attributes, when it has
        # any, are then read from the span the match found for them.
        start = _WHOLE_START_TAG.match(chunk, at)
        if start is None:
            close = _WHOLE_END_TAG.match(chunk, at)
            if close is None:
                return None
            raw = close.group(1)
            token: dict[str, Any] = {
                "type": _END_TAG,
                "name": _NAMES.get(raw) or _lower(raw),
                "data": [],
                "selfClosing": False,
            }
        else:
            close = start
            raw, listed, slash = start.groups()
            attributes: dict[str, str] = {}
            if listed:
                # findall gives "" for a group that took no part: an empty value either way.
                for key, double, single, bare in _ATTRIBUTE.findall(listed):
                    key = _NAMES.get(key) or _lower(key)
                    if key not in attributes:  # the first of duplicates wins
                        if double:
                            value = _attribute_value(double, '"') if "&" in double else double
                        elif single:
                            value = _attribute_value(single, "'") if "&" in single else single
                        else:
                            value = bare
                        attributes[key] = value
            token = {
                "type": _START_TAG,
                "name": _NAMES.get(raw) or _lower(raw),
                "data": attributes,
                "selfClosing": bool(slash),
                "selfClosingAcknowledged": False,
            }
        self.stream.chunkOffset = close.end()
        self.currentToken = token
        return token


# The data state's method, which _tokens does the common work of.
_DATA_STATE = FastTokenizer.dataState
