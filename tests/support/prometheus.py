"""Debian's Prometheus for the metrics tests: promtool on a scrape or a rules file, and a
server started on 127.0.0.1 that scrapes given targets, asked over its HTTP API.

tools/setup installs the package (as root, with apt-get); without it the tests fail saying
how to get it, they are not skipped.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.token_issuer import free_port

ADVICE = "run `bash tools/setup` as root (it installs Debian's prometheus) or install it"
READY_S = 30.0


def binary(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not on PATH: {ADVICE}", pytrace=False)
    return found


def promtool(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [binary("promtool"), *args],
        input=stdin.decode() if stdin is not None else None,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@dataclass
class Server:
    url: str
    log: Path

    def query(self, expression: str) -> list[dict[str, Any]]:
        address = f"{self.url}/api/v1/query?" + urllib.parse.urlencode({"query": expression})
        with urllib.request.urlopen(address, timeout=10) as answer:
            document = json.load(answer)
        assert document["status"] == "success", document
        return list(document["data"]["result"])

    def rules(self) -> list[dict[str, Any]]:
        """Every rule the server loaded, with its health (`ok` once evaluated)."""
        deadline = time.monotonic() + 15.0
        while True:
            with urllib.request.urlopen(f"{self.url}/api/v1/rules", timeout=10) as answer:
                document = json.load(answer)
            found = [r for g in document["data"]["groups"] for r in g["rules"]]
            if all(r.get("health") == "ok" for r in found) or time.monotonic() > deadline:
                return found
            time.sleep(0.5)

    def wait_for(self, expression: str, timeout_s: float = 30.0) -> list[dict[str, Any]]:
        """The query's result once it has one (Prometheus scrapes every second here)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            found = self.query(expression)
            if found:
                return found
            time.sleep(0.5)
        pytest.fail(
            f"no result for {expression} in {timeout_s:g} s; log:\n{self.log.read_text()[-3000:]}"
        )


@contextlib.contextmanager
def server(targets: Sequence[str], rules: Path | None = None) -> Iterator[Server]:
    """A Prometheus scraping `targets` (host:port) every second, stopped at the end."""
    command = binary("prometheus")
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="rypsok-prometheus-") as tmp:
        folder = Path(tmp)
        config = {
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "scrape_configs": [
                {"job_name": "rypsok", "static_configs": [{"targets": list(targets)}]}
            ],
        }
        if rules is not None:
            config["rule_files"] = [str(rules)]
        # YAML is a superset of JSON: the configuration is written as JSON.
        (folder / "prometheus.yml").write_text(json.dumps(config))
        log = folder / "prometheus.log"
        with log.open("wb") as sink:
            process = subprocess.Popen(
                [
                    command,
                    f"--config.file={folder / 'prometheus.yml'}",
                    f"--storage.tsdb.path={folder / 'data'}",
                    f"--web.listen-address=127.0.0.1:{port}",
                    "--log.level=warn",
                ],
                stdout=sink,
                stderr=sink,
                stdin=subprocess.DEVNULL,
            )
            url = f"http://127.0.0.1:{port}"
            try:
                _wait_ready(url, process, log)
                yield Server(url, log)
            finally:
                process.terminate()
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(5)


def _wait_ready(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + READY_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"prometheus exited {process.returncode}:\n{log.read_text()[-3000:]}")
        with (
            contextlib.suppress(OSError),
            urllib.request.urlopen(f"{url}/-/ready", timeout=2) as answer,
        ):
            if answer.status == 200:
                return
        time.sleep(0.2)
    pytest.fail(f"prometheus was not ready in {READY_S:g} s:\n{log.read_text()[-3000:]}")
