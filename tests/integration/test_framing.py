"""What a connection may speak, over raw sockets: HTTP/1.1 (and 1.0) only, never a switch
to HTTP/2 or a WebSocket, and one way to frame a request: its head in CRLF lines, its
body by Content-Length or chunked, never both. Whatever else is refused, then closed."""

from __future__ import annotations

import json
from typing import Any

import h2.config
import h2.connection
import h2.settings
import pytest
import trio

from tests.integration.raw_http import BOUND, SHORT, Client, Reply, get, post, post_head, start
from tests.support.adapter import AdapterFactory
from tests.support.jsonrpc import send_v1
from tests.support.stub_webhook import StubWebhook

# The keep-alive and read timeouts far above what a refusal may take: a connection
# closed within PROMPT was closed by the refusal, not by a timer. (A short grace at
# shutdown: a connection the server holds must not hold a failing test.)
TIMERS = {"keep_alive_timeout": BOUND * 2, "request_read_timeout": BOUND * 2, "shutdown_grace": 1.0}
PROMPT = 2.0

H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


async def adapter_for(stub: StubWebhook, start_adapter: AdapterFactory, **overrides: Any) -> str:
    return await start(stub, start_adapter, **{**TIMERS, **overrides})


async def everything_until_closed(
    client: Client, *, then_close: bool = True
) -> tuple[bytes, float]:
    """All the bytes the server sends until it closes, and how long it took to close."""
    started = trio.current_time()
    received = await client.everything()
    took = trio.current_time() - started
    if then_close:
        await client.aclose()
    return received, took


async def refused_then_closed(client: Client, status: int) -> Reply:
    """The one answer a refused request gets, then the close, both promptly."""
    with trio.fail_after(PROMPT):
        reply = await client.reply()
    assert reply.status == status
    assert reply.headers["connection"] == "close"
    assert await client.closed_by_server() < PROMPT
    return reply


def h2_client(*, window: int = 65_535) -> h2.connection.H2Connection:
    config = h2.config.H2Configuration(client_side=True, header_encoding="utf-8")
    connection = h2.connection.H2Connection(config)
    connection.local_settings = h2.settings.Settings(
        client=True, initial_values={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: window}
    )
    connection.initiate_connection()
    return connection


