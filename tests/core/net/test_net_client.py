"""The outbound HTTP client against servers this test starts on 127.0.0.1.

Nothing here reaches the internet: names resolve through an injected resolver
to 127.0.0.1, certificates come from a throwaway trustme CA, and the CONNECT
proxy is a small relay in the test process.
"""

from __future__ import annotations

import ast
import gzip
import ipaddress
import select
import socket
import ssl
import struct
import time
import tracemalloc
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import pytest
import trustme
from anyio.abc import ByteStream, SocketAttribute
from anyio.streams.tls import TLSStream
from hypothesis import given, settings
from hypothesis import strategies as st

from rypsok import PROJECT_URL, __version__
from rypsok.core.config.settings import Proxy
from rypsok.core.net.client import (
    ClientError,
    IPAddress,
    OutboundClient,
    Response,
    _BodySink,
    _parse_url,
    user_agent,
)
from rypsok.core.net.tls import client_context
from tests.support.paths import REPO

pytestmark = pytest.mark.anyio

LOOPBACK = ipaddress.IPv4Address("127.0.0.1")
MIB = 1024 * 1024
UA = user_agent("ops@example.org")

Handler = Callable[[ByteStream, bytes], Awaitable[None]]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# ----------------------------------------------------------------------------- PKI


@dataclass(frozen=True)
class Pki:
    server: ssl.SSLContext  # certificate for localhost and 127.0.0.1
    server_name_only: ssl.SSLContext  # certificate for localhost only
    client: ssl.SSLContext  # trusts the test CA (built by our own client_context)
    stranger: ssl.SSLContext  # trusts another CA


def _client_trusting(ca: trustme.CA, folder: Path) -> ssl.SSLContext:
    path = folder / f"ca-{id(ca)}.pem"
    ca.cert_pem.write_to_path(str(path))
    return client_context({"SSL_CERT_FILE": str(path)})


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    folder = tmp_path_factory.mktemp("pki")
    ca = trustme.CA()
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ca.issue_cert("localhost", "127.0.0.1").configure_cert(server)
    name_only = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ca.issue_cert("localhost").configure_cert(name_only)
    return Pki(
        server, name_only, _client_trusting(ca, folder), _client_trusting(trustme.CA(), folder)
    )


async def to_loopback(host: str, port: int) -> list[IPAddress]:
    """The injected resolver: every name is 127.0.0.1 (no DNS in tests)."""
    return [LOOPBACK]


def client(
    pki: Pki,
    *,
    proxy: Proxy | None = None,
    tls: ssl.SSLContext | None = None,
    resolver: Callable[[str, int], Awaitable[list[IPAddress]]] = to_loopback,
) -> OutboundClient:
    return OutboundClient(tls=tls or pki.client, user_agent=UA, proxy=proxy, resolver=resolver)


async def fetch(engine: OutboundClient, url: str, **kwargs: object) -> Response:
    options: dict[str, object] = {
        "max_bytes": MIB,
        "connect_timeout_s": 1.0,
        "total_timeout_s": 1.5,
    }
    options.update(kwargs)
    return await engine.get(url, **options)  # type: ignore[arg-type]


# -------------------------------------------------------------------------- servers


@dataclass
class Server:
    port: int
    heads: list[bytes] = field(default_factory=list)
    connections: int = 0
    relayed: bytearray = field(default_factory=bytearray)  # proxy only: client -> origin
    gone_at: list[float] = field(default_factory=list)  # when a handler saw the peer leave


async def read_head(stream: ByteStream) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        data += await stream.receive()
    return data


_GONE = (
    ssl.SSLError,
    anyio.BrokenResourceError,
    anyio.EndOfStream,
    anyio.ClosedResourceError,
    OSError,
)


