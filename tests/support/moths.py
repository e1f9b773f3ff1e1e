"""What the call commands' tests serve: a page about moths, the engines' answers to a search
for moths (through tests/support/engine_standin.py), and the file of a stand-in's CA that a
child process trusts by SSL_CERT_FILE."""

from __future__ import annotations

from pathlib import Path

from tests.support.engine_standin import WIKI, Reply, Seen, brave_results, wiki_results

ARTICLE = (
    b"""<!doctype html><html><head><title>Moths at night</title></head><body>
<nav><a href="/">Home</a></nav><main><article><h1>Moths at night</h1>
<p>Moths find their way by the moon and the stars, and a lamp confuses them: they circle it
because they keep it at a fixed angle, as they would keep the moon.</p>
<p>Most moths fly at night, and many are pollinators of flowers that open after dark.</p>
"""
    + b"<p>A moth's wings carry scales that rub off as a fine dust between the fingers.</p>\n" * 8
    + b"""
<p>LAST Some moths never eat as adults: they live a few days on what the caterpillar stored.</p>
</article></main><footer>FOOTER of the site</footer></body></html>"""
)


def ca_file(tmp_path: Path, ca: object) -> str:
    path = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(path))  # type: ignore[attr-defined]
    return str(path)


def moth_results(seen: Seen) -> Reply:
    if seen.host == WIKI:
        return wiki_results(seen, ["Moth", "Lamp"])
    return brave_results(["https://moths.example/night", "https://lamps.example/"])
