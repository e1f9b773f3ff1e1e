"""Issue 20, part 3: the parts of a page after the first are served from memory.

Through the facade, against local HTTPS sites that count the requests they receive: a
page read once is kept for its caller and URL for [fetch] continuation_ttl_s, within
continuation_max_entries and continuation_max_bytes; a continuation that has to read
the page again says content_changed when the text differs from the one it continues.
Time is a clock the test moves (the store's `clock`), never a sleep.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from rypsok.core import limits
from rypsok.core.config import ConfigError, load
from rypsok.core.config.report import lines, memory_of, warnings
from rypsok.core.facade import Rypsok
from rypsok.core.fetch.continuation import PageMemory, page_bytes
from rypsok.core.model import ToolError
from rypsok.core.net.egress import EgressPolicy
from tests.support.clock import FakeClock
from tests.support.fetching import ALLOW_LOCAL, make
from tests.support.page_parts import TITLE, article, call, codes, reads, service
from tests.support.reachable import assert_gone, marker, reachable_text
from tests.support.site import Page, site

PART = 500  # the smallest max_chars a caller may ask for
TTL = limits.default("LIM-F16")


def refusal(core: Rypsok, url: str, caller: str = "local", **arguments: Any) -> ToolError:
    with pytest.raises(ToolError) as info:
        call(core, url, caller, **arguments)
    return info.value


def parts(core: Rypsok, url: str, caller: str = "local") -> list[dict[str, Any]]:
    """The page read in parts of PART characters, as an agent continues."""
    out = [call(core, url, caller, max_chars=PART)]
    while out[-1]["truncated"]:
        out.append(call(core, url, caller, max_chars=PART, start_char=out[-1]["next_start_char"]))
    return out


# -- one read, then memory ------------------------------------------------------------------


def test_issue_20_a_three_part_read_makes_one_outbound_request(tmp_path: Path) -> None:
    with site({"/harbour": Page(body=article())}) as s:
        core, _ = service(tmp_path, "max_chars = 5000\n")
        got = parts(core, s.url("/harbour"))
        assert [p for p, _ in s.requests] == ["/robots.txt", "/harbour"]  # robots.txt once too
        whole = call(core, s.url("/harbour"))  # the whole content, from memory as well
        assert [p for p, _ in s.requests] == ["/robots.txt", "/harbour"]
    assert len(got) == 3
    assert "".join(p["content"] for p in got) == whole["content"]
    assert {p["content_sha256"] for p in got} == {whole["content_sha256"]}
    assert all(p["url"] == s.url("/harbour") and p["title"] == TITLE for p in got)
    assert [codes(p) for p in got] == [[], [], []]


def test_issue_20_with_the_memory_off_every_part_is_read_again(tmp_path: Path) -> None:
    with site({"/harbour": Page(body=article())}) as s:
        core, _ = service(tmp_path, "continuation_ttl_s = 0\n")
        got = parts(core, s.url("/harbour"))
        assert len(got) == 3 and reads(s, "/harbour") == 3
    assert len(core.fetches.memory) == 0


def test_issue_20_callers_do_not_share_a_kept_page(tmp_path: Path) -> None:
    with site({"/harbour": Page(body=article())}) as s:
        core, _ = service(tmp_path)
        call(core, s.url("/harbour"), "alice", max_chars=PART)
        call(core, s.url("/harbour"), "bob", max_chars=PART, start_char=PART)
        assert reads(s, "/harbour") == 2  # bob's part was not alice's page
        call(core, s.url("/harbour"), "alice", max_chars=PART, start_char=PART)
        call(core, s.url("/harbour"), "bob", max_chars=PART, start_char=2 * PART)
        assert reads(s, "/harbour") == 2  # each from the caller's own


def test_issue_20_the_url_the_answer_names_finds_the_kept_page_too(tmp_path: Path) -> None:
    with site({"/old": Page(301, headers={"Location": "/new"}), "/new": Page(body=article())}) as s:
        core, _ = service(tmp_path)
        first = call(core, s.url("/old"), max_chars=PART)
        assert first["url"] == s.url("/new")
        by_old = call(core, s.url("/old"), max_chars=PART, start_char=PART)
        by_new = call(core, s.url("/new"), max_chars=PART, start_char=2 * PART)
        assert (reads(s, "/old"), reads(s, "/new")) == (1, 1)
    assert by_old["url"] == by_new["url"] == s.url("/new")
    assert first["content_sha256"] == by_old["content_sha256"] == by_new["content_sha256"]


def test_issue_20_the_same_url_written_differently_is_the_same_page(tmp_path: Path) -> None:
    """The key is the URL as parsed: the fragment, which never leaves, is not part of it."""
    with site({"/harbour": Page(body=article())}) as s:
        core, _ = service(tmp_path)
        call(core, s.url("/harbour"), max_chars=PART)
        call(core, s.url("/harbour#part-two"), max_chars=PART, start_char=PART)
        assert reads(s, "/harbour") == 1


# -- time -------------------------------------------------------------------------------------


def test_issue_20_a_kept_page_expires_after_the_ttl_and_is_read_again(tmp_path: Path) -> None:
    with site({"/harbour": Page(body=article())}) as s:
        core, clock = service(tmp_path)
        call(core, s.url("/harbour"), max_chars=PART)
        clock.now += TTL - 1
        call(core, s.url("/harbour"), max_chars=PART, start_char=PART)
        assert reads(s, "/harbour") == 1
        clock.now += 1  # the TTL counts from the read, not from the last use
        call(core, s.url("/harbour"), max_chars=PART, start_char=2 * PART)
        assert reads(s, "/harbour") == 2
        call(core, s.url("/harbour"), max_chars=PART, start_char=PART)
        assert reads(s, "/harbour") == 2  # and is kept again from this read


def test_issue_20_a_shorter_ttl_is_honoured(tmp_path: Path) -> None:
    with site({"/harbour": Page(body=article())}) as s:
        core, clock = service(tmp_path, "continuation_ttl_s = 5\n")
        call(core, s.url("/harbour"), max_chars=PART)
        clock.now += 5
        call(core, s.url("/harbour"), max_chars=PART, start_char=PART)
        assert reads(s, "/harbour") == 2


# -- bounds -------------------------------------------------------------------------------------


def test_issue_20_the_entry_bound_evicts_the_least_recently_used_page(tmp_path: Path) -> None:
    pages = {f"/{name}": Page(body=article()) for name in "abc"}
    with site(pages) as s:
        core, _ = service(tmp_path, "continuation_max_entries = 2\n")
        for name in "abac":  # a is used again after b: b is the least recent when c comes
            call(core, s.url(f"/{name}"), max_chars=PART)
        assert len(core.fetches.memory) == 2
        call(core, s.url("/a"), max_chars=PART, start_char=PART)
        call(core, s.url("/c"), max_chars=PART, start_char=PART)
        assert (reads(s, "/a"), reads(s, "/b"), reads(s, "/c")) == (1, 1, 1)
        call(core, s.url("/b"), max_chars=PART, start_char=PART)
        assert reads(s, "/b") == 2


def test_issue_20_the_byte_bound_evicts_and_a_page_above_it_is_never_kept(
    tmp_path: Path,
) -> None:
    bound = limits.get("LIM-F18").low or 0  # 64 KiB: one page of 70 paragraphs, not two
    pages = {
        "/a": Page(body=article(paragraphs=70)),
        "/b": Page(body=article(paragraphs=70)),
        "/big": Page(body=article(paragraphs=130)),
    }
    with site(pages) as s:
        core, _ = service(tmp_path, f"continuation_max_bytes = {bound}\n")
        memory = core.fetches.memory
        call(core, s.url("/a"), max_chars=PART)
        assert len(memory) == 1 and bound / 2 < memory.bytes <= bound
        call(core, s.url("/b"), max_chars=PART)
        assert len(memory) == 1 and memory.bytes <= bound  # /a made room for /b
        call(core, s.url("/a"), max_chars=PART, start_char=PART)
        assert reads(s, "/a") == 2
        for start in (0, PART):
            big = call(core, s.url("/big"), max_chars=PART, start_char=start)
            assert big["truncated"] is True
        assert reads(s, "/big") == 2  # larger than the whole bound: read each time
        assert memory.bytes <= bound
        call(core, s.url("/a"), max_chars=PART, start_char=2 * PART)
        assert reads(s, "/a") == 2  # the page too large to keep pushed nothing out


def test_issue_20_a_page_above_max_bytes_is_never_kept_nor_read_past_the_bound(
    tmp_path: Path,
) -> None:
    """A 20 MiB page is refused at fetch.max_bytes, at every part: nothing of it is kept,
    and no continuation reads further than the first call did."""
    huge = b"<!doctype html><p>" + b"a harbour " * (2 * 1024 * 1024) + b"</p>"
    low = limits.get("LIM-F3").low
    with site({"/huge": Page(body=huge)}) as s:
        core, _ = service(tmp_path, f"max_bytes = {low}\n")
        for start in (0, PART):
            error = refusal(core, s.url("/huge"), max_chars=PART, start_char=start)
            assert error.kind == "too_large"
        assert reads(s, "/huge") == 2
    assert len(core.fetches.memory) == 0


# -- what was served, and content_changed ---------------------------------------------------------


def changing() -> Any:
    """A page that is a new edition at every request (same length, other words)."""
    editions = itertools.count(1)
    return lambda: Page(body=article(edition=next(editions)))


def test_issue_20_parts_from_memory_of_a_changing_page_share_one_text(tmp_path: Path) -> None:
    with site({"/news": changing()}) as s:
        core, _ = service(tmp_path)
        got = parts(core, s.url("/news"))
        assert reads(s, "/news") == 1
    text = "".join(p["content"] for p in got)
    assert "edition 1" in text and "edition 2" not in text
    assert len({p["content_sha256"] for p in got}) == 1
    assert all("content_changed" not in codes(p) for p in got)


def test_issue_20_after_expiry_a_changed_page_gives_content_changed(tmp_path: Path) -> None:
    with site({"/news": changing()}) as s:
        core, clock = service(tmp_path)
        first = call(core, s.url("/news"), max_chars=PART)
        clock.now += TTL
        second = call(core, s.url("/news"), max_chars=PART, start_char=PART)
        assert reads(s, "/news") == 2
        third = call(core, s.url("/news"), max_chars=PART, start_char=2 * PART)
        assert reads(s, "/news") == 2
    assert "edition 1" in first["content"] and "edition 2" in second["content"]
    assert first["content_sha256"] != second["content_sha256"]
    assert codes(second) == ["content_changed"]
    # the third continues the second's text, which is the one it was last given
    assert third["content_sha256"] == second["content_sha256"] and codes(third) == []


def test_issue_20_after_expiry_an_unchanged_page_gives_no_notice(tmp_path: Path) -> None:
    with site({"/harbour": Page(body=article())}) as s:
        core, clock = service(tmp_path)
        first = call(core, s.url("/harbour"), max_chars=PART)
        clock.now += TTL
        second = call(core, s.url("/harbour"), max_chars=PART, start_char=PART)
        assert reads(s, "/harbour") == 2
    assert codes(second) == [] and second["content_sha256"] == first["content_sha256"]


def test_issue_20_a_first_part_never_says_content_changed(tmp_path: Path) -> None:
    with site({"/news": changing()}) as s:
        core, clock = service(tmp_path)
        first = call(core, s.url("/news"), max_chars=PART)
        clock.now += TTL
        again = call(core, s.url("/news"), max_chars=PART)  # start_char 0: a new reading
    assert first["content_sha256"] != again["content_sha256"] and codes(again) == []


def test_issue_20_the_hash_is_remembered_ten_ttls_and_per_caller(tmp_path: Path) -> None:
    with site({"/news": changing()}) as s:
        core, clock = service(tmp_path)
        call(core, s.url("/news"), "alice", max_chars=PART)
        clock.now += TTL * limits.default("LIM-F20")
        late = call(core, s.url("/news"), "alice", max_chars=PART, start_char=PART)
        assert "content_changed" not in codes(late)  # forgotten: nothing to compare with
        fresh = call(core, s.url("/news"), "bob", max_chars=PART, start_char=PART)
        assert reads(s, "/news") == 3
    assert "content_changed" not in codes(fresh)  # bob was never given another text


def test_issue_20_with_the_memory_off_no_content_changed_is_given(tmp_path: Path) -> None:
    with site({"/news": changing()}) as s:
        core, _ = service(tmp_path, "continuation_ttl_s = 0\n")
        first = call(core, s.url("/news"), max_chars=PART)
        second = call(core, s.url("/news"), max_chars=PART, start_char=PART)
    assert first["content_sha256"] != second["content_sha256"] and codes(second) == []


# -- what still applies to a part from memory -------------------------------------------------


def test_issue_20_strict_mode_and_egress_refuse_before_the_memory_is_read(
    tmp_path: Path,
) -> None:
    with site({"/harbour": Page(body=article())}) as s:
        core, _ = service(tmp_path, "strict_mode = true\n")
        url = s.url("/harbour")
        call(core, url, max_chars=PART)  # admitted by the allow rule for 127.0.0.1
        # The same service without that rule: the kept page must not answer for it.
        core.fetches.policy = EgressPolicy(allow=(), deny=(), ports=(s.port,))
        error = refusal(core, url, max_chars=PART, start_char=PART)
        assert (error.kind, error.detail) == ("denied", {"reason": "strict_mode"})
        core.store.returned.remember([url])  # strict mode passes now; the policy does not
        error = refusal(core, url, max_chars=PART, start_char=PART)
        assert (error.kind, error.detail) == ("denied", {"reason": "egress"})
        assert reads(s, "/harbour") == 1
    assert len(core.fetches.memory) == 1  # it was there to be served


def test_issue_20_parts_from_memory_use_the_rate_limit_and_its_validation(
    tmp_path: Path,
) -> None:
    with site({"/harbour": Page(body=article())}) as s:
        core = make(tmp_path, ALLOW_LOCAL + "[limits]\nweb_fetch_per_minute = 3\n")
        url = s.url("/harbour")
        length = len(call(core, url, max_chars=20000)["content"])
        beyond = refusal(core, url, start_char=length)  # from memory, still checked
        assert beyond.kind == "invalid_request" and str(length) in beyond.message
        bad = refusal(core, url, start_char=-1)
        assert bad.kind == "invalid_request" and bad.detail["parameter"] == "start_char"
        call(core, url, max_chars=PART, start_char=PART)
        call(core, url, max_chars=PART, start_char=2 * PART)
        limited = refusal(core, url, max_chars=PART, start_char=3 * PART)
        assert reads(s, "/harbour") == 1
    # refused arguments are refunded; three answered calls use the minute's three
    assert (limited.kind, limited.detail["reason"]) == ("unavailable", "rate_limited")


# -- retention ----------------------------------------------------------------------------------


def test_issue_20_an_expired_page_leaves_nothing_reachable(tmp_path: Path) -> None:
    """REQ-LIFE-002 for this memory: kept during its TTL, gone at the first call after."""
    path = "/" + marker("keptpath")
    title, text = marker("TitleMark"), marker("TextMark")
    body = article(words=text).replace(TITLE.encode(), title.encode())
    with site({path: Page(body=body), "/other": Page(body=article())}) as s:
        core, clock = service(tmp_path)
        answer = call(core, s.url(path), max_chars=PART, start_char=PART)
        assert answer["title"] == title and text in answer["content"]
        del answer
        kept = reachable_text(core)
        assert path in kept and title in kept and text in kept  # the walk would see them
        clock.now += TTL
        call(core, s.url("/other"), max_chars=PART)  # the next call drops what expired
    assert len(core.fetches.memory) == 1
    assert_gone(core, [path, title, text])  # the remembered hash keeps no URL either


# -- the store alone ----------------------------------------------------------------------------


def test_issue_20_the_store_bounds_the_hashes_it_remembers() -> None:
    clock = FakeClock(1000.0)
    store: PageMemory[str] = PageMemory(
        ttl_s=10, max_entries=4, max_bytes=1 << 20, hashes=2, clock=clock
    )
    for url in ("u1", "u2", "u3"):
        store.served("c", [url], f"sha-{url}")
    assert [store.last_served("c", u) for u in ("u1", "u2", "u3")] == [None, "sha-u2", "sha-u3"]
    assert store.last_served("other", "u3") is None
    clock.now += 10 * limits.default("LIM-F20")
    assert store.last_served("c", "u3") is None


def test_issue_20_the_store_replaces_a_page_and_counts_its_bytes() -> None:
    clock = FakeClock(1000.0)
    store: PageMemory[str] = PageMemory(ttl_s=10, max_entries=4, max_bytes=10_000, clock=clock)
    assert store.put("c", ["given", "read"], "first", page_bytes(100))
    assert store.bytes == page_bytes(100)
    # a fresher read under one of the URLs replaces the whole entry, both keys
    assert store.put("c", ["read"], "second", page_bytes(200))
    assert (store.get("c", "given"), store.get("c", "read")) == (None, "second")
    assert store.bytes == page_bytes(200) and len(store) == 1
    # too large to keep: not kept, and the older page under its URL is gone all the same
    assert not store.put("c", ["read"], "huge", 10_001)
    assert store.get("c", "read") is None and store.bytes == 0
    store.put("c", ["x"], "x", page_bytes(10))
    clock.now += 10
    assert store.put("c", ["y"], "y", page_bytes(20))  # the insert drops the expired one
    assert len(store) == 1 and store.bytes == page_bytes(20)


def test_issue_20_a_page_counts_four_bytes_a_character_and_an_allowance() -> None:
    assert page_bytes(0) > 0 and page_bytes(1000) - page_bytes(0) == 4000


# -- configuration and the memory estimate -----------------------------------------------------


def config_of(tmp_path: Path, fetch: str) -> Any:
    path = tmp_path / "c.toml"
    path.write_text(f"config_version = 1\n[fetch]\n{fetch}")
    return load(str(path), {})


def test_issue_20_the_keys_take_their_defaults_and_zero_turns_it_off(tmp_path: Path) -> None:
    f = load(None, {}).fetch
    assert (f.continuation_ttl_s, f.continuation_max_entries, f.continuation_max_bytes) == (
        120,
        32,
        8 * 1024 * 1024,
    )
    assert config_of(tmp_path, "continuation_ttl_s = 0\n").fetch.continuation_ttl_s == 0


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("continuation_ttl_s = -1", "expected an integer from 0 to 3600, found a number below"),
        ("continuation_ttl_s = 3601", "expected an integer from 0 to 3600, found a number above"),
        ("continuation_ttl_s = true", "expected an integer from 0 to 3600, found true or false"),
        ("continuation_max_entries = 0", "expected an integer from 1 to 1000"),
        ("continuation_max_entries = 1001", "expected an integer from 1 to 1000"),
        ("continuation_max_bytes = 65535", "expected an integer from 65536 to 67108864"),
        ("continuation_max_bytes = 67108865", "expected an integer from 65536 to 67108864"),
    ],
)
def test_issue_20_the_keys_are_checked_against_their_ranges(
    tmp_path: Path, line: str, message: str
) -> None:
    with pytest.raises(ConfigError) as info:
        config_of(tmp_path, line + "\n")
    (problem,) = info.value.problems
    assert problem.key == "fetch." + line.split(" ")[0]
    assert message in problem.render()


def test_issue_20_the_memory_estimate_counts_the_kept_pages(tmp_path: Path) -> None:
    default = load(None, {})
    estimate = memory_of(default)
    # 8 MiB of pages and 1024 remembered hashes, rounded up to a whole MiB
    assert estimate.continuation == 9
    assert estimate.total == (
        estimate.base
        + estimate.bodies
        + estimate.parses
        + estimate.sessions
        + estimate.cache
        + estimate.continuation
    )
    assert estimate.total < limits.default("LIM-M5") and not estimate.over_unit
    assert not [w for w in warnings(default) if w.startswith("memory:")]
    assert "+ continuation 9 MiB" in lines(default)[-1]

    off = config_of(tmp_path, "continuation_ttl_s = 0\n")
    assert memory_of(off).continuation == 0 and memory_of(off).total == estimate.total - 9

    most = config_of(tmp_path, "continuation_max_bytes = 67108864\n")
    assert memory_of(most).continuation == 65
    warned = [w for w in warnings(most) if w.startswith("memory:")]
    assert len(warned) == 1 and "fetch.continuation_max_bytes" in warned[0]


def test_issue_20_check_names_the_keys_on_its_fetch_line() -> None:
    (line,) = [x for x in lines(load(None, {})) if x.startswith("fetch:")]
    assert (
        " continuation_ttl_s=120 continuation_max_entries=32 continuation_max_bytes=8388608 "
    ) in line
