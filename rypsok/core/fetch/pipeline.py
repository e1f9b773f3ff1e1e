"""The web_fetch pipeline, in the order of REQ-PAGE-001.

validation -> privacy check of the URL -> strict mode -> egress policy ->
the page kept for this caller (continuation.py: then no request at all), or the
download of it under way for this caller (flights.py: then no second one) ->
robots.txt -> request (every address judged at connect time) -> byte limit
while streaming -> status -> media type -> charset -> parsing under node and
depth bounds (off the event loop, under the parsing permits) -> main content
-> cleaning -> truncation -> response. Every step that reads the page's text runs
in a worker thread, never on the event loop (tests/core/fetch/test_fetch_loop.py).

Guarantees: no request reaches an address the policy refuses; nothing of the
page reaches an error or a log line; the network part ends at fetch.deadline_ms
and the whole call at LIM-F5; a name that resolves only to refused addresses
answers exactly like a name that does not resolve.
"""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, replace
from ipaddress import IPv4Address, IPv6Address
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

import anyio
import anyio.to_thread

from rypsok.core import boundary, limits
from rypsok.core.config.settings import Config
from rypsok.core.fetch import errors, noncontent
from rypsok.core.fetch.content import PageText
from rypsok.core.fetch.continuation import PageMemory, page_bytes
from rypsok.core.fetch.flights import Downloads
from rypsok.core.fetch.intake import FetchTarget, parse_fetch_url, scheme_of
from rypsok.core.fetch.noncontent import NonContent
from rypsok.core.fetch.outline import NO_OUTLINE, Outline, part_end, read_outline
from rypsok.core.fetch.pdf import reader as pdf_reader
from rypsok.core.fetch.pdf import sniff
from rypsok.core.fetch.pdf import title as pdf_title
from rypsok.core.fetch.request import FetchRequest, start_beyond_content
from rypsok.core.fetch.robots import ALLOW_ALL, parse_robots_prefix, rules_for_status
from rypsok.core.model import FetchResponse, Notice, ToolError
from rypsok.core.net import mediatype
from rypsok.core.net.client import ClientError, OutboundClient, Response
from rypsok.core.net.egress import EgressPolicy
from rypsok.core.permits import run_under_permit
from rypsok.core.store.base import Store
from rypsok.core.store.robots_rules import RobotsRules
from rypsok.core.telemetry import counters, log

if TYPE_CHECKING:
    from rypsok.core.fetch.extraction.attributes import READ_ATTRIBUTES
    from rypsok.core.fetch.extraction.embedded import data_blocks
    from rypsok.core.fetch.extraction.extract import DATA_CONFIDENCE, extract_blocks, extract_text
    from rypsok.core.html import charset
    from rypsok.core.html.tree import parse_html, release

# Loaded on the first fetch, not at import: a session that never fetches never holds
# the HTML parser and charset detection (LIM-M1). They are module attributes once
# loaded (a test may replace one).
_ON_FIRST_USE = frozenset(
    {
        "DATA_CONFIDENCE",
        "READ_ATTRIBUTES",
        "charset",
        "data_blocks",
        "extract_blocks",
        "extract_text",
        "parse_html",
        "release",
    }
)


def _load() -> None:
    names = globals()
    if names.keys() >= _ON_FIRST_USE:
        return
    from rypsok.core.fetch.extraction import attributes, embedded, extract
    from rypsok.core.html import charset as charset_module
    from rypsok.core.html import tree

    for name, value in (
        ("DATA_CONFIDENCE", extract.DATA_CONFIDENCE),
        ("READ_ATTRIBUTES", attributes.READ_ATTRIBUTES),
        ("charset", charset_module),
        ("data_blocks", embedded.data_blocks),
        ("extract_blocks", extract.extract_blocks),
        ("extract_text", extract.extract_text),
        ("parse_html", tree.parse_html),
        ("release", tree.release),
    ):
        names.setdefault(name, value)


def __getattr__(name: str) -> Any:
    if name in _ON_FIRST_USE:
        _load()
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


