"""Our outbound HTTP/1.1 client: one request per connection, h11 over anyio sockets.

Why our own (DESIGN.md, decision 1): the socket must connect to the very
address that was resolved and judged (REQ-SEC-007), the byte bound must count
decompressed bytes as they are produced (REQ-SEC-010, REQ-SEC-013), one
deadline must cover the whole call (REQ-SEC-011), and nothing may read the
environment's proxy variables (REQ-SEC-017, REQ-RES-008). Nothing here uses
urllib.request, http.client or httpx.

A call goes: parse the URL and the caller's headers (no I/O), resolve the host
off the event loop (or with an injected resolver), judge every address, connect
to the addresses in order, tunnel through the configured proxy if any, TLS with
verification, send one request, read the response through h11, close.

Every failure is a ClientError whose message is our own short words: no host,
no address, no text from the provider. Causes are not chained for that reason.

Why one file of some 640 lines: it is the one place that opens connections (the layering
test checks that no other module does), and its parts (URL and header checks, the body
sink, the reader, the client) share the ClientError discipline above; split, each part
would be imported only by the others.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
import zlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Final, Literal, NoReturn
from urllib.parse import urlsplit

import anyio
import h11
from anyio.abc import ByteStream
from anyio.streams.tls import TLSStream

from rypsok import PROJECT_URL, __version__
from rypsok.core.limits import get as _limit
from rypsok.core.net import authority
from rypsok.core.net.egress import EngineProfile
from rypsok.core.net.failure import FailureKind
from rypsok.core.net.hostname import literal_address
from rypsok.core.net.proxy import Proxy

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Awaitable[list[IPAddress]]]
Judge = Callable[[IPAddress], bool]
ErrorKind = Literal["timeout", "connect", "tls", "too_large", "protocol", "resolve", "egress"]

# The response head (status line and headers) may not exceed this (LIM-H7's
# figure, the same bound our listener applies to requests).
HEAD_MAX_BYTES: Final = _limit("LIM-H7").default
_READ_CHUNK: Final = 64 * 1024
_GZIP_WBITS: Final = 16 + zlib.MAX_WBITS  # gzip wrapper only, not raw zlib
_DEFAULT_PORTS: Final = {"https": 443, "http": 80}
# Headers we set ourselves, and headers that would change the framing of a GET
# (a caller may not send them: they could smuggle a second request or a body).
_OWN_HEADERS: Final = frozenset({"host", "user-agent", "accept-encoding", "connection"})
_FRAMING_HEADERS: Final = frozenset(
    {
        "content-length",
        "transfer-encoding",
        "te",
        "trailer",
        "upgrade",
        "keep-alive",
        "expect",
        "proxy-connection",
    }
)
_TOKEN_CHARS: Final = frozenset(
    "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
)


# The operator's finer word for each kind, where the failing step does not say more.
_CAUSE: Final[dict[ErrorKind, FailureKind]] = {
    "timeout": "timeout",
    "connect": "connect",
    "tls": "tls",
    "too_large": "bound",
    "protocol": "protocol",
    "resolve": "dns",
    "egress": "egress",
}


class ClientError(Exception):
    """A request that did not produce a response; `kind` says why, the text is ours.

    `kind` is what the pipelines classify by; `cause` is the finer failure kind of
    `net.failure` for the operator (a refused address and a name that does not resolve
    share the kind `resolve` for a fetch, never the cause)."""

    def __init__(self, kind: ErrorKind, message: str, cause: FailureKind | None = None) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.cause: FailureKind = cause or _CAUSE[kind]


@dataclass(frozen=True, slots=True)
class Response:
    status: int
    headers: tuple[tuple[str, str], ...]  # names lower-cased, values decoded latin-1
    body: bytes  # decompressed, at most max_bytes

    def header(self, name: str) -> str | None:
        """The first value of a header, or None; the name is matched case-insensitively."""
        wanted = name.lower()
        for key, value in self.headers:
            if key == wanted:
                return value
        return None


def user_agent(contact: str) -> str:
    """The one User-Agent of REQ-CMP-004 (an empty contact drops the "; contact" part).

    The contact was validated with the configuration; this check only keeps a
    header line from ever being broken by it.
    """
    if not all(0x20 <= ord(ch) <= 0x7E for ch in contact):
        raise ValueError("the contact must be printable ASCII")
    if not contact:
        return f"rypsok/{__version__} (+{PROJECT_URL})"
    return f"rypsok/{__version__} (+{PROJECT_URL}; {contact})"


# --------------------------------------------------------------------------- request


@dataclass(frozen=True, slots=True)
class _Target:
    """What a URL says, checked before any I/O."""

    scheme: str
    host: str  # ASCII form for a name; the address text (no brackets) for a literal
    literal: IPAddress | None
    port: int
    path: str  # origin-form: path and query

    @property
    def authority(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    @property
    def host_header(self) -> str:
        if self.port == _DEFAULT_PORTS[self.scheme]:
            return f"[{self.host}]" if ":" in self.host else self.host
        return self.authority


def _fail(kind: ErrorKind, message: str, cause: FailureKind | None = None) -> NoReturn:
    error = ClientError(kind, message, cause)
    # Raised mostly inside an `except`: hide the low-level exception (which may
    # name an address or carry a peer's text) from tracebacks and logs.
    error.__suppress_context__ = True
    raise error


def _printable_ascii(text: str) -> bool:
    return all(0x21 <= ord(ch) <= 0x7E for ch in text)


def _parse_url(url: str, allow_http: bool) -> _Target:
    # urlsplit silently drops tabs and line breaks; refuse them instead so that
    # what we send is what the caller wrote.
    if any(ord(ch) <= 0x20 or ord(ch) == 0x7F for ch in url):
        _fail("protocol", "the URL contains spaces or control characters")
    try:
        parts = urlsplit(url)
    except ValueError:
        _fail("protocol", "the URL is malformed")
    scheme = parts.scheme.lower()
    if scheme != "https" and not (scheme == "http" and allow_http):
        _fail("protocol", "only https URLs are requested")
    split = authority.split(parts.netloc)
    if split is None:
        _fail("protocol", "the URL is malformed")
    if split.userinfo is not None:
        _fail("protocol", "the URL must not carry credentials")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    if not _printable_ascii(path) or not path.startswith("/"):
        _fail("protocol", "the URL path must be ASCII with no spaces")
    if split.host.startswith("[") and "%" in split.host:
        _fail("protocol", "the URL has a scoped address")
    host = authority.strict_host(split.host)
    if host is None:
        _fail("protocol", "the URL has no valid host")
    host = host.strip("[]")
    port = authority.port_number(split.port, lenient=True) if split.port else None
    if port == 0 or (split.port and port is None):
        _fail("protocol", "the URL has an invalid port")
    return _Target(scheme, host, literal_address(host), port or _DEFAULT_PORTS[scheme], path)


def _check_headers(headers: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    checked: list[tuple[str, str]] = []
    for name, value in headers:
        if not name or not set(name) <= _TOKEN_CHARS:
            _fail("protocol", "a request header has an invalid name")
        lowered = name.lower()
        if lowered in _OWN_HEADERS or lowered in _FRAMING_HEADERS:
            _fail("protocol", "a request header may not be set by the caller")
        # Line breaks would start a new header or a new request; other controls
        # (except tab) are refused by RFC 9110. Non-ASCII is refused too: h11
        # encodes header text as ASCII, and an engine's header never needs more.
        if any(not (0x20 <= ord(ch) <= 0x7E or ch == "\t") for ch in value):
            _fail("protocol", "a request header value must be printable ASCII")
        checked.append((name, value))
    return checked


# ------------------------------------------------------------------------- body sink


class _BodySink:
    """Collects a body, decompressing gzip, and refuses it past max_bytes (or, with
    ``cut``, keeps its first max_bytes and is ``full``).

    The bound is counted on the bytes produced, as they are produced: inflate is
    asked for at most one byte more than the room left, so a gzip bomb never
    allocates beyond the bound (REQ-SEC-013).
    """

    def __init__(self, max_bytes: int, gzip: bool, cut: bool = False) -> None:
        self._max = max_bytes
        self._parts: list[bytes] = []
        self._size = 0
        self._inflater = zlib.decompressobj(_GZIP_WBITS) if gzip else None
        self._seen_input = False
        self._cut = cut
        self.full = False

    def _add(self, data: bytes) -> None:
        if self._cut and self._size + len(data) > self._max:
            data = data[: self._max - self._size]
            self.full = True
        self._size += len(data)
        if self._size > self._max:
            _fail("too_large", "the response body is larger than allowed")
        if data:
            self._parts.append(data)

    def feed(self, data: bytes) -> None:
        if not data:
            return
        self._seen_input = True
        if self._inflater is None:
            self._add(data)
            return
        try:
            self._inflate(data)
        except zlib.error:
            _fail("protocol", "the compressed response body is malformed")

    def _inflate(self, data: bytes) -> None:
        assert self._inflater is not None
        while data and not self.full:
            if self._inflater.eof:  # a further gzip member (RFC 1952 allows several)
                self._inflater = zlib.decompressobj(_GZIP_WBITS)
            room = self._max - self._size
            self._add(self._inflater.decompress(data, room + 1))
            # Output stopped short of room + 1, so inflate consumed what it could;
            # what it left is either the next member or input held back for space.
            inflater = self._inflater
            data = inflater.unused_data if inflater.eof else inflater.unconsumed_tail

    def finish(self) -> bytes:
        if (
            self._inflater is not None
            and self._seen_input
            and not self._inflater.eof
            and not self.full
        ):
            _fail("protocol", "the compressed response body was cut short")
        return b"".join(self._parts)


def _content_coding(headers: Sequence[tuple[str, str]]) -> bool:
    """True for gzip, False for identity; anything else was never negotiated."""
    codings = [
        token.strip().lower()
        for name, value in headers
        if name == "content-encoding"
        for token in value.split(",")
        if token.strip()
    ]
    codings = [c for c in codings if c != "identity"]
    if not codings:
        return False
    if codings in (["gzip"], ["x-gzip"]):
        return True
    _fail("protocol", "the response uses a content encoding that was not offered")


def _declared_length(headers: Sequence[tuple[str, str]]) -> int | None:
    for name, value in headers:
        if name == "content-length" and value.strip().isdigit():
            return int(value.strip())
    return None


# --------------------------------------------------------------------------- network


async def system_resolver(host: str, port: int) -> list[IPAddress]:
    """getaddrinfo in a worker thread (anyio's), addresses in the system's order."""
    try:
        found = await anyio.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
        )
    except (OSError, UnicodeError):
        _fail("resolve", "the host name could not be resolved")
    addresses: list[IPAddress] = []
    for family, _type, _proto, _name, sockaddr in found:
        if family not in (socket.AF_INET, socket.AF_INET6):
            continue
        try:
            address = ipaddress.ip_address(sockaddr[0])
        except ValueError:
            continue
        if address not in addresses:
            addresses.append(address)
    return addresses


async def _receive(stream: ByteStream, size: int) -> bytes:
    """One read; b"" at the end of the stream (what h11 wants to hear)."""
    try:
        return await stream.receive(size)
    except anyio.EndOfStream:
        return b""
    except ssl.SSLError:
        _fail("tls", "the TLS connection failed")
    except (anyio.BrokenResourceError, OSError):
        _fail("connect", "the connection was lost", "reset")


async def _send(stream: ByteStream, data: bytes) -> None:
    try:
        await stream.send(data)
    except ssl.SSLError:
        _fail("tls", "the TLS connection failed")
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        _fail("connect", "the connection was lost", "reset")


class _Reader:
    """h11 events from a stream, with the response head bounded to HEAD_MAX_BYTES.

    h11's max_incomplete_event_size only catches a head that is still
    incomplete; one read could bring a complete 60 KiB head at once. So until
    the head is parsed, no more than the head budget is ever read: a head that
    does not fit is refused. The budget is shared by any 1xx heads before it.
    """

    def __init__(self, conn: h11.Connection, stream: ByteStream) -> None:
        self._conn = conn
        self._stream = stream
        self._head_left: int | None = HEAD_MAX_BYTES  # None once the head is parsed
        self._ended = False  # the peer closed its side

    async def next_event(self) -> h11.Event | type[h11.PAUSED]:
        while True:
            try:
                event = self._conn.next_event()
            except h11.RemoteProtocolError:
                # Cut short by the peer's close (a reset, for the operator) or malformed.
                cause: FailureKind = "reset" if self._ended else "protocol"
                _fail("protocol", "the response is not valid HTTP/1.1", cause)
            if event is h11.PAUSED:
                return h11.PAUSED
            if isinstance(event, h11.ConnectionClosed):
                _fail("protocol", "the server closed the connection before answering", "reset")
            if isinstance(event, h11.Event):
                return event
            self._conn.receive_data(await self._read())  # NEED_DATA

    async def _read(self) -> bytes:
        if self._head_left is None:
            data = await _receive(self._stream, _READ_CHUNK)
        else:
            if self._head_left <= 0:
                _fail("protocol", "the response head is larger than allowed", "bound")
            data = await _receive(self._stream, min(_READ_CHUNK, self._head_left))
            self._head_left -= len(data)
        self._ended = not data
        return data

    async def head(self) -> h11.Response:
        while True:
            event = await self.next_event()
            if isinstance(event, h11.Response):
                self._head_left = None
                return event
            if not isinstance(event, h11.InformationalResponse):  # 1xx: wait for the rest
                _fail("protocol", "the response is not valid HTTP/1.1")


async def _connect_in_order(
    addresses: Sequence[IPAddress], port: int, deadline: float
) -> ByteStream:
    """A TCP stream to the first address that answers, its peer exactly that address.

    Each attempt gets an even share of the connect time still left, so that a
    silent first address does not use up the time of the others.
    """
    timed_out = False
    for index, address in enumerate(addresses):
        left = deadline - anyio.current_time()
        if left <= 0:
            timed_out = True
            break
        with anyio.move_on_after(left / (len(addresses) - index)) as attempt:
            try:
                # An address object, never a name: anyio then skips getaddrinfo.
                return await anyio.connect_tcp(address, port)
            except OSError:
                continue
        timed_out = timed_out or attempt.cancelled_caught
    if timed_out:
        _fail("timeout", "the connection was not established in time")
    _fail("connect", "the connection was refused or failed")


async def _open_tunnel(stream: ByteStream, target: _Target, agent: str) -> None:
    """HTTP CONNECT to target through a proxy; on return the stream is the tunnel."""
    conn = h11.Connection(h11.CLIENT, max_incomplete_event_size=HEAD_MAX_BYTES)
    request = h11.Request(
        method="CONNECT",
        target=target.authority,
        headers=[("Host", target.authority), ("User-Agent", agent)],
    )
    await _send(stream, conn.send(request) + (conn.send(h11.EndOfMessage()) or b""))
    reader = _Reader(conn, stream)
    head = await reader.head()
    if not 200 <= head.status_code < 300:
        _fail("connect", "the proxy refused the tunnel", "proxy")
    # Nothing may arrive before our TLS ClientHello (or our request).
    event = await reader.next_event()
    leftover, _closed = conn.trailing_data
    if event is not h11.PAUSED or leftover:
        _fail("protocol", "the proxy answered the tunnel request unexpectedly", "proxy")


async def _start_tls(stream: ByteStream, target: _Target, context: ssl.SSLContext) -> ByteStream:
    # For an address literal CPython sends no SNI and checks the certificate's
    # IP SAN against it; for a name, SNI and the name check use the URL's host.
    try:
        return await TLSStream.wrap(
            stream, hostname=target.host, ssl_context=context, standard_compatible=False
        )
    except ssl.SSLError:
        _fail("tls", "the TLS handshake failed")
    except (anyio.BrokenResourceError, anyio.EndOfStream, OSError):
        _fail("tls", "the connection closed during the TLS handshake")


def _engine_judge(engine: EngineProfile, host: str, also: Judge | None) -> Judge:
    """The engine profile's verdict on each address of *host* (and *also*'s, when given)."""

    def judge(address: IPAddress) -> bool:
        return engine.address(host, address).allowed and (also is None or also(address))

    return judge


# ---------------------------------------------------------------------------- client


class OutboundClient:
    """Outbound GETs for one profile: one trust store, one User-Agent, one proxy (or none).

    Both profiles use it: the engines' requests (with an engine profile, through the proxy)
    and the agent-directed fetches and robots.txt reads (their own instance, no proxy).

    Environment proxy variables are never read: the proxy is what the
    configuration gave, or nothing (REQ-RES-008).
    """

    def __init__(
        self,
        *,
        tls: ssl.SSLContext,
        user_agent: str,
        proxy: Proxy | None = None,
        resolver: Resolver | None = None,
    ) -> None:
        if not tls.check_hostname or tls.verify_mode != ssl.CERT_REQUIRED:
            raise ValueError("the TLS context must verify certificates and host names")
        if not user_agent or not all(0x20 <= ord(ch) <= 0x7E for ch in user_agent):
            raise ValueError("the User-Agent must be printable ASCII")
        self._tls = tls
        self._agent = user_agent
        self._proxy = proxy
        self._resolve: Resolver = resolver or system_resolver

    async def get(
        self,
        url: str,
        *,
        headers: Sequence[tuple[str, str]] = (),
        max_bytes: int,
        connect_timeout_s: float,
        total_timeout_s: float,
        allow_http: bool = False,
        judge: Judge | None = None,
        engine: EngineProfile | None = None,
        cut: bool = False,
    ) -> Response:
        """One GET. A 3xx is returned as it is: the caller decides about redirects.

        With `cut`, a body longer than max_bytes is not refused: its first max_bytes
        are returned and the rest is never read (the connection is dropped).

        `judge` sees every address before the socket connects to it (with a proxy:
        the proxy's addresses); an address it refuses is never connected to, and
        when it refuses them all the call fails with kind "resolve".

        `engine`, the engine profile of the engine asking (REQ-SEC-005, REQ-SEC-017),
        judges the URL's host and port before any I/O (through a proxy too: they are what
        the tunnel is asked for) and, without a proxy, every address of the host before the
        socket connects to it. A refusal fails the call with kind "egress"; nothing was
        sent, so no header (an engine's credential) left for another destination. The
        configured proxy's own addresses are the operator's setting and not judged.
        """
        if max_bytes < 0:
            raise ValueError("max_bytes must not be negative")
        if not (connect_timeout_s > 0 and total_timeout_s > 0):
            raise ValueError("timeouts must be positive")
        target = _parse_url(url, allow_http)
        if engine is not None and not engine.target(target.host, target.port).allowed:
            _fail("egress", "the request is not for the engine's configured endpoint")
        request = self._request(target, _check_headers(headers))
        if engine is not None and self._proxy is None:
            judge = _engine_judge(engine, target.host, judge)
            refusal: ErrorKind = "egress"
        else:
            refusal = "resolve"
        try:
            with anyio.fail_after(total_timeout_s):
                return await self._get(
                    target, request, max_bytes, connect_timeout_s, judge, refusal, cut
                )
        except TimeoutError:
            raise ClientError("timeout", "the request did not complete in time") from None

    async def post(
        self,
        url: str,
        body: bytes,
        *,
        content_type: str,
        headers: Sequence[tuple[str, str]] = (),
        max_bytes: int,
        connect_timeout_s: float,
        total_timeout_s: float,
        allow_http: bool = False,
    ) -> Response:
        """One POST of a small body to an operator's endpoint (token introspection).

        No egress profile: the endpoint is the operator's own setting, like the store's.
        The bounds are the GET's: one deadline, the body counted while it streams.
        """
        if max_bytes < 0:
            raise ValueError("max_bytes must not be negative")
        if not (connect_timeout_s > 0 and total_timeout_s > 0):
            raise ValueError("timeouts must be positive")
        target = _parse_url(url, allow_http)
        extra = [*_check_headers([*headers, ("Content-Type", content_type)])]
        extra.append(("Content-Length", str(len(body))))
        request = self._request(target, extra, method="POST")
        try:
            with anyio.fail_after(total_timeout_s):
                return await self._get(
                    target, request, max_bytes, connect_timeout_s, None, "resolve", body=body
                )
        except TimeoutError:
            raise ClientError("timeout", "the request did not complete in time") from None

    def _request(
        self, target: _Target, extra: list[tuple[str, str]], method: str = "GET"
    ) -> h11.Request:
        """The request, built (and so checked by h11) before any I/O."""
        try:
            return h11.Request(
                method=method,
                target=target.path,
                headers=[
                    ("Host", target.host_header),
                    ("User-Agent", self._agent),
                    ("Accept-Encoding", "gzip"),  # the only coding we decode (REQ-SEC-013)
                    ("Connection", "close"),  # one request per connection, for now
                    *extra,
                ],
            )
        except h11.LocalProtocolError:
            _fail("protocol", "the request could not be formed")

    async def _get(
        self,
        target: _Target,
        request: h11.Request,
        max_bytes: int,
        connect_timeout_s: float,
        judge: Judge | None,
        refusal: ErrorKind,
        cut: bool = False,
        body: bytes = b"",
    ) -> Response:
        stream = await self._open(target, connect_timeout_s, judge, refusal)
        try:
            return await self._exchange(stream, request, max_bytes, cut, body)
        finally:
            # Forceful: no TLS close_notify round trip, so a cancelled call
            # drops the socket at once (REQ-MCP-007).
            await anyio.aclose_forcefully(stream)

    # A later keep-alive pool would keep what _open returns and call _exchange again.
    async def _open(
        self, target: _Target, connect_timeout_s: float, judge: Judge | None, refusal: ErrorKind
    ) -> ByteStream:
        hop_host, hop_literal, hop_port = (
            (target.host, target.literal, target.port)
            if self._proxy is None
            else (self._proxy.host, literal_address(self._proxy.host), self._proxy.port)
        )
        try:
            addresses = await self._addresses(hop_host, hop_literal, hop_port, judge, refusal)
        except ClientError as error:
            raise self._at_hop(error) from None
        with anyio.move_on_after(connect_timeout_s) as connecting:
            try:
                stream = await _connect_in_order(addresses, hop_port, connecting.deadline)
            except ClientError as error:
                raise self._at_hop(error) from None
            try:
                if self._proxy is not None:
                    await _open_tunnel(stream, target, self._agent)
                if target.scheme == "https":
                    stream = await _start_tls(stream, target, self._tls)
            except BaseException:
                await anyio.aclose_forcefully(stream)
                raise
            return stream
        _fail("timeout", "the connection was not established in time")

    def _at_hop(self, error: ClientError) -> ClientError:
        """Through a proxy, a name that does not resolve or a refused connection is the
        proxy's: the target was never reached (the operator looks at [egress] proxy)."""
        if self._proxy is not None and error.cause in ("dns", "connect"):
            error.cause = "proxy"
        return error

    async def _addresses(
        self,
        host: str,
        literal: IPAddress | None,
        port: int,
        judge: Judge | None,
        refusal: ErrorKind,
    ) -> list[IPAddress]:
        if literal is not None:
            found = [literal]
        else:
            try:
                found = list(await self._resolve(host, port))
            except ClientError:
                raise
            except (OSError, UnicodeError, ValueError):
                _fail("resolve", "the host name could not be resolved")
        allowed = [a for a in found if judge is None or judge(a)]
        if not allowed:
            _fail(refusal, "the host has no address that may be connected to", "egress")
        return allowed

    async def _exchange(
        self,
        stream: ByteStream,
        request: h11.Request,
        max_bytes: int,
        cut: bool = False,
        body: bytes = b"",
    ) -> Response:
        conn = h11.Connection(h11.CLIENT, max_incomplete_event_size=HEAD_MAX_BYTES)
        start = conn.send(request) or b""  # h11 wants the request before its body
        data = (conn.send(h11.Data(data=body)) or b"") if body else b""
        await _send(stream, start + data + (conn.send(h11.EndOfMessage()) or b""))
        reader = _Reader(conn, stream)
        head = await reader.head()
        headers = tuple((k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in head.headers)
        gzip = _content_coding(headers)
        declared = _declared_length(headers)
        if not gzip and declared is not None and declared > max_bytes and not cut:
            # Early refusal only; the bound below is what is enforced.
            _fail("too_large", "the response body is larger than allowed")
        sink = _BodySink(max_bytes, gzip, cut)
        while True:
            event = await reader.next_event()
            if isinstance(event, h11.Data):
                sink.feed(bytes(event.data))
                if sink.full:  # the rest is never read: the caller closes the stream
                    return Response(head.status_code, headers, sink.finish())
            elif isinstance(event, h11.EndOfMessage):
                return Response(head.status_code, headers, sink.finish())
            else:
                _fail("protocol", "the response is not valid HTTP/1.1")


__all__ = [
    "HEAD_MAX_BYTES",
    "ClientError",
    "ErrorKind",
    "IPAddress",
    "Judge",
    "OutboundClient",
    "Resolver",
    "Response",
    "system_resolver",
    "user_agent",
]
