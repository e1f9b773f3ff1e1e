"""Brave's 422 answers in a search (clarifications.md, "Brave, a wrong or expired key";
issue 14 item 4): through the facade, the pipeline, the real engine client and TLS, to a
stand-in for api.search.brave.com reached through `[egress] proxy` (tests/support/engine_standin.py).

SUBSCRIPTION_TOKEN_INVALID, and VALIDATION located at the token header, are auth_failure;
a VALIDATION about a query parameter, or a body that does not say where, is
request_failure, so the operator is not sent to check a key that is fine. No provider text
reaches the answer or the log.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from rypsok.core import limits
from rypsok.core.config import load
from rypsok.core.facade import Rypsok
from tests.support.engine_standin import BRAVE, WIKI, Reply, Seen, client_tls, tunnel, wiki_results

TOKEN = "BSA" + "q" * 29
MARK = "PROVIDER-TEXT"


def error_body(code: str, errors: object = None, *, meta: object = ...) -> bytes:
    error: dict[str, Any] = {
        "id": "00000000-0000-4000-8000-000000000009",
        "status": 422,
        "code": code,
        "detail": f"{MARK} Unable to validate request parameter(s)",
    }
    if meta is not ...:
        error["meta"] = meta
    elif errors is not None:
        error["meta"] = {"errors": errors}
    return json.dumps({"type": "ErrorResponse", "error": error, "time": 1790000000}).encode()


def problem(loc: object) -> dict[str, Any]:
    return {"type": "missing", "loc": loc, "msg": f"{MARK} Field required", "input": None}


def run_search(tmp_path: Path, brave_body: bytes) -> tuple[dict[str, Any], list[Seen]]:
    def answer(seen: Seen) -> Reply:
        if seen.host == WIKI:
            return wiki_results(seen, ["Rust"])
        return Reply(422, brave_body)

    with tunnel(answer) as standin:
        path = tmp_path / "rypsok.toml"
        path.write_text(
            f'config_version = 1\n[egress]\nproxy = "{standin.url}"\n'
            '[engines.wikipedia]\ntype = "wikipedia"\ncategories = ["general"]\n'
            '[engines.brave]\ntype = "brave"\ncategories = ["general"]\n'
            'api_key_env = "BRAVE_API_KEY"\n',
            encoding="utf-8",
        )
        core = Rypsok(load(str(path), {"BRAVE_API_KEY": TOKEN}), tls=client_tls())

        async def go() -> dict[str, Any]:
            return (await core.search({"query": "rust"})).to_json()

        result = anyio.run(go)
    return result, standin.seen


def brave_reason(answer: dict[str, Any]) -> str:
    [notice] = [n for n in answer["notices"] if n["code"] == "engine_unavailable"]
    assert notice["engine"] == "brave"
    return str(notice["reason"])


def check(tmp_path: Path, capsys: pytest.CaptureFixture[str], body: bytes, expected: str) -> None:
    capsys.readouterr()
    answer, seen = run_search(tmp_path, body)
    # The provider was asked, with the token, and answered 422.
    [asked] = [s for s in seen if s.host == BRAVE]
    assert asked.header("X-Subscription-Token") == TOKEN
    assert answer["outcome"] == "partial"
    assert brave_reason(answer) == expected
    logged = capsys.readouterr()
    assert MARK not in json.dumps(answer) and MARK not in logged.err + logged.out


@pytest.mark.parametrize(
    "body",
    [
        error_body("SUBSCRIPTION_TOKEN_INVALID", meta={"component": "authentication"}),
        error_body("SUBSCRIPTION_TOKEN_INVALID"),
        error_body("VALIDATION", [problem(["header", "x-subscription-token"])]),
        error_body(
            "VALIDATION", [problem(["query", "q"]), problem(["header", "X-Subscription-Token"])]
        ),
    ],
    ids=["token_invalid", "token_invalid_no_meta", "missing_token", "token_among_others"],
)
def test_req_test_002_brave_422_about_the_token_is_auth_failure_in_a_search(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], body: bytes
) -> None:
    check(tmp_path, capsys, body, "auth_failure")


@pytest.mark.parametrize(
    "body",
    [
        error_body("VALIDATION", [problem(["query", "q"])]),
        error_body("VALIDATION", [problem(["query", "count"]), problem(["query", "country"])]),
        error_body("VALIDATION", [problem(["header", "accept"])]),
        error_body("VALIDATION", meta={}),  # as one user saw it: meta empty
        error_body("VALIDATION"),  # no meta at all
        error_body("VALIDATION", meta=None),
        error_body("VALIDATION", meta=["header", "x-subscription-token"]),
        error_body("VALIDATION", [problem("header,x-subscription-token")]),  # loc not a list
        error_body("VALIDATION", [problem({"header": "x-subscription-token"})]),
        error_body("VALIDATION", [problem(None)]),
        error_body("VALIDATION", {"loc": ["header", "x-subscription-token"]}),
        error_body("VALIDATION", [problem(["header", "x-subscription-token", "0"])]),
        error_body("OPTION_NOT_IN_PLAN", [problem(["header", "x-subscription-token"])]),
        b"",
        b"<html>" + MARK.encode() + b"</html>",
        error_body("VALIDATION", [problem(["header", "x-subscription-token"])])[:-40],
    ],
    ids=[
        "query_q",
        "query_params",
        "other_header",
        "meta_empty",
        "meta_missing",
        "meta_null",
        "meta_list",
        "loc_string",
        "loc_object",
        "loc_null",
        "errors_object",
        "loc_three_parts",
        "other_code",
        "empty",
        "html",
        "truncated",
    ],
)
def test_req_test_002_brave_422_about_the_request_is_request_failure_in_a_search(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], body: bytes
) -> None:
    check(tmp_path, capsys, body, "request_failure")


def test_req_test_002_brave_huge_422_bodies_in_a_search(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bound = limits.default("LIM-E1")
    filler = [problem(["query", f"p{i}"]) for i in range(10_000)]
    # Within the driver's bound: classified by where its errors are.
    token_last = error_body("VALIDATION", [*filler, problem(["header", "x-subscription-token"])])
    assert 700_000 < len(token_last) <= bound
    check(tmp_path, capsys, token_last, "auth_failure")
    check(tmp_path, capsys, error_body("VALIDATION", filler), "request_failure")
    # Beyond it: never read whole, never classified by its content.
    beyond = error_body("VALIDATION", [*filler * 2, problem(["header", "x-subscription-token"])])
    assert len(beyond) > bound
    check(tmp_path, capsys, beyond, "parse_failure")
