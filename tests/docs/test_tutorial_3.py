"""Tutorial 3 over stdio, against a local site (the URLs of the book replaced by the
site's), with the test CA given through SSL_CERT_FILE as an operator would."""

from __future__ import annotations

from pathlib import Path

from tests.support.fetching import ARTICLE, BOOK_CONTENT
from tests.support.mcp_lines import answers, call, lines
from tests.support.paths import EXAMPLES
from tests.support.run import clean_env, cli
from tests.support.site import CA, Page, site


def test_tutorial_3_answers_over_stdio(tmp_path: Path) -> None:
    ca_file = tmp_path / "ca.pem"
    CA.cert_pem.write_to_path(str(ca_file))
    with (
        site({"/rust-ownership": Page(body=ARTICLE)}) as s,
        site({"/new": Page(body=ARTICLE)}) as other,
    ):
        s.pages["/moved"] = Page(302, headers={"Location": other.url("/new")})
        config = tmp_path / "rypsok.toml"
        config.write_text(
            (EXAMPLES / "tutorial-3.toml").read_text() + '[egress]\nallow = ["127.0.0.1"]\n'
        )
        page = s.url("/rust-ownership")
        run = cli(
            "serve",
            "--config",
            str(config),
            env=clean_env(SSL_CERT_FILE=str(ca_file)),
            stdin=lines(
                call(1, "web_fetch", {"url": page}),
                call(2, "web_fetch", {"url": page, "max_chars": 500}),
                call(3, "web_fetch", {"url": page, "max_chars": 500, "start_char": 493}),
                call(4, "web_fetch", {"url": s.url("/moved")}),
                call(5, "web_fetch", {"url": "http://192.168.1.10/admin"}),
            ),
            timeout=60,
        )
    got = {i: m["result"] for i, m in answers(run.out).items()}
    assert got[1]["structuredContent"]["content"] == BOOK_CONTENT
    assert got[1]["structuredContent"]["truncated"] is False
    # The first part ends after the last space of its last 5 % (issue 36), with the outline.
    assert got[2]["structuredContent"]["next_start_char"] == 493
    assert [h["text"] for h in got[2]["structuredContent"]["outline"]] == [
        "Rust ownership, in short",
        "Borrowing",
        "Why it matters",
    ]
    assert got[3]["structuredContent"]["content"] == BOOK_CONTENT[493:993]
    assert got[4]["isError"] is True
    assert got[4]["structuredContent"]["error"] == {
        "detail": {"location": other.url("/new")},
        "kind": "redirected",
        "message": "the page moved to another host; see detail.location",
    }
    assert got[5]["structuredContent"] == {
        "error": {
            "detail": {"reason": "egress"},
            "kind": "denied",
            "message": "the destination is not allowed by the egress policy",
        }
    }
