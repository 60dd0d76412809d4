"""Both official clients verify the adapter's signed card with its public key, for each kind
of key, and refuse it when a proxy on the way changes one byte of it.

The card holds non-ASCII text (é, 日本, an emoji) and numbers in its name, description and
skill examples: what each client canonicalizes is what it parsed, so a signature over
other bytes than theirs fails here. a2a-sdk 1.3.0 verifies through its card resolver
(`signature_verifier`), both shapes; @a2a-js/sdk 1.3.0 with `verifyAgentCardSignature`
on the card as fetched. What the JS SDK cannot verify, whatever the signer (the legacy
shape; the card its client holds, a2a-js issue 663), is checked to stay so: a release
that mends it makes the test fail, and docs/identity.md then says too much.
"""

from __future__ import annotations

import asyncio
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
from a2a.client import A2ACardResolver
from a2a.utils.signing import SignatureVerificationError

from tests.interop import matrix
from tests.support import installs
from tests.support.adapter import AdapterFactory
from tests.support.card_keys import ALGORITHMS, KID, public_pem, sdk_verifier, signer
from tests.support.sdk import SDK, SDK_VERSION
from tests.support.stub_webhook import StubWebhook

JS_VERSION = matrix.pinned_js_version("@a2a-js/sdk")
ROW = "signed card"
NON_ASCII = {
    "agent_name": "Agent é 日本 🎉 n°42",
    "agent_description": "Vérifie les stocks: 3.5 € le kilo, 2e-3 près; 在庫 🎉",
    "skill_examples": ("Y a-t-il 4 palettes de farine?", "在庫は? 🎉", "1e21 + 0.000001"),
}
JKU = "https://agents.example/.well-known/jwks.json"


async def start_signed(start_adapter: AdapterFactory, stub: StubWebhook, algorithm: str) -> str:
    # EdDSA's card also names a jku: both clients must hand it to their key lookup.
    jku = JKU if algorithm == "EdDSA" else None
    key = signer(algorithm, jku)
    url: str = await start_adapter(
        stub.url,
        **NON_ASCII,
        card_signing_key=key.key,
        card_signing_kid=key.kid,
        card_signing_jku=jku,
    )
    return url


def altered(body: bytes) -> bytes:
    """The card with one byte changed: the first letter of its name, in lower case."""
    changed = body.replace(b'"name":"Agent', b'"name":"agent', 1)
    assert changed != body and len(changed) == len(body)
    return changed


async def tampering_proxy(nursery: trio.Nursery, adapter: str) -> str:
    """A proxy on 127.0.0.1 that passes GETs to the adapter, changing the card's body."""

    async def relay(stream: trio.SocketStream) -> None:
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = await stream.receive_some(65536)
            if not chunk:
                return
            head += chunk
        request_line, *lines = head.split(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")
        method, path, _ = request_line.split(" ")
        headers = {n.strip().lower(): v.strip() for n, _, v in (h.partition(":") for h in lines)}
        passed: dict[str, str] = {
            n: headers[n] for n in ("a2a-version", "authorization") if n in headers
        }
        async with httpx.AsyncClient() as client:
            answer = await client.request(method, adapter.rstrip("/") + path, headers=passed)
        body = altered(answer.content) if path.endswith("agent-card.json") else answer.content
        kind = answer.headers.get("content-type", "application/json").encode()
        await stream.send_all(
            b"HTTP/1.1 %d X\r\nContent-Type: %s\r\nContent-Length: %d\r\nConnection: close"
            b"\r\n\r\n%s" % (answer.status_code, kind, len(body), body)
        )
        await stream.aclose()

    listeners = await nursery.start(partial(trio.serve_tcp, relay, 0, host="127.0.0.1"))
    return f"http://127.0.0.1:{listeners[0].socket.getsockname()[1]}/"


async def python_verdict(base_url: str, algorithm: str, **headers: str) -> str:
    """What a2a-sdk's card resolver says of the card's signature: verified, or its error."""

    async def resolve() -> str:
        async with httpx.AsyncClient() as http:
            resolver = A2ACardResolver(http, base_url)
            try:
                await resolver.get_agent_card(
                    http_kwargs={"headers": headers}, signature_verifier=sdk_verifier(algorithm)
                )
            except SignatureVerificationError as error:
                return type(error).__name__
        return "verified"

    verdict: str = await trio.to_thread.run_sync(partial(asyncio.run, resolve()))
    return verdict


@pytest.mark.parametrize(
    "algorithm",
    [pytest.param(a, marks=pytest.mark.client(SDK, SDK_VERSION, ROW)) for a in ALGORITHMS],
)
async def test_a2a_sdk_verifies_the_card_and_refuses_it_changed(
    start_adapter: AdapterFactory, stub: StubWebhook, nursery: trio.Nursery, algorithm: str
) -> None:
    adapter = await start_signed(start_adapter, stub, algorithm)
    proxy = await tampering_proxy(nursery, adapter)
    for shape in ({}, {"A2A-Version": "1.0"}):  # the legacy card (no header), the v1.0 card
        assert await python_verdict(adapter, algorithm, **shape) == "verified", shape
        assert await python_verdict(proxy, algorithm, **shape) == "InvalidSignaturesError"


@pytest.fixture(scope="module")
def js_client() -> Path:
    """The client matrix's npm install, with this test's script beside drive.mjs: a script
    of its own, so that a run of another checkout sharing the cache keeps it."""
    matrix.node_client()
    major = matrix.node_version()[0]
    return installs.npm_project("a2a-js-sdk", matrix.JS_DIR, ("verify_card.mjs",), major)


async def js_verdicts(client_dir: Path, base_url: str, public_key: Path) -> dict[str, Any]:
    result = await matrix.drive(["node", client_dir / "verify_card.mjs", base_url, public_key])
    assert (result["client"], result["version"]) == ("@a2a-js/sdk", JS_VERSION)
    return result


@pytest.mark.parametrize(
    "algorithm",
    [
        pytest.param(a, marks=pytest.mark.client("@a2a-js/sdk (Node)", JS_VERSION, ROW))
        for a in ALGORITHMS
    ],
)
async def test_a2a_js_verifies_the_card_and_refuses_it_changed(
    start_adapter: AdapterFactory,
    stub: StubWebhook,
    nursery: trio.Nursery,
    js_client: Path,
    tmp_path: Path,
    algorithm: str,
    request: pytest.FixtureRequest,
) -> None:
    adapter = await start_signed(start_adapter, stub, algorithm)
    proxy = await tampering_proxy(nursery, adapter)
    public_key = tmp_path / "card-key.pub.pem"
    public_key.write_bytes(public_pem(algorithm))
    straight = await js_verdicts(js_client, adapter, public_key)
    matrix.note_runtime(request, straight)
    assert straight["v1"] == {"verified": True}
    assert straight["named"][0] == {"kid": KID, "jku": JKU if algorithm == "EdDSA" else None}
    changed = await js_verdicts(js_client, proxy, public_key)
    assert changed["v1"]["verified"] is False
    assert "No valid signatures" in changed["v1"]["error"]
    # @a2a-js/sdk 1.3.0's canonical form of these drops every securitySchemes entry.
    assert straight["legacy"]["verified"] is False
    assert straight["held"]["verified"] is False