ACCEPT = "text/html, application/xhtml+xml, text/plain;q=0.9, text/markdown;q=0.9, */*;q=0.1"
ACCEPT_PDF = (
    "text/html, application/xhtml+xml, text/plain;q=0.9, text/markdown;q=0.9, "
    "application/pdf;q=0.8, */*;q=0.1"
)
# A page served as XHTML is parsed with XML's empty elements and CDATA sections;
# text/html is parsed as HTML even when it is XHTML, as browsers do.
READABLE = {
    "text/html": "html",
    "application/xhtml+xml": "xhtml",
    "text/plain": "text",
    "text/markdown": "text",
    "text/x-markdown": "text",
}
ROBOTS_REDIRECTS = 5
# A shell's separate data file (a Gatsby page's page-data.json): what is asked for, the
# media types read (JSON, or none or plain text as static hosts often say), and the time
# below which no request is worth starting before the call's deadline.
ACCEPT_DATA = "application/json"
_DATA_MEDIA = frozenset({None, "application/json", "text/json", "text/plain"})
_DATA_MIN_S = 0.1
# robots.txt URLs are built here from a URL that passed the secret check already.
_OWN_URL = "off"


@dataclass(frozen=True, slots=True)
class _Page:
    """A page's main content, cleaned: what is left of it once the parse is over."""

    title: str | None
    content: PageText
    removed: int  # invisible characters removed from the content
    partial: bool
    # An HTML page's kind and the confidence in its read (extraction/kind.py); None for
    # a PDF, plain text or Markdown.
    kind: str | None = None
    confidence: float | None = None
    shell: bool = False  # a page scripts fill (its text, if any, from its data)
    # A shell with no text whose data is a file on its origin: that file's path.
    page_data: str | None = None


@dataclass(frozen=True, slots=True)
class _Read:
    """A page as read, with where it was read: what is kept for the next part."""

    url: str  # after redirects and any upgrade
    page: _Page
    sha256: str  # of the whole content, computed once
    # A page that is no content (a soft 404, a log-in or a consent wall): said in a notice.
    not_content: NonContent | None = None
    # Its headings and fenced code, read once (issue 36): the outline of a long answer
    # and where its parts end.
    outline: Outline = NO_OUTLINE


@dataclass(slots=True)
class _Judged:
    """What the policy refused while the client connected, for the operator's log."""

    reason: str | None = None


