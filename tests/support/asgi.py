"""What the test doubles (stub webhook, push receiver, OIDC issuer) share: a bare ASGI
app's lifespan and body handling, and serving it with hypercorn on loopback."""

from __future__ import annotations

from typing import Any

import trio
from hypercorn.config import Config
from hypercorn.trio import serve


async def handled_lifespan(scope: dict[str, Any], receive: Any, send: Any) -> bool:
    """Answer a lifespan scope to its end; False for any other scope."""
    if scope["type"] != "lifespan":
        return False
    while True:
        message = await receive()
        await send({"type": message["type"] + ".complete"})
        if message["type"] == "lifespan.shutdown":
            return True


async def read_body(receive: Any) -> bytes:
    # One buffer grown in place: a body of many MiB in 64 KiB pieces costs its bytes once.
    body = bytearray()
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            return bytes(body)


def lower_headers(scope: dict[str, Any]) -> dict[str, str]:
    return {k.decode().lower(): v.decode() for k, v in scope["headers"]}


async def serve_on_loopback(
    nursery: trio.Nursery,
    app: Any,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    certfile: str | None = None,
    keyfile: str | None = None,
    keep_alive_seconds: float | None = None,
) -> str:
    """Serve `app` (over TLS when given a certificate); its base URL."""
    config = Config()
    config.bind = [f"{host}:{port}"]
    config.accesslog = None
    config.errorlog = None
    config.certfile, config.keyfile = certfile, keyfile
    if keep_alive_seconds is not None:
        config.keep_alive_timeout = keep_alive_seconds
    binds: list[str] = await nursery.start(serve, app, config)
    return binds[0]


def asked(
    method: str,
    path: str,
    headers: dict[str, str] | None = None,
    body: bytes = b"",
    query: bytes = b"",
    max_body_bytes: int = 1 << 20,
    pieces: tuple[bytes, ...] = (),
) -> Any:
    """An A2A route's request (n8n_a2a/app/exchange.py's Asked) without a server: its body
    comes in one event, or in `pieces`."""
    from n8n_a2a.app.exchange import Asked

    scope = {
        "type": "http",
        "method": method,
        "path": path,
        "query_string": query,
        "headers": [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()],
    }
    events: list[dict[str, Any]] = [
        {"type": "http.request", "body": piece, "more_body": True} for piece in pieces
    ]
    events.append({"type": "http.request", "body": body, "more_body": False})

    async def receive() -> dict[str, Any]:
        return events.pop(0) if events else {"type": "http.disconnect"}

    return Asked(scope, receive, max_body_bytes)  # type: ignore[arg-type]
