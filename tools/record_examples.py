"""Record every answer the docs show: the real program against the stand-ins of tests/.

  .venv/bin/python -m tools.record_examples          rewrite examples/answers/ from fresh
                                                     runs, then refresh every block of the
                                                     docs marked as showing an example file
  .venv/bin/python -m tools.record_examples --check  compare fresh runs with
                                                     examples/answers/; exit 1 on a difference
                                                     (tests/docs/test_docs.py runs the same code)

Run it from the repository root with the project's venv: it imports the stand-ins of
tests/support (which need trustme) as the package of this work tree. Each scenario
copies one example configuration into an empty folder as rypsok.toml, adds only the route to
its stand-in, runs `python -m rypsok serve` (or `check`) there, sends the example calls of
examples/calls/ over stdio and keeps the answers:

* engines: tests/support/ddg_standin.py, a CONNECT proxy that answers for en.wikipedia.org and
  html.duckduckgo.com under a throw-away CA; the configuration gains `[egress] proxy`, the
  child trusts the CA through SSL_CERT_FILE. Result URLs stay the providers' own.
* site: two local HTTPS sites of tests/support/site.py serving the page of
  tests/support/fetching.py; the configuration gains an egress allow rule for 127.0.0.1
  and the calls name example.org and example.net, which are swapped for the sites' addresses
  on the way in and back on the way out (web_fetch never uses a proxy, so the addresses are
  real).

What differs from run to run is masked with a stable placeholder: the version ("<version>"),
latencies ("<ms>") and the stand-ins' ports (the example host names above), and so the
content_sha256 of a page read from a local site ("<sha256>"), whose links carry its port.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent

EXAMPLES = REPO / "examples"
ANSWERS = EXAMPLES / "answers"
RUN_TIMEOUT_S = 60
VERSION_MASK = "<version>"
LATENCY_MASK = "<ms>"
HASH_MASK = "<sha256>"
# The documented host names that stand for the local sites of the "site" stand-in.
PAGE_HOST = "https://example.org"
OTHER_HOST = "https://example.net"
# What tutorial 4's curl command sends besides the token and the body.
HTTP_HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": "tools/call",
    "Mcp-Name": "engine_status",
}
HTTP_HOST = "rypsok.example"
HTTP_BODY = "calls/http-engine-status.json"

Command = Sequence[str]


def default_command() -> list[str]:
    return [sys.executable, "-m", "rypsok"]


# -- scenarios ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    """One `serve` over stdio: a configuration, the calls sent, the answers kept."""

    name: str
    config: str  # a file of examples/
    calls: tuple[str, ...]  # files of examples/, sent in this order in one process
    answers: Mapping[int, str | None]  # request id -> answer file (None: not shown)
    # "engines", "engines-blocked", "site", "searxng", "searxng-partial" or "none"
    standin: str = "none"
    env: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CheckRun:
    """One `check --config rypsok.toml` with the output shown in the docs."""

    answer: str
    config: str
    exit_code: int
    env: Mapping[str, str] = field(default_factory=dict)
    edit: Callable[[str], str] | None = None  # the change a tutorial asks the reader to try


FIRST_SEARCH = "first-search.jsonl"
EXAMPLE_KEY = {"BRAVE_API_KEY": "example-key-for-the-docs-0000000000"}
EXAMPLE_TOKEN = "example-token-of-mimlys-for-the-docs-00000"

SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "tutorial-1",
        "tutorial-1.toml",
        (FIRST_SEARCH,),
        {1: "tutorial-1-discover.json", 2: "tutorial-1-search.json"},
        "engines",
    ),
    Scenario(
        "tutorial-2-no-key",
        "tutorial-2.toml",
        ("calls/engine-status.jsonl",),
        {3: "tutorial-2-status-no-key.json"},
    ),
    Scenario(
        "tutorial-2",
        "tutorial-2.toml",
        ("calls/engine-status.jsonl",),
        {3: "tutorial-2-status.json"},
        env=EXAMPLE_KEY,
    ),
    Scenario(
        "tutorial-3",
        "tutorial-3.toml",
        (
            "calls/fetch-page.jsonl",
            "calls/fetch-first-part.jsonl",
            "calls/fetch-next-part.jsonl",
            "calls/fetch-moved.jsonl",
            "calls/fetch-private-address.jsonl",
            "calls/fetch-pdf.jsonl",
        ),
        {
            1: "tutorial-3-page.json",
            2: "tutorial-3-first-part.json",
            3: "tutorial-3-next-part.json",
            4: "tutorial-3-moved.json",
            5: "tutorial-3-private-address.json",
            8: "tutorial-3-pdf.json",
        },
        "site",
    ),
    Scenario(
        "not-content",
        "tutorial-3.toml",
        ("calls/fetch-soft-404.jsonl", "calls/fetch-challenge.jsonl"),
        {6: "fetch-soft-404.json", 7: "fetch-challenge.json"},
        "site",
    ),
    Scenario(
        "strict-mode",
        "strict-mode.toml",
        ("calls/fetch-strict.jsonl",),
        {1: "strict-mode-denied.json"},
    ),
    Scenario(
        "tutorial-5",
        "tutorial-5.toml",
        (FIRST_SEARCH,),
        {1: None, 2: "tutorial-5-search.json"},
        "engines",
    ),
    Scenario(
        "tutorial-5-blocked",
        "tutorial-5.toml",
        (FIRST_SEARCH,),
        {1: None, 2: "tutorial-5-blocked.json"},
        "engines-blocked",
    ),
    Scenario(
        "tutorial-6",
        "tutorial-6.toml",
        (FIRST_SEARCH,),
        {1: None, 2: "tutorial-6-search.json"},
        "searxng",
    ),
    Scenario(
        "tutorial-6-partial",
        "tutorial-6.toml",
        (FIRST_SEARCH,),
        {1: None, 2: "tutorial-6-partial.json"},
        "searxng-partial",
    ),
    Scenario(
        "refused",
        "tutorial-1.toml",
        ("calls/refused/search-max-results.jsonl", "calls/refused/search-category.jsonl"),
        {1: "refused-max-results.json", 2: "refused-category.json"},
    ),
)


def _without_switch(text: str) -> str:
    return text.replace("[scraping]\nenabled = true\n", "")


CHECKS: tuple[CheckRun, ...] = (
    CheckRun("check-smallest.txt", "smallest.toml", 0),
    CheckRun("check-tutorial-1.txt", "tutorial-1.toml", 0),
    CheckRun("check-tutorial-2-no-key.txt", "tutorial-2.toml", 0),
    CheckRun("check-tutorial-2.txt", "tutorial-2.toml", 0, EXAMPLE_KEY),
    CheckRun("check-tutorial-4.txt", "tutorial-4.toml", 0, {"RYPSOK_TOKEN_MIMLYS": EXAMPLE_TOKEN}),
    CheckRun("check-tutorial-5-no-switch.txt", "tutorial-5.toml", 1, edit=_without_switch),
    CheckRun("check-tutorial-6-no-url.txt", "tutorial-6.toml", 0),
    CheckRun(
        "check-tutorial-6.txt", "tutorial-6.toml", 0, {"SEARXNG_URL": "http://127.0.0.1:8888"}
    ),
)
HTTP_ANSWERS = ("tutorial-4-engine-status.txt", "tutorial-4-no-token.txt")


def answer_files() -> list[str]:
    """Every file of examples/answers/ this tool writes."""
    names = [a for s in SCENARIOS for a in s.answers.values() if a is not None]
    return sorted([*names, *(c.answer for c in CHECKS), *HTTP_ANSWERS])


# -- running the program -----------------------------------------------------------------------


def child_env(folder: Path, extra: Mapping[str, str], command: Command | None) -> dict[str, str]:
    """A bare environment: no RYPSOK_CONFIG, no keys, no proxies. `python -m rypsok` gets
    this checkout on its path; another command (the pyz) brings its own."""
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(folder)}
    if command is None:
        env["PYTHONPATH"] = str(REPO)
    env.update(extra)
    return env


def _config_for(name: str, folder: Path, route: str = "") -> Path:
    """The example as rypsok.toml in *folder*, with the route to a stand-in added."""
    text = (EXAMPLES / name).read_text(encoding="utf-8")
    if "token_file" in text:
        # Tutorial 4 reads its second caller's token from a file: give it one of its own.
        token = folder / "rypsok-ops"
        token.write_text("example-token-of-ops-for-the-docs-000000000\n", encoding="utf-8")
        token.chmod(0o600)
        text = text.replace("/run/secrets/rypsok-ops", str(token))
    path = folder / "rypsok.toml"
    path.write_text(text + route, encoding="utf-8")
    return path


def _egress(key: str, value: str, text: str) -> str:
    """One key added to [egress]: a table of its own, since no shown example has one here."""
    if "[egress]" in text:
        raise ValueError("the example already has [egress]; extend _egress for it")
    return f"\n[egress]\n{key} = {value}\n"


@contextlib.contextmanager
def standin(
    kind: str, folder: Path, config: str
) -> Iterator[tuple[str, dict[str, str], dict[str, str]]]:
    """(route added to the configuration, environment, documented host -> real base)."""
    text = (EXAMPLES / config).read_text(encoding="utf-8")
    if kind == "none":
        yield "", {}, {}
        return
    if kind in ("engines", "engines-blocked"):
        from tests.support.ddg_standin import Reply, page, provider

        with provider() as engines:
            if kind == "engines-blocked":
                engines.ddg = Reply(202, page("challenge.html"))
            ca = engines.write_ca(folder)
            yield (
                _egress("proxy", json.dumps(engines.proxy_url), text),
                {"SSL_CERT_FILE": str(ca)},
                {},
            )
        return
    if kind == "site":
        from tests.support.fetching import ARTICLE
        from tests.support.pdfs import headings_lists_table
        from tests.support.site import CA, Page, site

        ca_file = folder / "site-ca.pem"
        CA.cert_pem.write_to_path(str(ca_file))
        with (
            site({"/rust-ownership": Page(body=ARTICLE)}) as first,
            site({"/new": Page(body=ARTICLE)}) as other,
        ):
            first.pages["/moved"] = Page(302, headers={"Location": other.url("/new")})
            first.pages["/harbor-review.pdf"] = Page(
                body=headings_lists_table(), content_type="application/pdf"
            )
            # Pages in place of content (docs/tools.md, "Pages that are not content").
            walls = REPO / "fixtures" / "noncontent"
            first.pages["/old-page"] = Page(body=(walls / "soft404-wordpress.html").read_bytes())
            first.pages["/challenge"] = Page(
                body=(walls / "challenge-cloudflare.html").read_bytes()
            )
            yield (
                _egress("allow", '["127.0.0.1"]', text),
                {"SSL_CERT_FILE": str(ca_file)},
                {PAGE_HOST: first.base, OTHER_HOST: other.base},
            )
        return
    if kind in ("searxng", "searxng-partial"):
        # A real SearXNG (tests/support/searxng.py) whose upstream engines are local.
        from tests.support.searxng import running_searxng

        with running_searxng() as instance:
            _tutorial_6_upstreams(instance, partial=kind == "searxng-partial")
            yield "", {"SEARXNG_URL": instance.base_url}, {}
        return
    raise ValueError(f"no stand-in {kind}")


def _tutorial_6_upstreams(instance: Any, partial: bool) -> None:
    """What the instance's two general engines find for the tutorial's query: one page
    both find, a few each; in the partial run the second engine does not answer."""
    from tests.support.searxng import Hit

    home = Hit(
        "https://www.rust-lang.org/",
        "Rust Programming Language",
        "A language empowering everyone to build reliable and efficient software.",
    )
    instance.upstream.results(
        "alpha",
        home,
        Hit(
            "https://doc.rust-lang.org/book/",
            "The Rust Programming Language - The Rust Book",
            "An introductory book about Rust, from the basics to <em>ownership</em>.",
        ),
        Hit(
            "https://en.wikipedia.org/wiki/Rust_(programming_language)",
            "Rust (programming language) - Wikipedia",
            "Rust is a general-purpose programming language emphasizing performance, "
            "type safety, and concurrency.",
        ),
    )
    if partial:
        instance.upstream.hang("beta")
        return
    instance.upstream.results(
        "beta",
        home,
        Hit(
            "https://github.com/rust-lang/rust",
            "rust-lang/rust: Empowering everyone to build reliable software",
            "This is the main source code repository for Rust.",
        ),
    )


def _swap(text: str, table: Mapping[str, str]) -> str:
    """Replace each key by its value; a key never matches a longer port number."""
    for old, new in sorted(table.items(), key=lambda kv: -len(kv[0])):
        text = re.sub(re.escape(old) + r"(?![0-9])", new, text)
    return text


def run_scenario(
    scenario: Scenario, command: Command | None = None, env: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The answers of one scenario, masked, by answer file name."""
    with tempfile.TemporaryDirectory(prefix="rypsok-example-") as tmp:
        folder = Path(tmp)
        with standin(scenario.standin, folder, scenario.config) as (route, extra, hosts):
            _config_for(scenario.config, folder, route)
            lines = b"".join((EXAMPLES / c).read_bytes() for c in scenario.calls)
            stdin = _swap(lines.decode("utf-8"), hosts).encode("utf-8")
            proc = subprocess.run(
                [*(command or default_command()), "serve", "--config", "rypsok.toml"],
                input=stdin,
                capture_output=True,
                cwd=folder,
                timeout=RUN_TIMEOUT_S,
                env=child_env(folder, {**extra, **scenario.env, **(env or {})}, command),
                check=False,
            )
    if proc.returncode != 0:
        raise RuntimeError(
            f"{scenario.name}: serve exited {proc.returncode}: "
            f"{proc.stderr.decode('utf-8', 'replace')[-2000:]}"
        )
    back = {real: shown for shown, real in hosts.items()}
    out: dict[str, str] = {}
    seen: set[int] = set()
    for line in proc.stdout.decode("utf-8").splitlines():
        message = json.loads(_swap(line, back))
        request_id = message.get("id")
        seen.add(request_id)
        if request_id not in scenario.answers:
            raise RuntimeError(f"{scenario.name}: an answer to id {request_id} not expected")
        name = scenario.answers[request_id]
        if name is not None:
            out[name] = render(mask(message, hashes=bool(hosts)))
    missing = set(scenario.answers) - seen
    if missing:
        raise RuntimeError(f"{scenario.name}: no answer to ids {sorted(missing)}")
    return out