@asynccontextmanager
async def serve(handler: Handler | None, tls: ssl.SSLContext | None) -> AsyncIterator[Server]:
    """A listener on 127.0.0.1: records each request head, then lets `handler` answer."""
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    server = Server(listener.extra(SocketAttribute.local_port))

    async def on_connection(raw: ByteStream) -> None:
        server.connections += 1
        stream = raw
        try:
            if tls is not None:
                stream = await TLSStream.wrap(
                    raw, server_side=True, ssl_context=tls, standard_compatible=False
                )
            head = await read_head(stream)
            server.heads.append(head)
            if handler is not None:
                await handler(stream, head)
        except _GONE:
            pass
        finally:
            await anyio.aclose_forcefully(stream)

    async with listener, anyio.create_task_group() as group:
        group.start_soon(listener.serve, on_connection)
        try:
            yield server
        finally:
            group.cancel_scope.cancel()


def answer(status: str = "200 OK", body: bytes = b"hello", headers: str = "") -> Handler:
    async def handler(stream: ByteStream, head: bytes) -> None:
        await stream.send(
            f"HTTP/1.1 {status}\r\nContent-Length: {len(body)}\r\n{headers}\r\n".encode() + body
        )

    return handler


def raw_answer(data: bytes) -> Handler:
    async def handler(stream: ByteStream, head: bytes) -> None:
        await stream.send(data)

    return handler


def chunked(*chunks: bytes, headers: str = "") -> bytes:
    out = f"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n{headers}\r\n".encode()
    for chunk in chunks:
        out += f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
    return out + b"0\r\n\r\n"


async def _pump(source: ByteStream, sink: ByteStream, record: bytearray | None) -> None:
    with suppress(*_GONE):
        while True:
            data = await source.receive()
            if record is not None:
                record.extend(data)
            await sink.send(data)


@asynccontextmanager
async def connect_proxy(refuse: bool = False) -> AsyncIterator[Server]:
    """An HTTP CONNECT relay: any host:port in the request goes to 127.0.0.1:port."""
    proxy: Server

    async def handler(stream: ByteStream, head: bytes) -> None:
        if refuse:
            await stream.send(
                b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n"
            )
            return
        port = int(head.split(b" ", 2)[1].rsplit(b":", 1)[1])
        upstream = await anyio.connect_tcp("127.0.0.1", port)
        await stream.send(b"HTTP/1.1 200 Connection established\r\n\r\n")
        async with upstream, anyio.create_task_group() as group:
            group.start_soon(_pump, upstream, stream, None)
            await _pump(stream, upstream, proxy.relayed)
            group.cancel_scope.cancel()

    async with serve(handler, None) as proxy:
        yield proxy


@contextmanager
def blackhole() -> Iterator[int]:
    """A port whose SYNs go unanswered: a listener with a full accept queue.

    Linux drops a SYN when the accept queue is full, so a connect there stays
    pending until the client gives up. The queue is filled until a probe
    itself stays pending, so the state is reached, not assumed.
    """
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers: list[socket.socket] = []
    try:
        for _ in range(16):
            probe = socket.socket()
            probe.setblocking(False)
            fillers.append(probe)
            with suppress(BlockingIOError):
                probe.connect(("127.0.0.1", port))
            _, writable, _ = select.select([], [probe], [], 0.05)
            if not writable:
                break
        else:
            pytest.fail("could not fill the accept queue: Linux drops SYNs when it is full")
        yield port
    finally:
        for sock in fillers:
            sock.close()
        listener.close()


def assert_quiet(error: ClientError, *secrets: object) -> None:
    """Our own words only: no host, port, address or provider text; no chained cause."""
    text = str(error)
    for secret in ("localhost", "127.0.0.1", *map(str, secrets)):
        assert secret not in text
    assert error.__cause__ is None
    assert error.__suppress_context__ or error.__context__ is None


# ---------------------------------------------------------------------------- tests


async def test_plain_get_returns_status_headers_and_body(pki: Pki) -> None:
    async with serve(answer(headers="X-Thing: Ümlaut\r\n"), pki.server) as server:
        response = await fetch(client(pki), f"https://localhost:{server.port}/a?b=c")
    assert response.status == 200
    assert response.body == b"hello"
    assert response.header("X-THING") == "Ümlaut".encode().decode("latin-1")
    assert response.header("missing") is None
    assert all(name == name.lower() for name, _ in response.headers)
    assert server.heads[0].startswith(b"GET /a?b=c HTTP/1.1\r\n")


