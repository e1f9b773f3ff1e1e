"""A bounded, lean tree builder for html5lib.

Guarantees, whatever the page:

* at most ``max_nodes`` nodes are created (LIM-F10) and no element is nested
  deeper than ``max_depth`` levels (LIM-F11; ``<html>`` is level 1). Both are
  enforced while html5lib builds: at the bound the parse stops, the tree built
  so far is returned and ``partial`` is True;
* the cancel flag is looked at on every chunk html5lib reads (10240
  characters) and every 1024 nodes, so a worker thread stops soon after it is
  set: :class:`ParseCancelled` is raised;
* time stays linear in the input: html5lib's open-element stack, which its
  scope checks walk on most tokens, never grows past ``max_depth``, and the
  tree's own operations (text appends, child removal) are amortised O(1).

``<script>``, ``<style>``, ``<template>``, ``<noembed>`` and ``<noframes>`` are
parsed (the tokenizer needs them) but their content is never part of the tree (a
browser shows none of it). The text of the scripts that carry the page's data
(JSON-LD, JSON, a framework's inline state) is kept beside the tree, in
``ParsedDocument.data``, up to LIM-F24 bytes in all; ``<noscript>`` in the body is kept for
the extractor, which removes it unless the page is a script shell; comments and the
doctype are counted and dropped. The tree keeps HTML elements with
``namespace`` None and foreign (SVG, MathML) elements with their namespace.
"""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Protocol

from html5lib._tokenizer import HTMLTokenizer
from html5lib.constants import formattingElements as _FORMATTING
from html5lib.constants import namespaces as _NAMESPACES
from html5lib.constants import tokenTypes
from html5lib.html5parser import HTMLParser
from html5lib.treebuilders import base as _base

from rypsok.core import limits
from rypsok.core.html.tokenizer import FastTokenizer
from rypsok.core.html.vocabulary import DROPPED_WHILE_PARSING

__all__ = [
    "Element",
    "ParseCancelled",
    "ParsedDocument",
    "ScriptData",
    "Text",
    "TextSource",
    "parse_html",
    "release",
]

HTML_NAMESPACE: str = _NAMESPACES["html"]
# Elements whose content a reader never sees; dropped as they are built.
DROPPED: frozenset[str] = DROPPED_WHILE_PARSING
# The attributes of most elements: none. One shared, read-only mapping instead of
# an empty dict per element (html5lib adds to the attributes of <html> and
# <body> only, and those always get their own).
NO_ATTRIBUTES: Mapping[Any, str] = MappingProxyType({})
# Elements whose attributes html5lib itself compares (the formatting elements
# it reopens and counts, by name and attributes) or adds to: kept whole when
# a parse keeps only some attributes, so the tree is the one html5lib builds.
_WHOLE_ATTRIBUTES: frozenset[str] = frozenset(
    {name for _namespace, name in _FORMATTING} | {"html", "body"}
)
# The cancel flag is read once per this many nodes: a cancelled parse stops
# within a thousand nodes, and the check costs nothing measurable per node.
_CANCEL_EVERY_NODES = 1024


class ParseCancelled(Exception):
    """The caller set the cancel flag; the parse was abandoned."""


class _Cut(Exception):
    """A bound was reached: stop html5lib and keep what was built."""


# A text run at least this long, stored by CPython at 4 bytes a character (one
# emoji or rare ideograph in it is enough), is kept in the tree as UTF-8, about
# a third of that for most scripts, and decoded on each read. Shorter or
# narrower runs are kept as they are: UTF-8 would not be smaller, or not by much.
_WIDE_TEXT = 64
_UTF8 = "utf-8"
_EXACT = "surrogatepass"  # a str page may hold lone surrogates: they round-trip


