"""The webhook's streams over real sockets: trio's errors as the webhook's, no deadline
opened of their own, and nothing left open by a cancel or a failed handshake."""

from __future__ import annotations

import socket
import ssl
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import trio
import trustme

from n8n_a2a.webhook.errors import ConnectError, ReadError, WriteError
from n8n_a2a.webhook.network import Origin, WebhookStream, open_stream
from tests.webhook.h11_server import Server, causes


@pytest.fixture
async def listener() -> AsyncIterator[trio.SocketListener]:
    [listener] = await trio.open_tcp_listeners(0, host="127.0.0.1")
    async with listener:
        yield listener


def origin_of(listener: trio.SocketListener, scheme: str = "http") -> Origin:
    return Origin(scheme, "127.0.0.1", listener.socket.getsockname()[1])


async def connected(listener: trio.SocketListener) -> tuple[WebhookStream, trio.SocketStream]:
    """A stream of the webhook's and the server's end of it."""
    stream = await open_stream(origin_of(listener), None)
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


async def test_a_read_and_a_write_open_no_deadline(
    listener: trio.SocketListener, monkeypatch: pytest.MonkeyPatch
) -> None:
    stream, peer = await connected(listener)
    await peer.send_all(b"reply")
    with no_deadline_opened(monkeypatch):
        await stream.send(b"request")
        assert await stream.receive() == b"reply"
    assert await peer.receive_some() == b"request"
    await stream.aclose()
    assert await closed_by_the_client(peer)


async def test_a_refused_connection_is_a_connect_error() -> None:
    [listener] = await trio.open_tcp_listeners(0, host="127.0.0.1")
    origin = origin_of(listener)
    await listener.aclose()
    with pytest.raises(ConnectError) as error:
        await open_stream(origin, None)
    assert isinstance(error.value.__cause__, OSError)


async def test_a_read_or_write_of_a_closed_stream_is_a_read_or_write_error(
    listener: trio.SocketListener,
) -> None:
    stream, _ = await connected(listener)
    await stream.aclose()
    with pytest.raises(ReadError) as read:
        await stream.receive()
    with pytest.raises(WriteError) as write:
        await stream.send(b"x")
    assert isinstance(read.value.__cause__, trio.ClosedResourceError)
    assert isinstance(write.value.__cause__, trio.ClosedResourceError)


async def test_a_write_to_a_peer_gone_is_a_write_error(listener: trio.SocketListener) -> None:
    stream, peer = await connected(listener)
    await peer.aclose()
    with pytest.raises(WriteError) as error:
        for _ in range(100):  # the first writes may land before the reset comes back
            await stream.send(b"x" * 65536)
            await trio.sleep(0.01)
    assert isinstance(error.value.__cause__, trio.BrokenResourceError)
    await stream.aclose()


async def test_the_end_of_the_peers_stream_reads_as_no_bytes(
    listener: trio.SocketListener,
) -> None:
    stream, peer = await connected(listener)
    await peer.send_all(b"last")
    await peer.aclose()
    assert await stream.receive() == b"last"
    assert await stream.receive() == b""
    await stream.aclose()


async def test_an_idle_stream_is_readable_once_its_peer_closed(
    listener: trio.SocketListener,
) -> None:
    stream, peer = await connected(listener)
    assert stream.is_readable() is False
    await peer.aclose()
    with trio.fail_after(5):
        while not stream.is_readable():  # noqa: ASYNC110 - a socket's state: no event to wait on
            await trio.sleep(0.01)
    await stream.aclose()


async def test_a_tls_handshake_cut_by_a_cancel_closes_its_socket(
    listener: trio.SocketListener,
) -> None:
    handshake = trio.CancelScope()

    async def connect() -> None:
        with handshake:
            await open_stream(origin_of(listener, "https"), ssl.create_default_context())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(connect)
        with trio.fail_after(5):
            peer = await listener.accept()
            assert await peer.receive_some()  # the client's hello, never answered
        handshake.cancel()
    assert await closed_by_the_client(peer)


async def test_an_untrusted_certificate_is_a_connect_error_and_its_socket_is_closed(
    tls_server: Server,
) -> None:
    origin = Origin("https", "127.0.0.1", tls_server.port)
    with pytest.raises(ConnectError) as error:
        await open_stream(origin, ssl.create_default_context())
    assert any(isinstance(cause, ssl.SSLCertVerificationError) for cause in causes(error.value))
    await tls_server.wait_closed(1)


