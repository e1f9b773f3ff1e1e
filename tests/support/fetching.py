"""web_fetch through the facade against local HTTPS sites: the page the tutorial reads, the
text it gives, and a core whose client trusts the sites' test CA. Local sites are reached
only through an allow rule (ALLOW_LOCAL) written in the configuration (REQ-TEST-005)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from rypsok.core.config import load
from rypsok.core.facade import Rypsok
from rypsok.core.model import ToolError
from rypsok.core.net.client import OutboundClient, user_agent
from tests.support.site import ca_context

ALLOW_LOCAL = '[egress]\nallow = ["127.0.0.1"]\n'
ARTICLE = b"""<!doctype html><html><head><title>Rust ownership, in short</title></head><body>
<nav><a href="/">Home</a> <a href="/blog">Blog</a></nav>
<header><p>Example Site header</p></header>
<main><article>
<h1>Rust ownership, in short</h1>
<p>Every value in Rust has one owner. When the owner goes out of scope, the value is dropped. A value can be moved to a new owner, or borrowed for a while by a reference.</p>
<h2>Borrowing</h2>
<p>A shared reference lets many readers look at a value at once. A mutable reference lets one writer change it, and nobody else may look while it exists. The compiler checks these rules before the program runs.</p>
<h2>Why it matters</h2>
<p>Ownership replaces a garbage collector with rules the compiler enforces, so memory is freed exactly once and data races are impossible in safe code. The rules take time to learn, and the compiler's messages name the conflicting borrow.</p>
<ul><li>One owner at a time.</li><li>Many readers or one writer.</li><li>Checked at compile time.</li></ul>
</article></main>
<footer><p>Copyright Example Site</p></footer>
</body></html>"""
BOOK_CONTENT = (
    "# Rust ownership, in short\n\nEvery value in Rust has one owner. When the owner goes out "
    "of scope, the value is dropped. A value can be moved to a new owner, or borrowed for a "
    "while by a reference.\n\n## Borrowing\n\nA shared reference lets many readers look at a "
    "value at once. A mutable reference lets one writer change it, and nobody else may look "
    "while it exists. The compiler checks these rules before the program runs.\n\n## Why it "
    "matters\n\nOwnership replaces a garbage collector with rules the compiler enforces, so "
    "memory is freed exactly once and data races are impossible in safe code. The rules take "
    "time to learn, and the compiler's messages name the conflicting borrow.\n\n- One owner "
    "at a time.\n- Many readers or one writer.\n- Checked at compile time."
)


def make(tmp_path: Path, body: str = ALLOW_LOCAL, resolver: Any = None) -> Rypsok:
    path = tmp_path / "c.toml"
    path.write_text("config_version = 1\n" + body)
    config = load(str(path), {})
    client = OutboundClient(tls=ca_context(), user_agent=user_agent(""), resolver=resolver)
    return Rypsok(config, tls=ca_context(), fetch_client=client)


def fetch(core: Rypsok, **arguments: Any) -> dict[str, Any]:
    async def go() -> dict[str, Any]:
        return (await core.fetch(arguments)).to_json()

    return anyio.run(go)


def refused(core: Rypsok, **arguments: Any) -> ToolError:
    with pytest.raises(ToolError) as info:
        fetch(core, **arguments)
    error = info.value
    assert len(error.message) <= 200
    return error
