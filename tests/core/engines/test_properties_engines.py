"""Properties of each provider's JSON answer (REQ-ENG-006, REQ-RANK-003, REQ-SEC-023):
the Wikipedia and Brave drivers' parse.

On any JSON value, on the hand-written fixtures with one part replaced by any JSON value or
removed, and on their bytes cut and spliced, a driver either returns results or raises
EngineFailure with a class of the fixed vocabulary and no provider text attached. Results
carry text that encodes; a result URL that is not http or https never reaches the caller
(Brave passes the provider's URL on; the comparison stage drops it as url_invalid).
"""

from __future__ import annotations

import datetime
import json
import random
from typing import Any
from urllib.parse import quote, urlencode

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from rypsok.core.config.secrets import Secret
from rypsok.core.engines import base
from rypsok.core.engines.base import ERROR_CLASSES, EngineFailure, RawResult, header_lookup
from rypsok.core.search.urls import DroppedUrl, NormalUrl, normalize
from tests.support import paths
from tests.support.drivers import brave_driver, wiki

FIXTURES = paths.FIXTURES / "engines"
DRIVERS = {
    "wikipedia": lambda: wiki(),
    "wikipedia_mirror": lambda: wiki("https://wiki.example/w"),
    "brave_web": lambda: brave_driver("web", Secret("fixture-token")),
    "brave_news": lambda: brave_driver("news", Secret("fixture-token")),
}
ENGINE_OF = {
    "wikipedia": "wikipedia",
    "wikipedia_mirror": "wikipedia",
    "brave_web": "brave",
    "brave_news": "brave",
}


def _fixtures(engine: str) -> list[tuple[str, Any]]:
    out = []
    for path in sorted((FIXTURES / engine).glob("*.json")):
        raw = json.loads(path.read_text(encoding="utf-8"))
        out.append((path.stem, raw.get("body", raw.get("body_text"))))
    return out


FIXTURE_BODIES = {engine: _fixtures(engine) for engine in ("wikipedia", "brave")}

KEYS = [
    "query",
    "search",
    "title",
    "snippet",
    "timestamp",
    "requestid",
    "error",
    "web",
    "results",
    "url",
    "description",
    "page_age",
    "code",
    "type",
    "news",
    "x",
]
json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=False),
        st.text(max_size=12),
        st.sampled_from(
            [
                "https://a.example/",
                "javascript:alert(1)",
                "ftp://f.example/",
                "//x",
                "",
                "\ud800",
                "2026-02-30T00:00:00",
                "9999-12-31",
                "en",
                "pt-BR",
                "../x",
                "data:text/html,x",
                "HTTPS://B.EXAMPLE/p",
                "http://[::1]/",
            ]
        ),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.sampled_from(KEYS), st.text(max_size=4)), inner, max_size=4),
    ),
    max_leaves=16,
)
STATUSES = st.sampled_from([200, 200, 200, 204, 301, 400, 401, 403, 404, 422, 429, 500, 503])
RETRY = st.one_of(
    st.none(),
    st.text(max_size=20),
    st.sampled_from(
        ["120", "0", "1, 1419704", "Wed, 21 Oct 2015 07:28:00 GMT", "0 JAN 0:0 2200000000"]
    ),
)


def _check(driver: str, status: int, retry: str | None, body: bytes) -> None:
    headers = {} if retry is None else {"Retry-After": retry, "X-RateLimit-Reset": retry}
    try:
        results = DRIVERS[driver]().parse(status, header_lookup(headers), body)
    except EngineFailure as failure:
        assert failure.error_class in ERROR_CLASSES
        assert failure.__context__ is None and failure.__cause__ is None  # no provider text
        assert failure.args == (failure.error_class,)
        assert failure.retry_after_s is None or failure.retry_after_s >= 0
        return
    assert 200 <= status < 300
    for result in results:
        _check_result(driver, result)


