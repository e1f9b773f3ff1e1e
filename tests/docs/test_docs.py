"""The documentation is checked, not hoped for (REQ-DOC-002).

- every answer a page shows is what the program answers now: the scenarios of
  tools/record_examples.py run again, against the same local stand-ins, and must give the
  files of examples/answers/ byte for byte (masked parts aside);
- every block a page marks as showing a file is that file, and every example file is shown;
- every example call matches the input schema the program serves with its configuration
  (and every call shown as refused does not);
- every host entry is of the shape its host reads (an `mcpServers` file, VS Code's
  `servers` and `inputs`, a `claude mcp add` or MCP Inspector command line), with arguments
  rypsok accepts and, where it sets keys, keys the defaults read;
- the configuration page names exactly the keys the validator accepts, with the defaults
  and ranges of the code;
- the pages' relative links and #anchors resolve.

The example configurations and their warnings are in tests/docs/test_examples.py; tutorial 1
from the pyz is in tests/packaging/test_zipapp.py (it reuses that module's build).
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from rypsok.core import limits
from rypsok.core.config import load, reader
from rypsok.protocol import tools
from rypsok.protocol.server import OFFERED
from tests.support.paths import EXAMPLES, REPO
from tests.support.run import clean_env
from tests.support.toml_documents import OPTIONAL_TABLES
from tools import record_examples as RECORD

DOCS = REPO / "docs"


PAGES: list[Path] = RECORD.pages()


def page_id(path: Path) -> str:
    return str(path.relative_to(REPO))


# -- answers: the recording, run again ----------------------------------------------------------


def _same_as_recorded(fresh: dict[str, str]) -> None:
    for name, text in fresh.items():
        recorded = (RECORD.ANSWERS / name).read_text(encoding="utf-8")
        assert text == recorded, (
            f"examples/answers/{name} is not what the program answers now; run "
            "python -m tools.record_examples, review the diff, and commit it with the change"
        )


@pytest.mark.parametrize("scenario", RECORD.SCENARIOS, ids=lambda s: s.name)
def test_req_doc_002_shown_answers_are_what_serve_answers_now(scenario: Any) -> None:
    _same_as_recorded(RECORD.run_scenario(scenario))


def test_req_doc_002_shown_check_reports_are_what_check_prints_now() -> None:
    for run in RECORD.CHECKS:
        _same_as_recorded(RECORD.run_check(run))


def test_req_doc_002_tutorial_4_answers_over_http_as_shown() -> None:
    _same_as_recorded(RECORD.run_http())


def test_req_doc_002_every_recorded_answer_has_a_scenario() -> None:
    on_disk = sorted(p.name for p in RECORD.ANSWERS.iterdir())
    assert on_disk == RECORD.answer_files()


def test_req_doc_002_the_recording_masks_only_what_varies() -> None:
    # A latency and the version are masked in the structure and in its text copy alike;
    # everything else is left as the program wrote it.
    message: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": 3,
        "result": {
            "content": [
                {
                    "type": "text",
                    "text": RECORD.compact(
                        {
                            "engines": [{"id": "w", "latency_ms": 41, "state": "closed"}],
                            "outcome": "ok",
                        }
                    ),
                }
            ],
            "structuredContent": {
                "engines": [{"id": "w", "state": "closed", "latency_ms": 41}],
                "outcome": "ok",
            },
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "rypsok", "version": "9.9"}},
        },
    }
    masked = RECORD.mask(message)
    assert masked["result"]["structuredContent"]["engines"][0]["latency_ms"] == "<ms>"
    assert '"latency_ms":"<ms>"' in masked["result"]["content"][0]["text"]
    assert masked["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["version"] == (
        "<version>"
    )
    assert masked["result"]["structuredContent"]["engines"][0]["state"] == "closed"
    # A text copy written in another form than the server's is an error, not masked over.
    message["result"]["content"][0]["text"] = '{"outcome": "ok"}'
    with pytest.raises(RuntimeError):
        RECORD.mask(message)


# -- marked blocks --------------------------------------------------------------------------------


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_req_doc_002_a_marked_block_is_its_file_byte_for_byte(page: Path) -> None:
    for path, body in RECORD.shown_blocks(page.read_text(encoding="utf-8")):
        target = REPO / path
        assert target.is_file(), f"{page_id(page)} shows {path}, which does not exist"
        assert body == target.read_text(encoding="utf-8"), (
            f"{page_id(page)}: the block marked {path} differs from the file; "
            "python -m tools.record_examples refreshes the blocks"
        )


def _fences(text: str) -> list[tuple[str, str, str]]:
    """(the line before the fence, its language, its content) for every fenced block."""
    out: list[tuple[str, str, str]] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        if lines[i].startswith("```"):
            language = lines[i][3:].strip()
            end = i + 1
            while end < len(lines) and lines[end] != "```":
                end += 1
            before = lines[i - 1] if i else ""
            out.append((before, language, "\n".join(lines[i + 1 : end])))
            i = end + 1
        else:
            i += 1
    return out


# The command lines of the host guides: each must come from a file of examples/hosts/.
_HOST_COMMANDS = ("claude mcp add", "npx @modelcontextprotocol/inspector")


def _shows_an_example(language: str, body: str) -> bool:
    """A block that shows what a reader would save or compare: it must be a marked file."""
    if any(line.startswith(_HOST_COMMANDS) for line in body.splitlines()):
        return True
    if language == "toml":
        return "config_version" in body
    if language == "json":
        return '"jsonrpc"' in body or '"mcpServers"' in body or '"servers"' in body
    if language == "text":
        return body.startswith(("rypsok: ", "HTTP/1.1 "))
    return False


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_req_doc_002_every_example_a_page_shows_comes_from_a_file(page: Path) -> None:
    for before, language, body in _fences(page.read_text(encoding="utf-8")):
        if _shows_an_example(language, body):
            assert before.startswith("<!-- example: "), (
                f"{page_id(page)}: a {language} block shows an example without a marker:\n"
                f"{body[:200]}"
            )


def test_req_doc_002_every_example_file_is_shown_by_a_page() -> None:
    shown = {
        path for page in PAGES for path, _ in RECORD.shown_blocks(page.read_text(encoding="utf-8"))
    }
    files = {
        str(p.relative_to(REPO))
        for p in EXAMPLES.rglob("*")
        if p.is_file() and p.name != "README.md" and "__pycache__" not in p.parts
    }
    assert files - shown == set(), "example files no page shows"


# -- calls ------------------------------------------------------------------------------------------


def _config_of(name: str, tmp_path: Path, extra_env: dict[str, str]) -> Any:
    from tests.support.examples import materialize

    path, env = materialize(EXAMPLES / name, tmp_path)
    return load(str(path), {**env, **extra_env})


def _served_schemas(config: Any) -> dict[str, dict[str, Any]]:
    # The same definitions the server's tools/list is built from.
    return {d.name: d.input_schema for d in tools.definitions(config, OFFERED)}


def _requests(name: str) -> list[dict[str, Any]]:
    text = (EXAMPLES / name).read_text(encoding="utf-8")
    assert text.endswith("\n") and text.strip(), f"{name}: one request a line"
    return [json.loads(line) for line in text.splitlines()]


def _check_envelope(name: str, request: dict[str, Any]) -> None:
    assert request["jsonrpc"] == "2.0" and isinstance(request["id"], int), name
    assert request["method"] in ("server/discover", "tools/call"), name
    meta = request["params"]["_meta"]
    assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28", name
    assert isinstance(meta["io.modelcontextprotocol/clientCapabilities"], dict), name
    assert set(meta["io.modelcontextprotocol/clientInfo"]) == {"name", "version"}, name


# (calls file, the configuration it is shown with, that configuration's extra environment)
CALL_CASES = sorted(
    {(call, s.config, tuple(sorted(s.env.items()))) for s in RECORD.SCENARIOS for call in s.calls}
    | {(RECORD.HTTP_BODY, "tutorial-4.toml", ())}
)


@pytest.mark.parametrize(
    ("calls", "config", "env"),
    CALL_CASES,
    ids=[f"{c}@{f}{'+key' if e else ''}" for c, f, e in CALL_CASES],
)
def test_req_doc_002_every_example_call_matches_the_served_schema(
    calls: str, config: str, env: tuple[tuple[str, str], ...], tmp_path: Path
) -> None:
    schemas = _served_schemas(_config_of(config, tmp_path, dict(env)))
    refused = calls.startswith("calls/refused/")
    for request in _requests(calls):
        _check_envelope(calls, request)
        if request["method"] != "tools/call":
            continue
        name, arguments = request["params"]["name"], request["params"]["arguments"]
        assert name in schemas, f"{calls}: {name} is not served with {config}"
        errors = list(jsonschema.Draft202012Validator(schemas[name]).iter_errors(arguments))
        if refused:
            assert errors, f"{calls} is shown as refused, yet matches the schema"
        else:
            assert not errors, f"{calls}: {[e.message for e in errors]}"


def test_req_doc_002_every_call_file_is_sent_by_a_scenario() -> None:
    files = {str(p.relative_to(EXAMPLES)) for p in EXAMPLES.glob("*.jsonl")}
    files |= {str(p.relative_to(EXAMPLES)) for p in (EXAMPLES / "calls").rglob("*.json*")}
    assert files == {c for c, _, _ in CALL_CASES}


def test_req_doc_002_tutorial_4_shows_the_headers_the_recording_sends() -> None:
    text = (DOCS / "tutorials" / "4-network-mode.md").read_text(encoding="utf-8")
    [curl] = [body for _, language, body in _fences(text) if body.startswith("curl ")]
    for name, value in RECORD.HTTP_HEADERS.items():
        assert f"-H '{name}: {value}'" in curl
    assert '-H "Authorization: Bearer $RYPSOK_TOKEN_MIMLYS"' in curl
    assert f"--data-binary @{Path(RECORD.HTTP_BODY).name}" in curl
    assert f"https://{RECORD.HTTP_HOST}/mcp" in curl


# -- host entries --------------------------------------------------------------------------------

HOSTS = EXAMPLES / "hosts"
# Each format of examples/hosts/ has its own check, chosen by the file's name.
VSCODE_ENTRIES = sorted(HOSTS.glob("vscode*.json"))
MCP_SERVERS_ENTRIES = sorted(p for p in HOSTS.glob("*.json") if p not in VSCODE_ENTRIES)
CLAUDE_CODE_COMMANDS = sorted(HOSTS.glob("claude-code*.sh"))
INSPECTOR_COMMANDS = sorted(HOSTS.glob("inspector*.sh"))


def _cli_accepts(args: list[str]) -> None:
    from rypsok.commands.cli import _parser

    try:
        parsed = _parser().parse_args(args)
    except SystemExit as exc:  # argparse's way to refuse
        raise AssertionError(f"rypsok refuses the arguments {args}") from exc
    assert parsed.command == "serve"
    assert parsed.config is None or parsed.config.startswith("/"), "a host needs absolute paths"


def _active_defaults(env: dict[str, str]) -> set[str]:
    return {engine.id for engine in load(None, env).engines if engine.active}


def _check_keys(env: dict[str, str], args: list[str]) -> None:
    """An entry that sets keys is the configuration-free one: each key it sets must turn on
    an engine of the defaults (a misspelt name would leave rypsok without it, silently)."""
    assert "--config" not in args, "an entry with keys in its env is the configuration-free one"
    assert env, "an empty env block"
    without = _active_defaults({})
    for name, value in env.items():
        assert isinstance(value, str) and value, f"{name} has no value"
        with_key = _active_defaults({name: "k" * 32})
        assert with_key > without, f"{name} turns on no engine of the defaults"


def _check_launch(command: str, args: list[str], env: dict[str, str]) -> None:
    """The command and arguments a host starts rypsok with: installed, or the pyz."""
    assert isinstance(command, str) and all(isinstance(a, str) for a in args)
    if command == "rypsok":
        _cli_accepts(args)
    else:
        assert command == "python3", f"{command}: neither rypsok nor the pyz"
        assert args[0].startswith("/") and args[0].endswith(".pyz")
        _cli_accepts(args[1:])
    if env:
        _check_keys(env, args)


def test_req_doc_002_every_host_file_has_a_check_of_its_format() -> None:
    checked = [
        *MCP_SERVERS_ENTRIES,
        *VSCODE_ENTRIES,
        *CLAUDE_CODE_COMMANDS,
        *INSPECTOR_COMMANDS,
    ]
    assert sorted(checked) == sorted(HOSTS.iterdir()), "a host file no format check reads"
    assert len(set(checked)) == len(checked)


@pytest.mark.parametrize("prefix", ["stdio", "vscode", "claude-code", "inspector"])
def test_req_doc_002_each_host_has_the_installed_the_pyz_and_the_keyed_form(prefix: str) -> None:
    names = {p.name.split(".")[0] for p in HOSTS.iterdir()}
    for form in ("", "-pyz", "-env"):
        assert f"{prefix}{form}" in names, f"no {prefix}{form} entry"


@pytest.mark.parametrize("entry", MCP_SERVERS_ENTRIES, ids=lambda p: p.name)
def test_req_doc_002_host_entry_is_what_an_mcp_host_reads(entry: Path) -> None:
    # Claude Desktop's claude_desktop_config.json and Cursor's mcp.json.
    document = json.loads(entry.read_text(encoding="utf-8"))
    assert list(document) == ["mcpServers"]
    [(name, server)] = document["mcpServers"].items()
    assert name == "rypsok"
    if "command" in server:
        assert set(server) <= {"command", "args", "env"}
        command, args = server["command"], server["args"]
        if command == "socat":
            # The socket unit's local mode: socat to the socket the unit listens on.
            assert args[0] == "STDIO" and "env" not in server
            unit = (REPO / "deploy" / "rypsok-stdio.socket").read_text(encoding="utf-8")
            socket_path = args[1].removeprefix("UNIX-CONNECT:")
            assert f"ListenStream={socket_path}\n" in unit
        else:
            _check_launch(command, args, server.get("env", {}))
    elif "headers" not in server:
        _check_remote(entry, server)
    else:
        assert set(server) == {"url", "headers"}
        assert server["url"].startswith("https://") and server["url"].endswith("/mcp")
        [(header, value)] = server["headers"].items()
        assert header == "Authorization"
        variable = re.fullmatch(r"Bearer \$\{([A-Z_][A-Z0-9_]*)\}", value)
        assert variable, value
        # The token variable is the one a caller of Tutorial 4's file reads.
        tutorial = (EXAMPLES / "tutorial-4.toml").read_text(encoding="utf-8")
        assert f'token_env = "{variable[1]}"' in tutorial


def _check_remote(entry: Path, server: dict[str, Any]) -> None:
    """An entry for OAuth (issue 37): the URL alone, the resource of examples/oauth.toml;
    the host signs in by itself."""
    assert entry.stem.endswith("-remote"), entry.name
    assert set(server) <= {"type", "url"} and "url" in server
    oauth = (EXAMPLES / "oauth.toml").read_text(encoding="utf-8")
    assert f'resource = "{server["url"]}"' in oauth


@pytest.mark.parametrize("entry", VSCODE_ENTRIES, ids=lambda p: p.name)
def test_req_doc_002_vscode_entry_is_what_vscode_mcp_json_holds(entry: Path) -> None:
    # .vscode/mcp.json: "servers" (each with its "type"), and "inputs" VS Code prompts for.
    document = json.loads(entry.read_text(encoding="utf-8"))
    assert "servers" in document and set(document) <= {"inputs", "servers"}
    [(name, server)] = document["servers"].items()
    assert name == "rypsok"
    if server["type"] == "http":
        _check_remote(entry, server)
        return
    assert server["type"] == "stdio"
    assert set(server) <= {"type", "command", "args", "env"}
    inputs = {}
    for prompt in document.get("inputs", []):
        assert set(prompt) == {"type", "id", "description", "password"}, prompt
        assert prompt["type"] == "promptString" and prompt["password"] is True
        assert isinstance(prompt["description"], str) and prompt["description"]
        inputs[prompt["id"]] = prompt
    env = server.get("env", {})
    used = set()
    for key, value in env.items():
        reference = re.fullmatch(r"\$\{input:([A-Za-z0-9_-]+)\}", value)
        assert reference, f"{key}: a key is asked for, not written in the file"
        assert reference[1] in inputs, f"{key}: no input {reference[1]}"
        used.add(reference[1])
    assert used == set(inputs), "an input no server uses"
    _check_launch(server["command"], server["args"], env)


def _command_line(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n") and text.count("\n") == 1, f"{path.name}: one command line"
    return shlex.split(text)


def _env_option(value: str) -> tuple[str, str]:
    name, equals, setting = value.partition("=")
    assert equals and setting and re.fullmatch(r"[A-Z_][A-Z0-9_]*", name), value
    return name, setting


@pytest.mark.parametrize("entry", CLAUDE_CODE_COMMANDS, ids=lambda p: p.name)
def test_req_doc_002_claude_code_command_is_the_documented_claude_mcp_add(entry: Path) -> None:
    # claude mcp add [options] <name> -- <command> [args...]: the options before the name.
    words = _command_line(entry)
    assert words[:3] == ["claude", "mcp", "add"]
    rest, env = words[3:], {}
    while rest[0].startswith("-"):
        option, value = rest[0], rest[1]
        if option == "--transport":
            assert value == "stdio"
        elif option in ("-e", "--env"):
            name, setting = _env_option(value)
            env[name] = setting
        elif option in ("-s", "--scope"):
            assert value in ("local", "project", "user")
        else:
            raise AssertionError(f"{option}: not an option of claude mcp add for a command")
        rest = rest[2:]
    assert rest[0] == "rypsok", "the name, after the options"
    assert rest[1] == "--", "the command that starts rypsok follows --"
    command, *args = rest[2:]
    _check_launch(command, args, env)


@pytest.mark.parametrize("entry", INSPECTOR_COMMANDS, ids=lambda p: p.name)
def test_req_doc_002_inspector_command_starts_rypsok(entry: Path) -> None:
    # npx @modelcontextprotocol/inspector [-e KEY=VALUE ...] [--] <command> [args...]
    words = _command_line(entry)
    assert words[:2] == ["npx", "@modelcontextprotocol/inspector"]
    rest, env = words[2:], {}
    while rest[0] == "-e":
        name, setting = _env_option(rest[1])
        env[name] = setting
        rest = rest[2:]
    if rest[0] == "--":
        rest = rest[1:]
    else:
        # The Inspector has a --config of its own: without --, it would take rypsok's.
        assert "--config" not in rest, "put -- before a command that has --config"
    command, *args = rest
    _check_launch(command, args, env)


def test_req_doc_002_the_host_checks_refuse_a_wrong_entry(tmp_path: Path) -> None:
    # The name after the command, a misspelt key, an unknown rypsok option: each is refused.
    wrong = {
        "claude-code-late-name.sh": "claude mcp add -- rypsok serve\n",
        "claude-code-misspelt.sh": "claude mcp add -e BRAVE_KEY=x rypsok -- rypsok serve\n",
        "inspector-option.sh": "npx @modelcontextprotocol/inspector rypsok serve --port 1\n",
    }
    for name, text in wrong.items():
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        check = (
            test_req_doc_002_claude_code_command_is_the_documented_claude_mcp_add
            if name.startswith("claude-code")
            else test_req_doc_002_inspector_command_starts_rypsok
        )
        with pytest.raises(AssertionError):
            check(path)


# -- the configuration page -------------------------------------------------------------------------


def _accepted_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, set[str]]:
    """Every key the validator accepts, by table, read from its own unknown-key checks on a
    file that opens every table."""
    seen: dict[tuple[Any, ...], list[str]] = {}
    original = reader.Reader.unknown

    def spy(self: reader.Reader, table: Any, path: Any, known: Any, what: str = "key") -> None:
        seen[tuple(path)] = list(known)
        original(self, table, path, known, what)

    monkeypatch.setattr(reader.Reader, "unknown", spy)
    path = tmp_path / "all.toml"
    path.write_text(
        "config_version = 1\n[service]\n[service.http]\n[service.http.auth]\n"
        '[[service.http.auth.callers]]\nid = "a"\ntoken_env = "T"\n'
        f"[service.http.oauth]\n{OPTIONAL_TABLES['service.http.oauth']}"
        f"[service.metrics]\n{OPTIONAL_TABLES['service.metrics']}"
        "[search]\n[fetch]\n[egress]\n[limits]\n[resilience]\n[privacy]\n[logging]\n[status]\n"
        '[cache]\n[scraping]\n[store]\n[engines.e]\ntype = "wikipedia"\ncategories = ["general"]\n',
        encoding="utf-8",
    )
    load(str(path), {"T": "t" * 40})
    tables = {"service": ["http", "metrics"], "service.http": ["auth", "oauth"]}
    out: dict[str, set[str]] = {}
    for where, known in seen.items():
        if where == ():
            name, keys = "", {"config_version"}
        else:
            # A caller's table is named like its array; every engine table is engines.<id>.
            name = ".".join(p for p in where if not isinstance(p, int))
            name = "engines.<id>" if where[0] == "engines" else name
            keys = set(known) - set(tables.get(name, []))
        out[name] = keys
    return out


def _documented_keys() -> dict[str, dict[str, list[str]]]:
    """Table name -> key -> the row's cells, from docs/configuration.md."""
    out: dict[str, dict[str, list[str]]] = {}
    current: str | None = None
    for line in (DOCS / "configuration.md").read_text(encoding="utf-8").splitlines():
        heading = re.fullmatch(r"## (?:Top level|`\[\[?([a-z_.<>]+)\]\]?`)", line)
        if heading:
            current = heading[1] or ""
            out[current] = {}
        elif line.startswith("## "):
            current = None
        elif current is not None:
            row = re.match(r"\| `([a-z_]+)` \|", line)
            if row:
                out[current][row[1]] = [c.strip() for c in line.strip("|").split("|")]
    return out


