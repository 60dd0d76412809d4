"""The stack pool over real sockets: reuse, give-back, errors, TLS; the webhook URL as
the pool takes it."""

from __future__ import annotations

import socket
import ssl
from collections.abc import AsyncIterator, Sequence
from functools import partial

import httpx
import pytest
import trio
import trustme

from n8n_a2a.webhook.errors import ConnectError, ReadError, RemoteProtocolError, WriteError
from n8n_a2a.webhook.http11 import ReplyHead, field_lines
from n8n_a2a.webhook.network import Origin, WebhookStream
from n8n_a2a.webhook.pool import StackPool, request_url
from tests.webhook.h11_server import Server, causes


def request(url: str, headers: Sequence[tuple[bytes, bytes]] = ()) -> tuple[Origin, bytes]:
    """Where a GET of `url` goes, and its head."""
    origin, target, host = request_url(url)
    fields = field_lines([(b"Host", host), *headers])
    return origin, b"GET %b HTTP/1.1\r\n%b\r\n" % (target, fields)


async def get(
    pool: StackPool, url: str, headers: Sequence[tuple[bytes, bytes]] = ()
) -> tuple[int, bytes]:
    """The reply's status and its body, read whole."""
    async with pool.exchange(*request(url, headers), b"") as reply:
        body = b"".join([piece async for piece in reply])
    return reply.status, body


@pytest.fixture
async def pool() -> AsyncIterator[StackPool]:
    pool = StackPool(ssl.create_default_context)
    yield pool
    await pool.aclose()


async def test_calls_one_after_another_share_one_connection(
    server: Server, pool: StackPool
) -> None:
    for _ in range(5):
        assert await get(pool, server.url("/ok")) == (200, b"/ok")
    assert server.opened == 1


@pytest.mark.parametrize("read_a_part", [False, True])
async def test_a_reply_closed_early_gives_its_connection_back(
    server: Server, pool: StackPool, read_a_part: bool
) -> None:
    async with pool.exchange(*request(server.url("/big")), b"") as reply:
        if read_a_part:
            async for _ in reply:
                break
    # Unread, the rest of the body would come before any next reply: it is closed.
    await server.wait_closed(1)
    assert await get(pool, server.url("/ok")) == (200, b"/ok")
    assert server.opened == 2


async def test_a_connection_the_server_closed_is_dropped(server: Server, pool: StackPool) -> None:
    assert (await get(pool, server.url("/bye")))[0] == 200
    await server.wait_closed(1)
    assert await get(pool, server.url("/ok")) == (200, b"/ok")
    assert server.opened == 2


async def test_closing_the_pool_closes_the_idle_connections(server: Server) -> None:
    pool = StackPool(ssl.create_default_context)
    await get(pool, server.url("/ok"))
    assert server.closed == 0
    await pool.aclose()
    await server.wait_closed(1)


async def test_many_concurrent_calls_each_get_a_connection_then_reuse_them(
    server: Server, pool: StackPool
) -> None:
    replies: list[tuple[int, bytes]] = []

    async def call() -> None:
        replies.append(await get(pool, server.url("/wait")))

    for _ in range(2):
        async with trio.open_nursery() as nursery:
            for _ in range(100):
                nursery.start_soon(call)
    assert replies == [(200, b"/wait")] * 200
    assert server.opened == 100  # the second hundred all went over the first's connections


@pytest.mark.parametrize("path", ["/cut", "/hang-up"])
async def test_a_server_that_closes_mid_reply_is_a_protocol_or_read_error(
    server: Server, pool: StackPool, path: str
) -> None:
    with pytest.raises((RemoteProtocolError, ReadError)):
        await get(pool, server.url(path))
    await server.wait_closed(1)
    assert (await get(pool, server.url("/ok")))[0] == 200


async def test_a_refused_connection_is_a_connect_error(pool: StackPool) -> None:
    with socket.socket() as bound_not_listening:
        bound_not_listening.bind(("127.0.0.1", 0))
        port = bound_not_listening.getsockname()[1]
        with pytest.raises(ConnectError):
            await get(pool, f"http://127.0.0.1:{port}/ok")


async def test_a_call_cut_at_its_deadline_closes_its_connection(
    server: Server, pool: StackPool
) -> None:
    with trio.move_on_after(0.2) as deadline:
        await get(pool, server.url("/silent"))
    assert deadline.cancelled_caught
    await server.wait_closed(1)


