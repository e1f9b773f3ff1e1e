"""rypsok search / fetch / status: one tool call from the command line.

For an operator who wants to see what a host will get before a host is
configured (an air-gapped machine, a new key, a new egress rule): the call
goes through the same facade as a served call, so the same configuration,
secret check, egress policy, limits and deadlines apply, and the caller is
the local one. The answer goes to standard output (these commands serve no
protocol), as text for a reader or, with --json, as the tool's JSON.

Exit codes: 0 ok, partial or empty; 3 a tool error (its kind, reason and
message on standard error; with --json its JSON on standard output too);
1 a configuration that does not load; 2 usage (argparse).
"""

from __future__ import annotations

import json
import ssl
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TextIO

import anyio

from rypsok.commands.serve import prepare
from rypsok.core.config.settings import Config
from rypsok.core.facade import Rypsok
from rypsok.core.model import (
    FetchResponse,
    Notice,
    SearchResponse,
    StatusResponse,
    ToolError,
)
from rypsok.core.net.failure import FailureKind, failure_sentence
from rypsok.core.telemetry import log

EXIT_OK, EXIT_CONFIG, EXIT_TOOL_ERROR = 0, 1, 3

Response = SearchResponse | FetchResponse | StatusResponse
Call = Callable[[Rypsok], Awaitable[Response]]


def run_call(
    tool: str,
    arguments: Mapping[str, Any],
    cli_path: str | None,
    env: Mapping[str, str],
    as_json: bool,
    out: TextIO,
    err: TextIO,
    *,
    verbose: bool = False,
    log_format: str | None = None,
) -> int:
    """One call of `tool` (web_search, web_fetch or engine_status) with `arguments`.

    At a terminal the log is for a person: warnings and errors only, one line each, and
    a failed search names each engine that failed and why. `verbose` brings back every
    event as JSON lines; `log_format` chooses the form. Where standard error is not a
    terminal (a script), the log is the JSON lines of `serve`, as before."""
    person = _is_terminal(err) and not verbose
    log.set_format(log_format or ("text" if person else "json"))
    if person:
        log.set_floor("warn")
    failures: dict[str, tuple[FailureKind, str | None]] = {}

    def tap(level: str, event: str, fields: dict[str, Any]) -> None:
        if event == "engine_failed":
            failures[str(fields.get("engine"))] = (fields["kind"], fields.get("host"))

    log.set_tap(tap)
    try:
        # Like stdio: one local caller, so the HTTP callers' tokens are not read.
        prepared = prepare(cli_path, env, "stdio")
        code = (
            EXIT_CONFIG if prepared is None else _once(tool, arguments, prepared, as_json, out, err)
        )
    finally:  # the logger is the process's: leave it as serve expects it
        log.set_tap(None)
        log.set_format("json")
        log.set_floor("debug")
    if person and code != EXIT_CONFIG:
        for engine, (kind, host) in failures.items():
            err.write(f"rypsok: {engine}: {failure_sentence(kind, host or 'its host')}\n")
    return code


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or bare stream
        return False


def _once(
    tool: str,
    arguments: Mapping[str, Any],
    prepared: tuple[Config, ssl.SSLContext],
    as_json: bool,
    out: TextIO,
    err: TextIO,
) -> int:
    """The call made and its answer written; the exit code."""
    config, tls = prepared
    core = Rypsok.from_config(config, tls=tls)
    call: Call = {
        "web_search": lambda c: c.search(arguments),
        "web_fetch": lambda c: c.fetch(arguments),
        "engine_status": lambda c: c.status(arguments),
    }[tool]

    async def once() -> Response:
        return await call(core)

    try:
        response = anyio.run(once)
    except ToolError as error:
        reason = error.detail.get("reason")
        err.write(f"rypsok: {tool}: {error.kind}{f' ({reason})' if reason else ''}: ")
        err.write(f"{error.message}\n")
        if as_json:
            _write_json(out, error.to_json())
            out.flush()
        return EXIT_TOOL_ERROR
    if as_json:
        _write_json(out, response.to_json())
    elif isinstance(response, SearchResponse):
        _write_search(out, response)
    elif isinstance(response, FetchResponse):
        _write_fetch(out, response)
    else:
        _write_status(out, response)
    out.flush()
    return EXIT_OK


def _write_json(out: TextIO, obj: dict[str, Any]) -> None:
    out.write(json.dumps(obj, ensure_ascii=False, indent=2, sort_keys=True) + "\n")


def _notices(out: TextIO, notices: tuple[Notice, ...]) -> None:
    for notice in notices:
        fields = " ".join(f"{k}={v}" for k, v in notice.to_json().items() if k != "code")
        out.write(f"notice: {notice.code}{f' {fields}' if fields else ''}\n")


def _write_search(out: TextIO, response: SearchResponse) -> None:
    for i, result in enumerate(response.results, 1):
        out.write(f"{i}. {result.title}\n   {result.url}\n")
        if result.snippet:
            out.write(f"   {result.snippet}\n")
        extra = [x for x in (result.date, ", ".join(result.engines or ())) if x]
        if extra:
            out.write(f"   ({'; '.join(extra)})\n")
        out.write("\n")
    _notices(out, response.notices)
    count = len(response.results)
    out.write(f"outcome: {response.outcome}, {count} result{'' if count == 1 else 's'}\n")


def _write_fetch(out: TextIO, page: FetchResponse) -> None:
    out.write(f"title: {page.title}\nurl: {page.url}\n\n")
    if page.content:
        out.write(page.content + "\n\n")
    _notices(out, page.notices)
    if page.outline:
        out.write("outline (read a section with --start):\n")
        for heading in page.outline:
            out.write(f"{'  ' * (heading.level - 1)}{heading.text}  [{heading.start_char}]\n")
    if page.truncated and page.next_start_char is not None:
        out.write(f"truncated: the page goes on, read on with --start {page.next_start_char}\n")
    out.write(f"outcome: {page.outcome}\n")


def _write_status(out: TextIO, status: StatusResponse) -> None:
    for engine in status.engines:
        latency = "-" if engine.latency_ms is None else f"{engine.latency_ms} ms"
        reason = f" ({engine.reason})" if engine.reason else ""
        out.write(f"{engine.id}: {engine.state}{reason}, latency {latency}\n")
    _notices(out, status.notices)
    out.write(f"outcome: {status.outcome}\n")
