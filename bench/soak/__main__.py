"""Soak rypsok in HTTP mode under mixed load and judge how it held (issue 7, part 7).

Usage, from the repository root with the project's Python (it needs trustme, a
test dependency; `tools/release-checks soak` passes its arguments through):

    .venv/bin/python -m bench.soak --minutes 5                  build the pyz, 5 minutes
    .venv/bin/python -m bench.soak --minutes 1 --pyz dist/rypsok.pyz
    .venv/bin/python -m bench.soak --seconds 10 --from-source --max-bytes 1048576 \\
        --fetch-deadline-ms 2000 --request-timeout-s 4          tests/bench/test_soak.py's smoke

What a run does:

1. builds the pyz with build_zipapp.py into a temporary folder, unless --pyz names
   one (or --from-source runs `python -m rypsok` of this interpreter instead); the
   pyz runs under the base interpreter beneath any venv, as an operator runs it;
2. starts the local stand-ins in a child process (sites.py): four HTTPS
   sites on 127.0.0.1 to 127.0.0.4 under a fresh trustme CA, serving ordinary and
   hostile pages (pages.py), and two MediaWiki stand-ins, one sound and
   one flaky;
3. writes a configuration (server.py says what it changes from the
   defaults), runs `check` on it and reads its memory line (the worst-case
   estimate) and its tool maxima, then starts `serve --transport http` with it;
4. applies the mixed load of load.py for the window: modern and legacy
   sessions calling all three tools, slow and stalled clients, cancelled calls,
   wrong tokens, silent connections; reads VmRSS and VmHWM of the server every
   0.5 s and notices at once if it is gone;
5. stops the server with SIGTERM and reads its log; prints the report and, with
   --json, writes it as JSON.

The report: requests sent, answered and lost; latency p50/p99/max per tool (from
the request's last byte to the response's last byte) beside the tool's stated
maximum; outcomes and error kinds per tool and per fetch target; the silent
connections; peak VmHWM against check's estimate and VmRSS per minute; the
server's CPU and exit. It fails (exit 1) on a lost answer (no whole response
within the stated maximum plus --margin-s), a crash or an unclean exit, a peak
above the estimate, and the other defects report.py lists. Exit 2:
the soak could not run (a build, the stand-ins, check or the start failed).
Everything listens on loopback only; nothing reaches the network.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import secrets
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.soak import report as reporting
from bench.soak import server as serving
from bench.soak.load import Plan, Soak
from bench.soak.pages import secret_value

REPO = Path(__file__).resolve().parents[2]

MIB = 1024 * 1024
BUILD_TIMEOUT_S = 600
SITES_START_S = 60.0
EXIT_SLACK_S = 5.0  # beyond shutdown_ms (3 s by default), for the process to end
DEFAULT_SHUTDOWN_MS = 3000


def say(text: str) -> None:
    print(f"soak: {text}", file=sys.stderr, flush=True)


def _is_venv_python(exe: Path) -> bool:
    return any((p / "pyvenv.cfg").is_file() for p in (exe.parent, exe.parent.parent))


def base_python() -> str:
    """The interpreter beneath any venv, the one the pyz's compiled wheels were built for."""
    base = getattr(sys, "_base_executable", None)
    if base and Path(base).is_file() and not _is_venv_python(Path(base)):
        return str(base)
    found = shutil.which(f"python{sys.version_info.major}.{sys.version_info.minor}")
    if found and not _is_venv_python(Path(found)):
        return found
    raise SystemExit("soak: no base interpreter found for the pyz; name one with --python")


