"""Prose the tests of issue 34 hide in a page's script data: two paragraphs that
read like a person wrote them, so the prose finder keeps them."""

from __future__ import annotations

PROSE = (
    "The lighthouse keeper walked the long stair every evening and counted the steps "
    "aloud, because the sound of his own voice kept the wind from feeling so large."
)
PROSE2 = (
    "In the morning the fishing boats came back one by one, and the harbour filled with "
    "gulls that argued over every scrap the nets let fall onto the stones."
)
