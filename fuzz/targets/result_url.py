"""Fuzz target: URL normalization of an engine's result URL (rypsok.core.search.urls).

Input: one knob byte (bit 0 wide text, bit 1 with operator rules), then the URL.
Documented failures: none; ``normalize`` "never raises". Checked besides: a kept
URL is within LIM-F9 and normalizing it again keeps it and gives the same
comparison key.
"""

from __future__ import annotations

from fuzz.harness import Input, as_text, instrumented, main

with instrumented(__name__, ("ipaddress", "encodings.idna")):
    from rypsok.core.search import urls


def _rules(host: str) -> bool | None:
    """An operator who allows one private host and denies one public name."""
    if host == "10.1.2.3" or host == "intranet.example":
        return True
    if host == "denied.example":
        return False
    return None


def TestOneInput(data: bytes) -> None:
    source = Input(data)
    knob = source.byte()
    url = as_text(source.rest(), bool(knob & 1))
    rules = _rules if knob & 2 else None

    result = urls.normalize(url, rules)
    urls.refuses_host(url)
    if isinstance(result, urls.DroppedUrl):
        assert result.reason in ("url_invalid", "url_too_long")
        return
    assert len(result.url) <= urls.URL_MAX_CHARS
    again = urls.normalize(result.url, rules)
    assert isinstance(again, urls.NormalUrl), "a returned URL is dropped when read again"
    assert again.key == result.key, "the comparison key changes on a returned URL"


if __name__ == "__main__":
    main(TestOneInput)