def build_pyz(folder: Path) -> Path:
    say("building the pyz (build_zipapp.py)")
    proc = subprocess.run(
        [sys.executable, str(REPO / "build_zipapp.py"), "--out", str(folder)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"soak: build_zipapp.py failed:\n{proc.stderr[-2000:]}")
    return folder / "rypsok.pyz"


def start_sites(
    folder: Path, marker: str, max_bytes: int, seed: int, secret: str
) -> tuple[subprocess.Popen[bytes], dict[str, Any]]:
    with open(folder / "sites.log", "wb") as log:  # the child keeps its own descriptor
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "bench.soak.sites",
                "--dir",
                str(folder),
                "--marker",
                marker,
                "--max-bytes",
                str(max_bytes),
                "--seed",
                str(seed),
                "--secret",
                secret,
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            cwd=REPO,  # -m finds the package bench.soak from the repository root
        )
    assert proc.stdout is not None
    line = proc.stdout.readline()  # the child's first line, or b"" when it died
    if not line:
        proc.kill()
        raise SystemExit(
            "soak: the stand-ins did not start:\n"
            + (folder / "sites.log").read_text(errors="replace")[-2000:]
        )
    return proc, json.loads(line)


def stop_sites(proc: subprocess.Popen[bytes]) -> dict[str, int]:
    """Close its stdin; it answers with how many requests each path got."""
    with contextlib.suppress(OSError, subprocess.TimeoutExpired, ValueError):
        out, _ = proc.communicate(b"", timeout=15)
        for line in out.decode().splitlines():
            record = json.loads(line)
            if "hits" in record:
                return {str(k): int(v) for k, v in record["hits"].items()}
    if proc.poll() is None:
        proc.kill()
        proc.wait(10)
    return {}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Soak rypsok in HTTP mode under mixed load.")
    span = parser.add_mutually_exclusive_group()
    span.add_argument("--minutes", type=float, help="length of the load window (default 5)")
    span.add_argument("--seconds", type=float, help="the same in seconds")
    subject = parser.add_mutually_exclusive_group()
    subject.add_argument("--pyz", type=Path, help="soak this pyz instead of building one")
    subject.add_argument(
        "--from-source",
        action="store_true",
        help="soak `python -m rypsok` of this interpreter (no pyz)",
    )
    parser.add_argument("--python", help="interpreter for the pyz (default: the base python)")
    parser.add_argument(
        "--max-bytes",
        type=int,
        default=5 * MIB,
        help="fetch.max_bytes, the size of the big pages (default 5 MiB)",
    )
    parser.add_argument(
        "--fetch-deadline-ms", type=int, default=10_000, help="fetch.deadline_ms (default 10000)"
    )
    parser.add_argument(
        "--request-timeout-s",
        type=int,
        default=30,
        help="service.http.request_timeout_s (default 30; at least the fetch deadline + 2 s)",
    )
    parser.add_argument(
        "--margin-s",
        type=float,
        default=2.0,
        help="grace over each stated maximum before an answer is lost (default 2)",
    )
    parser.add_argument(
        "--clients", type=int, default=4, help="modern keep-alive clients (default 4)"
    )
    parser.add_argument("--seed", type=int, help="for the pages and the load (default: random)")
    parser.add_argument("--json", type=Path, help="write the report here as JSON too")
    parser.add_argument(
        "--workdir",
        type=Path,
        help="keep the configuration, logs and pyz here (default: a temporary folder, removed)",
    )
    args = parser.parse_args(argv)
    minutes = 5.0 if args.minutes is None else args.minutes
    seconds = args.seconds if args.seconds is not None else 60 * minutes
    if seconds <= 0:
        parser.error("the window must be longer than 0")
    args.window_s = seconds
    if not 65536 <= args.max_bytes <= 10 * MIB:
        parser.error("--max-bytes must be 64 KiB to 10 MiB (LIM-F3's range)")
    if args.request_timeout_s * 1000 < args.fetch_deadline_ms + 2000:
        parser.error("--request-timeout-s must be at least the fetch deadline + 2 s")
    if args.clients < 1:
        parser.error("--clients must be at least 1")
    return args