async def test_tls_with_the_given_context_reuses_its_connection(
    tls_server: Server, authority: trustme.CA
) -> None:
    context = ssl.create_default_context()
    authority.configure_trust(context)
    made: list[ssl.SSLContext] = []

    def tls() -> ssl.SSLContext:
        made.append(context)
        return context

    pool = StackPool(tls)
    for _ in range(3):
        assert await get(pool, tls_server.url("/ok")) == (200, b"/ok")
    await pool.aclose()
    assert tls_server.opened == 1
    assert made == [context]  # made once, by the first connection


async def test_plain_http_never_makes_a_tls_context(server: Server) -> None:
    def tls() -> ssl.SSLContext:
        raise AssertionError("an http:// webhook needs no trust store")

    pool = StackPool(tls)
    assert await get(pool, server.url("/ok")) == (200, b"/ok")
    await pool.aclose()


async def test_an_untrusted_certificate_is_a_connect_error_caused_by_tls(
    tls_server: Server, pool: StackPool
) -> None:
    with pytest.raises(ConnectError) as error:
        await get(pool, tls_server.url("/ok"))
    assert any(isinstance(cause, ssl.SSLCertVerificationError) for cause in causes(error.value))


# The webhook URL as httpx sent it: httpx is the reference, no longer on the path.


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:5678/webhook/check",
        "https://N8N.Example:443/webhook/check?gate=1&x=a b",
        "http://n8n.example:80",
        "http://[::1]:5678/webhook/x",
        "https://bücher.example/webhook/prüfen?q=ä",
        'http://n8n.example/a path/{x}/%41%zz?k="v"<>#fragment',
    ],
)
def test_the_webhook_url_goes_as_httpx_sent_it(url: str) -> None:
    origin, target, host = request_url(url)
    reference = httpx.Request("POST", url)
    default_port = {"http": 80, "https": 443}[origin.scheme]
    assert (origin.scheme.encode(), origin.host.encode(), origin.port, target) == (
        reference.url.raw_scheme,
        reference.url.raw_host,
        reference.url.port or default_port,
        reference.url.raw_path,
    )
    assert host == reference.headers["Host"].encode()


@pytest.mark.parametrize(
    "headers",
    [
        [(b"Content-Type", b"application/json")],
        [(b"content-type", b"text/plain"), (b"X-Other", b"x"), (b"CONTENT-TYPE", b"text/html")],
        [(b"Content-Type", "text/plain; name=Grüße".encode())],
        [(b"Content-Type", "text/plain; name=Grüße".encode("latin-1"))],
        [(b"X-Other", b"x")],
    ],
)
def test_a_reply_header_reads_as_httpx_read_it(headers: list[tuple[bytes, bytes]]) -> None:
    head = ReplyHead(200, tuple((name.lower(), value) for name, value in headers))
    assert head.header(b"content-type") == httpx.Headers(headers).get("content-type", "")


async def serve_once(nursery: trio.Nursery, reply: bytes, read_first: int) -> int:
    """A server that reads `read_first` bytes of each request at most, writes `reply` and
    closes: the port it listens on."""

    async def answer(stream: trio.SocketStream) -> None:
        received = b""
        while len(received) < read_first and (piece := await stream.receive_some(65536)):
            received += piece
        await stream.send_all(reply)
        await trio.aclose_forcefully(stream)  # a reset, with the rest of the body unread

    listeners = await nursery.start(partial(trio.serve_tcp, host="127.0.0.1"), answer, 0)
    port: int = listeners[0].socket.getsockname()[1]
    return port


async def test_a_reply_made_before_the_body_was_all_sent_is_the_reply(
    nursery: trio.Nursery, pool: StackPool
) -> None:
    refusal = b"HTTP/1.1 413 Payload Too Large\r\nContent-Length: 9\r\n\r\ntoo large"
    port = await serve_once(nursery, refusal, read_first=1)
    origin, head = request(f"http://127.0.0.1:{port}/")
    async with pool.exchange(origin, head, b"x" * (32 * 1024 * 1024)) as reply:
        assert (reply.status, b"".join([piece async for piece in reply])) == (413, b"too large")


