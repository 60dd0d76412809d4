from __future__ import annotations

import httpx

from tests.support.adapter import AdapterFactory
from tests.support.stub_webhook import StubWebhook


async def test_an_unknown_path_is_a_json_404(adapter: str) -> None:
    async with httpx.AsyncClient() as http:
        reply = await http.get(adapter + "nowhere")
    assert reply.status_code == 404
    assert reply.json()["error"]["code"] == 404


async def test_another_method_than_get_keeps_the_plain_405(adapter: str) -> None:
    async with httpx.AsyncClient() as http:
        reply = await http.put(adapter, content=b"{}")
    assert reply.status_code == 405
    assert reply.json() == {
        "error": {"code": 405, "message": "The method is not allowed for the requested URL."}
    }


async def test_a_body_too_large_is_a_json_rpc_error_naming_the_limit(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await start_adapter(stub.url, max_body_bytes=64)
    async with httpx.AsyncClient() as http:
        reply = await http.post(adapter, content=b"{" * 100, headers={"A2A-Version": "1.0"})
    assert reply.status_code == 413
    assert reply.json()["error"]["code"] == -32600
    assert "larger than ADAPTER_MAX_BODY_BYTES (64 bytes)" in reply.json()["error"]["message"]
