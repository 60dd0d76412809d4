from __future__ import annotations

import json

import httpx
import pytest

from n8n_a2a.app.jsonrpc import method_label

JSON = {"Content-Type": "application/json"}
V1 = {**JSON, "A2A-Version": "1.0"}


@pytest.mark.parametrize(
    ("method", "label"),
    [("SendMessage", "SendMessage"), ("message/send", "message/send"), ("x" * 300, "other")],
)
def test_a_method_label_comes_from_a_bounded_set(method: str, label: str) -> None:
    assert method_label(method) == label


async def test_a_get_of_the_endpoint_says_what_to_post_and_where_the_card_is(adapter: str) -> None:
    async with httpx.AsyncClient() as http:
        reply = await http.get(adapter)
        assert reply.status_code == 405
        assert reply.headers["allow"] == "POST"
        document = reply.json()
        assert "A2A JSON-RPC 2.0 endpoint" in document["error"]["message"]
        assert "A2A-Version: 1.0" in document["error"]["message"]
        assert document["agentCard"] == adapter + ".well-known/agent-card.json"
        assert (await http.get(document["agentCard"])).status_code == 200
        # The example is a request this endpoint takes as it stands.
        example = document["example"]
        assert example["method"] == "SendMessage"
        answer = await http.post(adapter, json=example, headers={"A2A-Version": "1.0"})
    assert answer.json()["id"] == 1
    assert "task" in answer.json()["result"]


@pytest.mark.parametrize(
    ("body", "request_id", "reason"),
    [
        ({"text": "hello"}, None, "'id' is required"),
        ({"id": 7, "message": "hello"}, 7, "'jsonrpc' must be"),
        ({"jsonrpc": "2.0", "id": 8, "params": {}}, 8, "'method' must be"),
    ],
)
async def test_a_json_body_that_is_no_json_rpc_request_is_told_what_to_send(
    adapter: str, body: dict[str, object], request_id: int | None, reason: str
) -> None:
    async with httpx.AsyncClient() as http:
        reply = await http.post(adapter, content=json.dumps(body), headers=V1)
    assert reply.status_code == 200
    error = reply.json()["error"]
    assert (reply.json()["id"], error["code"]) == (request_id, -32600)
    assert error["message"].startswith(reason)
    assert "JSON-RPC 2.0 endpoint" in error["message"]
    assert '"method": "SendMessage"' in error["message"]
    assert adapter + ".well-known/agent-card.json" in error["message"]


@pytest.mark.parametrize(
    "body",
    [
        b"[]",
        b'{"jsonrpc":"2.0","method":"GetTask","params":{}}',
        b'{"jsonrpc":"1.0","id":9,"method":"x"}',
    ],
)
async def test_a_json_rpc_request_gone_wrong_gets_its_reason_alone(
    adapter: str, body: bytes
) -> None:
    async with httpx.AsyncClient() as http:
        reply = await http.post(adapter, content=body, headers=V1)
    error = reply.json()["error"]
    assert error["code"] == -32600
    assert "SendMessage" not in error["message"]