def _check_result(driver: str, result: RawResult) -> None:
    for text in (result.url, result.title, result.snippet):
        text.encode("utf-8")  # no lone surrogate
    if result.date is not None:
        datetime.date.fromisoformat(result.date)
    shown = normalize(result.url)
    if isinstance(shown, NormalUrl):
        assert shown.url.lower().startswith(("http://", "https://"))
    else:
        assert isinstance(shown, DroppedUrl)
        assert driver.startswith("brave"), result.url  # Wikipedia builds its own URLs
    if driver == "wikipedia":
        assert result.url.startswith("https://") and ".wikipedia.org/wiki/" in result.url
        assert result.title
    elif driver == "wikipedia_mirror":
        assert result.url.startswith("https://wiki.example/wiki/") and result.title


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(DRIVERS)), json_values, STATUSES, RETRY)
@example("brave_web", {}, 429, "0 JAN 0:0 2200000000")  # overflowed the date parser
@example("wikipedia", {"query": {"search": [{"title": "\ud800"}]}, "requestid": "en"}, 200, None)
def test_req_eng_006_any_json_answer_gives_results_or_a_classified_failure(
    driver: str, value: Any, status: int, retry: str | None
) -> None:
    _check(driver, status, retry, json.dumps(value).encode("utf-8"))


def _replace_somewhere(document: Any, rng: random.Random, new: Any) -> Any:
    """`document` with one node, chosen by `rng`, replaced by `new` or removed."""
    if not isinstance(document, dict | list) or not document or rng.random() < 0.2:
        return new
    if isinstance(document, dict):
        key = rng.choice(sorted(document))
        copy = dict(document)
        if rng.random() < 0.15:
            del copy[key]
        else:
            copy[key] = _replace_somewhere(document[key], rng, new)
        return copy
    index = rng.randrange(len(document))
    items = list(document)
    items[index] = _replace_somewhere(document[index], rng, new)
    return items


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(sorted(DRIVERS)), st.data(), json_values, st.integers(0, 2**32), STATUSES, RETRY
)
def test_req_eng_006_a_mutated_fixture_gives_results_or_a_classified_failure(
    driver: str, data: st.DataObject, new: Any, seed: int, status: int, retry: str | None
) -> None:
    _name, body = data.draw(st.sampled_from(FIXTURE_BODIES[ENGINE_OF[driver]]))
    if isinstance(body, str):  # a fixture that is not JSON: splice bytes instead
        mutated = body.encode("utf-8")
    else:
        mutated = json.dumps(_replace_somewhere(body, random.Random(seed), new)).encode()
    _check(driver, status, retry, mutated)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(sorted(DRIVERS)),
    st.data(),
    st.lists(
        st.tuples(
            st.floats(0, 1),
            st.integers(0, 40),
            st.one_of(
                st.binary(max_size=6),
                st.sampled_from(
                    [
                        b'"',
                        b"{",
                        b"}",
                        b"[",
                        b"]",
                        b",",
                        b":",
                        b"\\u",
                        b"\\ud800",
                        b"\xff",
                        b"null",
                        b"1e999",
                        b"-",
                    ]
                ),
            ),
        ),
        max_size=6,
    ),
)
def test_req_eng_006_cut_and_spliced_bytes_give_results_or_a_classified_failure(
    driver: str, data: st.DataObject, edits: list[tuple[float, int, bytes]]
) -> None:
    _name, body = data.draw(st.sampled_from(FIXTURE_BODIES[ENGINE_OF[driver]]))
    raw = body.encode("utf-8") if isinstance(body, str) else json.dumps(body).encode()
    for where, cut, insert in edits:
        at = int(where * len(raw))
        raw = raw[:at] + insert + raw[at + cut :]
    _check(driver, 200, None, raw)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=12), st.text(max_size=40), max_size=8))
def test_req_eng_001_a_request_query_string_is_urlencode_with_quote(params: dict[str, str]) -> None:
    # The drivers' shortcut leaves out only the quote() calls that change nothing.
    assert base.query_string(params) == urlencode(params, quote_via=quote)
    assert base.query_string({"srprop": "snippet|timestamp", "q": "a b/c~d"}) == (
        "srprop=snippet%7Ctimestamp&q=a%20b%2Fc~d"
    )
