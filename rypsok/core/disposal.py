"""What a call leaves behind outside rypsok's own objects (REQ-LIFE-002).

Since Python 3.11 `urllib.parse.urlsplit` memoizes the last 128 URLs it split, for the life
of the process. rypsok splits every URL it requests, follows or finds on a page, query
strings included, so without this they would outlive their calls. The cache is cleared when
a call ends, and by a parse thread that ends after its call. Clearing is process-wide: it
costs concurrent calls a few cache misses, nothing else.
"""

from __future__ import annotations

import urllib.parse


def forget_urls() -> None:
    """Drop every URL urllib holds in its caches."""
    urllib.parse.clear_cache()  # type: ignore[attr-defined]  # present, undocumented, not in typeshed