def _stored(text: str) -> str | bytes:
    """What a Text keeps of ``text``: UTF-8 for a long run of 4-byte characters."""
    if (
        len(text) >= _WIDE_TEXT
        and not text.isascii()
        # 4 bytes a character: a narrower str is at most 2 bytes one, plus its header.
        and sys.getsizeof(text) >= 4 * len(text)
    ):
        return text.encode(_UTF8, _EXACT)
    return text


class Text:
    """A run of text. Appends are kept as chunks and joined once, on read, so
    a page of many small character tokens does not copy its text repeatedly.
    A long run of 4-byte characters is then kept as UTF-8 (see _stored)."""

    __slots__ = ("_chunks", "parent")

    def __init__(self, data: str) -> None:
        self._chunks: str | list[str] | bytes = data if len(data) < _WIDE_TEXT else _stored(data)
        self.parent: Element | None = None

    def append(self, data: str) -> None:
        chunks = self._chunks
        if type(chunks) is list:
            chunks.append(data)
        elif type(chunks) is str:
            self._chunks = [chunks, data]
        else:
            self._chunks = [chunks.decode(_UTF8, _EXACT), data]  # type: ignore[union-attr]

    @property
    def data(self) -> str:
        chunks = self._chunks
        if type(chunks) is str:
            return chunks
        if type(chunks) is list:
            text = "".join(chunks)
            self._chunks = _stored(text)
            return text
        return chunks.decode(_UTF8, _EXACT)  # type: ignore[union-attr]

    def __repr__(self) -> str:
        return f"Text({self.data[:20]!r})"


class Element:
    """An element: the node type html5lib manipulates while it builds.

    The camelCase methods are html5lib's tree-builder interface; readers use
    ``name``, ``namespace``, ``attributes``, ``parent`` and ``children``.
    """

    __slots__ = ("attributes", "children", "name", "nameTuple", "namespace", "parent")

    def __init__(
        self,
        name: str,
        namespace: str | None,
        attributes: Mapping[Any, str],
        name_tuple: tuple[str, str],
    ) -> None:
        self.name = name
        self.namespace = namespace
        self.nameTuple = name_tuple  # html5lib's key for its element sets
        # Keys are str, or (prefix, local, namespace) tuples for foreign attributes.
        # Only those the parse was asked to keep (see parse_html).
        self.attributes = attributes
        self.parent: Element | None = None
        self.children: list[Element | Text] = []

    def __repr__(self) -> str:
        return f"<{self.name}>"

    def iter_elements(self) -> Iterator[Element]:
        """This element and its descendant elements, in document order."""
        stack: list[Element] = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(c for c in reversed(node.children) if isinstance(c, Element))

    def text_content(self) -> str:
        parts: list[str] = []
        stack: list[Element | Text] = [self]
        while stack:
            node = stack.pop()
            if isinstance(node, Text):
                parts.append(node.data)
            else:
                stack.extend(reversed(node.children))
        return "".join(parts)

    # --- html5lib's interface -------------------------------------------------

    def appendChild(self, node: Element | Text) -> None:
        self.children.append(node)
        node.parent = self

    def insertBefore(self, node: Element | Text, refNode: Element | Text | None) -> None:
        if refNode is None:
            self.appendChild(node)
            return
        self.children.insert(self._index(refNode), node)
        node.parent = self

    def removeChild(self, node: Element | Text) -> None:
        del self.children[self._index(node)]
        node.parent = None

    def insertText(self, data: str, insertBefore: Element | None = None) -> None:
        children = self.children
        at = len(children) if insertBefore is None else self._index(insertBefore)
        before = children[at - 1] if at else None
        if isinstance(before, Text):
            before.append(data)
            return
        _count_node()
        text = Text(data)
        text.parent = self
        children.insert(at, text)

    def reparentChildren(self, newParent: Element) -> None:
        for child in self.children:
            newParent.appendChild(child)
        self.children = []

    def cloneNode(self) -> Element:
        _count_node()
        attributes = self.attributes
        return type(self)(
            self.name,
            self.namespace,
            dict(attributes) if attributes else NO_ATTRIBUTES,
            self.nameTuple,
        )

    def hasContent(self) -> bool:
        return bool(self.children)

    def _index(self, node: Element | Text) -> int:
        # From the end: html5lib removes and inserts near the last child, so a
        # parent with many children does not make each operation linear.
        children = self.children
        for i in range(len(children) - 1, -1, -1):
            if children[i] is node:
                return i
        raise ValueError("not a child")