async def test_req_cmp_004_user_agent_form(pki: Pki) -> None:
    assert user_agent("ops@example.org") == (
        f"rypsok/{__version__} (+{PROJECT_URL}; ops@example.org)"
    )
    assert user_agent("") == f"rypsok/{__version__} (+{PROJECT_URL})"
    with pytest.raises(ValueError):
        user_agent("a\r\nX-Injected: 1")
    async with serve(answer(), pki.server) as server:
        await fetch(
            client(pki),
            f"https://localhost:{server.port}/",
            headers=[("X-Subscription-Token", "k")],
        )
    lines = server.heads[0].decode().split("\r\n")[1:-2]
    assert lines == [
        f"Host: localhost:{server.port}",
        f"User-Agent: {UA}",
        "Accept-Encoding: gzip",
        "Connection: close",
        "X-Subscription-Token: k",
    ]


async def test_req_sec_017_https_only_unless_allowed(pki: Pki) -> None:
    async with serve(answer(), None) as server:
        for url in (
            f"http://localhost:{server.port}/",
            f"ftp://localhost:{server.port}/",
            f"//localhost:{server.port}/",
        ):
            with pytest.raises(ClientError) as caught:
                await fetch(client(pki), url)
            assert caught.value.kind == "protocol"
        assert server.connections == 0
        # The operator's explicit loopback endpoint: the caller sets allow_http.
        response = await fetch(client(pki), f"http://127.0.0.1:{server.port}/", allow_http=True)
    assert response.status == 200
    assert server.heads[0].split(b"\r\n")[1] == f"Host: 127.0.0.1:{server.port}".encode()


async def test_req_sec_017_redirect_not_followed_and_credential_not_sent_elsewhere(
    pki: Pki,
) -> None:
    async with serve(answer(), pki.server) as elsewhere:
        location = f"https://localhost:{elsewhere.port}/stolen"
        moved = answer("302 Found", b"", f"Location: {location}\r\n")
        async with serve(moved, pki.server) as origin:
            response = await fetch(
                client(pki),
                f"https://localhost:{origin.port}/search",
                headers=[("X-Subscription-Token", "secret-key")],
            )
        await anyio.sleep(0.05)  # time for a stray connection to show up
    assert response.status == 302
    assert response.header("location") == location
    assert b"X-Subscription-Token: secret-key" in origin.heads[0]
    assert elsewhere.connections == 0


