"""The host's side of both ways of running the image (its entrypoint on the host, the
image in an engine): the TLS stub webhook, the URLs moved to it, the drain check."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import trio
import trustme

from tests.support.jsonrpc import V1, rpc, send_v1
from tests.support.stub_webhook import StubWebhook, start_stub_webhook


def moved(url: str, scheme: str, netloc: str) -> str:
    """`url` with another scheme and host:port, its path kept (the path is the RPC route)."""
    return urlunsplit(urlsplit(url)._replace(scheme=scheme, netloc=netloc))


async def start_tls_stub(nursery: trio.Nursery, folder: Path) -> tuple[StubWebhook, Path]:
    """The stub webhook over TLS on 127.0.0.1, and the CA file (in `folder`, readable by
    any user, as the image's is not root) that verifies it."""
    authority = trustme.CA()
    certificate = authority.issue_cert("127.0.0.1")
    cert, key, bundle = folder / "cert.pem", folder / "key.pem", folder / "ca.crt"
    certificate.private_key_and_cert_chain_pem.write_to_path(str(cert))
    certificate.private_key_pem.write_to_path(str(key))
    authority.cert_pem.write_to_path(str(bundle))
    bundle.chmod(0o644)
    stub = await start_stub_webhook(nursery, certfile=str(cert), keyfile=str(key))
    return stub, bundle


async def stopped_during_a_send(
    url: str, stub: StubWebhook, stop: Callable[[], Awaitable[int]], seconds: float
) -> tuple[int, object]:
    """Send `sleep:2`; once the stub holds it, `stop()` (signal, then wait for the exit
    code) within `seconds`; the exit code and the task's state."""
    replies: list[dict[str, object]] = []

    async def send() -> None:
        replies.append(await rpc(url, send_v1("sleep:2"), V1))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(send)
        await stub.wait_received()
        with trio.fail_after(seconds):
            code = await stop()
    [reply] = replies
    result = reply["result"]
    assert isinstance(result, dict), reply
    return code, result["task"]["status"]["state"]
