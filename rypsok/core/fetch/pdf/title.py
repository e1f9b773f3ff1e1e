"""A PDF's title: its metadata title when that names the document, else its first
heading, else the file's name in the URL (issue 33, item 1)."""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import unquote, urlsplit

# Metadata titles that name no document: a program's default, or a file name (a word
# processor writes the source file's name, "Microsoft Word - report.docx").
_PLACEHOLDER: Final = re.compile(
    r"\(?(untitled|anonymous|no title|title|document\d*|blank|slide \d+|presentation\d*)\)?"
    r"(?: document)?",
    re.IGNORECASE,
)
_FILE_NAME: Final = re.compile(
    r".*\.(docx?|pdf|rtf|odt|pptx?|xlsx?|tex|dvi|ps|indd|qxd|pages|txt|html?)", re.IGNORECASE
)


def readable(text: str | None) -> bool:
    """Whether the text has a letter or a digit: controls and invisible characters, which
    the content boundary takes out, would leave an empty title."""
    return text is not None and any(c.isalnum() for c in text)


def useful(meta: str | None) -> bool:
    if meta is None or not readable(meta):
        return False
    text = meta.strip()
    return not (_PLACEHOLDER.fullmatch(text) or _FILE_NAME.fullmatch(text))


def file_name(url: str) -> str | None:
    """The last segment of the URL's path, decoded."""
    path = urlsplit(url).path
    name = unquote(path.rsplit("/", 1)[-1]) if path else ""
    return name.strip() or None


def choose(meta: str | None, heading: str | None, url: str) -> str | None:
    if useful(meta):
        return meta
    if readable(heading):
        return heading
    name = file_name(url)
    return name if readable(name) else None