def test_req_cfg_001_every_accepted_key_is_documented_and_no_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted = _accepted_keys(tmp_path, monkeypatch)
    documented = {table: set(rows) for table, rows in _documented_keys().items()}
    assert documented == accepted


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, tuple):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    raise TypeError(value)


def _defaults(table: str, tmp_path: Path) -> Any:
    config = load(None, {})
    if table in OPTIONAL_TABLES:  # its defaults exist only with the table and its required keys
        path = tmp_path / "optional.toml"
        path.write_text(f"config_version = 1\n[{table}]\n{OPTIONAL_TABLES[table]}")
        config = load(str(path), {})
    holder: Any = config
    for part in table.split("."):
        if part != "auth":  # [service.http.auth] callers live on the http settings
            holder = getattr(holder, part)
    return holder


def test_req_cfg_003_documented_defaults_and_ranges_are_the_code_s(tmp_path: Path) -> None:
    rows = limits.by_key()
    checked = 0
    for table, keys in _documented_keys().items():
        if table in ("", "service.http.auth.callers", "engines.<id>"):
            continue
        holder = _defaults(table, tmp_path)
        for key, (_, default, bounds, _meaning) in keys.items():
            value = getattr(holder, key, None)
            if key in ("allow", "deny"):
                value = ()  # rules: the default is no rule
            elif key == "proxy":
                value = ""  # no proxy
            if default == "required":  # no default: the table's required keys
                checked += 1
                continue
            if table in OPTIONAL_TABLES and f"{key} =" in OPTIONAL_TABLES[table]:
                checked += 1  # the key whose value opens the table: its default is "off"
                continue
            if value is None:  # a reference without a default (the store's URL)
                assert default == "none", f"{table}.{key}: default {default!r}"
                checked += 1
                continue
            assert f"`{_toml(value)}`" in default, f"{table}.{key}: default {value!r}"
            row = rows.get(f"{table}.{key}")
            if row is not None:
                assert row.default == value, f"{table}.{key}"
                if row.low is not None and row.high is not None:
                    assert bounds.startswith(f"{row.low}–{row.high}"), f"{table}.{key}: {bounds}"
                elif row.low is not None:
                    assert bounds.startswith(f"{row.low} to "), f"{table}.{key}: {bounds}"
            checked += 1
    assert checked >= 60  # every scalar key of every table above


