"""The secret check: credentials in a query or a fetch URL (REQ-PRIV-002, LIM-P1).

A package of pure functions; this module re-exports the names callers import.
"""

from __future__ import annotations

from rypsok.core.privacy.detectors import (
    KINDS,
    MODES,
    PLACEHOLDER,
    Finding,
    Mode,
    PrivacyDecision,
    UrlReason,
    UrlSecret,
    apply,
    check_url,
    find_secrets,
    mask,
)

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
