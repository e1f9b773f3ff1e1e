"""The example configurations (examples/) as tests run them: tutorial 1's file pointed at a
local stand-in, and an example given the environment and token file it reads."""

from __future__ import annotations

from pathlib import Path

from tests.support.run import clean_env


def tutorial_1_config(base_url: str) -> str:
    # Tutorial 1's file, with the engine pointed at the stand-in. The stand-in's result
    # URLs are on 127.0.0.1, which web_fetch refuses unless an allow rule admits it.
    return (
        'config_version = 1\n[egress]\nallow = ["127.0.0.1"]\n'
        '[engines.wikipedia]\ntype = "wikipedia"\ncategories = ["general", "science"]\n'
        f'base_url = "{base_url}"\n'
    )


def materialize(example: Path, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """Tutorial 4 reads tokens: give it an environment and a token file of its own."""
    text = example.read_text(encoding="utf-8")
    env = clean_env()
    if "token_file" in text:
        token = tmp_path / "rypsok-ops"
        token.write_text("o" * 44)
        token.chmod(0o600)
        text = text.replace("/run/secrets/rypsok-ops", str(token))
        env["RYPSOK_TOKEN_MIMLYS"] = "m" * 44
    path = tmp_path / example.name
    path.write_text(text, encoding="utf-8")
    return path, env