async def test_req_test_015_environment_proxy_variables_are_ignored(
    pki: Pki, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with serve(None, None) as trap:
        for name in (
            "HTTPS_PROXY",
            "https_proxy",
            "HTTP_PROXY",
            "http_proxy",
            "ALL_PROXY",
            "all_proxy",
        ):
            monkeypatch.setenv(name, f"http://127.0.0.1:{trap.port}")
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        async with serve(answer(), pki.server) as tls_server, serve(answer(), None) as plain:
            secure = await fetch(client(pki), f"https://localhost:{tls_server.port}/")
            cleartext = await fetch(client(pki), f"http://127.0.0.1:{plain.port}/", allow_http=True)
        await anyio.sleep(0.05)
    assert (secure.status, cleartext.status) == (200, 200)
    assert (tls_server.connections, plain.connections) == (1, 1)
    assert trap.connections == 0


async def test_req_res_008_configured_proxy_is_a_connect_tunnel(pki: Pki) -> None:
    async with serve(answer(body=b"through"), pki.server) as origin, connect_proxy() as proxy:
        engine = client(pki, proxy=Proxy("127.0.0.1", proxy.port))
        response = await fetch(
            engine,
            f"https://localhost:{origin.port}/q",
            headers=[("X-Subscription-Token", "secret-key")],
        )
    assert response.body == b"through"
    head = proxy.heads[0].decode()
    assert head.startswith(f"CONNECT localhost:{origin.port} HTTP/1.1\r\n")
    assert f"Host: localhost:{origin.port}\r\n" in head
    # TLS runs inside the tunnel: the proxy relays ciphertext, never the request.
    assert proxy.relayed and b"secret-key" not in proxy.relayed
    assert b"GET /q" not in proxy.relayed
    assert b"X-Subscription-Token: secret-key" in origin.heads[0]


async def test_req_res_008_proxy_refusing_the_tunnel_is_a_connect_error(pki: Pki) -> None:
    async with serve(answer(), pki.server) as origin, connect_proxy(refuse=True) as proxy:
        engine = client(pki, proxy=Proxy("127.0.0.1", proxy.port))
        with pytest.raises(ClientError) as caught:
            await fetch(engine, f"https://localhost:{origin.port}/")
    assert caught.value.kind == "connect"
    assert origin.connections == 0
    assert_quiet(caught.value, origin.port, proxy.port)


def gzip_bomb(mib: int) -> bytes:
    """`mib` MiB of zeros as one gzip member, built without compressing them all.

    A full flush resets the compressor, so every MiB of zeros compresses to the
    same deflate block; repeating that block makes a valid stream in a blink.
    """
    zeros = bytes(MIB)
    raw = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    block = raw.compress(zeros) + raw.flush(zlib.Z_FULL_FLUSH)
    end = raw.flush()
    crc = 0
    for _ in range(mib):
        crc = zlib.crc32(zeros, crc)
    return (
        b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
        + block * mib
        + end
        + struct.pack("<II", crc, (mib * MIB) & 0xFFFFFFFF)
    )


async def test_req_sec_013_gzip_bomb_bounded_after_decompression(pki: Pki) -> None:
    assert gzip.decompress(gzip_bomb(3)) == bytes(3 * MIB)  # the recipe is a real gzip
    bomb = gzip_bomb(100)
    assert len(bomb) < 200 * 1024  # 100 MiB of zeros on the wire as ~100 KiB
    handler = answer(body=bomb, headers="Content-Encoding: gzip\r\n")
    async with serve(handler, pki.server) as server:
        tracemalloc.start()
        try:
            with pytest.raises(ClientError) as caught:
                await fetch(client(pki), f"https://localhost:{server.port}/", max_bytes=MIB)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert caught.value.kind == "too_large"
    # The bound plus the wire payload and buffers, nowhere near 100 MiB.
    assert peak < 4 * MIB


async def test_req_sec_013_gzip_body_within_the_bound_is_decoded(pki: Pki) -> None:
    body = b"result " * 1000
    packed = gzip.compress(body)
    async with serve(
        answer(body=packed, headers="Content-Encoding: gzip\r\n"), pki.server
    ) as server:
        response = await fetch(
            client(pki), f"https://localhost:{server.port}/", max_bytes=len(body)
        )
    assert response.body == body


async def test_req_sec_010_plain_body_over_bound_is_too_large(pki: Pki) -> None:
    body = b"x" * 5000
    async with (
        serve(answer(body=body), pki.server) as declared,
        serve(raw_answer(chunked(body[:3000], body[3000:])), pki.server) as undeclared,
    ):
        exact = await fetch(client(pki), f"https://localhost:{declared.port}/", max_bytes=5000)
        for server in (declared, undeclared):
            with pytest.raises(ClientError) as caught:
                await fetch(client(pki), f"https://localhost:{server.port}/", max_bytes=4999)
            assert caught.value.kind == "too_large"
    assert exact.body == body


async def test_chunked_responses_plain_and_gzip(pki: Pki) -> None:
    packed = gzip.compress(b"alpha beta gamma")
    plain = raw_answer(chunked(b"alpha ", b"beta ", b"gamma"))
    packed_chunks = raw_answer(
        chunked(packed[:7], packed[7:20], packed[20:], headers="Content-Encoding: gzip\r\n")
    )
    async with serve(plain, pki.server) as one, serve(packed_chunks, pki.server) as two:
        first = await fetch(client(pki), f"https://localhost:{one.port}/")
        second = await fetch(client(pki), f"https://localhost:{two.port}/")
    assert first.body == second.body == b"alpha beta gamma"


async def test_body_delimited_by_close_is_read(pki: Pki) -> None:
    async with serve(raw_answer(b"HTTP/1.1 200 OK\r\n\r\nuntil the end"), pki.server) as server:
        response = await fetch(client(pki), f"https://localhost:{server.port}/")
    assert response.body == b"until the end"


@pytest.mark.parametrize(
    ("data", "what"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Encoding: br\r\nContent-Length: 2\r\n\r\nab", "encoding"),
        (
            b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 10\r\n\r\n"
            + gzip.compress(b"some text")[:10],
            "cut gzip",
        ),
        (
            b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 8\r\n\r\nnot gzip",
            "bad gzip",
        ),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", "cut body"),
        (b"PROVIDER-SECRET-TEXT nonsense\r\n\r\n", "garbage"),
        (b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * (20 * 1024) + b"\r\n\r\n", "head over 16 KiB"),
        (b"", "closed at once"),
        (b"HTTP/1.1 103 Early Hints\r\n\r\n" * 2000, "endless 1xx heads"),
    ],
)
async def test_malformed_responses_are_protocol_errors(pki: Pki, data: bytes, what: str) -> None:
    async with serve(raw_answer(data), pki.server) as server:
        with pytest.raises(ClientError) as caught:
            await fetch(client(pki), f"https://localhost:{server.port}/")
    assert caught.value.kind == "protocol", what
    assert_quiet(caught.value, "PROVIDER", server.port)


async def test_informational_responses_are_skipped(pki: Pki) -> None:
    data = b"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    async with serve(raw_answer(data), pki.server) as server:
        response = await fetch(client(pki), f"https://localhost:{server.port}/")
    assert (response.status, response.body) == (200, b"ok")


async def test_certificate_from_an_unknown_ca_is_a_tls_error(pki: Pki) -> None:
    async with serve(answer(), pki.server) as server:
        with pytest.raises(ClientError) as caught:
            await fetch(client(pki, tls=pki.stranger), f"https://localhost:{server.port}/")
    assert caught.value.kind == "tls"
    assert server.heads == []  # no request was sent over the unverified connection
    assert_quiet(caught.value, server.port)


async def test_ip_literal_is_verified_against_the_address(pki: Pki) -> None:
    async with (
        serve(answer(), pki.server) as with_ip,
        serve(answer(), pki.server_name_only) as name_only,
    ):
        response = await fetch(client(pki), f"https://127.0.0.1:{with_ip.port}/")
        with pytest.raises(ClientError) as caught:
            await fetch(client(pki), f"https://127.0.0.1:{name_only.port}/")
    assert response.status == 200
    assert caught.value.kind == "tls"


async def test_tls_context_without_verification_is_refused(pki: Pki) -> None:
    lax = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    lax.check_hostname = False
    lax.verify_mode = ssl.CERT_NONE
    with pytest.raises(ValueError):
        OutboundClient(tls=lax, user_agent=UA)


async def test_req_sec_011_connect_timeout(pki: Pki) -> None:
    with blackhole() as port:
        started = time.monotonic()
        with pytest.raises(ClientError) as caught:
            await fetch(
                client(pki),
                f"https://localhost:{port}/",
                connect_timeout_s=0.3,
                total_timeout_s=1.5,
            )
        elapsed = time.monotonic() - started
    assert caught.value.kind == "timeout"
    assert 0.25 <= elapsed < 0.9
    assert_quiet(caught.value, port)


async def test_req_sec_011_connect_timeout_covers_the_tls_handshake(pki: Pki) -> None:
    # Accepted by the kernel, never answered: the connection is not usable
    # until TLS is up, so the connect timeout still applies.
    async with serve(lambda stream, head: anyio.sleep_forever(), None) as mute:
        started = time.monotonic()
        with pytest.raises(ClientError) as caught:
            await fetch(
                client(pki),
                f"https://localhost:{mute.port}/",
                connect_timeout_s=0.3,
                total_timeout_s=1.5,
            )
        elapsed = time.monotonic() - started
    assert caught.value.kind == "timeout"
    assert 0.25 <= elapsed < 0.9


async def test_refused_connection_is_a_connect_error(pki: Pki) -> None:
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    with pytest.raises(ClientError) as caught:
        await fetch(client(pki), f"https://localhost:{port}/")
    assert caught.value.kind == "connect"
    assert_quiet(caught.value, port)


async def test_req_sec_011_slow_trickle_ends_at_the_total_deadline(pki: Pki) -> None:
    async def trickle(stream: ByteStream, head: bytes) -> None:
        await stream.send(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
        while True:
            await stream.send(b"x")
            await anyio.sleep(0.05)

    async with serve(trickle, pki.server) as server:
        started = time.monotonic()
        with pytest.raises(ClientError) as caught:
            await fetch(
                client(pki),
                f"https://localhost:{server.port}/",
                connect_timeout_s=0.3,
                total_timeout_s=0.6,
            )
        elapsed = time.monotonic() - started
    assert caught.value.kind == "timeout"
    assert 0.55 <= elapsed < 1.1


async def test_req_mcp_007_cancellation_aborts_the_socket_within_500_ms(pki: Pki) -> None:
    async def stall(stream: ByteStream, head: bytes) -> None:
        await stream.send(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial")
        try:
            while await stream.receive():
                pass
        finally:
            server.gone_at.append(time.monotonic())

    async with serve(stall, pki.server) as server:
        with anyio.move_on_after(0.2) as scope:
            await fetch(client(pki), f"https://localhost:{server.port}/", total_timeout_s=5)
        cancelled_at = time.monotonic()
        assert scope.cancelled_caught
        with anyio.fail_after(0.5):
            while not server.gone_at:
                await anyio.sleep(0.005)
    assert server.gone_at[0] - cancelled_at < 0.5


@pytest.mark.parametrize(
    "header",
    [
        ("X-Note", "value\r\nX-Injected: 1"),
        ("X-Note", "value\nX-Injected: 1"),
        ("X-Note", "value\x00"),
        ("X-Note\r\nX-Injected", "1"),
        ("Bad Name", "v"),
        ("", "v"),
        ("Host", "elsewhere.example"),
        ("user-agent", "Mozilla/5.0"),
        ("Accept-Encoding", "br"),
        ("Connection", "keep-alive"),
        ("Transfer-Encoding", "chunked"),
        ("Content-Length", "5"),
        ("X-Note", "ünïcødé ☃"),
        ("X-Note", "caf\u00e9"),
    ],
)
async def test_header_injection_is_refused_before_connecting(
    pki: Pki, header: tuple[str, str]
) -> None:
    async with serve(answer(), pki.server) as server:
        with pytest.raises(ClientError) as caught:
            await fetch(client(pki), f"https://localhost:{server.port}/", headers=[header])
    assert caught.value.kind == "protocol"
    assert server.connections == 0


@pytest.mark.parametrize(
    "url",
    [
        "https://localhost/a\r\nX-Injected: 1",
        "https://localhost/a b",
        "https://localhost/\u00e9",
        "https://user:pass@localhost/",
        "https:///nohost",
        "https://bad_host..example/",
        "https://localhost:99999/",
        "https://[fe80::1%25eth0]/",
    ],
)
async def test_malformed_urls_are_refused(pki: Pki, url: str) -> None:
    with pytest.raises(ClientError) as caught:
        await fetch(client(pki), url)
    assert caught.value.kind == "protocol"


async def test_req_sec_007_judge_sees_every_address_before_connecting(pki: Pki) -> None:
    seen: list[IPAddress] = []

    def judge(address: IPAddress) -> bool:
        seen.append(address)
        return False

    async with serve(answer(), pki.server) as server:
        for url in (f"https://localhost:{server.port}/", f"https://127.0.0.1:{server.port}/"):
            with pytest.raises(ClientError) as caught:
                await fetch(client(pki), url, judge=judge)
            assert caught.value.kind == "resolve"
            assert_quiet(caught.value, server.port)
    assert seen == [LOOPBACK, LOOPBACK]
    assert server.connections == 0


async def test_req_sec_007_addresses_are_tried_in_order_and_judged(pki: Pki) -> None:
    silent = ipaddress.IPv4Address("127.0.0.2")  # nothing listens there: refused

    async def two(host: str, port: int) -> list[IPAddress]:
        return [silent, LOOPBACK]

    refused = ipaddress.IPv4Address("127.0.0.3")

    async def three(host: str, port: int) -> list[IPAddress]:
        return [refused, silent, LOOPBACK]

    async with serve(answer(), pki.server) as server:
        response = await fetch(client(pki, resolver=two), f"https://localhost:{server.port}/")
        judged = await fetch(
            client(pki, resolver=three),
            f"https://localhost:{server.port}/",
            judge=lambda address: address != refused,
        )
    assert response.status == judged.status == 200
    assert server.connections == 2


async def test_resolver_failure_is_a_resolve_error(pki: Pki) -> None:
    async def broken(host: str, port: int) -> list[IPAddress]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    async def empty(host: str, port: int) -> list[IPAddress]:
        return []

    for resolver in (broken, empty):
        with pytest.raises(ClientError) as caught:
            await fetch(client(pki, resolver=resolver), "https://unknown.example/")
        assert caught.value.kind == "resolve"
        assert_quiet(caught.value, "unknown.example")


async def test_default_resolver_runs_getaddrinfo_for_a_name(pki: Pki) -> None:
    # "localhost" through the system resolver (no DNS traffic: the hosts file);
    # whatever order it gives, one of its addresses is 127.0.0.1 where we listen.
    async with serve(answer(), pki.server) as server:
        engine = OutboundClient(tls=pki.client, user_agent=UA)
        response = await fetch(engine, f"https://localhost:{server.port}/")
    assert response.status == 200


@settings(max_examples=60, deadline=None)
@given(
    body=st.binary(max_size=4096),
    bound=st.integers(min_value=0, max_value=4096),
    split=st.integers(min_value=1, max_value=64),
    packed=st.booleans(),
)
def test_req_sec_013_body_sink_bounds_what_it_produces(
    body: bytes, bound: int, split: int, packed: bool
) -> None:
    wire = gzip.compress(body) if packed else body
    sink = _BodySink(bound, gzip=packed)
    try:
        for start in range(0, len(wire), split):
            sink.feed(wire[start : start + split])
        result = sink.finish()
    except ClientError as error:
        assert error.kind == "too_large"
        assert len(body) > bound
    else:
        assert len(body) <= bound
        assert result == body


def test_body_sink_reads_several_gzip_members() -> None:
    sink = _BodySink(100, gzip=True)
    sink.feed(gzip.compress(b"one ") + gzip.compress(b"two"))
    assert sink.finish() == b"one two"


def _head_of(size: int) -> bytes:
    """A 200 head of exactly `size` bytes, padded in one header."""
    start, end = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Pad: ", b"\r\n\r\n"
    return start + b"p" * (size - len(start) - len(end)) + end


async def test_response_head_bound_is_16_kib(pki: Pki) -> None:
    async with (
        serve(raw_answer(_head_of(16 * 1024) + b"ok"), pki.server) as fits,
        serve(raw_answer(_head_of(16 * 1024 + 1) + b"ok"), pki.server) as over,
    ):
        response = await fetch(client(pki), f"https://localhost:{fits.port}/")
        with pytest.raises(ClientError) as caught:
            await fetch(client(pki), f"https://localhost:{over.port}/")
    assert response.body == b"ok"
    assert caught.value.kind == "protocol"


def test_url_forms() -> None:
    v6 = _parse_url("https://[::1]:8443/x?y=1#frag", allow_http=False)
    assert (v6.host, v6.port, v6.path, v6.authority) == ("::1", 8443, "/x?y=1", "[::1]:8443")
    assert _parse_url("https://[::1]/", allow_http=False).host_header == "[::1]"
    idn = _parse_url("https://B\u00fccher.Example./", allow_http=False)
    assert (idn.host, idn.host_header, idn.path, idn.literal) == (
        "xn--bcher-kva.example",
        "xn--bcher-kva.example",
        "/",
        None,
    )
    plain = _parse_url("http://127.0.0.1:80", allow_http=True)
    assert (plain.host_header, plain.literal) == ("127.0.0.1", LOOPBACK)


def test_req_test_015_client_has_no_environment_aware_http_stack() -> None:
    # urllib.request, http.client and httpx read proxy variables or bring their
    # own stack; the client stays on h11 + anyio sockets (DESIGN.md decision 1)
    # and has no use for the environment at all.
    source = REPO / "rypsok/core/net/client.py"
    tree = ast.parse(source.read_text(encoding="utf-8"))
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
            imported.update(f"{node.module}.{alias.name}" for alias in node.names)
    for banned in ("os", "urllib.request", "http.client", "http", "httpx", "requests"):
        assert banned not in imported
    names = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    assert not names & {"environ", "getenv", "getproxies"}


# ------------------------------------------------------- failure kinds (issue 31, item 3)


def _closed_port() -> int:
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    return port


async def _no_name(host: str, port: int) -> list[IPAddress]:
    raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")


async def _cause_of(pki: Pki, how: str) -> str:
    """The failure kind one client failure carries, by what the test server does."""
    if how == "dns":
        return await _caught(fetch(client(pki, resolver=_no_name), "https://unknown.example/"))
    if how == "connect":
        return await _caught(fetch(client(pki), f"https://localhost:{_closed_port()}/"))
    if how == "egress":  # every address refused by the policy's judge
        return await _caught(fetch(client(pki), "https://localhost/", judge=lambda a: False))
    if how in ("proxy-refuses", "proxy-unreachable"):
        async with serve(answer(), pki.server) as origin, connect_proxy(refuse=True) as p:
            port = p.port if how == "proxy-refuses" else _closed_port()
            engine = client(pki, proxy=Proxy("127.0.0.1", port))
            return await _caught(fetch(engine, f"https://localhost:{origin.port}/"))
    handlers = {
        "tls": (answer(), pki.stranger),
        "reset": (raw_answer(b""), None),
        "bound": (answer(body=b"x" * 2048), None),
        "protocol": (raw_answer(b"PROVIDER nonsense\r\n\r\n"), None),
        "timeout": (lambda stream, head: anyio.sleep_forever(), None),
    }
    handler, client_tls = handlers[how]
    async with serve(handler, pki.server) as server:
        url = f"https://localhost:{server.port}/"
        engine = client(pki, tls=client_tls)
        return await _caught(fetch(engine, url, max_bytes=1024, total_timeout_s=0.5))


async def _caught(attempt: Awaitable[Response]) -> str:
    with pytest.raises(ClientError) as caught:
        await attempt
    assert_quiet(caught.value, "PROVIDER")
    return caught.value.cause


@pytest.mark.parametrize(
    ("how", "cause"),
    [
        ("dns", "dns"),
        ("connect", "connect"),
        ("egress", "egress"),
        ("tls", "tls"),
        ("proxy-refuses", "proxy"),
        ("proxy-unreachable", "proxy"),
        ("reset", "reset"),
        ("bound", "bound"),
        ("protocol", "protocol"),
        ("timeout", "timeout"),
    ],
)
async def test_issue_31_each_client_failure_carries_its_operator_kind(
    pki: Pki, how: str, cause: str
) -> None:
    assert await _cause_of(pki, how) == cause