class _Dropped(Element):
    """An element whose content is not kept (script, style, ...): it is never
    attached, and whatever html5lib puts in it is let go at once."""

    __slots__ = ()

    def appendChild(self, node: Element | Text) -> None:
        node.parent = self

    def insertBefore(self, node: Element | Text, refNode: Element | Text | None) -> None:
        node.parent = self

    def removeChild(self, node: Element | Text) -> None:
        node.parent = None

    def insertText(self, data: str, insertBefore: Element | None = None) -> None:
        return None


# Inline scripts kept for the page data they assign: Nuxt 2, Remix and React
# Router, Next's app router (its RSC chunks), SvelteKit's start script, Gatsby's
# page path, and the common store dumps. Matched anywhere in the script, and the
# text is kept from the match on.
_DATA_SCRIPT = re.compile(
    r"(?:window|self)\.(?:__NUXT__|__remixContext|__reactRouterContext|__next_f|"
    r"__INITIAL_STATE__|__APOLLO_STATE__|__PRELOADED_STATE__|pagePath)\b|__sveltekit_"
)
# A marker split across two text chunks is still found: this much of the previous
# chunk is looked at again (longer than any marker).
_MARKER_OVERLAP = 32
_JS_TYPES: frozenset[str] = frozenset(
    {"", "text/javascript", "application/javascript", "module", "text/ecmascript"}
)


@dataclass(frozen=True, slots=True)
class ScriptData:
    """The text of one script that carries page data, in document order.

    ``kind``: "ld+json" (JSON-LD), "json" (``type="application/json"``, e.g. Next's
    ``__NEXT_DATA__``, Nuxt 3's ``__NUXT_DATA__``, Angular's ``ng-state``),
    "sveltekit" (a response SvelteKit inlined, ``data-sveltekit-fetched``) or "js"
    (an inline script, from the framework's assignment on). ``truncated``: LIM-F24
    cut it (the text is a prefix)."""

    kind: str
    type: str | None
    id: str | None
    text: str
    truncated: bool


def _script_kind(attributes: Mapping[Any, str]) -> str | None:
    """Which data a script element may carry, from its attributes; None: none."""
    if "src" in attributes:
        return None
    kind = (attributes.get("type") or "").strip().lower().split(";")[0].strip()
    if kind == "application/ld+json":
        return "ld+json"
    if kind == "application/json":
        return "sveltekit" if "data-sveltekit-fetched" in attributes else "json"
    return "js" if kind in _JS_TYPES else None


class _DataSink:
    """The scripts of one parse that carry data, and the bytes they may still keep
    (LIM-F24, counted as CPython stores the text)."""

    __slots__ = ("left", "max_bytes", "scripts")

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.left = max_bytes
        self.scripts: list[_Script] = []

    def reset(self) -> None:
        # html5lib restarts the parse on a late <meta charset>: what was kept goes.
        self.left = self.max_bytes
        self.scripts = []

    def finish(self) -> tuple[ScriptData, ...]:
        found = []
        for script in self.scripts:
            text = "".join(script.chunks)
            if text.strip():
                found.append(
                    ScriptData(script.kind, script.type, script.id, text, script.truncated)
                )
            script.chunks = []
        self.scripts = []
        return tuple(found)


