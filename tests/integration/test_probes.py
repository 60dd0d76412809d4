"""Probes and callers past the connection limits, over raw sockets: the health and
readiness probes answered while idle clients hold every slot, and one client address
held to its share while another is served."""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx
import trio

from tests.integration.raw_http import BOUND, Client, get, start
from tests.support.adapter import AdapterFactory
from tests.support.stub_webhook import StubWebhook

CARD = "/.well-known/agent-card.json"
PROBES = ("/healthz", "/readyz", "/metrics")
# Long enough that nothing times out while a test runs (every wait is bounded by BOUND).
NEVER = BOUND * 3


async def open_from(url: str, address: str) -> Client:
    """A raw connection from `address` (any of 127.0.0.0/8 on Linux's loopback)."""
    target = urlsplit(url)
    sock = trio.socket.socket()
    await sock.bind((address, 0))
    await sock.connect((target.hostname, target.port))
    return Client(trio.SocketStream(sock))


async def status_of(url: str, path: str, address: str = "127.0.0.1") -> int:
    client = await open_from(url, address)
    try:
        await client.send(get(path))
        return (await client.reply()).status
    finally:
        await client.aclose()


async def until_refused(url: str, path: str = CARD, address: str = "127.0.0.1") -> None:
    """Wait until a request for `path` is refused: the connections opened before it have
    all been counted (each is counted as its task first runs)."""
    await until_status(503, url, path, address)


async def until_status(status: int, url: str, path: str, address: str = "127.0.0.1") -> None:
    with trio.fail_after(BOUND):
        while True:
            if await status_of(url, path, address) == status:
                return
            await trio.sleep(0.05)


async def test_idle_connections_in_every_slot_leave_the_probes_answered(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await start(
        stub,
        start_adapter,
        max_connections=128,
        keep_alive_timeout=NEVER,
        request_read_timeout=NEVER,
    )
    idle = [await Client.open(adapter) for _ in range(128)]  # each sends nothing
    try:
        await until_refused(adapter)
        async with httpx.AsyncClient(timeout=BOUND) as http:
            for path in PROBES:
                answer = await http.get(adapter + path.lstrip("/"))
                assert answer.status_code == 200, path
                assert answer.headers["connection"] == "close"  # one request, that one
            refused = await http.get(adapter + CARD.lstrip("/"))
            assert refused.status_code == 503
            assert "ADAPTER_MAX_CONNECTIONS" in refused.json()["error"]["message"]
    finally:
        for client in idle:
            await client.aclose()


async def full(stub: StubWebhook, start_adapter: AdapterFactory) -> tuple[str, Client]:
    """An adapter of one connection, held by a client (returned: it stays open), past
    which new connections are refused."""
    adapter = await start(stub, start_adapter, max_connections=1, keep_alive_timeout=NEVER)
    held = await Client.open(adapter)
    await held.send(get(CARD))
    assert (await held.reply()).status == 200
    await until_refused(adapter)
    return adapter, held


async def test_a_probe_past_the_limit_is_served_one_request_only(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter, _held = await full(stub, start_adapter)  # (held open: the one slot taken)
    probe = await Client.open(adapter)
    # A second request behind the probe's, on its connection: never read.
    await probe.send(get("/healthz") + get(CARD))
    reply = await probe.reply()
    assert (reply.status, reply.headers["connection"]) == (200, "close")
    assert await probe.everything() == b""


async def test_past_the_limit_only_a_probes_get_without_a_body_is_served(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter, _held = await full(stub, start_adapter)  # (held open: the one slot taken)
    refused = [
        b"POST /healthz HTTP/1.1\r\nHost: adapter\r\nContent-Length: 2\r\n\r\n{}",
        get("/healthz", "Content-Length: 5") + b"hello",
        get("/healthz", "Transfer-Encoding: chunked") + b"0\r\n\r\n",
        get("/healthzz"),
        b"GET /healthz",  # and nothing more: the head must come whole within a second
        b"",  # nothing at all
    ]
    for request in refused:
        client = await Client.open(adapter)
        await client.send(request)
        assert (await client.reply()).status == 503, request
        await client.aclose()
    assert await status_of(adapter, "/readyz?verbose") == 200


async def test_one_address_at_its_share_is_refused_while_another_is_served(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await start(
        stub,
        start_adapter,
        max_connections=8,
        max_connections_per_ip=2,
        keep_alive_timeout=NEVER,
    )
    held = [await open_from(adapter, "127.0.0.1") for _ in range(2)]
    for client in held:
        await client.send(get(CARD))
        assert (await client.reply()).status == 200

    refused = await open_from(adapter, "127.0.0.1")
    await refused.send(get(CARD))
    reply = await refused.reply()
    assert (reply.status, reply.headers["connection"]) == (503, "close")
    assert reply.headers["retry-after"] == "1"
    assert reply.json["error"]["code"] == -32000
    assert "ADAPTER_MAX_CONNECTIONS_PER_IP" in reply.json["error"]["message"]
    await refused.closed_by_server()

    # Another address is served, and so are the first one's probes.
    assert await status_of(adapter, CARD, "127.0.0.2") == 200
    assert await status_of(adapter, "/healthz", "127.0.0.1") == 200
    # A connection of the first address that closes frees its share for the next.
    await held.pop().aclose()
    await until_status(200, adapter, CARD, "127.0.0.1")
