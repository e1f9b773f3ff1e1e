"""The command line: serve, check, --version. Exit 0 success, 1 configuration, 2 usage.

Nothing here writes to standard output except --version: stdout belongs to
the protocol.
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
    check.add_argument(
        "--config",
        metavar="PATH",
        help="the configuration file (else RYPSOK_CONFIG, else the defaults)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.version:
        sys.stdout.write(f"rypsok {__version__}\n")
        sys.stdout.flush()
        return EXIT_OK
    if args.command == "check":
        from rypsok.checkcmd import run_check

        return run_check(args.config, os.environ, sys.stderr)
    if args.command == "serve":
        from rypsok.core.net.tls import TrustStoreBuild

        # Begun before the imports of serve, which it overlaps (start-up time, issue 17).
        trust = TrustStoreBuild(os.environ)
        from rypsok.servecmd import run_serve

        return run_serve(args.config, args.transport, os.environ, trust)
    _parser().print_usage(sys.stderr)
    sys.stderr.write("rypsok: error: a command is required: serve or check\n")
    return EXIT_USAGE


def _run() -> NoReturn:  # pragma: no cover - the console entry
    sys.exit(main())


__all__ = ["EXIT_CONFIG", "EXIT_OK", "EXIT_USAGE", "Mapping", "TextIO", "main"]