class FetchService:
    def __init__(
        self,
        config: Config,
        client: OutboundClient,
        policy: EgressPolicy,
        parsing: anyio.CapacityLimiter,
        store: Store,
    ) -> None:
        self.config = config
        self.client = client
        self.policy = policy
        self.parsing = parsing
        # Strict mode's memory of returned URLs and robots.txt rules: the store's.
        self.store = store
        self.memory: PageMemory[_Read] = PageMemory.of(config.fetch)
        self.downloads: Downloads[_Read] = Downloads()
        self.in_flight = anyio.CapacityLimiter(config.limits.fetches_in_flight)
        self._hosts: dict[str, anyio.Lock] = {}
        self._host_users: dict[str, int] = {}

    async def fetch(self, request: FetchRequest, *, caller: str) -> FetchResponse:
        """One web_fetch; *caller* owns what is kept of the page for the next part."""
        target = parse_fetch_url(
            request.url,
            allow_http=self.config.egress.allow_http,
            secret_mode=self.config.privacy.secret_detection,
        )
        # Before the memory is looked at: a URL refused now is refused, kept or not.
        await self._strict(request.url, target)
        self._policy(target)
        read = self.memory.get(caller, target.url)
        if read is None:
            # Calls of this caller for this URL that overlap share one download.
            read = await self.downloads.share(
                (caller, target.url), lambda: self._download_and_keep(caller, target)
            )
        # A continuation compares with what this caller was last given: offsets into
        # another text would point at other words (issue 20).
        seen = self.memory.last_served(caller, target.url) if request.start_char else None
        changed = seen is not None and seen != read.sha256
        # The part is cut and scanned for instruction-like text in a worker thread: up to
        # max_chars_ceiling characters, 5 ms at 100,000, would hold up the event loop.
        response = await anyio.to_thread.run_sync(
            lambda: self._respond(
                request,
                read.url,
                read.page,
                sha256=read.sha256,
                changed=changed,
                not_content=read.not_content,
                outline=read.outline,
            )
        )
        self.memory.served(caller, (target.url, read.url), read.sha256)
        return response

    async def _download_and_keep(self, caller: str, target: FetchTarget) -> _Read:
        """The page downloaded, then kept for this caller's next parts."""
        read = await self._download(target)
        characters = len(read.page.content) + len(read.page.title or "")
        characters += read.outline.characters()
        size = page_bytes(characters + len(target.url) + len(read.url))
        self.memory.put(caller, (target.url, read.url), read, size)
        return read

    async def _download(self, target: FetchTarget) -> _Read:
        """The page from the network, read, parsed and cleaned; never a blank one."""
        deadline = anyio.current_time() + self.config.fetch.deadline_ms / 1000
        async with self._slot(target.host, deadline):
            final, response = await self._follow(target, deadline)
        kind = _media_kind(response, pdf=self.config.fetch.pdf)
        # Pages and bytes read, by the kind of content (a fixed word): /metrics.
        counters.add("fetch", "pages", kind)
        counters.add("fetch", "bytes", kind, len(response.body))
        declared = mediatype.charset(response.header("content-type"))
        status = response.status
        # The body is handed over in a box the parse empties: once it is parsed nothing
        # holds it any more, not even this frame (REQ-LIFE-002).
        held = [response.body]
        del response
        read, blank = await self._read(held, declared, kind, final.url, status, deadline)
        # Before the page is kept: a challenge is never served from memory (docs/tools.md,
        # "Pages that are not content"); a challenge the extractor left blank is one too.
        if read.not_content == "challenge":
            log.info("refused", tool="web_fetch", reason="blocked")
            raise errors.challenge_page()
        if blank:
            if read.page.shell:
                found = await self._page_data(final, read, status, deadline)
                if found is not None:
                    return found
                log.info("refused", tool="web_fetch", reason="needs_scripts")
                raise errors.needs_scripts()
            raise errors.extraction_failed()
        return read

    def _as_read(self, url: str, page: _Page, status: int) -> _Read:
        """The page as kept: whether it is content (on its first characters), its hash
        and its outline. In a worker thread: each would hold up the event loop."""
        said = noncontent.classify(
            page.title, page.content.window(0, noncontent.SCAN_CHARS), status=status
        )
        outline = read_outline(page.content, self.config.search.title_max_chars)
        return _Read(url, page, page.content.sha256(), said, outline)

    # -- policy stages -------------------------------------------------------------------

    async def _strict(self, raw_url: str, target: FetchTarget) -> None:
        if not self.config.fetch.strict_mode:
            return
        if self.policy.admits_by_rule(target.host):
            return  # the operator's rule decides without asking the store
        if await self.store.was_returned((raw_url, target.url)):
            return
        log.info("refused", tool="web_fetch", reason="strict_mode")
        raise errors.strict_mode()

    def _policy(self, target: FetchTarget) -> None:
        verdict = self.policy.judge_host(target.host, target.port)
        if not verdict.allowed:
            log.info("refused", tool="web_fetch", reason=verdict.reason)
            raise errors.egress_denied()

    def _judge(self, target: FetchTarget, record: _Judged):  # type: ignore[no-untyped-def]
        def judge(address: IPv4Address | IPv6Address) -> bool:
            verdict = self.policy.judge_address(address, target.host, target.port)
            if not verdict.allowed:
                record.reason = verdict.reason
            return verdict.allowed

        return judge

    # -- the network part -------------------------------------------------------------------

    @contextmanager
    def _host_lock(self, host: str) -> Iterator[anyio.Lock]:
        lock = self._hosts.setdefault(host, anyio.Lock())
        self._host_users[host] = self._host_users.get(host, 0) + 1
        try:
            yield lock
        finally:
            self._host_users[host] -= 1
            if not self._host_users[host]:  # the table holds only hosts in use
                del self._host_users[host]
                del self._hosts[host]

    @asynccontextmanager
    async def _slot(self, host: str, deadline: float) -> AsyncIterator[None]:
        """The host's turn (LIM-C4), then a fetch permit (LIM-C3), or busy at the deadline.

        In that order: a call queued behind its host holds no permit, so a backlog on one
        host does not stall the fetches to others."""
        with self._host_lock(host) as lock:
            with anyio.move_on_at(deadline) as waiting:
                await lock.acquire()
            if waiting.cancelled_caught:
                raise errors.busy()
            try:
                with anyio.move_on_at(deadline) as waiting:
                    await self.in_flight.acquire()
                if waiting.cancelled_caught:
                    raise errors.busy()
                try:
                    yield
                finally:
                    self.in_flight.release()
            finally:
                lock.release()

    async def _follow(self, target: FetchTarget, deadline: float) -> tuple[FetchTarget, Response]:
        """GET with robots.txt and the redirect rules; returns the page that answered 2xx."""
        f = self.config.fetch
        current = target
        for hop in range(f.max_redirects + 1):
            await self._robots_check(current, deadline)
            response = await self._get(
                current,
                deadline,
                accept=ACCEPT_PDF if f.pdf else ACCEPT,
                max_bytes=f.max_bytes,
                upgraded=current.upgraded,
            )
            if response.status in (301, 302, 303, 307, 308):
                location = response.header("location")
                if location is None:
                    raise errors.network_unavailable()
                current = self._next_hop(current, location, hop)
                continue
            if response.status >= 400:
                counters.add("fetch", "status", str(response.status // 100) + "xx")
                raise errors.http_status(response.status, response.header("retry-after"))
            if not 200 <= response.status < 300:
                raise errors.network_unavailable()
            log.info("fetched", host=current.host, status=response.status, bytes=len(response.body))
            return current, response
        log.info("refused", tool="web_fetch", reason="too_many_redirects")
        raise errors.network_unavailable()

    def _next_hop(self, current: FetchTarget, location: str, hop: int) -> FetchTarget:
        f = self.config.fetch
        joined = _join(current.url, location)
        if scheme_of(joined) not in (None, "http", "https"):
            # ftp:, file:, data:, javascript: ... the book's first message for the scheme,
            # which names no part of the target, nor does the log line.
            log.info("refused", tool="web_fetch", reason="scheme")
            raise errors.scheme_not_allowed(allow_http=self.config.egress.allow_http)
        try:
            nxt = parse_fetch_url(
                joined,
                allow_http=self.config.egress.allow_http,
                secret_mode=self.config.privacy.secret_detection,
            )
        except ToolError as error:
            if error.kind == "denied":
                raise errors.egress_denied() from None  # never disclose the target
            raise errors.network_unavailable() from None
        verdict = self.policy.judge_host(nxt.host, nxt.port)
        if not verdict.allowed:
            log.info("refused", tool="web_fetch", reason=verdict.reason)
            raise errors.egress_denied()
        same_host = (nxt.host, nxt.port) == (current.host, current.port)
        if not same_host and not f.follow_cross_host_redirects:
            raise errors.redirected(nxt.url)
        if hop >= f.max_redirects:
            log.info("refused", tool="web_fetch", reason="too_many_redirects")
            raise errors.network_unavailable()
        return nxt

    async def _robots_check(self, target: FetchTarget, deadline: float) -> None:
        if not self.config.fetch.robots_txt:
            return
        origin = f"{target.scheme}://{target.host}:{target.port}"
        rules = await self.store.robots_get(origin)
        if rules is None:
            rules = await self._read_robots(target, deadline)
            await self.store.robots_put(origin, rules)
        if not rules.allows(target.target):
            log.info("refused", tool="web_fetch", reason="robots_txt", host=target.host)
            raise errors.robots_denied()

    async def _read_robots(self, target: FetchTarget, deadline: float) -> RobotsRules:
        """The origin's rules (RFC 9309): 4xx allows all, 5xx or unreachable disallows all,
        up to five redirects of robots.txt itself, then "unavailable" (allow all)."""
        current = parse_fetch_url(
            f"{target.scheme}://{_authority(target)}/robots.txt",
            allow_http=True,
            secret_mode=_OWN_URL,
        )
        for _ in range(ROBOTS_REDIRECTS + 1):
            # A site that cannot be reached fails here: the page could not be read either,
            # and the caller hears it as such (network, deadline, or the https retry). A
            # file above LIM-F13 is read up to the bound and no further (RFC 9309 2.5).
            response = await self._get(
                current,
                deadline,
                accept="text/plain",
                max_bytes=limits.default("LIM-F13"),
                upgraded=target.upgraded,
                allow_http=target.scheme == "http",
                cut=True,
            )
            if response.status in (301, 302, 303, 307, 308):
                try:
                    nxt = parse_fetch_url(
                        _join(current.url, response.header("location") or ""),
                        allow_http=True,
                        secret_mode=_OWN_URL,
                    )
                except ToolError:
                    return ALLOW_ALL
                if not self.policy.judge_host(nxt.host, nxt.port).allowed:
                    return ALLOW_ALL
                current = nxt
                continue
            by_status = rules_for_status(response.status)
            return by_status if by_status is not None else parse_robots_prefix(response.body)
        return ALLOW_ALL

    async def _get(
        self,
        target: FetchTarget,
        deadline: float,
        *,
        accept: str,
        max_bytes: int,
        upgraded: bool,
        allow_http: bool | None = None,
        cut: bool = False,
    ) -> Response:
        f = self.config.fetch
        left = deadline - anyio.current_time()
        if left <= 0:
            raise errors.fetch_deadline()
        record = _Judged()
        try:
            return await self.client.get(
                target.url,
                headers=(("Accept", accept),),
                max_bytes=max_bytes,
                connect_timeout_s=min(f.connect_timeout_ms / 1000, left),
                total_timeout_s=left,
                allow_http=self.config.egress.allow_http if allow_http is None else allow_http,
                judge=self._judge(target, record),
                cut=cut,
            )
        except ClientError as error:
            if record.reason is not None:
                log.info("refused", tool="web_fetch", reason=record.reason)
            if error.kind == "too_large":
                raise errors.too_large(max_bytes) from None
            if error.kind == "timeout" and anyio.current_time() >= deadline - 0.01:
                raise errors.fetch_deadline() from None
            if upgraded:
                raise errors.https_retry_failed() from None
            raise errors.network_unavailable() from None

    # -- content ---------------------------------------------------------------------------

    async def _read(
        self,
        held: list[bytes],
        declared: str | None,
        kind: str,
        url: str,
        status: int,
        deadline: float,
    ) -> tuple[_Read, bool]:
        """Decode, parse, extract and clean in a worker thread, under a parsing permit that
        the thread keeps until it has ended, so only parsing_in_flight pages exist as text at
        once, even after cancellations (LIM-C5, REQ-PAGE-008, REQ-SEC-012). ``held`` holds
        the body; the worker takes it out, and lets go of it once the page is parsed. The
        content's hash, whether it is a page that is not content (2 to 3 ms on its first
        8,000 characters) and whether it is blank are found there too, for the same reason:
        each would hold up the event loop. Returns the page read and whether it is blank."""

        def work(cancel: threading.Event) -> tuple[_Read, bool]:
            page = extract(cancel)
            return self._as_read(url, page, status), page.content.blank()

        def extract(cancel: threading.Event) -> _Page:
            _load()
            body = held.pop()
            if kind == "pdf":
                return self._read_pdf(body, url, cancel, seconds=reader_s)
            if kind == "text":
                text = charset.decode(body, declared)
                del body
                extracted = extract_text(text)
                del text
            else:
                # A UTF-8 page is decoded as the parser reads it: the page never exists
                # as one string beside its tree, and the body goes with the reader.
                source = charset.open_text(body, declared)
                del body
                doc = parse_html(
                    source,
                    cancel=cancel,
                    xhtml=kind == "xhtml",
                    keep_attributes=READ_ATTRIBUTES,
                )
                del source
                try:
                    parts = extract_blocks(doc, url)
                finally:
                    release(doc.root)
                del doc  # the tree and the analysis are gone before the blocks are joined
                title, blocks, partial = parts.title, parts.blocks, parts.partial
                page_kind, confidence = parts.kind, round(parts.confidence, 2)
                shell, page_data = parts.shell, parts.page_data
                del parts
                content, removed = _clean(blocks)
                return _Page(
                    title, content, removed, partial, page_kind, confidence, shell, page_data
                )
            cleaned, removed = boundary.clean_content(extracted.markdown)
            return _Page(extracted.title, PageText([cleaned]), removed, extracted.partial)

        margin = limits.default("LIM-F5") / 1000
        # The PDF reader's process ends a little before the call's own bound, so that
        # its answer is still cleaned and given within it.
        reader_s = deadline + margin / 2 - anyio.current_time()
        try:
            with anyio.fail_after(margin + self.config.fetch.deadline_ms / 1000):
                # run_under_permit sets the cancel flag once this call stops waiting.
                return await run_under_permit(self.parsing, work)
        except TimeoutError:
            raise errors.fetch_deadline() from None
        except ToolError:
            raise
        except Exception as exc:  # a defect in parsing ends this call only (REQ-SEC-014)
            log.error("extraction_error", error_type=type(exc).__name__)
            raise errors.extraction_failed() from None

    # -- a shell's separate data (a Gatsby page) -------------------------------------------

    async def _page_data(
        self, page: FetchTarget, read: _Read, status: int, deadline: float
    ) -> _Read | None:
        """A shell read from its data file (a Gatsby page's page-data.json): one GET to the
        page's own origin, under robots.txt, the egress policy, the host's turn and the
        call's deadline, never redirected, at most min(max_bytes, LIM-F24) bytes. None
        when it gives no prose, for whatever reason: the caller answers needs_scripts as
        before, never another error. No log line names the path."""
        path = read.page.page_data
        if path is None:
            return None
        target = self._data_target(page, path)
        if target is None:
            log.info("gatsby_data", outcome="refused")
            return None
        if deadline - anyio.current_time() < _DATA_MIN_S:
            log.info("gatsby_data", outcome="deadline")
            return None
        max_bytes = min(self.config.fetch.max_bytes, limits.default("LIM-F24"))
        try:
            async with self._slot(target.host, deadline):
                await self._robots_check(target, deadline)
                response = await self._get(
                    target,
                    deadline,
                    accept=ACCEPT_DATA,
                    max_bytes=max_bytes,
                    upgraded=page.upgraded,
                    cut=True,
                )
        except ToolError as error:
            log.info("gatsby_data", outcome="unread", kind=error.kind)
            return None
        media = mediatype.essence(response.header("content-type"))
        if not 200 <= response.status < 300 or media not in _DATA_MEDIA:
            log.info("gatsby_data", outcome="not_data", status=response.status)
            return None
        held = [response.body]
        # The client keeps the first max_bytes of a longer file: its text may be cut.
        cut = len(response.body) >= max_bytes
        del response
        found = await self._read_data(held, read, status, cut, deadline)
        log.info("gatsby_data", outcome="read" if found is not None else "no_prose", cut=cut)
        return found

    def _data_target(self, page: FetchTarget, path: str) -> FetchTarget | None:
        """The data file's URL, parsed as any URL web_fetch asks for; None unless it is on
        the page's origin (scheme, host, port) and under /page-data/ once its dot segments
        are resolved (``%2e%2e`` too), or the egress policy refuses its host."""
        try:
            target = parse_fetch_url(
                f"{page.scheme}://{_authority(page)}{path}",
                allow_http=self.config.egress.allow_http,
                secret_mode=self.config.privacy.secret_detection,
            )
        except ToolError:
            return None
        same_origin = (target.scheme, target.host, target.port) == (
            page.scheme,
            page.host,
            page.port,
        )
        inside = (
            target.target.startswith("/page-data/")
            and target.target.endswith("/page-data.json")
            and "?" not in target.target
        )
        if not (same_origin and inside):
            return None
        if not self.policy.judge_host(target.host, target.port).allowed:
            return None
        return target

    async def _read_data(
        self, held: list[bytes], read: _Read, status: int, cut: bool, deadline: float
    ) -> _Read | None:
        """The data file's prose as the shell's content, found as a page's own data is
        (embedded.data_blocks) and cleaned as a page's blocks are (_clean), in a worker
        thread under a parsing permit, as _read does. The shell's title, kind and flags
        stay; the confidence is that of any text read from data. Ends before the call's
        own bound (LIM-F5), so the needs_scripts answer still comes within it."""

        def work(cancel: threading.Event) -> _Read | None:
            _load()
            body = held.pop()
            text = body.decode("utf-8", "replace").removeprefix("\ufeff")  # JSON is UTF-8
            del body
            blocks = data_blocks(text, read.url, truncated=cut)
            del text
            if cancel.is_set():
                return None
            content, removed = _clean(blocks)
            if content.blank():
                return None
            shell = read.page
            page = replace(
                shell,
                content=content,
                removed=removed,
                partial=shell.partial or cut,
                confidence=DATA_CONFIDENCE,
                page_data=None,
            )
            found = self._as_read(read.url, page, status)
            if found.not_content == "challenge":
                return None  # never a challenge from a file of data: no other error
            return found

        ends = deadline + limits.default("LIM-F5") / 1000 / 2
        try:
            with anyio.fail_after(max(0.0, ends - anyio.current_time())):
                return await run_under_permit(self.parsing, work)
        except TimeoutError:
            return None
        except Exception as exc:  # a defect in reading ends this attempt only (REQ-SEC-014)
            log.error("extraction_error", error_type=type(exc).__name__)
            return None

    def _read_pdf(self, body: bytes, url: str, cancel: threading.Event, seconds: float) -> _Page:
        """A PDF read in the reader's process (fetch/pdf/reader.py), then cleaned as a
        page's Markdown is. Runs in the parse's worker thread."""
        f = self.config.fetch
        bounds = pdf_reader.Bounds(f.pdf_max_pages, f.pdf_max_chars, f.pdf_memory_mib)
        started = time.monotonic()
        try:
            text = pdf_reader.read_pdf(body, bounds, seconds=seconds, cancel=cancel)
        except pdf_reader.PdfRefused as refused:
            level = log.warn if refused.kind in ("memory", "crashed") else log.info
            level("pdf_unread", kind=refused.kind, bytes=len(body))
            raise _pdf_error(refused.kind) from None
        finally:
            del body
        log.info(
            "pdf_read",
            pages=text.pages,
            read=text.read,
            ms=int((time.monotonic() - started) * 1000),
            partial=text.partial,
        )
        title = pdf_title.choose(text.title, text.heading, url)
        blocks, partial, removed = text.blocks, text.partial, text.removed
        del text
        content, cleaned = _clean(blocks)
        return _Page(title, content, cleaned + removed, partial)

    def _respond(
        self,
        request: FetchRequest,
        url: str,
        extracted: _Page,
        *,
        sha256: str,
        changed: bool,
        not_content: NonContent | None = None,
        outline: Outline = NO_OUTLINE,
    ) -> FetchResponse:
        s = self.config.search
        notices: list[Notice] = []
        content, removed = extracted.content, extracted.removed
        if not_content is not None:
            notices.append(Notice("not_content", reason=not_content))
        if changed:
            notices.append(Notice("content_changed"))
        title_field = boundary.clean_field(
            extracted.title or "", markup=False, limit=s.title_max_chars
        )
        removed += title_field.removed
        if extracted.partial:
            notices.append(Notice("extraction_partial"))
        if title_field.truncated:
            notices.append(Notice("title_truncated", count=1))
        if removed:
            notices.append(Notice("characters_removed", count=removed))
        if request.start_char and request.start_char >= len(content):
            raise start_beyond_content(len(content))
        # A part ends at a block's edge where one is near its end (outline.part_end).
        end = part_end(content, request.start_char, request.max_chars, outline.fences)
        piece = content.window(request.start_char, end)
        flagged = boundary.count_instruction_like(piece) + title_field.instruction_like
        truncated = end < len(content)
        # An answer that holds part of the document lists the whole document's headings.
        whole = not truncated and not request.start_char
        headings = None if whole else outline.headings
        if headings:
            flagged += outline.instruction_like
            cut = outline.left_out + outline.shortened
            if cut:
                notices.append(Notice("outline_truncated", count=cut))
        if flagged:
            notices.append(Notice("instruction_like_content", count=flagged))
        return FetchResponse(
            url=url,
            title=title_field.text,
            content=piece,
            truncated=truncated,
            next_start_char=end if truncated else None,
            notices=tuple(notices),
            content_sha256=sha256,
            page_kind=extracted.kind,
            confidence=extracted.confidence,
            outline=headings or None,
        )


# Characters of Markdown cleaned at a time (at a block's end past this many): a piece
# stays under glibc's first mmap threshold (128 KiB) even at 4 bytes a character.
CLEAN_PIECE = 1 << 14  # 16 Ki
_SENTINEL = "x"  # a line the cleaning keeps as it is


def _clean(blocks: list[str]) -> tuple[PageText, int]:
    """boundary.clean_content of the Markdown the blocks make (joined with a blank
    line), made a few blocks at a time, each block let go of once cleaned: the page's
    text exists twice at most here (what is left of the blocks and the cleaned
    pieces), and never beside its tree, and is never one string (content.py). The
    cleaning is line by line, so the cleaned pieces one after another are its
    answer; a sentinel line at each end of a piece keeps the piece's own empty end
    lines, which only the ends of the whole Markdown lose."""
    if sum(map(len, blocks)) <= CLEAN_PIECE:
        cleaned, removed = boundary.clean_content("\n\n".join(blocks))
        return PageText([cleaned]), removed
    pieces: list[str] = []
    removed = 0
    start, size = 0, 0
    for i, block in enumerate(blocks):
        size += len(block)
        if size >= CLEAN_PIECE or i == len(blocks) - 1:
            group = "\n\n".join(blocks[start : i + 1])
            blocks[start : i + 1] = [""] * (i + 1 - start)
            cleaned, count = boundary.clean_content(f"{_SENTINEL}\n{group}\n{_SENTINEL}")
            del group
            pieces.append(cleaned[len(_SENTINEL) + 1 : -len(_SENTINEL) - 1])
            removed += count
            start, size = i + 1, 0
    blocks.clear()
    return PageText.joined(pieces, "\n\n", "\n"), removed


def _pdf_error(kind: str) -> ToolError:
    if kind == "encrypted":
        return errors.pdf_encrypted()
    if kind == "no_text":
        return errors.pdf_no_text()
    if kind in ("deadline", "cancelled"):
        return errors.fetch_deadline()
    return errors.extraction_failed()  # damaged, memory, crashed


def _join(base: str, location: str) -> str:
    """The absolute target of a Location; one that is not a URL fails like a bad URL."""
    try:
        return urljoin(base, location.strip())
    except ValueError:
        raise errors.network_unavailable() from None


def _authority(target: FetchTarget) -> str:
    host = f"[{target.host}]" if ":" in target.host else target.host
    return f"{host}:{target.port}"


def _media_kind(response: Response, *, pdf: bool) -> str:
    """html, xhtml, text or pdf; anything else ends the call. Sniffing tells HTML from
    text, and finds a PDF by its signature where the type is missing, says only
    "bytes", or says text that the body's first bytes contradict (fetch/pdf/sniff.py).

    A control character such as BEL is text (the boundary removes and counts it); only
    bytes no text has in the page's encoding make it binary (charset.binary)."""
    _load()
    media = mediatype.essence(response.header("content-type"))
    if pdf and sniff.is_pdf(media, response.body):
        return "pdf"
    if media is not None and media not in READABLE:
        raise errors.unsupported_media(media)
    if charset.binary(response.body, mediatype.charset(response.header("content-type"))):
        raise errors.unsupported_media("application/octet-stream")
    if media is None:
        head = response.body[:1024].lstrip().lower()
        return "html" if head.startswith((b"<!doctype html", b"<html")) else "text"
    return READABLE[media]
