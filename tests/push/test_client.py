from __future__ import annotations

import ssl
from typing import Any

import trio

from n8n_a2a.push.client import push_client
from tests.support.asgi import handled_lifespan, read_body, serve_on_loopback


async def test_each_post_has_a_connection_of_its_own_and_no_redirect_is_followed(
    nursery: trio.Nursery,
) -> None:
    peers: list[tuple[str, int]] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if await handled_lifespan(scope, receive, send):
            return
        await read_body(receive)
        peers.append(tuple(scope["client"]))
        headers = [(b"location", b"http://elsewhere.example/")]
        await send({"type": "http.response.start", "status": 307, "headers": headers})
        await send({"type": "http.response.body", "body": b""})

    base = await serve_on_loopback(nursery, app)
    async with push_client(ssl.create_default_context(), 5.0) as client:
        for _ in range(2):
            response = await client.post(base + "/hook", content=b"{}")
            assert response.status_code == 307  # the receiver's final word
            assert response.request.headers["user-agent"].startswith("n8n-a2a/")
    assert len(peers) == 2 and peers[0] != peers[1]  # a new connection each