def run_check(
    run: CheckRun, command: Command | None = None, env: Mapping[str, str] | None = None
) -> dict[str, str]:
    with tempfile.TemporaryDirectory(prefix="rypsok-example-") as tmp:
        folder = Path(tmp)
        path = _config_for(run.config, folder)
        if run.edit is not None:
            path.write_text(run.edit(path.read_text(encoding="utf-8")), encoding="utf-8")
        proc = subprocess.run(
            [*(command or default_command()), "check", "--config", "rypsok.toml"],
            capture_output=True,
            cwd=folder,
            timeout=RUN_TIMEOUT_S,
            env=child_env(folder, {**run.env, **(env or {})}, command),
            check=False,
        )
    err = proc.stderr.decode("utf-8")
    if proc.returncode != run.exit_code or proc.stdout:
        raise RuntimeError(
            f"{run.answer}: check exited {proc.returncode} "
            f"(expected {run.exit_code}): {err[-2000:]}"
        )
    return {run.answer: err}


def run_http(
    command: Command | None = None, env: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Tutorial 4: serve --transport http with its file on a free loopback port, two requests
    as the tutorial's curl sends them (with and without the token)."""
    body = (EXAMPLES / HTTP_BODY).read_bytes()
    with tempfile.TemporaryDirectory(prefix="rypsok-example-") as tmp:
        folder = Path(tmp)
        path = _config_for("tutorial-4.toml", folder)
        text = path.read_text(encoding="utf-8")
        bind = 'bind = "0.0.0.0:8737"'
        if bind not in text:
            raise RuntimeError("tutorial-4.toml no longer binds 0.0.0.0:8737")
        # A free port on loopback: the host names and the callers stay the tutorial's.
        path.write_text(text.replace(bind, 'bind = "127.0.0.1:0"'), encoding="utf-8")
        proc = subprocess.Popen(
            [
                *(command or default_command()),
                "serve",
                "--transport",
                "http",
                "--config",
                "rypsok.toml",
            ],
            cwd=folder,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=child_env(folder, {"RYPSOK_TOKEN_MIMLYS": EXAMPLE_TOKEN, **(env or {})}, command),
        )
        try:
            port = _listening_port(proc)
            answered = _post(
                port,
                body,
                {**HTTP_HEADERS, "Host": HTTP_HOST, "Authorization": f"Bearer {EXAMPLE_TOKEN}"},
            )
            refused = _post(port, body, {**HTTP_HEADERS, "Host": HTTP_HOST})
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.communicate(timeout=RUN_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"serve --transport http exited {proc.returncode}")
    return {HTTP_ANSWERS[0]: answered, HTTP_ANSWERS[1]: refused}


def _listening_port(proc: subprocess.Popen[bytes]) -> int:
    assert proc.stderr is not None
    for _ in range(50):
        line = proc.stderr.readline()
        if not line:
            break
        event = json.loads(line)
        if event.get("event") == "listening":
            return int(event["address"].rsplit(":", 1)[1])
    raise RuntimeError("serve --transport http did not log listening")


def _post(port: int, body: bytes, headers: Mapping[str, str]) -> str:
    """Status line, the media type and the body, as the docs show an HTTP answer."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=RUN_TIMEOUT_S)
    try:
        connection.putrequest("POST", "/mcp", skip_host=True, skip_accept_encoding=True)
        for name, value in headers.items():
            connection.putheader(name, value)
        connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        response = connection.getresponse()
        data = response.read()
        media = response.getheader("Content-Type", "")
    finally:
        connection.close()
    head = f"HTTP/1.1 {response.status} {response.reason}\ncontent-type: {media}\n\n"
    if media.split(";")[0].strip() == "application/json":
        return head + render(mask(json.loads(data)))
    return head + data.decode("utf-8")


# -- masking and rendering ---------------------------------------------------------------------


def compact(obj: Any) -> str:
    """The form of content[].text: what rypsok.protocol.server writes."""
    return json.dumps(obj, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def _mask_values(node: Any, hashes: bool = False) -> Any:
    if isinstance(node, dict):
        out = {k: _mask_values(v, hashes) for k, v in node.items()}
        if isinstance(out.get("latency_ms"), int):
            out["latency_ms"] = LATENCY_MASK
        if out.get("name") == "rypsok" and isinstance(out.get("version"), str):
            out["version"] = VERSION_MASK
        if hashes and isinstance(out.get("content_sha256"), str):
            out["content_sha256"] = HASH_MASK
        return out
    if isinstance(node, list):
        return [_mask_values(v, hashes) for v in node]
    return node


def mask(message: dict[str, Any], hashes: bool = False) -> dict[str, Any]:
    """The parts that differ between runs, replaced; the text copy masked the same way.
    hashes: a page read from a local site links to that site's port, which the hash of
    its content covers, so the hash is masked too."""
    masked: dict[str, Any] = _mask_values(message, hashes)
    result = masked.get("result")
    for block in (result or {}).get("content", []) if isinstance(result, dict) else []:
        if block.get("type") != "text":
            continue
        parsed = json.loads(block["text"])
        if compact(parsed) != block["text"]:
            raise RuntimeError(
                "content[].text is no longer written as compact sorted JSON; "
                "update compact() in tools/record_examples.py"
            )
        block["text"] = compact(_mask_values(parsed, hashes))
    return masked


def render(message: dict[str, Any]) -> str:
    return json.dumps(message, indent=2, ensure_ascii=False) + "\n"


# -- all of it ---------------------------------------------------------------------------------


def record_all(command: Command | None = None) -> dict[str, str]:
    out: dict[str, str] = {}
    for scenario in SCENARIOS:
        out.update(run_scenario(scenario, command))
    for run in CHECKS:
        out.update(run_check(run, command))
    out.update(run_http(command))
    return out


def differences(fresh: Mapping[str, str]) -> list[str]:
    """Answer files whose content differs from a fresh run (or that are missing)."""
    wrong = []
    for name, text in sorted(fresh.items()):
        path = ANSWERS / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            wrong.append(name)
    return wrong


# -- the pages that show them -------------------------------------------------------------------

# `<!-- example: examples/... -->` right before a fenced block: the block shows that file.
MARKER = re.compile(
    r"<!-- example: (?P<path>\S+) -->\n(?P<open>```[a-z]*)\n"
    r"(?P<body>(?:.*\n)*?)```\n"
)


def pages() -> list[Path]:
    """Every Markdown page that may show an example."""
    return sorted([REPO / "README.md", EXAMPLES / "README.md", *(REPO / "docs").rglob("*.md")])


def shown_blocks(text: str) -> list[tuple[str, str]]:
    """(path, block content with its last newline) for every marked block of a page."""
    return [(m["path"], m["body"]) for m in MARKER.finditer(text)]


def sync_page(text: str) -> str:
    """The page with every marked block replaced by its file's content."""

    def fill(m: re.Match[str]) -> str:
        content = (REPO / m["path"]).read_text(encoding="utf-8")
        return f"<!-- example: {m['path']} -->\n{m['open']}\n{content}```\n"

    return MARKER.sub(fill, text)


def sync_pages() -> list[Path]:
    """Refresh the marked blocks of every page; the pages changed."""
    changed = []
    for page in pages():
        text = page.read_text(encoding="utf-8")
        synced = sync_page(text)
        if synced != text:
            page.write_text(synced, encoding="utf-8")
            changed.append(page)
    return changed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--check", action="store_true", help="compare with examples/answers/ instead of writing"
    )
    args = parser.parse_args(argv)
    fresh = record_all()
    if args.check:
        wrong = differences(fresh)
        for name in wrong:
            print(
                f"record-examples: examples/answers/{name} differs from a fresh run",
                file=sys.stderr,
            )
        stale_pages = [
            page
            for page in pages()
            if sync_page(page.read_text(encoding="utf-8")) != page.read_text(encoding="utf-8")
        ]
        for page in stale_pages:
            print(
                f"record-examples: {page.relative_to(REPO)} shows an example that differs "
                "from its file",
                file=sys.stderr,
            )
        return 1 if wrong or stale_pages else 0
    ANSWERS.mkdir(exist_ok=True)
    for name, text in sorted(fresh.items()):
        (ANSWERS / name).write_text(text, encoding="utf-8")
    stale = sorted(p.name for p in ANSWERS.iterdir() if p.name not in fresh)
    for name in stale:
        print(
            f"record-examples: examples/answers/{name} is no longer recorded; remove it",
            file=sys.stderr,
        )
    print(f"record-examples: wrote {len(fresh)} files to examples/answers/", file=sys.stderr)
    for page in sync_pages():
        print(
            f"record-examples: refreshed the examples shown in {page.relative_to(REPO)}",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
