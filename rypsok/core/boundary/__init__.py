"""The content boundary for external text (REQ-CTX-004, REQ-SEC-015, REQ-SEC-003).

A package of pure functions, one job a module: ``unicode`` (the code point
tables and the one invisible-character rule, which the secret check uses too),
``markup`` (tags and character references), ``bounds`` (cutting to a length),
``instructions`` (text addressed to a model) and ``clean`` (the pipeline that
runs them in the book's order). This module re-exports the names callers
import, and a few private ones the tests reach: the instruction anchors' index,
the invisible-character passes, and the cached per-character predicates (so a
test can clear their caches here).
"""

from __future__ import annotations

from rypsok.core.boundary.bounds import bound
from rypsok.core.boundary.clean import (
    SNIPPET_MAX_CHARS,
    TITLE_MAX_CHARS,
    Cleaned,
    CleanedField,
    CleanedResult,
    clean_content,
    clean_field,
    clean_result,
    clean_text,
    tally,
)
from rypsok.core.boundary.instructions import _LATIN_ANCHORS as _LATIN_ANCHORS
from rypsok.core.boundary.instructions import _LATIN_CHECKS as _LATIN_CHECKS
from rypsok.core.boundary.instructions import _LATIN_PATTERNS as _LATIN_PATTERNS
from rypsok.core.boundary.instructions import _OTHER_ANCHORS as _OTHER_ANCHORS
from rypsok.core.boundary.instructions import _OTHER_CHECKS as _OTHER_CHECKS
from rypsok.core.boundary.instructions import _OTHER_PATTERNS as _OTHER_PATTERNS
from rypsok.core.boundary.instructions import Check, count_instruction_like, looks_like_instruction
from rypsok.core.boundary.instructions import _anchor_index as _anchor_index
from rypsok.core.boundary.instructions import _any_match as _any_match
from rypsok.core.boundary.unicode import ZWJ, ZWNJ, Ranges, is_invisible
from rypsok.core.boundary.unicode import _indic_script as _indic_script
from rypsok.core.boundary.unicode import _is_emoji_extender as _is_emoji_extender
from rypsok.core.boundary.unicode import _is_pictographic as _is_pictographic
from rypsok.core.boundary.unicode import _is_variation_selector as _is_variation_selector
from rypsok.core.boundary.unicode import _is_virama as _is_virama
from rypsok.core.boundary.unicode import _joining_script as _joining_script
from rypsok.core.boundary.unicode import _remove_invisible as _remove_invisible
from rypsok.core.boundary.unicode import _remove_invisible_passes as _remove_invisible_passes

__all__ = [
    "SNIPPET_MAX_CHARS",
    "TITLE_MAX_CHARS",
    "ZWJ",
    "ZWNJ",
    "Check",
    "Cleaned",
    "CleanedField",
    "CleanedResult",
    "Ranges",
    "bound",
    "clean_content",
    "clean_field",
    "clean_result",
    "clean_text",
    "count_instruction_like",
    "is_invisible",
    "looks_like_instruction",
    "tally",
]
