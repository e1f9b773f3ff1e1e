"""The secret check: credentials in a query or a fetch URL (REQ-PRIV-002, LIM-P1).

A package of pure functions, one job a module: ``views`` (the text as a reader
sees it, through the invisible-character rule of ``rypsok.core.boundary``),
``detectors`` (the kinds and the recognizer of each), ``modes`` (off, warn,
mask, refuse) and ``urls`` (the check of a fetch URL). This module re-exports
the names callers import.
"""

from __future__ import annotations

from rypsok.core.privacy.detectors import KINDS, PLACEHOLDER, Finding, find_secrets
from rypsok.core.privacy.modes import MODES, Mode, PrivacyDecision, apply, mask
from rypsok.core.privacy.urls import UrlReason, UrlSecret, check_url

__all__ = [
    "KINDS",
    "MODES",
    "PLACEHOLDER",
    "Finding",
    "Mode",
    "PrivacyDecision",
    "UrlReason",
    "UrlSecret",
    "apply",
    "check_url",
    "find_secrets",
    "mask",
]
