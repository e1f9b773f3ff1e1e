#!/usr/bin/env python3
"""Check the license of every runtime dependency against an allow list (REQ-SEC-020).

  .venv/bin/python tools/licenses.py          check; exit 0, or 1 naming each problem
  .venv/bin/python tools/licenses.py --list   one line per package: name, version, license
  .venv/bin/python tools/licenses.py --lock F [--lock G]   other lock files

The packages are the pins of requirements.lock and requirements-redis.lock:
exactly what the pyz ships, and what the pyz built with the redis extra adds.
Each is read from the metadata of the distribution installed for the running
interpreter (tools/setup's .venv, which installs both locks), which must be the
locked version:

* License-Expression (core metadata 2.4, PEP 639) is an SPDX expression and
  is taken as the package's license. It must equal the package's entry in
  tools/license-allow.toml, so that a package that changes its license on an
  update stops the run until someone reads the change.
* Without it the metadata is ambiguous (a free-text License field, trove
  classifiers such as "BSD License" that name no variant). The entry then
  carries the license read by hand from the files of that release, the
  version it was read from, and the reason; the free text and the
  classifiers must not contradict it.

Either way the license must be satisfiable with the licenses of [allowed],
and the dist-info must carry a license file, so that the notice travels
inside the pyz. Standard library only.
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import re
import sys
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements.lock"
# The runtime closure and the extra that a second kind of pyz adds to it
# (build_zipapp.EXTRAS); license-allow.toml has one entry per pin of all of them.
LOCKS = (LOCK, ROOT / "requirements-redis.lock")
ALLOW = ROOT / "tools" / "license-allow.toml"
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")
# A license file: by its usual names, or anything in a dist-info's licenses/ folder
# (PEP 639 puts the License-File entries there, whatever they are called:
# pypdfium2's are LICENSES/Apache-2.0.txt and the like).
NOTICE_FILE = re.compile(
    r"(^|/)(LICEN[CS]E|COPYING|NOTICE)[^/]*$|\.dist-info/licenses/[^/]", re.IGNORECASE
)

# What a trove classifier or a bare License field can stand for. "BSD License"
# names no variant, hence several ids; an unknown classifier is a problem to read.
CLASSIFIER_IDS: dict[str, frozenset[str]] = {
    "License :: OSI Approved :: MIT License": frozenset({"MIT"}),
    "License :: OSI Approved :: MIT No Attribution License (MIT-0)": frozenset({"MIT-0"}),
    "License :: OSI Approved :: BSD License": frozenset({"0BSD", "BSD-2-Clause", "BSD-3-Clause"}),
    "License :: OSI Approved :: Apache Software License": frozenset({"Apache-2.0"}),
    "License :: OSI Approved :: ISC License (ISCL)": frozenset({"ISC"}),
    "License :: OSI Approved :: Python Software Foundation License": frozenset({"PSF-2.0"}),
}


def canonical(name: str) -> str:
    """PEP 503 normal form: the lock, the metadata and the allow file may spell names apart."""
    return re.sub(r"[-_.]+", "-", name).lower()


def read_lock(path: Path) -> dict[str, str]:
    """name -> pinned version of every requirement line of a pip-compile lock."""
    pins: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        found = PIN.match(line)
        if found:
            pins[canonical(found.group(1))] = found.group(2)
    return pins


def read_locks(paths: Iterable[Path]) -> tuple[dict[str, str], list[str]]:
    """The pins of several locks together, and the names two of them pin apart."""
    pins: dict[str, str] = {}
    clashes: list[str] = []
    for path in paths:
        for name, version in read_lock(path).items():
            if pins.setdefault(name, version) != version:
                clashes.append(f"{name}: pinned {pins[name]} and {version} ({path.name})")
    return pins, clashes


# -- SPDX expressions -----------------------------------------------------------------------


class ExpressionError(ValueError):
    """Not an SPDX license expression this checker reads."""


TOKEN = re.compile(r"\s*(\(|\)|[A-Za-z0-9.+-]+(?::[A-Za-z0-9.+-]+)?)")


def _tokens(text: str) -> list[str]:
    text = text.strip()
    tokens, pos = [], 0
    while pos < len(text):
        found = TOKEN.match(text, pos)
        if found is None:
            raise ExpressionError(f"unexpected character at {pos} in {text!r}")
        tokens.append(found.group(1))
        pos = found.end()
    if not tokens:
        raise ExpressionError("empty license expression")
    return tokens


@dataclass(frozen=True)
class Term:
    """A license id, with its exception when the expression says `X WITH Y`."""

    text: str


@dataclass(frozen=True)
class Choice:
    """`a OR b`: the licensee may pick; `a AND b`: all apply."""

    op: str  # "OR" or "AND"
    parts: tuple[Term | Choice, ...]


Node = Term | Choice


def parse_expression(text: str) -> Node:
    """A small recursive-descent reader of SPDX expressions: OR binds loosest, then AND, WITH."""
    tokens = _tokens(text)
    pos = 0

    def peek() -> str | None:
        return tokens[pos] if pos < len(tokens) else None

    def take() -> str:
        nonlocal pos
        if pos >= len(tokens):
            raise ExpressionError(f"expression ends too early: {text!r}")
        pos += 1
        return tokens[pos - 1]

    def operand() -> Node:
        token = take()
        if token == "(":
            node = either()
            if take() != ")":
                raise ExpressionError(f"unbalanced parenthesis in {text!r}")
            return node
        if token == ")" or token.upper() in ("AND", "OR", "WITH"):
            raise ExpressionError(f"a license id was expected, not {token!r}, in {text!r}")
        if (peek() or "").upper() == "WITH":
            take()
            return Term(f"{token} WITH {take()}")
        return Term(token)

    def joined(op: str, below: Callable[[], Node]) -> Node:
        parts = [below()]
        while (peek() or "").upper() == op:
            take()
            parts.append(below())
        return parts[0] if len(parts) == 1 else Choice(op, tuple(parts))

    def both() -> Node:
        return joined("AND", operand)

    def either() -> Node:
        return joined("OR", both)

    node = either()
    if pos != len(tokens):
        raise ExpressionError(f"unexpected {tokens[pos]!r} in {text!r}")
    return node


def satisfiable(node: Node, allowed: Iterable[str]) -> bool:
    """Whether the licensee can comply using allowed licenses only (ids compare without case)."""
    ok = {a.lower() for a in allowed}
    if isinstance(node, Term):
        return node.text.lower() in ok
    results = [satisfiable(part, ok) for part in node.parts]
    return any(results) if node.op == "OR" else all(results)


def terms(node: Node) -> set[str]:
    if isinstance(node, Term):
        return {node.text.lower()}
    return set().union(*(terms(part) for part in node.parts))


def normalized(text: str) -> str:
    """Whitespace and the case of operators do not make two expressions differ."""
    return " ".join(t.upper() if t.upper() in ("AND", "OR", "WITH") else t for t in _tokens(text))


# -- the check ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Package:
    """What the installed metadata says about one locked package."""

    name: str
    version: str
    expression: str | None  # License-Expression
    license_field: str  # the free-text License field, first line
    classifiers: tuple[str, ...]  # the License :: ones
    has_notice: bool


def installed(name: str) -> Package | None:
    try:
        dist = md.distribution(name)
    except md.PackageNotFoundError:
        return None
    # The JSON form (PEP 566): keys in lower case with underscores, repeated fields as lists.
    meta = dist.metadata.json
    files = [str(f) for f in dist.files or ()]
    notice = any(".dist-info/" in f and NOTICE_FILE.search(f) for f in files)
    free_text = str(meta.get("license", "")).strip()
    classifiers = meta.get("classifier", [])
    expression = meta.get("license_expression")
    return Package(
        name=name,
        version=dist.version,
        expression=expression if isinstance(expression, str) else None,
        license_field=free_text.splitlines()[0] if free_text else "",
        classifiers=tuple(c for c in classifiers if str(c).startswith("License ::")),
        has_notice=notice,
    )


def hinted_ids(pkg: Package) -> tuple[set[str], list[str]]:
    """Ids the free text and the classifiers allow, and classifiers nobody mapped."""
    hints: set[str] = set()
    unknown: list[str] = []
    for classifier in pkg.classifiers:
        if classifier in CLASSIFIER_IDS:
            hints |= {i.lower() for i in CLASSIFIER_IDS[classifier]}
        else:
            unknown.append(classifier)
    text = re.sub(r"\s+license$", "", pkg.license_field, flags=re.IGNORECASE).strip()
    if re.fullmatch(r"[A-Za-z0-9.+-]+", text):
        hints.add(text.lower())
    return hints, unknown


def problems_of(
    pkg: Package, locked: str, entry: Mapping[str, Any] | None, allowed: Iterable[str]
) -> list[str]:
    """Everything wrong with one package; empty when its license is allowed and recorded."""
    if pkg.version != locked:
        return [f"installed {pkg.version}, locked {locked}: run tools/setup"]
    if entry is None:
        return ["no entry in tools/license-allow.toml"]
    recorded = entry.get("license")
    if not isinstance(recorded, str):
        return ["its entry in tools/license-allow.toml has no license"]
    found: list[str] = []
    try:
        node = parse_expression(recorded)
    except ExpressionError as exc:
        return [f"the recorded license is not an SPDX expression: {exc}"]
    if pkg.expression is not None:
        try:
            same = normalized(pkg.expression) == normalized(recorded)
        except ExpressionError as exc:
            return [f"its License-Expression cannot be read: {exc}"]
        if not same:
            found.append(
                f"License-Expression is {pkg.expression!r}, the allow file records "
                f"{recorded!r}: read the new license and update the entry"
            )
    else:
        if entry.get("version") != pkg.version:
            read = entry.get("version") or "no version"
            found.append(
                f"no License-Expression, and the license was read by hand from "
                f"{read}, not {pkg.version}: read it again"
            )
        if not str(entry.get("reason", "")).strip():
            found.append("no License-Expression, and its entry gives no reason")
        hints, unknown = hinted_ids(pkg)
        for classifier in unknown:
            found.append(f"unmapped license classifier {classifier!r}: read the files, map it here")
        if hints and not hints & terms(node):
            found.append(
                f"the metadata suggests {sorted(hints)}, the allow file records {recorded!r}"
            )
    if not satisfiable(node, allowed):
        found.append(f"{recorded} is not satisfiable with the allowed licenses")
    if not pkg.has_notice:
        found.append("no license file in its dist-info: the pyz would ship it without its notice")
    return found


def load_allow(path: Path) -> tuple[list[str], dict[str, Mapping[str, Any]]]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    allowed = data.get("allowed", {})
    packages = data.get("packages", {})
    if not isinstance(allowed, dict) or not isinstance(packages, dict):
        raise ValueError(f"{path}: [allowed] and [packages] must be tables")
    return list(allowed), {canonical(k): v for k, v in packages.items() if isinstance(v, dict)}


def check(
    pins: Mapping[str, str], allowed: list[str], entries: Mapping[str, Mapping[str, Any]]
) -> list[str]:
    """Problems of the whole closure, one line each, prefixed with the package."""
    found: list[str] = []
    for name, locked in sorted(pins.items()):
        pkg = installed(name)
        if pkg is None:
            found.append(f"{name} {locked}: not installed for {sys.executable}: run tools/setup")
            continue
        found += [
            f"{name} {locked}: {p}" for p in problems_of(pkg, locked, entries.get(name), allowed)
        ]
    for name in sorted(set(entries) - set(pins)):
        found.append(f"{name}: listed in tools/license-allow.toml but in no lock: remove it")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="License check of the locked runtime closure.")
    parser.add_argument("--list", action="store_true", help="print each package's license")
    parser.add_argument(
        "--lock",
        type=Path,
        action="append",
        help=f"a lock file, one or more times (default: {' and '.join(p.name for p in LOCKS)})",
    )
    parser.add_argument("--allow", type=Path, default=ALLOW)
    args = parser.parse_args(argv)
    locks: list[Path] = args.lock or list(LOCKS)
    pins, clashes = read_locks(locks)
    allowed, entries = load_allow(args.allow)
    if args.list:
        for name, locked in sorted(pins.items()):
            pkg = installed(name)
            expr = pkg.expression if pkg else None
            shown = expr or f"{entries.get(name, {}).get('license', '?')} (read by hand)"
            print(f"{name:28} {locked:12} {shown}")
        return 0
    if not pins:
        named = ", ".join(str(p) for p in locks)
        print(f"licenses: FAILED: no pinned requirement in {named}", file=sys.stderr)
        return 1
    found = clashes + check(pins, allowed, entries)
    for line in found:
        print(f"licenses: {line}", file=sys.stderr)
    if found:
        print(f"licenses: FAILED: {len(found)} problems in {len(pins)} packages", file=sys.stderr)
        return 1
    print(
        f"licenses: ok: {len(pins)} runtime packages, each under an allowed license",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
