"""Media types (RFC 9110 8.3.1), as Content-Type and Accept carry them: one reader.

    media-type = type "/" subtype parameters
    parameters = *( OWS ";" OWS [ parameter ] )
    parameter  = parameter-name "=" ( token / quoted-string )

Its callers: the fetch pipeline (a page's media type and charset), the engines
(the charset of a scraped page, whether an answer is JSON) and the listener's
gate (a request's Content-Type, the ranges of its Accept). Each decides what a
type means to it; this module only reads.

Where the RFC leaves a choice it is read as browsers read it (WHATWG MIME
Sniffing), and as leniently as servers write it:

* The essence is the text before the first ";", stripped and lower-cased,
  whatever it holds: a page's odd type is then named in its refusal.
* Parameter names are lower-cased and the first parameter of a name counts.
  Space around a name and its "=" is allowed; a name without "=" has the
  value "".
* A quoted-string ends at its closing quote and a backslash takes the next
  character as it is; a ";" (or, in a list, a ",") inside it separates
  nothing. Text after the closing quote up to the next ";" is dropped; an
  unclosed quote runs to the end. A value not quoted runs to the next ";",
  stripped. Single quotes quote nothing (the charset reader strips them from
  a label, as it strips space).
"""

from __future__ import annotations

import re
from typing import Final, NamedTuple

# Each scan runs over a stretch once (a regex from a position): a head of many ";" stays linear.
_RUN: Final = {stops: re.compile(f"[^{stops}]*") for stops in (";", ";,", "=;", "=;,")}
_QUOTED_RUN: Final = re.compile(r'(?:[^"\\]|\\.)*', re.DOTALL)
_ESCAPE: Final = re.compile(r"\\(.)", re.DOTALL)


class Parameter(NamedTuple):
    name: str  # lower case
    value: str  # a quoted-string without its quotes and escapes
    quoted: bool


class MediaType(NamedTuple):
    essence: str  # "type/subtype" lower case, or whatever stood before the first ";"
    parameters: tuple[Parameter, ...]

    def parameter(self, name: str) -> Parameter | None:
        """The first parameter called *name* (lower case), or None."""
        for parameter in self.parameters:
            if parameter.name == name:
                return parameter
        return None

    @property
    def charset(self) -> str | None:
        """The value of the first charset parameter; None when it is absent or empty."""
        found = self.parameter("charset")
        return found.value if found is not None and found.value else None


def parse(text: str) -> MediaType:
    """One media type, such as a Content-Type value."""
    return _read(text, 0, ";")[0]


def parse_list(text: str) -> list[MediaType]:
    """A comma-separated list of media types or ranges, such as an Accept value; members
    with an empty essence are left out (RFC 9110 5.6.1: empty list elements)."""
    found: list[MediaType] = []
    at = 0
    while at <= len(text):
        media, at = _read(text, at, ";,")
        if media.essence:
            found.append(media)
        at += 1  # past the ","
    return found


def essence(value: str | None) -> str | None:
    """The essence of a Content-Type value; None when there is no value or it is blank."""
    if value is None:
        return None
    return value.split(";", 1)[0].strip().lower() or None


def charset(value: str | None) -> str | None:
    """The charset parameter of a Content-Type value, or None."""
    if value is None or ";" not in value:
        return None
    return parse(value).charset


def _read(text: str, at: int, stops: str) -> tuple[MediaType, int]:
    """The media type that starts at *at*, and where it stopped: the end of the text or
    a stop character that is not ";" (the list's ",")."""
    end = len(text)
    i = _until(text, at, stops)
    kind = text[at:i].strip().lower()
    parameters: list[Parameter] = []
    name_stops = "=" + stops
    while i < end and text[i] == ";":
        start = i + 1
        i = _until(text, start, name_stops)
        name = text[start:i].strip().lower()
        value, quoted = "", False
        if i < end and text[i] == "=":
            begin = i + 1
            while begin < end and text[begin].isspace():
                begin += 1
            if begin < end and text[begin] == '"':
                value, i = _quoted(text, begin + 1)
                quoted = True
                i = _until(text, i, stops)
            else:
                i = _until(text, begin, stops)
                value = text[begin:i].strip()
        if name:
            parameters.append(Parameter(name, value, quoted))
    return MediaType(kind, tuple(parameters)), i


def _until(text: str, at: int, stops: str) -> int:
    """The index of the first character of *stops* from *at* on, or the end."""
    found = _RUN[stops].match(text, at)
    assert found is not None  # a run of none matches
    return found.end()


def _quoted(text: str, at: int) -> tuple[str, int]:
    """The content of a quoted-string that starts after its quote at *at*, and the index
    after its closing quote (the end of the text when it is not closed)."""
    run = _QUOTED_RUN.match(text, at)
    assert run is not None
    stop = run.end()
    content = _ESCAPE.sub(r"\1", text[at:stop])
    if stop < len(text) and text[stop] == '"':
        return content, stop + 1
    # Unclosed: the end, where only a last lone backslash can be left, kept as it is.
    return content + text[stop:], len(text)
