"""The push POST on the webhook's HTTP/1.1: its head, a connection each, the status read
and nothing after it, over real sockets."""

from __future__ import annotations

import ipaddress
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
import trio

from n8n_a2a import __version__
from n8n_a2a.push.client import post, request_head
from n8n_a2a.push.url import read_url
from n8n_a2a.webhook.errors import LocalProtocolError, RemoteProtocolError
from n8n_a2a.webhook.network import open_stream
from tests.support.asgi import handled_lifespan, read_body, serve_on_loopback

LOOPBACK = ipaddress.ip_address("127.0.0.1")


def test_the_head_names_the_host_carries_the_headers_and_closes() -> None:
    url = read_url("http://Bridge.Test:8080/a/../hook?x=1")
    head = request_head(url, {"Content-Type": "application/json", "Authorization": "Bearer t"}, 2)
    assert head == (
        b"POST /hook?x=1 HTTP/1.1\r\n"
        b"Host: bridge.test:8080\r\n"
        b"User-Agent: n8n-a2a/%b\r\n"
        b"Content-Type: application/json\r\n"
        b"Authorization: Bearer t\r\n"
        b"Content-Length: 2\r\n"
        b"Connection: close\r\n"
        b"\r\n" % __version__.encode()
    )


@pytest.mark.parametrize("value", ["t\r\nX-Injected: 1", "t\n", " t"])
def test_a_header_http11_cannot_carry_is_refused(value: str) -> None:
    with pytest.raises(LocalProtocolError):
        request_head(read_url("http://bridge.test/"), {"X-A2A-Notification-Token": value}, 0)


async def test_each_post_has_a_connection_of_its_own_and_no_redirect_is_followed(
    nursery: trio.Nursery,
) -> None:
    peers: list[tuple[str, int]] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if await handled_lifespan(scope, receive, send):
            return
        assert await read_body(receive) == b"{}"
        peers.append(tuple(scope["client"]))
        headers = [(b"location", b"http://elsewhere.example/")]
        await send({"type": "http.response.start", "status": 307, "headers": headers})
        await send({"type": "http.response.body", "body": b""})

    url = read_url(await serve_on_loopback(nursery, app) + "/hook")
    request = (request_head(url, {}, 2), b"{}")
    for _ in range(2):
        assert await post(open_stream, url, LOOPBACK, request, None) == 307  # the final word
    assert len(peers) == 2 and peers[0] != peers[1]  # a new connection each


Answer = Callable[[trio.SocketStream], Awaitable[None]]


@pytest.fixture
async def answering(nursery: trio.Nursery) -> AsyncIterator[Callable[[Answer], Awaitable[int]]]:
    """POST to a raw server that reads the request's head, then does what it is given."""
    [listener] = await trio.open_tcp_listeners(0, host="127.0.0.1")
    url = read_url(f"http://127.0.0.1:{listener.socket.getsockname()[1]}/hook")

    async def exchange(answer: Answer) -> int:
        async def serve() -> None:
            peer = await listener.accept()
            received = b""
            while b"\r\n\r\n" not in received:
                received += await peer.receive_some()
            await answer(peer)

        nursery.start_soon(serve)
        with trio.fail_after(5):
            return await post(open_stream, url, LOOPBACK, (request_head(url, {}, 0), b""), None)

    async with listener:
        yield exchange


async def test_the_status_is_read_and_the_connection_closed_with_the_body_unread(
    answering: Callable[[Answer], Awaitable[int]],
) -> None:
    closed = trio.Event()

    async def answer(peer: trio.SocketStream) -> None:
        await peer.send_all(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\npartly")
        with trio.fail_after(5):
            try:
                while await peer.receive_some():
                    pass
            except trio.BrokenResourceError:
                pass  # reset: closed with the body unread
        closed.set()

    assert await answering(answer) == 200
    with trio.fail_after(5):
        await closed.wait()


async def test_an_interim_answer_is_passed_over(
    answering: Callable[[Answer], Awaitable[int]],
) -> None:
    async def answer(peer: trio.SocketStream) -> None:
        await peer.send_all(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n")

    assert await answering(answer) == 204


async def test_a_connection_closed_without_an_answer_is_a_protocol_error(
    answering: Callable[[Answer], Awaitable[int]],
) -> None:
    async def answer(peer: trio.SocketStream) -> None:
        await peer.aclose()

    with pytest.raises(RemoteProtocolError, match="Server disconnected without sending"):
        await answering(answer)
