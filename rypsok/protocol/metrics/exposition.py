"""The Prometheus text exposition format (0.0.4): families of samples in, bytes out.

Every metric name and label name is ours; a label value is either a word of a fixed
vocabulary (a tool, an outcome, an error class, a content kind) or an identifier the
operator wrote in the configuration (an engine id), and `word` turns anything else into
"other". The one exception is the caller id, only when the operator asks for it, and
escaped here like any label value (backslash, double quote, line feed).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

CONTENT_TYPE = b"text/plain; version=0.0.4; charset=utf-8"
_WORD = re.compile(r"[a-z][a-z0-9_]{0,63}")


def word(value: str, allowed: Iterable[str] | None = None) -> str:
    """The value when it is one of `allowed` (or, without a list, a lower-case word of
    rypsok's own form); "other" for anything else."""
    if allowed is not None:
        return value if value in set(allowed) else "other"
    return value if _WORD.fullmatch(value) else "other"


def escape_label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _number(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value))


@dataclass
class Family:
    name: str
    kind: str  # counter | gauge | histogram
    help: str
    samples: list[tuple[str, Mapping[str, str], float]] = field(default_factory=list)

    def add(self, value: float, suffix: str = "", **labels: str) -> None:
        self.samples.append((suffix, labels, value))


def render(families: Iterable[Family]) -> bytes:
    lines: list[str] = []
    for family in families:
        lines.append(f"# HELP {family.name} {_escape_help(family.help)}")
        lines.append(f"# TYPE {family.name} {family.kind}")
        for suffix, labels, value in family.samples:
            if labels:
                inner = ",".join(f'{k}="{escape_label(v)}"' for k, v in labels.items())
                lines.append(f"{family.name}{suffix}{{{inner}}} {_number(value)}")
            else:
                lines.append(f"{family.name}{suffix} {_number(value)}")
    return ("\n".join(lines) + "\n").encode("utf-8")
