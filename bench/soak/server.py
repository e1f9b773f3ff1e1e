"""The server under soak: its configuration, what `check` says of it, the process.

The configuration is the defaults except what the soak needs to reach its local
stand-ins and to keep the tool limiter out of the way:

* bind 127.0.0.1:0 (the port is read from the `listening` line) with two callers,
  their tokens in the environment;
* idle_timeout_s = 10, so that the silent connections are closed, and their
  close checked, several times a minute instead of once;
* fetch.ports = the four sites' ports, egress.allow = their four addresses; the
  sites' CA is trusted through SSL_CERT_FILE (the server reads the system store,
  and OpenSSL takes that variable as the store);
* every tool at 6000 calls a minute per caller (LIM-C6 to C8's top), far above
  what the load sends, so a refusal by the limiter is never mistaken for load;
* two engines of the wikipedia type, `wikipedia` and `wiki_flaky`, at the two
  stand-ins; Brave keeps its default table and stays inactive without a key.

Memory settings (fetches and parses in flight, sessions, cache) stay at their
defaults, so check's worst case is the defaults' figure for this max_bytes.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

IDLE_TIMEOUT_S = 10
RATE_PER_MINUTE = 6000
START_TIMEOUT_S = 120.0  # a first run of the pyz unpacks it first
CHECK_TIMEOUT_S = 120.0
# The book's LIM-S13: engine_status answers from memory within 200 ms. check
# prints no figure for it, so the soak takes the book's.
ENGINE_STATUS_MAX_MS = 200
CALLERS = ("soak_a", "soak_b")

CONFIG = """config_version = 1

[service.http]
bind = "127.0.0.1:0"
idle_timeout_s = {idle}
request_timeout_s = {request_timeout}
{callers}
[fetch]
max_bytes = {max_bytes}
deadline_ms = {fetch_deadline}
ports = [{ports}]

[egress]
allow = [{hosts}]

[limits]
web_search_per_minute = {rate}
web_fetch_per_minute = {rate}
engine_status_per_minute = {rate}

[engines.wikipedia]
type = "wikipedia"
categories = ["general", "science"]
base_url = "{wiki}"

[engines.wiki_flaky]
type = "wikipedia"
categories = ["general"]
base_url = "{flaky}"
"""

CALLER = """
[[service.http.auth.callers]]
id = "{id}"
token_env = "{env}"
"""


@dataclass(frozen=True, slots=True)
class Settings:
    """What the soak chose for the configuration, and the tokens it made."""

    max_bytes: int
    fetch_deadline_ms: int
    request_timeout_s: int
    tokens: tuple[str, ...]

    @classmethod
    def make(cls, max_bytes: int, fetch_deadline_ms: int, request_timeout_s: int) -> Settings:
        tokens = tuple(f"{c}-{secrets.token_urlsafe(24)}" for c in CALLERS)
        return cls(max_bytes, fetch_deadline_ms, request_timeout_s, tokens)


def token_env(index: int) -> str:
    return f"RYPSOK_SOAK_TOKEN_{index}"


def config_text(settings: Settings, sites: dict[str, int], wiki: str, flaky: str) -> str:
    callers = "".join(CALLER.format(id=c, env=token_env(i)) for i, c in enumerate(CALLERS))
    return CONFIG.format(
        idle=IDLE_TIMEOUT_S,
        request_timeout=settings.request_timeout_s,
        callers=callers,
        max_bytes=settings.max_bytes,
        fetch_deadline=settings.fetch_deadline_ms,
        ports=", ".join(str(p) for p in sorted(set(sites.values()))),
        hosts=", ".join(f'"{h}"' for h in sorted(sites)),
        rate=RATE_PER_MINUTE,
        wiki=wiki,
        flaky=flaky,
    )


def server_env(folder: Path, ca_path: str, settings: Settings) -> dict[str, str]:
    """No RYPSOK_CONFIG, no keys, no proxies: the CA, a home, the tokens."""
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG")}
    env["HOME"] = str(folder)
    env["SSL_CERT_FILE"] = ca_path
    env["SHIV_ROOT"] = str(folder / "shiv")  # where the pyz unpacks, once per run
    for i, token in enumerate(settings.tokens):
        env[token_env(i)] = token
    return env


# -- check -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Figures:
    """What `check` says of the configuration."""

    estimate_mib: int
    memory_line: str
    maxima_ms: dict[str, int]  # per tool: the longest a call may last (LIM-S7, F5, S13)


_MEMORY = re.compile(r"memory: worst case about (\d+) MiB[^\n]*")
_MAXIMA = re.compile(r"tool call maxima in ms: web_search=(\d+) web_fetch=(\d+)")


def start_check(command: Sequence[str], config: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    """`check` on the configuration, in the background while the server starts."""
    return subprocess.Popen(
        [*command, "check", "--config", str(config)],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def read_check(proc: subprocess.Popen[str]) -> Figures:
    try:
        _out, err = proc.communicate(timeout=CHECK_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise SystemExit("soak: check did not finish") from None
    memory = _MEMORY.search(err)
    maxima = _MAXIMA.search(err)
    if proc.returncode != 0 or memory is None or maxima is None:
        raise SystemExit(
            f"soak: check refused the configuration (exit {proc.returncode}):\n" + err[-2000:]
        )
    return Figures(
        int(memory.group(1)),
        memory.group(0),
        {
            "web_search": int(maxima.group(1)),
            "web_fetch": int(maxima.group(2)),
            "engine_status": ENGINE_STATUS_MAX_MS,
        },
    )


# -- the process -------------------------------------------------------------------------


@dataclass
class Server:
    proc: subprocess.Popen[bytes]
    port: int
    log_path: Path
    out_path: Path

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self, timeout_s: float) -> tuple[int | None, float]:
        """SIGTERM, then the exit code and how long the exit took (None: killed)."""
        started = time.monotonic()
        if self.proc.poll() is not None:
            return self.proc.returncode, 0.0
        self.proc.send_signal(signal.SIGTERM)
        try:
            code: int | None = self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
            code = None
        return code, time.monotonic() - started


def start(command: Sequence[str], config: Path, env: dict[str, str], folder: Path) -> Server:
    """Start serve over HTTP and wait for its `listening` line on stderr."""
    log_path, out_path = folder / "server.log", folder / "server.out"
    with open(log_path, "wb") as log, open(out_path, "wb") as out:
        proc = subprocess.Popen(
            [*command, "serve", "--transport", "http", "--config", str(config)],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=log,
            env=env,
            cwd=folder,
        )
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        for line in log_path.read_text(encoding="utf-8", errors="replace").splitlines():
            with contextlib.suppress(ValueError):
                record = json.loads(line)
                if isinstance(record, dict) and record.get("event") == "listening":
                    port = int(str(record["address"]).rsplit(":", 1)[1])
                    return Server(proc, port, log_path, out_path)
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    if proc.poll() is None:
        proc.kill()
        proc.wait(10)
    tail = log_path.read_text(encoding="utf-8", errors="replace")[-2000:]
    raise SystemExit(f"soak: the server did not report `listening`:\n{tail}")


def status_kib(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM of a live process, in KiB; empty once it is gone."""
    found: dict[str, int] = {}
    try:
        text = Path(f"/proc/{pid}/status").read_text(encoding="ascii")
    except OSError:
        return found
    for line in text.splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            found[name] = int(value.split()[0])
    return found


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU of a live process, from /proc/<pid>/stat."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