async def test_a_tls_stream_reads_and_writes(tls_server: Server, authority: trustme.CA) -> None:
    context = ssl.create_default_context()
    authority.configure_trust(context)
    stream = await open_stream(Origin("https", "127.0.0.1", tls_server.port), context)
    await stream.send(b"GET /ok HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    with trio.fail_after(5):
        reply = b""
        while not reply.endswith(b"/ok"):
            piece = await stream.receive()
            assert type(piece) is bytes  # not the bytearray a TLS stream may hand back
            reply += piece
    assert reply.startswith(b"HTTP/1.1 200 ")
    await stream.aclose()
    await tls_server.wait_closed(1)


class TwoAddresses(trio.abc.HostnameResolver):
    """Every name resolves to these two addresses, in this order."""

    def __init__(self, *addresses: tuple[str, int]) -> None:
        self._addresses = addresses

    async def getaddrinfo(self, *_: object) -> list[tuple[object, ...]]:  # type: ignore[override]
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", a) for a in self._addresses]

    async def getnameinfo(self, *_: object) -> tuple[str, str]:
        raise NotImplementedError


async def test_a_host_of_several_addresses_is_connected_to_the_one_that_answers(
    listener: trio.SocketListener,
) -> None:
    # One address is dialled directly; of several, the race between them finds the one
    # that answers (trio.open_tcp_stream's).
    [closed] = await trio.open_tcp_listeners(0, host="127.0.0.1")
    dead = closed.socket.getsockname()
    await closed.aclose()
    before = trio.socket.set_custom_hostname_resolver(
        TwoAddresses(dead, listener.socket.getsockname())
    )
    try:
        stream = await open_stream(Origin("http", "n8n.example", 5678), None)
    finally:
        trio.socket.set_custom_hostname_resolver(before)
    peer = await listener.accept()
    await stream.send(b"hello")
    assert await peer.receive_some() == b"hello"
    await stream.aclose()


async def test_tls_checks_the_name_given_not_the_address_dialled(
    tls_server: Server, authority: trustme.CA
) -> None:
    context = ssl.create_default_context()
    authority.configure_trust(context)
    origin = Origin("https", "127.0.0.1", tls_server.port)  # certified for 127.0.0.1
    with pytest.raises(ConnectError) as error:
        await open_stream(origin, context, server_hostname="bridge.test")
    [mismatch] = [c for c in causes(error.value) if isinstance(c, ssl.SSLCertVerificationError)]
    assert "bridge.test" in str(mismatch)
    await tls_server.wait_closed(1)


async def test_an_address_is_dialled_as_it_is(
    listener: trio.SocketListener, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_lookup(*_: object) -> None:
        raise AssertionError("trio.open_tcp_stream was called")

    monkeypatch.setattr(trio, "open_tcp_stream", no_lookup)
    origin = origin_of(listener)
    stream = await open_stream(origin, None, server_hostname="bridge.test")
    peer = await listener.accept()
    await stream.send(b"request")
    assert await peer.receive_some() == b"request"
    await stream.aclose()
    assert await closed_by_the_client(peer)
    await listener.aclose()
    with pytest.raises(ConnectError, match="refused") as error:
        await open_stream(origin, None, server_hostname="bridge.test")
    assert isinstance(error.value.__cause__, OSError)


async def test_an_ipv6_address_is_dialled_too() -> None:
    [listener] = await trio.open_tcp_listeners(0, host="::1")
    async with listener:
        port = listener.socket.getsockname()[1]
        stream = await open_stream(Origin("http", "::1", port), None, server_hostname="v6.test")
        peer = await listener.accept()
        await stream.aclose()
        assert await closed_by_the_client(peer)


async def test_a_dial_cut_by_a_cancel_leaves_no_socket_open(
    listener: trio.SocketListener, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[trio.socket.SocketType] = []
    real = trio.socket.socket
    with trio.CancelScope() as scope:

        def cancelled_once_made(*args: Any) -> trio.socket.SocketType:
            opened.append(real(*args))
            scope.cancel()  # the connect that follows is cut
            return opened[-1]

        monkeypatch.setattr(trio.socket, "socket", cancelled_once_made)
        await open_stream(origin_of(listener), None)
    [made] = opened
    assert made.fileno() == -1