async def test_a_connection_cut_while_sending_with_no_reply_is_a_write_error(
    nursery: trio.Nursery, pool: StackPool
) -> None:
    port = await serve_once(nursery, b"", read_first=1)
    origin, head = request(f"http://127.0.0.1:{port}/")
    with pytest.raises(WriteError):
        async with pool.exchange(origin, head, b"x" * (32 * 1024 * 1024)):
            pass


async def test_a_body_in_pieces_goes_out_whole_and_the_connection_is_kept(
    server: Server, pool: StackPool
) -> None:
    async def pieces() -> AsyncIterator[bytes]:
        for piece in (b"a" * 70_000, b"b" * 10):
            yield piece

    origin, target, host = request_url(server.url("/ok"))
    fields = field_lines([(b"Host", host), (b"Content-Length", b"70010")])
    for body in (pieces(), b"c" * 70_010):  # pieces; then bytes past the head's write
        async with pool.exchange(
            origin, b"POST %b HTTP/1.1\r\n%b\r\n" % (target, fields), body
        ) as reply:
            assert b"".join([piece async for piece in reply]) == b"/ok"
    assert server.opened == 1


async def test_a_send_cut_by_a_cancel_closes_its_connection(pool: StackPool) -> None:
    [listener] = await trio.open_tcp_listeners(0, host="127.0.0.1")
    origin, head = request(f"http://127.0.0.1:{listener.socket.getsockname()[1]}/")
    async with listener, trio.open_nursery() as nursery:

        async def send() -> None:
            with trio.move_on_after(0.2):  # the server reads nothing: the send blocks
                async with pool.exchange(origin, head, b"x" * (64 * 1024 * 1024)):
                    raise AssertionError("no reply can come")

        nursery.start_soon(send)
        peer = await listener.accept()
        with trio.fail_after(5):
            try:
                while await peer.receive_some():  # to the end: the client closed it
                    pass
            except trio.BrokenResourceError:
                pass


class FakeNetwork:
    """The pool's dial, on socket pairs: no address, no TCP. The far end of each
    connection plays the webhook: it reads a request's head and answers `reply`."""

    def __init__(self, nursery: trio.Nursery, reply: bytes) -> None:
        self._nursery = nursery
        self._reply = reply
        self.ends: list[trio.SocketStream] = []
        self.heads: list[bytes] = []

    async def dial(self, origin: Origin, tls: ssl.SSLContext | None) -> WebhookStream:
        near, far = trio.socket.socketpair()
        end = trio.SocketStream(far)
        self.ends.append(end)
        self._nursery.start_soon(self._answer, end)
        stream = trio.SocketStream(near)
        return WebhookStream(stream, stream)

    async def _answer(self, end: trio.SocketStream) -> None:
        head = b""
        while b"\r\n\r\n" not in head:
            head += await end.receive_some()
        self.heads.append(head)
        await end.send_all(self._reply)


async def test_a_fake_network_carries_an_exchange_and_the_connection_is_kept(
    nursery: trio.Nursery,
) -> None:
    network = FakeNetwork(nursery, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
    pool = StackPool(ssl.create_default_context, dial=network.dial)
    assert repr(pool) == "<StackPool idle=0 closed=False>"
    with trio.fail_after(5):
        assert await get(pool, "http://webhook.invalid/hook") == (200, b"ok")
    assert network.heads[0].startswith(b"GET /hook HTTP/1.1\r\n")
    assert repr(pool) == "<StackPool idle=1 closed=False>"
    await pool.aclose()
    assert repr(pool) == "<StackPool idle=0 closed=True>"
    with trio.fail_after(5):
        assert await network.ends[0].receive_some() == b""  # closed: nothing left open


async def test_an_exchange_cancelled_mid_reply_leaves_nothing_open(nursery: trio.Nursery) -> None:
    # Nine bytes announced, two sent: the reply never ends.
    network = FakeNetwork(nursery, b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nok")
    pool = StackPool(ssl.create_default_context, dial=network.dial)
    with trio.move_on_after(0.5) as cut:
        await get(pool, "http://webhook.invalid/hook")
    assert cut.cancelled_caught
    assert repr(pool) == "<StackPool idle=0 closed=False>"
    with trio.fail_after(5):
        assert await network.ends[0].receive_some() == b""  # the cut connection was closed
