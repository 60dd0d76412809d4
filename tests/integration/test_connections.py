"""HTTP/1.1 connections over raw sockets: bounded idle and read time, early answers,
`Connection: close`, and the connection limit."""

from __future__ import annotations

import asyncio
import gc
import json
from functools import partial
from urllib.parse import urlsplit

import h11
import httpx
import trio

from n8n_a2a.server import serve
from tests.integration.raw_http import BOUND, SHORT, Client, get, post, post_head, start
from tests.support.adapter import AdapterFactory, free_port, make_settings
from tests.support.jsonrpc import V1, send_v1
from tests.support.stub_webhook import StubWebhook

CARD = "/.well-known/agent-card.json"


async def cut_for_reading_too_slowly(client: Client) -> None:
    reply = await client.reply()
    assert reply.status == 408
    assert reply.headers["connection"] == "close"
    assert reply.json["error"]["code"] == -32600
    assert "ADAPTER_REQUEST_READ_TIMEOUT" in reply.json["error"]["message"]
    await client.closed_by_server()


async def test_a_keep_alive_connection_serves_requests_then_closes_when_idle(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await start(stub, start_adapter)
    client = await Client.open(adapter)
    for _ in range(3):
        await client.send(get("/healthz"))
        assert (await client.reply()).status == 200
    await client.closed_by_server()


async def test_a_connection_that_never_sends_a_request_is_closed(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await start(stub, start_adapter)
    client = await Client.open(adapter)
    await client.closed_by_server()


async def test_the_keep_alive_timeout_is_idle_time_only(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    # Idle for most of the keep-alive timeout, then a request whose head takes longer
    # than what was left of it: the read timeout, not the keep-alive, bounds the head.
    adapter = await start(stub, start_adapter, keep_alive_timeout=1.0, request_read_timeout=3.0)
    client = await Client.open(adapter)
    await client.send(get("/healthz"))
    assert (await client.reply()).status == 200
    await trio.sleep(0.7)
    request = get("/healthz")
    await client.send(request[:10])
    await trio.sleep(0.7)
    await client.send(request[10:])
    assert (await client.reply()).status == 200


async def test_a_body_sent_a_byte_at_a_time_is_cut_at_the_read_timeout(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await start(stub, start_adapter)
    client = await Client.open(adapter)
    body = json.dumps(send_v1("answer:never")).encode()
    await client.send(post_head("/", len(body)))

    async def trickle() -> None:
        for byte in body:
            await client.send(bytes([byte]))
            await trio.sleep(0.1)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(trickle)
        await cut_for_reading_too_slowly(client)
        nursery.cancel_scope.cancel()
    assert stub.received == []


async def test_a_head_sent_a_byte_at_a_time_is_cut_at_the_read_timeout(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await start(stub, start_adapter, keep_alive_timeout=BOUND * 2)
    client = await Client.open(adapter)

    async def trickle() -> None:
        for byte in b"GET /healthz HTTP/1.1\r\nHost: adapter\r\nX-Slow: " + b"x" * 100:
            await client.send(bytes([byte]))
            await trio.sleep(0.1)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(trickle)
        await cut_for_reading_too_slowly(client)
        nursery.cancel_scope.cancel()


async def test_a_blocking_send_longer_than_both_timeouts_gets_its_answer(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await start(stub, start_adapter)
    client = await Client.open(adapter)
    await client.send(post("/", json.dumps(send_v1("sleep:2")).encode(), "A2A-Version: 1.0"))
    reply = await client.reply()
    assert reply.status == 200
    assert reply.json["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    # and the connection is still good for the next request
    await client.send(get("/healthz"))
    assert (await client.reply()).status == 200


async def test_connection_close_from_the_client_closes_the_connection(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await start(stub, start_adapter, keep_alive_timeout=BOUND * 2)
    client = await Client.open(adapter)
    await client.send(get("/healthz", "Connection: close"))
    reply = await client.reply()
    assert reply.status == 200
    assert reply.headers["connection"] == "close"
    await client.closed_by_server()


def served_garbage() -> list[str]:
    """The types of the objects served connections left in reference cycles, unfreed
    until the collector's next pass over them (saved, not freed, since the last call)."""
    gc.collect()
    left = [type(thing) for thing in gc.garbage]
    gc.garbage.clear()
    modules = ("hypercorn", "h11", "n8n_a2a.http")
    return sorted(
        {
            f"{kind.__module__}.{kind.__qualname__}"
            for kind in left
            if kind.__module__.startswith(modules)
        }
    )


async def test_a_finished_connection_is_freed_at_once_not_left_to_the_collector(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    # Every object of a connection (hypercorn's server and protocol, h11's state, the
    # socket) must go when it ends: those the collector finds survive its young passes
    # while a call is under way, and a burst of slow calls has its full passes scan
    # them, every task kept, and all the rest.
    adapter = await start(stub, start_adapter)
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        served_garbage()
        client = await Client.open(adapter)  # the server closes it
        body = json.dumps(send_v1("hello")).encode()
        await client.send(post("/", body, "A2A-Version: 1.0", "Connection: close"))
        assert (await client.reply()).status == 200
        await client.closed_by_server()
        await client.aclose()
        client = await Client.open(adapter)  # the client closes it
        await client.send(post("/", body, "A2A-Version: 1.0"))
        assert (await client.reply()).status == 200
        await client.aclose()
        await trio.sleep(SHORT / 5)  # the server's end of each connection
        assert served_garbage() == []
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


async def test_a_413_before_the_body_closes_the_connection_and_says_so(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await start(stub, start_adapter, max_body_bytes=1024, keep_alive_timeout=BOUND * 2)
    client = await Client.open(adapter)
    # The head says the body is too large: the answer comes before any of it is read.
    await client.send(post_head("/", 4096))
    reply = await client.reply()
    assert reply.status == 413
    assert reply.json["error"]["code"] == -32600
    assert reply.headers["connection"] == "close"
    await client.closed_by_server()


async def test_a_405_before_the_body_closes_the_connection_and_says_so(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await start(stub, start_adapter, keep_alive_timeout=BOUND * 2)
    client = await Client.open(adapter)
    # The JSON-RPC path takes no GET; the body this GET announces never comes.
    await client.send(get("/", "Content-Length: 20"))
    reply = await client.reply()
    assert reply.status == 405
    assert reply.headers["connection"] == "close"
    await client.closed_by_server()


async def test_an_answer_after_the_whole_body_keeps_the_connection(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await start(stub, start_adapter, keep_alive_timeout=BOUND * 2)
    client = await Client.open(adapter)
    await client.send(get("/"))
    reply = await client.reply()
    assert reply.status == 405
    assert "connection" not in reply.headers
    await client.send(get("/healthz"))
    assert (await client.reply()).status == 200


async def test_every_request_after_an_early_answer_is_answered_with_httpx(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await start(stub, start_adapter, max_body_bytes=1024, keep_alive_timeout=BOUND * 2)
    # Bodies larger than what one read takes: the answer comes while they still arrive.
    too_large = json.dumps(send_v1("answer:" + "x" * 300_000)).encode()
    statuses = []
    with trio.fail_after(BOUND):
        async with httpx.AsyncClient(timeout=BOUND) as http:
            for _ in range(5):
                answer = await http.post(adapter, content=too_large, headers=V1)
                statuses.append(answer.status_code)
                statuses.append((await http.request("GET", adapter, content=too_large)).status_code)
                statuses.append((await http.get(adapter + "healthz")).status_code)
    assert statuses == [413, 405, 200] * 5


async def test_past_the_connection_limit_a_connection_gets_503_and_is_closed(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await start(
        stub,
        start_adapter,
        max_concurrent_calls=1,
        max_queued_calls=1,
        max_connections=2,
        keep_alive_timeout=BOUND * 2,
    )
    held = [await Client.open(adapter), await Client.open(adapter)]
    for client in held:
        await client.send(get("/healthz"))
        assert (await client.reply()).status == 200

    # (Not a probe: /healthz, /readyz and /metrics are served past the limit, test_probes.py.)
    refused = await Client.open(adapter)
    await refused.send(get(CARD))
    reply = await refused.reply()
    assert reply.status == 503
    assert reply.headers["connection"] == "close"
    assert reply.json["error"]["code"] == -32000
    assert "ADAPTER_MAX_CONNECTIONS" in reply.json["error"]["message"]
    await refused.closed_by_server()

    # A client that connects and vanishes at once costs the accept loop nothing.
    vanishing = await Client.open(adapter)
    await vanishing.aclose()

    # A slot that frees is taken again.
    await held.pop().aclose()
    with trio.fail_after(BOUND):
        while True:
            client = await Client.open(adapter)
            await client.send(get(CARD))
            if (await client.reply()).status == 200:
                break
            await client.aclose()
            await trio.sleep(0.05)
    # and the connections that were served are still served
    await held[0].send(get("/healthz"))
    assert (await held[0].reply()).status == 200


async def test_shutdown_closes_idle_connections_at_once_and_answers_busy_ones(
    stub: StubWebhook, nursery: trio.Nursery
) -> None:
    stop = trio.Event()
    port = free_port()
    settings = make_settings(
        stub.url,
        port=port,
        public_url=f"http://127.0.0.1:{port}/",
        keep_alive_timeout=BOUND * 2,
        shutdown_grace=BOUND * 3,
    )
    await nursery.start(partial(serve, settings, shutdown_trigger=stop.wait))
    idle = await Client.open(settings.public_url)
    await idle.send(get("/healthz"))
    assert (await idle.reply()).status == 200
    busy = await Client.open(settings.public_url)
    await busy.send(post("/", json.dumps(send_v1("sleep:1")).encode(), "A2A-Version: 1.0"))
    with trio.fail_after(BOUND):
        await stub.wait_received()

    stop.set()
    await idle.closed_by_server()
    reply = await busy.reply()
    assert reply.json["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    await busy.closed_by_server()


async def large_responses(adapter: str, tasks: int = 5) -> bytes:
    """A ListTasks request whose answer is megabytes: tasks holding 900 kB answers."""
    text = "answer:" + "x" * 900_000
    async with httpx.AsyncClient(timeout=BOUND) as http:
        for _ in range(tasks):
            reply = await http.post(adapter, json=send_v1(text), headers=V1)
            assert reply.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    listing = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "ListTasks",
        "params": {"includeArtifacts": True, "historyLength": 10},
    }
    return post("/", json.dumps(listing).encode(), "A2A-Version: 1.0")


async def client_with_small_window(url: str) -> Client:
    address = urlsplit(url)
    sock = trio.socket.socket()
    # A small receive buffer, set before connecting: the window stays small, so what
    # the client does not read soon fills the server's send buffer.
    sock.setsockopt(trio.socket.SOL_SOCKET, trio.socket.SO_RCVBUF, 4096)
    await sock.connect((address.hostname, address.port))
    return Client(trio.SocketStream(sock))


async def test_a_client_that_stops_taking_its_response_is_cut(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await start(stub, start_adapter, keep_alive_timeout=BOUND * 2, send_timeout=SHORT)
    request = await large_responses(adapter)
    client = await client_with_small_window(adapter)
    try:
        await client.send(request)
        await trio.sleep(SHORT * 4)
        received = len(await client.everything())
        assert 0 < received < 5 * 900_000
    finally:
        await client.aclose()  # (else a server that never cuts it never stops either)


async def test_a_stream_whose_client_stops_reading_is_cut_by_the_send_timeout(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await start(stub, start_adapter, keep_alive_timeout=BOUND * 2, send_timeout=SHORT)
    # A stream whose last event carries a 900 kB artifact, to a client that takes none
    # of it: the events go out as one body, piece by piece, each bound by the timeout.
    streaming = {**send_v1("answer:" + "x" * 900_000), "method": "SendStreamingMessage"}
    client = await client_with_small_window(adapter)
    try:
        await client.send(post("/", json.dumps(streaming).encode(), "A2A-Version: 1.0"))
        await trio.sleep(SHORT * 4)
        received = len(await client.everything())
        assert 0 < received < 900_000
    finally:
        await client.aclose()
    async with httpx.AsyncClient(timeout=BOUND) as http:
        assert (await http.get(adapter + "healthz")).status_code == 200


async def test_a_client_that_takes_its_response_slowly_gets_it_whole(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await start(stub, start_adapter, send_timeout=SHORT)
    request = await large_responses(adapter, tasks=1)
    client = await Client.open(adapter)
    await client.send(request)
    parser = client.parser
    body = b""
    started = trio.current_time()
    with trio.fail_after(BOUND * 2):
        while not isinstance(event := parser.next_event(), h11.EndOfMessage):
            if event is h11.NEED_DATA:
                await trio.sleep(SHORT / 10)  # slow, and never stalled for long
                parser.receive_data(await client.stream.receive_some(64 * 1024))
            elif isinstance(event, h11.Data):
                body += event.data
    assert trio.current_time() - started > SHORT  # longer in all than the send timeout
    assert len(json.loads(body)["result"]["tasks"]) == 1


async def test_a_connection_that_never_sends_a_byte_is_closed_at_the_read_timeout(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    # Not kept for the keep-alive timeout, which is for a client served once: this one
    # would hold its slot for it (BOUND * 3 here; closed_by_server fails after BOUND).
    adapter = await start(stub, start_adapter, keep_alive_timeout=BOUND * 3)
    client = await Client.open(adapter)
    assert await client.closed_by_server() < BOUND


async def test_a_413_for_a_40_mib_upload_reaches_an_httpx_client(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    # Past ADAPTER_MAX_BODY_BYTES (32 MiB by default): answered at once, with the body
    # still coming. Closed at once, the bytes left unread reset the connection, and
    # httpx on asyncio (as most A2A clients run it) reports a read error, not the 413.
    adapter = await start(stub, start_adapter, keep_alive_timeout=BOUND * 2)
    envelope = send_v1("answer:x")
    envelope["params"]["message"]["metadata"] = {"pad": "x" * (40 * 1024 * 1024)}
    upload = json.dumps(envelope).encode()

    async def five_uploads() -> list[tuple[int, int, str]]:
        answers = []
        for _ in range(5):
            async with httpx.AsyncClient(timeout=BOUND) as http:
                answer = await http.post(adapter, content=upload, headers=V1)
            error = answer.json()["error"]
            answers.append((answer.status_code, error["code"], error["message"]))
        return answers

    with trio.fail_after(BOUND * 3):
        answers = await trio.to_thread.run_sync(asyncio.run, five_uploads())
    assert [(status, code) for status, code, _ in answers] == [(413, -32600)] * 5
    assert all("ADAPTER_MAX_BODY_BYTES" in message for _, _, message in answers)
    assert stub.received == []


async def sent_for_ever_after_a_413(adapter: str, pause: float) -> float:
    """Seconds from the 413 to the adapter's close, for a client that goes on sending its
    body, `pause` between each 16 KiB, and reads nothing more."""
    client = await Client.open(adapter)
    await client.send(post_head("/", 10 * 2**30, "A2A-Version: 1.0"))
    cut = trio.Event()

    async def send_for_ever() -> None:
        try:
            while True:
                await client.send(bytes(16 * 1024))
                await trio.sleep(pause)
        except trio.BrokenResourceError:  # reset: the adapter has closed
            cut.set()

    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(send_for_ever)
            reply = await client.reply()
            answered = trio.current_time()
            assert (reply.status, reply.headers["connection"]) == (413, "close")
            with trio.fail_after(BOUND):
                await cut.wait()
            return trio.current_time() - answered
    finally:
        await client.aclose()


async def test_a_client_that_never_stops_sending_after_a_413_is_closed_all_the_same(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    # The adapter reads and drops what follows an early answer for a bounded time and
    # size only (connection.py's LINGER_SECONDS, LINGER_BYTES): a client that sends for
    # ever, slowly (the time bound) or as fast as it can (the bytes bound), is cut, long
    # before the read timeout.
    adapter = await start(
        stub,
        start_adapter,
        max_body_bytes=1024,
        keep_alive_timeout=BOUND * 3,
        request_read_timeout=BOUND * 3,
    )
    assert await sent_for_ever_after_a_413(adapter, pause=0.01) < BOUND
    assert await sent_for_ever_after_a_413(adapter, pause=0.0) < BOUND


async def test_after_a_413_the_rest_of_the_body_is_read_and_the_close_is_clean(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    # RFC 9112 §9.6: the adapter stops writing and reads on. A client that sends the
    # rest of its body and then its end sees the 413 and an orderly close, no reset.
    adapter = await start(stub, start_adapter, max_body_bytes=1024, keep_alive_timeout=BOUND * 2)
    client = await Client.open(adapter)
    await client.send(post_head("/", 2**20, "A2A-Version: 1.0"))
    assert (await client.reply()).status == 413
    with trio.fail_after(BOUND):
        await client.send(bytes(2**20))
        await client.stream.send_eof()
        assert await client.stream.receive_some() == b""
