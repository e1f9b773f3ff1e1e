"""Where the repository and its test data are, for tests at any depth under tests/."""

from __future__ import annotations

from pathlib import Path

# tests/support/paths.py: two folders below the repository's root.
REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"
EXAMPLES = REPO / "examples"
