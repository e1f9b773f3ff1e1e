"""The command line: serve, check, search, fetch, status, probe, --version.

Exit 0 success, 1 configuration, 2 usage, 3 a tool error (search, fetch,
status). serve and check write nothing to standard output (serve's stdout
belongs to the protocol); --version and the three call commands write their
answer there (rypsok.commands.call).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from typing import NoReturn, TextIO

from rypsok import __version__

EXIT_OK, EXIT_CONFIG, EXIT_USAGE = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # argparse's own text, on stderr, with the usage exit code.
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"rypsok: error: {message}\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="rypsok",
        description="Meta-search and page reading for AI agents, over the Model Context Protocol.",
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    commands = parser.add_subparsers(dest="command", parser_class=_Parser)
    serve = commands.add_parser("serve", help="serve MCP on stdio or Streamable HTTP")
    serve.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    serve.add_argument(
        "--config",
        metavar="PATH",
        help="the configuration file (else RYPSOK_CONFIG, else the defaults)",
    )
    check = commands.add_parser("check", help="validate a configuration and print its effect")
    _config_option(check)
    search = commands.add_parser("search", help="one web_search call, as a host would make it")
    search.add_argument("query")
    search.add_argument("--category", help="a category the configuration serves")
    search.add_argument("--max-results", type=int, metavar="N")
    search.add_argument("--language", help="one of [search] languages")
    search.add_argument("--time-range", choices=("day", "week", "month", "year"))
    fetch = commands.add_parser("fetch", help="one web_fetch call: a page's main content")
    fetch.add_argument("url")
    fetch.add_argument("--max-chars", type=int, metavar="N")
    fetch.add_argument("--start", type=int, metavar="N", help="the start_char to read from")
    status = commands.add_parser("status", help="one engine_status call")
    probe = commands.add_parser(
        "probe", help="ask the configured HTTP listener server/discover: exit 0 answering, 1 not"
    )
    _config_option(probe)
    which = probe.add_mutually_exclusive_group()
    which.add_argument(
        "--health", action="store_true", help="ask /healthz of [service.metrics] instead"
    )
    which.add_argument(
        "--ready", action="store_true", help="ask /readyz of [service.metrics] instead"
    )
    for command in (search, fetch, status):
        _config_option(command)
        command.add_argument("--json", action="store_true", help="print the tool's JSON")
        command.add_argument(
            "-v",
            "--verbose",
            action="store_true",
            help="log every event as JSON lines, as serve does (at a terminal, only "
            "warnings and errors are shown, as short lines)",
        )
        command.add_argument(
            "--log-format",
            choices=("text", "json"),
            help="the form of log lines on standard error: text for a person, json for a "
            "program (the default at a terminal is text, elsewhere json)",
        )
    return parser


def _config_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--config",
        metavar="PATH",
        help="the configuration file (else RYPSOK_CONFIG, else the defaults)",
    )


# Each call command: its tool, and its options as the tool's parameters.
_CALLS = {
    "search": (
        "web_search",
        (
            ("query", "query"),
            ("category", "category"),
            ("max_results", "max_results"),
            ("language", "language"),
            ("time_range", "time_range"),
        ),
    ),
    "fetch": ("web_fetch", (("url", "url"), ("max_chars", "max_chars"), ("start", "start_char"))),
    "status": ("engine_status", ()),
}


def main(argv: Sequence[str] | None = None) -> int:
    from rypsok.builtfor import mismatch

    wrong = mismatch()
    if wrong is not None:
        sys.stderr.write(wrong + "\n")
        return EXIT_CONFIG
    args = _parser().parse_args(argv)
    if args.version:
        sys.stdout.write(f"rypsok {__version__}\n")
        sys.stdout.flush()
        return EXIT_OK
    if args.command == "check":
        from rypsok.commands.check import run_check

        return run_check(args.config, os.environ, sys.stderr)
    if args.command in _CALLS:
        from rypsok.commands.call import run_call

        tool, options = _CALLS[args.command]
        arguments = {
            name: getattr(args, dest) for dest, name in options if getattr(args, dest) is not None
        }
        return run_call(
            tool,
            arguments,
            args.config,
            os.environ,
            args.json,
            sys.stdout,
            sys.stderr,
            verbose=args.verbose,
            log_format=args.log_format,
        )
    if args.command == "probe":
        from rypsok.commands.probe import run_probe

        endpoint = "/healthz" if args.health else "/readyz" if args.ready else None
        return run_probe(args.config, os.environ, sys.stderr, endpoint)
    if args.command == "serve":
        from rypsok.core.net.tls import TrustStoreBuild

        # Begun before the imports of serve, which it overlaps (start-up time, issue 17).
        trust = TrustStoreBuild(os.environ)
        from rypsok.commands.serve import run_serve

        return run_serve(args.config, args.transport, os.environ, trust)
    _parser().print_usage(sys.stderr)
    sys.stderr.write(
        "rypsok: error: a command is required: serve, check, search, fetch, status or probe\n"
    )
    return EXIT_USAGE


def _run() -> NoReturn:  # pragma: no cover - the console entry
    sys.exit(main())


__all__ = ["EXIT_CONFIG", "EXIT_OK", "EXIT_USAGE", "Mapping", "TextIO", "main"]