class _Script(_Dropped):
    """A script whose text may be page data: kept in chunks, within the sink's bytes.
    An inline script is looked at chunk by chunk and kept from a data marker on."""

    __slots__ = ("chunks", "id", "kind", "matched", "sink", "tail", "truncated", "type")

    def __init__(
        self, name_tuple: tuple[str, str], given: Mapping[Any, str], kind: str, sink: _DataSink
    ) -> None:
        super().__init__(name_tuple[1], None, NO_ATTRIBUTES, name_tuple)
        self.kind = kind
        self.type: str | None = given.get("type")
        self.id: str | None = given.get("id")
        self.sink = sink
        self.chunks: list[str] = []
        self.matched = kind != "js"
        self.tail = ""
        self.truncated = False
        sink.scripts.append(self)

    def insertText(self, data: str, insertBefore: Element | None = None) -> None:
        if self.truncated:
            return
        if not self.matched:
            seen = self.tail + data
            found = _DATA_SCRIPT.search(seen)
            if found is None:
                self.tail = seen[-_MARKER_OVERLAP:]
                return
            self.matched = True
            self.tail = ""
            data = seen[found.start() :]
        sink = self.sink
        cost = sys.getsizeof(data)
        if cost > sink.left:
            # Keep what fits: a prefix, at the widest 4 bytes a character.
            data = data[: max(0, sink.left // 4)]
            self.truncated = True
            cost = sys.getsizeof(data)
        sink.left -= min(cost, sink.left)
        if data:
            self.chunks.append(data)


class Document(Element):
    """The root; its children are the ``<html>`` element (and nothing else
    kept: comments and the doctype are dropped)."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("#document", None, {}, ("", "#document"))


@dataclass(frozen=True, slots=True)
class ParsedDocument:
    root: Document
    nodes: int  # nodes created, including comments and dropped elements
    partial: bool  # a bound cut the parse: extraction_partial
    # The text of the scripts that carry page data, in document order (LIM-F24).
    data: tuple[ScriptData, ...] = ()


class _Budget:
    """The counters one parse runs under; reached from the nodes through a
    thread-local, since html5lib calls cloneNode on a node, not the builder."""

    __slots__ = ("cancel", "max_depth", "max_nodes", "nodes")

    def __init__(self, max_nodes: int, max_depth: int, cancel: threading.Event | None) -> None:
        self.max_nodes = max_nodes
        self.max_depth = max_depth
        self.cancel = cancel
        self.nodes = 0

    def take(self) -> None:
        self.nodes += 1
        if self.nodes > self.max_nodes:
            raise _Cut
        if self.cancel is not None and self.nodes % _CANCEL_EVERY_NODES == 0:
            self.check_cancel()

    def check_cancel(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise ParseCancelled


_active = threading.local()


def _count_node() -> None:
    budget: _Budget | None = getattr(_active, "budget", None)
    if budget is not None:
        budget.take()


class _Builder(_base.TreeBuilder):  # type: ignore[misc]  # html5lib has no stubs
    documentClass = Document
    elementClass = Element

    def __init__(self, budget: _Budget, keep: Collection[str] | None, sink: _DataSink) -> None:
        self._budget = budget
        self._keep = keep
        self._sink = sink
        # One name tuple per tag, not per element: HTML names keyed by the name
        # alone, foreign ones by (namespace, name).
        self._html_tuples: dict[str, tuple[str, str]] = {}
        self._name_tuples: dict[tuple[str, str], tuple[str, str]] = {}
        super().__init__(False)  # HTML elements get namespace None

    def reset(self) -> None:
        # Also called when html5lib restarts on a late <meta charset>.
        super().reset()
        self._budget.nodes = 0
        self._sink.reset()

    def _element(self, token: dict[str, Any]) -> Element:
        # Counted before it is made: at the node bound nothing more is built.
        # (Budget.take written out: this runs once per element.)
        budget = self._budget
        nodes = budget.nodes = budget.nodes + 1
        if nodes > budget.max_nodes:
            raise _Cut
        if budget.cancel is not None and nodes % _CANCEL_EVERY_NODES == 0:
            budget.check_cancel()
        name: str = token["name"]
        namespace: str | None = token.get("namespace")
        if namespace is None:
            name_tuple = self._html_tuples.get(name)
            if name_tuple is None:
                name_tuple = self._html_tuples[name] = (HTML_NAMESPACE, name)
            if name == "script":
                kind = _script_kind(token["data"])
                if kind is not None:
                    return _Script(name_tuple, token["data"], kind, self._sink)
            cls = _Dropped if name in DROPPED else Element
            return cls(name_tuple[1], None, self._attributes(name, token["data"]), name_tuple)
        key = (namespace, name)
        name_tuple = self._name_tuples.get(key)
        if name_tuple is None:
            name_tuple = self._name_tuples[key] = (namespace or HTML_NAMESPACE, name)
        return Element(name_tuple[1], namespace, token["data"], name_tuple)

    def _attributes(self, name: str, given: dict[str, str]) -> Mapping[Any, str]:
        """What an HTML element keeps of its attributes: the ones asked for."""
        if name in _WHOLE_ATTRIBUTES:
            return given
        if not given:
            return NO_ATTRIBUTES
        keep = self._keep
        if keep is None:
            return given
        for key in given:
            if key not in keep:
                kept = {k: v for k, v in given.items() if k in keep}
                return kept or NO_ATTRIBUTES
        return given

    def createElement(self, token: dict[str, Any]) -> Element:
        return self._element(token)

    def insertRoot(self, token: dict[str, Any]) -> None:
        self._insert(self.document, token, None)

    def insertElementNormal(self, token: dict[str, Any]) -> Element:
        return self._insert(self.openElements[-1], token, None)

    def insertElementTable(self, token: dict[str, Any]) -> Element:
        if self.openElements[-1].name not in _TABLE_MODE:
            return self.insertElementNormal(token)
        parent, before = self.getTableMisnestedNodePosition()
        return self._insert(parent, token, before)

    def _insert(self, parent: Element, token: dict[str, Any], before: Element | None) -> Element:
        open_elements = self.openElements
        # The open-element stack is the insertion depth (html is level 1);
        # keeping it within max_depth is also what keeps html5lib linear.
        if len(open_elements) >= self._budget.max_depth:
            raise _Cut
        element = self._element(token)
        if not isinstance(element, _Dropped):
            parent.insertBefore(element, before)
        open_elements.append(element)
        return element

    def insertText(self, data: str, parent: Element | None = None) -> None:
        # html5lib's own, without its property lookups, and with the common case
        # (text at the end of a kept element, outside table fostering) written out.
        if parent is None:
            parent = self.openElements[-1]
        if self._insertFromTable and self.openElements[-1].name in _TABLE_MODE:
            parent, before = self.getTableMisnestedNodePosition()
            parent.insertText(data, before)
            return
        if isinstance(parent, _Dropped):
            parent.insertText(data)  # a data script keeps it; any other lets it go
            return
        children = parent.children
        if children:
            last = children[-1]
            if type(last) is Text:
                last.append(data)
                return
        self._budget.take()
        text = Text(data)
        text.parent = parent
        children.append(text)

    def elementInScope(self, target: Element | str, variant: str | None = None) -> bool:
        # html5lib's own, with the per-node tests it repeats hoisted out of the loop.
        elements, invert = _SCOPES[variant]
        if isinstance(target, str):
            wanted = (HTML_NAMESPACE, target)
            for node in reversed(self.openElements):
                name_tuple = node.nameTuple
                if name_tuple == wanted:
                    return True
                if (name_tuple in elements) is not invert:
                    return False
        else:
            for node in reversed(self.openElements):
                if node is target:
                    return True
                if (node.nameTuple in elements) is not invert:
                    return False
        raise AssertionError("no scope boundary on the open-element stack")

    def insertComment(self, token: dict[str, Any], parent: Element | None = None) -> None:
        self._budget.take()

    def insertDoctype(self, token: dict[str, Any]) -> None:
        return None


_TABLE_MODE: frozenset[str] = frozenset(_base.tableInsertModeElements)
_SCOPES: dict[str | None, tuple[frozenset[tuple[str, str]], bool]] = _base.listElementsMap


# The stop sets of the tokenizer's text states (data, RCDATA, RAWTEXT, script,
# PLAINTEXT): each call makes its own character token, so a shorter answer is
# only a split text run.
_TEXT_STOPS: frozenset[object] = frozenset(
    {("&", "<", "\u0000"), ("<", "\u0000"), "\u0000", ("<", "-", "\u0000")}
)
_RUNS: dict[object, re.Pattern[str]] = {}


def _bounded_chars_until(stream: Any) -> Callable[..., str]:
    """html5lib's charsUntil joins a text run across all its chunks: one
    run of 10 MiB becomes one token, built with two or three copies of the
    whole run. For the text states this answers at most the rest of the
    current chunk instead; the other states keep html5lib's own."""
    whole = stream.charsUntil

    def chars_until(characters: Any, opposite: bool = False) -> str:
        if opposite or characters not in _TEXT_STOPS:
            result: str = whole(characters, opposite)
            return result
        run = _RUNS.get(characters)
        if run is None:
            run = _RUNS[characters] = re.compile(
                "[^" + "".join(f"\\x{ord(c):02x}" for c in characters) + "]+"
            )
        if stream.chunkOffset >= stream.chunkSize and not stream.readChunk():
            return ""
        found = run.match(stream.chunk, stream.chunkOffset)
        if found is None:
            return ""
        text: str = stream.chunk[stream.chunkOffset : found.end()]
        stream.chunkOffset = found.end()
        return text

    return chars_until


_CHARACTERS: int = tokenTypes["Characters"]
_SPACE_CHARACTERS: int = tokenTypes["SpaceCharacters"]
_START_TAG: int = tokenTypes["StartTag"]
_END_TAG: int = tokenTypes["EndTag"]
_COMMENT: int = tokenTypes["Comment"]
_DOCTYPE: int = tokenTypes["Doctype"]
# Start tags that stay in foreign content at a MathML text integration point.
_MATHML_TEXT_KEEPS: frozenset[str] = frozenset(["mglyph", "malignmark"])


class _Parser(HTMLParser):  # type: ignore[misc]  # html5lib has no stubs
    xhtml: bool = False  # the page was served as XHTML: FastTokenizer's XML rules

    def parseError(self, errorcode: str = "", datavars: object = None) -> None:
        # html5lib keeps every parse error with its line and column: memory
        # that grows with a malformed page, and a scan of the chunk for each.
        return None

    def mainLoop(self) -> None:
        # html5lib's own loop, for a parser that ignores parse errors (the
        # tokenizer drops them) and builds HTML elements without a namespace:
        # the phase is the current one whenever the current node is HTML, and
        # only foreign content pays for the integration-point tests.
        tree = self.tree
        open_elements = tree.openElements  # tree.reset replaces it: read per call
        phases = self.phases
        in_foreign = phases["inForeignContent"]
        for first in self.tokenizer:
            token = first
            while token is not None:
                kind = token["type"]
                if not open_elements or open_elements[-1].namespace is None:
                    phase = self.phase
                else:
                    # html5lib reads the names from the tokenizer's token, not a reprocessed one.
                    phase = self._foreign_phase(open_elements[-1], kind, first, in_foreign)
                if kind == _CHARACTERS:
                    token = phase.processCharacters(token)
                elif kind == _START_TAG:
                    token = phase.processStartTag(token)
                elif kind == _END_TAG:
                    token = phase.processEndTag(token)
                elif kind == _SPACE_CHARACTERS:
                    token = phase.processSpaceCharacters(token)
                elif kind == _COMMENT:
                    token = phase.processComment(token)
                elif kind == _DOCTYPE:
                    token = phase.processDoctype(token)
                else:
                    token = None
        # The end of input, as html5lib processes it.
        reprocess = True
        seen = []
        while reprocess:
            seen.append(self.phase)
            reprocess = self.phase.processEOF()
            if reprocess:
                assert self.phase not in seen

    def _foreign_phase(self, node: Any, kind: int, token: dict[str, Any], in_foreign: Any) -> Any:
        """html5lib's choice of phase when the current node is SVG or MathML."""
        if (
            (
                self.isMathMLTextIntegrationPoint(node)
                and (
                    (kind == _START_TAG and token["name"] not in _MATHML_TEXT_KEEPS)
                    or kind in (_CHARACTERS, _SPACE_CHARACTERS)
                )
            )
            or (
                node.namespace == _NAMESPACES["mathml"]
                and node.name == "annotation-xml"
                and kind == _START_TAG
                and token["name"] == "svg"
            )
            or (
                self.isHTMLIntegrationPoint(node)
                and kind in (_START_TAG, _CHARACTERS, _SPACE_CHARACTERS)
            )
        ):
            return self.phase
        return in_foreign

    def reset(self) -> None:
        # Called once the tokenizer exists, and again on a restart.
        super().reset()
        tokenizer = self.tokenizer
        if type(tokenizer) is HTMLTokenizer:
            # html5lib's _parse names its own tokenizer class; ours only adds
            # methods, so the instance is switched to it before the first token.
            tokenizer.__class__ = FastTokenizer
            tokenizer.state = tokenizer.dataState
        tokenizer.xhtml = self.xhtml
        stream = tokenizer.stream
        if "charsUntil" not in vars(stream):
            stream.charsUntil = _bounded_chars_until(stream)
        # Invalid-character errors are recorded only to be thrown away: skipping the
        # scan saves a regex pass over every chunk, and keeps `errors` from growing.
        stream.reportCharacterErrors = lambda data: None


class TextSource(Protocol):
    """Text handed over a piece at a time (charset.DecodedText): ``read(n)``
    answers the next ``n`` characters, fewer only at the end."""

    def read(self, size: int = -1) -> str: ...


class _Source:
    """The input as html5lib's stream reads it, in chunks; each read looks at
    the cancel flag. Slicing str (or viewing bytes) avoids the copies StringIO
    would make (a StringIO of a 10 MiB page holds 40 MiB); a TextSource is read
    on, so the page never exists as text beside its tree."""

    def __init__(self, data: bytes | str | TextSource, budget: _Budget) -> None:
        self._data = data
        self._pos = 0
        self._budget = budget

    def read(self, size: int = -1) -> bytes | str:
        if size:  # html5lib probes with read(0) to learn the type
            self._budget.check_cancel()
        data = self._data
        if not isinstance(data, (bytes, str)):
            return data.read(size)
        start = self._pos
        end = len(data) if size is None or size < 0 else min(start + size, len(data))
        self._pos = end
        return data[start:end]

    def seek(self, pos: int, whence: int = 0) -> int:
        # Only html5lib's byte stream seeks (to restart on a late <meta charset>).
        data = self._data
        assert isinstance(data, (bytes, str))
        origin = (0, self._pos, len(data))[whence]
        self._pos = origin + pos
        return self._pos

    def tell(self) -> int:
        return self._pos


def _let_go(parser: _Parser, builder: _Builder) -> None:
    """Break the parser's reference cycles (its phases and tokenizer point back
    at it, the stream at its own charsUntil) once the tree is taken: otherwise
    the page's text, the stream and the builder wait for the cycle collector,
    and pages parsed one after another stack up in memory."""
    tokenizer: Any = parser.__dict__.get("tokenizer")
    if tokenizer is not None:
        stream: Any = tokenizer.__dict__.get("stream")
        if stream is not None:
            stream.__dict__.clear()
        tokenizer.__dict__.clear()
    parser.__dict__.clear()
    builder.__dict__.clear()


def release(root: Element) -> None:
    """Unlink every node from its parent, so that the tree is freed as soon as
    the last reference to it goes, not whenever the cycle collector runs (a
    child and its parent point at each other). Call it once the tree is read;
    the nodes keep their children, so what still holds one still reads it."""
    stack: list[Element] = [root]
    pop, push = stack.pop, stack.append
    while stack:
        node = pop()
        for child in node.children:
            child.parent = None
            if type(child) is not Text:
                push(child)  # type: ignore[arg-type]


def _prune_deep(root: Document, max_depth: int) -> bool:
    """Remove elements deeper than max_depth. html5lib's adoption agency can
    move subtrees under a new parent, so the stack bound alone does not fix
    the depth of the finished tree. Returns True when something was removed."""
    # Level by level: one list per depth costs less than a (node, depth) pair
    # per element; ``level`` ends as the elements at depth max_depth.
    level: list[Element] = [root]
    for _depth in range(max_depth):
        level = [c for node in level for c in node.children if isinstance(c, Element)]
        if not level:
            return False
    pruned = False
    for node in level:
        kept: list[Element | Text] = [c for c in node.children if type(c) is Text]
        if len(kept) != len(node.children):
            node.children = kept
            pruned = True
    return pruned


def parse_html(
    data: bytes | str | TextSource,
    *,
    encoding: str | None = None,
    cancel: threading.Event | None = None,
    max_nodes: int = limits.default("LIM-F10"),
    max_depth: int = limits.default("LIM-F11"),
    xhtml: bool = False,
    keep_attributes: Collection[str] | None = None,
    max_data_bytes: int = limits.default("LIM-F24"),
) -> ParsedDocument:
    """Parse a page into a bounded tree.

    ``data`` is the page as bytes, as text, or as a TextSource read on to its
    end (and let go of when the parse is over). ``encoding`` is the transport
    (Content-Type) charset of a bytes page; a BOM still wins over it, and
    without either html5lib's ``<meta>`` prescan decides (windows-1252 by
    default). Undecodable bytes are replaced. Raises ParseCancelled when
    ``cancel`` is set during the parse; never raises for malformed HTML.
    ``xhtml`` is for a page served as
    ``application/xhtml+xml``: ``<div/>``, ``<script src="x"/>``, ``<title/>``
    ... are empty elements and CDATA sections are text (see FastTokenizer).
    With ``keep_attributes``, an HTML element keeps only those of its
    attributes (the formatting elements, ``<html>`` and ``<body>`` keep all of
    theirs, which html5lib compares or adds to): the tree is otherwise the same.
    The text of the scripts that carry page data is kept beside the tree, at most
    ``max_data_bytes`` in all (``ParsedDocument.data``).
    """
    budget = _Budget(max_nodes, max_depth, cancel)
    budget.check_cancel()
    sink = _DataSink(max_data_bytes)
    builder = _Builder(budget, keep_attributes, sink)
    parser = _Parser(tree=lambda _namespace_html: builder, namespaceHTMLElements=False)
    parser.xhtml = xhtml
    kwargs: dict[str, Any] = {}
    if isinstance(data, bytes):
        kwargs = {"useChardet": False}
        if encoding:
            kwargs["transport_encoding"] = encoding
    previous = getattr(_active, "budget", None)
    _active.budget = budget
    partial = False
    root: Document = builder.document
    try:
        parser.parse(_Source(data, budget), **kwargs)
    except _Cut:
        partial = True
    finally:
        _active.budget = previous
        root = builder.document  # a restart on a late <meta charset> made a new one
        _let_go(parser, builder)
    if _prune_deep(root, max_depth):
        partial = True
    return ParsedDocument(
        root=root, nodes=min(budget.nodes, max_nodes), partial=partial, data=sink.finish()
    )