# -- links ----------------------------------------------------------------------------------------

_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to -."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found: set[str] = set()
    counts: dict[str, int] = {}
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
    for line in text.splitlines():
        match = re.match(r"#{1,6} (.+)", line)
        if match:
            base = slug(match[1])
            n = counts.get(base, 0)
            counts[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
    return found


def links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
    text = re.sub(r"`[^`\n]*`", "", text)
    return _LINK.findall(text)


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_req_doc_002_internal_links_and_anchors_resolve(page: Path) -> None:
    for target in links(page):
        if re.match(r"[a-z]+:", target):
            continue  # another site: not checked here (no network in tests)
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        assert resolved.exists(), f"{page_id(page)}: {target} does not exist"
        assert REPO in resolved.parents or resolved == REPO, f"{target} leaves the repository"
        if anchor:
            assert resolved.suffix == ".md", f"{page_id(page)}: {target}"
            assert anchor in anchors(resolved), f"{page_id(page)}: no #{anchor} in {path}"


def test_req_doc_002_the_link_check_finds_a_broken_anchor(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text("# Only `[this]` heading\n\n[a](#only-this-heading) [b](#not-there)\n")
    assert anchors(page) == {"only-this-heading"}
    assert [t.partition("#")[2] for t in links(page)] == ["only-this-heading", "not-there"]


# -- the embedding example ---------------------------------------------------------------------------


def test_req_arch_007_the_embedding_example_runs(tmp_path: Path) -> None:
    from tests.support.ddg_standin import provider

    with provider() as standin:
        (tmp_path / "rypsok.toml").write_text(
            (EXAMPLES / "tutorial-1.toml").read_text(encoding="utf-8")
            + f'\n[egress]\nproxy = "{standin.proxy_url}"\n',
            encoding="utf-8",
        )
        env = clean_env(SSL_CERT_FILE=str(standin.write_ca(tmp_path)), PYTHONPATH=str(REPO))
        proc = subprocess.run(
            [sys.executable, str(EXAMPLES / "embed.py")],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            timeout=60,
            check=False,
        )
    assert proc.returncode == 0, proc.stderr.decode()
    answer = json.loads(proc.stdout)
    assert answer["outcome"] == "ok" and answer["results"]
    assert all(r["url"].startswith("https://en.wikipedia.org/") for r in answer["results"])


# -- the front door -------------------------------------------------------------------------------


def test_readme_keeps_the_quick_start_and_points_at_the_docs() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert "python3 -m venv .venv && .venv/bin/pip install -q . && .venv/bin/rypsok serve" in text
    assert "bash tools/setup" in text
    assert "bash tools/test" in text and "pytest" in text
    assert "sha256sum --check --ignore-missing SHA256SUMS" in text
    assert "(docs/README.md)" in text
    shown = [path for path, _ in RECORD.shown_blocks(text)]
    assert "examples/hosts/stdio.json" in shown
