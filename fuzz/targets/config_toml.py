"""Fuzz target: configuration parsing, a TOML file in (rypsok.core.config.load).

Input: the file's bytes, written to a private temporary file and read by
``load`` as ``--config`` would name it, so the bounded read, the UTF-8 check,
tomllib and the schema all run. Documented failures: ConfigError, and nothing
else: a Config or a configuration error, never a traceback. Checked besides:
every problem renders within LIM-I4 and says something.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

from fuzz.harness import instrumented, main

with instrumented(__name__, ("tomllib",)):
    from rypsok.core import limits
    from rypsok.core.config import ConfigError, load

_FOLDER = tempfile.mkdtemp(prefix="rypsok-fuzz-config-")
atexit.register(shutil.rmtree, _FOLDER, ignore_errors=True)
_PATH = os.path.join(_FOLDER, "rypsok.toml")
# Variables a fuzzed file may name for api_key_env or token_env.
_ENV = {"BRAVE_API_KEY": "k" * 32, "TOKEN_A": "t" * 40, "EMPTY": ""}
_MESSAGE_MAX = limits.default("LIM-I4")


def TestOneInput(data: bytes) -> None:
    with open(_PATH, "wb") as file:
        file.write(data)
    try:
        load(_PATH, _ENV)
    except ConfigError as error:
        assert error.problems, "a configuration error names no problem"
        for problem in error.problems:
            rendered = problem.render()
            assert 0 < len(rendered) <= _MESSAGE_MAX


if __name__ == "__main__":
    main(TestOneInput)