def soak(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    seed = args.seed if args.seed is not None else random.randrange(10**9)
    rnd = random.Random(seed)
    marker = "k" + secrets.token_hex(5)  # in every query and URL path of this run
    secret = secret_value(rnd)
    if args.from_source:
        command = [sys.executable, "-m", "rypsok"]
        subject = f"python -m rypsok ({sys.executable})"
    else:
        pyz = args.pyz.resolve() if args.pyz else build_pyz(folder / "pyz")
        command = [args.python or base_python(), str(pyz)]
        subject = f"{pyz} under {command[0]}"
    say(f"{subject}; window {args.window_s:g} s; seed {seed}; work folder {folder}")
    sites_proc, sites = start_sites(folder, marker, args.max_bytes, seed, secret)
    server: serving.Server | None = None
    hits: dict[str, int] = {}
    try:
        settings = serving.Settings.make(
            args.max_bytes, args.fetch_deadline_ms, args.request_timeout_s
        )
        site_ports = {str(k): int(v) for k, v in sites["sites"].items()}
        config_path = folder / "rypsok.toml"
        config_path.write_text(
            serving.config_text(settings, site_ports, str(sites["wiki"]), str(sites["flaky"])),
            encoding="utf-8",
        )
        env = serving.server_env(folder, str(sites["ca"]), settings)
        if args.from_source:
            env["PYTHONPATH"] = str(REPO)  # the work tree's rypsok, whatever is installed
        checking = serving.start_check(command, config_path, env)
        try:
            server = serving.start(command, config_path, env, folder)
        except BaseException:
            checking.kill()
            checking.communicate()
            raise
        figures = serving.read_check(checking)
        say(f"check: {figures.memory_line}")
        say(f"serving on 127.0.0.1:{server.port} (pid {server.pid}); load for {args.window_s:g} s")
        plan = Plan(
            port=server.port,
            tokens=settings.tokens,
            sites=site_ports,
            marker=marker,
            secret=secret,
            seconds=args.window_s,
            margin_s=args.margin_s,
            maxima_ms=figures.maxima_ms,
            request_timeout_s=settings.request_timeout_s,
            idle_timeout_s=serving.IDLE_TIMEOUT_S,
            seed=seed,
            clients=args.clients,
        )
        record = asyncio.run(Soak(plan, server.pid, server.alive, say).run())
        bound = DEFAULT_SHUTDOWN_MS / 1000 + EXIT_SLACK_S
        code, took = server.stop(bound)
    finally:
        if server is not None and server.alive():
            server.proc.kill()
            server.proc.wait(10)
        hits = stop_sites(sites_proc)
    logs = reporting.read_logs(server.log_path, server.out_path, [marker, secret, *settings.tokens])
    ending = reporting.Ending(code, took, bound, record.crashed_at_s)
    return reporting.build(
        record,
        estimate_mib=figures.estimate_mib,
        memory_line=figures.memory_line,
        ending=ending,
        logs=logs,
        hits=hits,
        private_path=f"/{marker}/private/page",
        margin_s=args.margin_s,
        config={
            "subject": subject,
            "seed": seed,
            "max_bytes": args.max_bytes,
            "fetch_deadline_ms": args.fetch_deadline_ms,
            "request_timeout_s": args.request_timeout_s,
            "idle_timeout_s": serving.IDLE_TIMEOUT_S,
            "maxima_ms": figures.maxima_ms,
            "clients": args.clients,
        },
    )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if sys.platform != "linux":
        print("soak: reads /proc; Linux only", file=sys.stderr)
        return 2
    try:
        if args.workdir is not None:
            args.workdir.mkdir(parents=True, exist_ok=True)
            result = soak(args, args.workdir.resolve())
        else:
            with tempfile.TemporaryDirectory(prefix="rypsok-soak-") as tmp:
                result = soak(args, Path(tmp))
    except SystemExit as stop:
        if isinstance(stop.code, str):
            print(stop.code, file=sys.stderr)
            return 2
        raise
    print(reporting.render(result))
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0 if result["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
