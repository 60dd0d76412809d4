"""The pool's trio backend over real sockets: trio's errors as httpcore's, timeouts kept
when asked for and no scope opened when not, and nothing left open by a cancel."""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager

import httpcore
import pytest
import trio
import trustme

from n8n_a2a.webhook.network import TrioNetwork
from tests.webhook.h11_server import Server, causes, start_server


@pytest.fixture
async def listener() -> AsyncIterator[trio.SocketListener]:
    [listener] = await trio.open_tcp_listeners(0, host="127.0.0.1")
    async with listener:
        yield listener


def port_of(listener: trio.SocketListener) -> int:
    port: int = listener.socket.getsockname()[1]
    return port


async def connected(
    listener: trio.SocketListener,
) -> tuple[httpcore.AsyncNetworkStream, trio.SocketStream]:
    """A stream of the backend's and the server's end of it."""
    stream = await TrioNetwork().connect_tcp("127.0.0.1", port_of(listener))
    return stream, await listener.accept()


async def closed_by_the_client(peer: trio.SocketStream) -> bool:
    """Whether the client closed its end: the peer reads to the end of the stream."""
    with trio.fail_after(5):
        try:
            while await peer.receive_some():
                pass
        except trio.BrokenResourceError:
            pass  # reset: closed with data unread
    return True


@contextmanager
def no_deadline_opened(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Within, trio.fail_after and trio.move_on_after raise: nothing may open one."""

    def refused(*_: object) -> None:
        raise AssertionError("a deadline was opened")

    with monkeypatch.context() as patch:
        patch.setattr(trio, "fail_after", refused)
        patch.setattr(trio, "move_on_after", refused)
        yield


async def test_a_read_and_a_write_without_a_timeout_open_no_deadline(
    listener: trio.SocketListener, monkeypatch: pytest.MonkeyPatch
) -> None:
    stream, peer = await connected(listener)
    await peer.send_all(b"reply")
    with no_deadline_opened(monkeypatch):
        await stream.write(b"request")
        assert await stream.read(100) == b"reply"
    assert await peer.receive_some() == b"request"
    await stream.aclose()


async def test_an_empty_write_sends_nothing(listener: trio.SocketListener) -> None:
    stream, peer = await connected(listener)
    await stream.write(b"")
    await stream.aclose()
    assert await peer.receive_some() == b""


async def test_a_refused_connection_is_a_connect_error() -> None:
    [listener] = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = port_of(listener)
    await listener.aclose()
    with pytest.raises(httpcore.ConnectError) as error:
        await TrioNetwork().connect_tcp("127.0.0.1", port)
    assert isinstance(error.value.__cause__, OSError)


async def test_a_connect_past_its_timeout_is_a_connect_timeout(
    listener: trio.SocketListener,
) -> None:
    with pytest.raises(httpcore.ConnectTimeout):
        await TrioNetwork().connect_tcp("127.0.0.1", port_of(listener), timeout=0)


async def test_a_read_past_its_timeout_is_a_read_timeout(listener: trio.SocketListener) -> None:
    stream, _ = await connected(listener)
    with pytest.raises(httpcore.ReadTimeout):
        await stream.read(100, timeout=0.05)
    await stream.aclose()


async def test_a_write_past_its_timeout_is_a_write_timeout(listener: trio.SocketListener) -> None:
    stream, _ = await connected(listener)  # the peer reads nothing: the buffers fill
    with pytest.raises(httpcore.WriteTimeout):
        await stream.write(bytes(64 * 1024 * 1024), timeout=0.2)
    await stream.aclose()


async def test_a_read_or_write_of_a_closed_stream_is_a_read_or_write_error(
    listener: trio.SocketListener,
) -> None:
    stream, _ = await connected(listener)
    await stream.aclose()
    with pytest.raises(httpcore.ReadError) as read:
        await stream.read(100)
    with pytest.raises(httpcore.WriteError) as write:
        await stream.write(b"x")
    assert isinstance(read.value.__cause__, trio.ClosedResourceError)
    assert isinstance(write.value.__cause__, trio.ClosedResourceError)


async def test_a_write_to_a_peer_gone_is_a_write_error(listener: trio.SocketListener) -> None:
    stream, peer = await connected(listener)
    await peer.aclose()
    with pytest.raises(httpcore.WriteError) as error:
        for _ in range(100):  # the first writes may land before the reset comes back
            await stream.write(b"x" * 65536)
            await trio.sleep(0.01)
    assert isinstance(error.value.__cause__, trio.BrokenResourceError)
    await stream.aclose()


async def test_an_idle_stream_is_readable_once_its_peer_closed(
    listener: trio.SocketListener,
) -> None:
    stream, peer = await connected(listener)
    assert stream.get_extra_info("is_readable") is False
    assert stream.get_extra_info("client_addr") == peer.socket.getpeername()
    assert stream.get_extra_info("server_addr") == peer.socket.getsockname()
    assert stream.get_extra_info("ssl_object") is None
    await peer.aclose()
    with trio.fail_after(5):
        await trio.lowlevel.wait_readable(stream.get_extra_info("socket"))
    assert stream.get_extra_info("is_readable") is True
    await stream.aclose()


async def test_a_tls_handshake_cut_by_a_cancel_closes_its_socket(
    listener: trio.SocketListener,
) -> None:
    stream, peer = await connected(listener)  # the peer never answers the hello
    with trio.move_on_after(0.1) as deadline:
        await stream.start_tls(ssl.create_default_context(), "127.0.0.1")
    assert deadline.cancelled_caught
    assert await closed_by_the_client(peer)


async def test_an_untrusted_certificate_is_a_connect_error_and_its_socket_is_closed(
    tls_server: Server,
) -> None:
    stream = await TrioNetwork().connect_tcp("127.0.0.1", tls_server.port)
    with pytest.raises(httpcore.ConnectError) as error:
        await stream.start_tls(ssl.create_default_context(), "127.0.0.1")
    assert any(isinstance(cause, ssl.SSLCertVerificationError) for cause in causes(error.value))
    await tls_server.wait_closed(1)


async def test_a_tls_stream_reads_writes_and_shows_its_tls(
    tls_server: Server, authority: trustme.CA
) -> None:
    context = ssl.create_default_context()
    authority.configure_trust(context)
    context.set_alpn_protocols(["http/1.1"])
    plain = await TrioNetwork().connect_tcp("127.0.0.1", tls_server.port)
    stream = await plain.start_tls(context, "127.0.0.1")
    await stream.write(b"GET /ok HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    with trio.fail_after(5):
        reply = b""
        while not reply.endswith(b"/ok"):
            reply += await stream.read(65536)
    assert reply.startswith(b"HTTP/1.1 200 ")
    tls = stream.get_extra_info("ssl_object")
    assert tls.version().startswith("TLSv1.")
    assert tls.selected_alpn_protocol() is None  # the server offers none
    await stream.aclose()
    await tls_server.wait_closed(1)


async def test_a_cancel_mid_reply_closes_httpcores_connection(nursery: trio.Nursery) -> None:
    server = await start_server(nursery)
    connection = httpcore.AsyncHTTPConnection(
        httpcore.Origin(b"http", b"127.0.0.1", server.port), network_backend=TrioNetwork()
    )
    url = httpcore.URL(scheme=b"http", host=b"127.0.0.1", port=server.port, target=b"/silent")
    with trio.move_on_after(0.1):
        await connection.handle_async_request(
            httpcore.Request(b"GET", url, headers=[(b"Host", b"127.0.0.1")])
        )
    assert connection.is_closed()
    await server.wait_closed(1)