async def test_the_h2_preface_is_refused_with_http_1_1_and_closed(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await adapter_for(stub, start_adapter)
    client = await Client.open(adapter)
    await client.send(h2_client().data_to_send())
    received, took = await everything_until_closed(client)
    # An HTTP/2 server's first frame would be its SETTINGS: 9 bytes of frame header,
    # type 0x4 at the fourth. An HTTP/1.1 answer starts with its status line.
    assert received.startswith(b"HTTP/1.1 505 "), received[:40]
    assert took < PROMPT


async def test_the_bare_preface_and_any_version_past_1_1_are_505(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await adapter_for(stub, start_adapter)
    for request in (H2_PREFACE, b"GET /healthz HTTP/2.0\r\nHost: adapter\r\n\r\n"):
        client = await Client.open(adapter)
        await client.send(request)
        await refused_then_closed(client, 505)


async def test_the_preface_after_a_request_is_refused_too(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await adapter_for(stub, start_adapter)
    client = await Client.open(adapter)
    await client.send(get("/healthz") + H2_PREFACE)
    assert (await client.reply()).status == 200
    await refused_then_closed(client, 505)


async def test_many_pages_over_h2_with_a_closed_window_are_closed_at_once(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    # The review's attack, bounded: a window of 0 and a hundred ListTasks pages of
    # artifacts, each request a few bytes. Over HTTP/2 hypercorn held them all, outside
    # every timer; here the first bytes are refused and the connection closed.
    adapter = await adapter_for(stub, start_adapter, send_timeout=0.5)
    connection = h2_client(window=0)
    for stream_id in range(1, 201, 2):
        headers = [
            (":method", "GET"),
            (":scheme", "http"),
            (":authority", "adapter"),
            (":path", "/tasks?pageSize=100&includeArtifacts=true"),
            ("a2a-version", "1.0"),
        ]
        connection.send_headers(stream_id, headers, end_stream=True)
    client = await Client.open(adapter)
    try:
        with trio.move_on_after(PROMPT):  # a server that already closed takes no more
            await client.send(connection.data_to_send())
        received, took = await everything_until_closed(client, then_close=False)
    finally:
        await open_the_window(client, connection)
    assert received.startswith(b"HTTP/1.1 505 "), received[:40]
    assert took < PROMPT


async def open_the_window(client: Client, connection: h2.connection.H2Connection) -> None:
    """Let a server that took the HTTP/2 session finish: it holds each answer's last bytes
    for a window that never opens, in a send shielded from cancellation, and its shutdown
    waits for them. (A server that refused the session has closed: nothing to do.)"""
    connection.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 1 << 20})
    connection.increment_flow_control_window(1 << 30)
    with trio.move_on_after(PROMPT):
        try:
            await client.send(connection.data_to_send())
            while await client.stream.receive_some():
                pass
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
    await client.aclose()


@pytest.mark.parametrize(
    "upgrade",
    [
        ("Connection: Upgrade, HTTP2-Settings", "Upgrade: h2c", "HTTP2-Settings: AAMAAABkAAQAAP__"),
        (
            "Connection: Upgrade",
            "Upgrade: websocket",
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
            "Sec-WebSocket-Version: 13",
        ),
    ],
    ids=["h2c", "websocket"],
)
async def test_an_upgrade_is_never_made_the_request_is_answered_in_http_1_1(
    stub: StubWebhook, start_adapter: AdapterFactory, upgrade: tuple[str, ...]
) -> None:
    adapter = await adapter_for(stub, start_adapter)
    client = await Client.open(adapter)
    await client.send(get("/healthz", *upgrade))
    with trio.fail_after(PROMPT):
        reply = await client.reply()
    assert reply.status == 200  # no 101 before it: the parser would have said so
    assert "upgrade" not in reply.headers
    # and the connection still speaks HTTP/1.1
    await client.send(get("/healthz"))
    assert (await client.reply()).status == 200


async def test_content_length_with_chunked_is_refused_and_closed(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await adapter_for(stub, start_adapter)
    client = await Client.open(adapter)
    head = get("/healthz", "Content-Length: 5", "Transfer-Encoding: chunked")
    await client.send(head + b"0\r\n\r\n")
    await refused_then_closed(client, 400)


@pytest.mark.parametrize("fold", [b" ", b"\t"], ids=["sp", "htab"])
@pytest.mark.parametrize("framed", ["by-length", "by-chunks"])
async def test_a_folded_transfer_encoding_is_refused_and_nothing_reaches_the_webhook(
    stub: StubWebhook, start_adapter: AdapterFactory, fold: bytes, framed: str
) -> None:
    # h11 folds " Transfer-Encoding: chunked" into the X-A above it and frames the body by
    # its length; a proxy that took the line for Transfer-Encoding would frame it by
    # chunks. Either reading holds a SendMessage for the webhook: the body itself, or a
    # request behind the empty chunk.
    smuggled = json.dumps(send_v1("answer:smuggled")).encode()
    if framed == "by-chunks":
        smuggled = b"0\r\n\r\n" + post("/", smuggled, "A2A-Version: 1.0")
    head = post_head("/", len(smuggled), "A2A-Version: 1.0", "X-A: 1")
    head = head.replace(b"X-A: 1\r\n", b"X-A: 1\r\n" + fold + b"Transfer-Encoding: chunked\r\n")
    adapter = await adapter_for(stub, start_adapter)
    client = await Client.open(adapter)
    await client.send(head + smuggled)
    await refused_then_closed(client, 400)
    # A request after it reaches the webhook, and alone: the refused one was never served.
    client = await Client.open(adapter)
    await client.send(post("/", json.dumps(send_v1("answer:after")).encode(), "A2A-Version: 1.0"))
    assert (await client.reply()).status == 200
    await client.aclose()
    with trio.fail_after(BOUND):
        await stub.wait_received()
    assert [call.json["text"] for call in stub.received] == ["answer:after"]


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"GET /healthz HTTP/1.1\nHost: adapter\n\n",
        b"GET /healthz HTTP/1.1\r\nHost: adapter\nX-Smuggled: y\r\n\r\n",
        b"GET /healthz HTTP/1.1\r\nHost: adapter\r\n\n",
        b"GET /healthz HTTP/1.1\nHost: adapter\r\n\r\n",
    ],
    ids=["every-line", "one-header", "blank-line", "request-line"],
)
async def test_a_head_with_a_bare_lf_is_refused_and_closed(
    stub: StubWebhook, start_adapter: AdapterFactory, request_bytes: bytes
) -> None:
    adapter = await adapter_for(stub, start_adapter)
    client = await Client.open(adapter)
    await client.send(request_bytes)
    await refused_then_closed(client, 400)


async def test_a_bare_lf_in_a_pipelined_head_is_refused_after_the_good_one(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await adapter_for(stub, start_adapter)
    client = await Client.open(adapter)
    body = b'{\n"jsonrpc": "2.0"}'  # a bare LF in a body is only a byte of it
    await client.send(post("/", body) + b"GET /healthz HTTP/1.1\nHost: adapter\n\n")
    assert (await client.reply()).json["error"]["code"] == -32600  # read, then refused
    await refused_then_closed(client, 400)


async def test_conflicting_content_lengths_are_refused_and_closed(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await adapter_for(stub, start_adapter)
    for lengths in (("Content-Length: 2", "Content-Length: 3"), ("Content-Length: 2, 3",)):
        client = await Client.open(adapter)
        await client.send(get("/healthz", *lengths) + b"{}x")
        await refused_then_closed(client, 400)


async def test_well_framed_requests_are_served_as_before(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await adapter_for(stub, start_adapter)
    client = await Client.open(adapter)
    chunked = post_head("/", 0, "Transfer-Encoding: chunked").replace(b"Content-Length: 0\r\n", b"")
    http_1_0 = b"GET /healthz HTTP/1.0\r\n\r\n"
    await client.send(get("/healthz") + chunked + b"2\r\n{}\r\n0\r\n\r\n" + http_1_0)
    replies = [await client.reply() for _ in range(3)]
    assert [reply.status for reply in replies] == [200, 200, 200]
    assert replies[1].json["error"]["code"] == -32600  # {} is no JSON-RPC request
    await client.closed_by_server()  # HTTP/1.0 closes after its answer


async def test_an_http_1_0_post_with_a_stray_crlf_gets_its_answer(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    # RFC 9112 §2.2: some old HTTP/1.0 clients send a CRLF after a POST's body.
    adapter = await adapter_for(stub, start_adapter)
    client = await Client.open(adapter)
    head = post_head("/", 2).replace(b"HTTP/1.1", b"HTTP/1.0")
    await client.send(head + b"{}\r\n")
    reply = await client.reply()
    assert reply.status == 200
    assert reply.json["error"]["code"] == -32600  # {} read whole, and answered
    await client.closed_by_server()


async def test_a_request_pipelined_behind_an_early_answer_never_cuts_it(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    # Answered before its body was read: the answer says Connection: close, and what
    # follows is never read. hypercorn raced that answer, closing under it about half
    # the time: twenty tries.
    adapter = await adapter_for(stub, start_adapter)
    for _ in range(20):
        client = await Client.open(adapter)
        await client.send(post("/nowhere", b"{}") + get("/healthz"))
        reply = await client.reply()
        assert (reply.status, reply.headers["connection"]) == (404, "close")
        assert await client.closed_by_server() < PROMPT
        await client.aclose()


async def status_line(adapter: str, request: bytes, *, wait: float = 0) -> bytes:
    """The first line the adapter answers `request` with, on a connection of its own."""
    client = await Client.open(adapter)
    await client.send(request)
    if wait:
        await trio.sleep(wait)  # (a head left unfinished, for the read timeout)
    received = await client.everything()
    await client.aclose()
    return received.split(b"\r\n", 1)[0]


async def test_every_status_line_carries_its_reason_phrase(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    # What an official client shows of a refusal is its status line: "Client error '413 '"
    # said nothing. The phrases are RFC 9110's (413's older name until Python 3.13).
    adapter = await start(stub, start_adapter, max_body_bytes=1024)
    close = "Connection: close"
    lines = [
        await status_line(adapter, get("/healthz", close)),
        await status_line(adapter, get("/no/such/path", close)),
        await status_line(adapter, get("/", close).replace(b"GET", b"PUT")),
        await status_line(adapter, post("/", b"x" * 2048, close)),
        await status_line(adapter, b"GET / HTTP/2.0\r\nHost: adapter\r\n\r\n"),
        await status_line(adapter, b"GET /healthz HTTP/1.1\r\nHost:", wait=SHORT * 3),
    ]
    assert lines[:3] == [
        b"HTTP/1.1 200 OK",
        b"HTTP/1.1 404 Not Found",
        b"HTTP/1.1 405 Method Not Allowed",
    ]
    assert lines[3] in (b"HTTP/1.1 413 Request Entity Too Large", b"HTTP/1.1 413 Content Too Large")
    assert lines[4:] == [
        b"HTTP/1.1 505 HTTP Version Not Supported",
        b"HTTP/1.1 408 Request Timeout",
    ]
