"""The real adapter over real HTTP, in front of the stub webhook."""

from __future__ import annotations

import json
import logging
import math
from typing import Any

import httpx
import pytest
import trio

from n8n_a2a.config.settings import MAX_PAYLOAD_BYTES
from tests.support.adapter import AdapterFactory, free_port
from tests.support.jsonrpc import V1, rpc, send_v03, send_v1
from tests.support.stub_webhook import StubWebhook

LIST_ALL = {"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {"includeArtifacts": True}}


async def test_v1_send_answered_has_the_v1_shape(adapter: str) -> None:
    reply = await rpc(adapter, send_v1("answer:4 pallets in stock"), V1)
    assert reply["id"] == 1
    task = reply["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"] == [{"text": "4 pallets in stock"}]
    assert [m["role"] for m in task["history"]] == ["ROLE_USER", "ROLE_AGENT"]
    assert task["history"][1]["parts"] == [{"text": "4 pallets in stock"}]
    assert "kind" not in task


async def test_v03_send_answered_has_the_v03_shape(adapter: str) -> None:
    reply = await rpc(adapter, send_v03("answer:yes"))
    assert reply["id"] == "7"
    task = reply["result"]
    assert task["kind"] == "task"
    assert task["status"]["state"] == "completed"
    assert task["artifacts"][0]["parts"] == [{"kind": "text", "text": "yes"}]
    assert [m["role"] for m in task["history"]] == ["user", "agent"]


@pytest.mark.parametrize(
    ("text", "outcome", "in_reason"),
    [
        ("escalate:needs approval", "ESCALATED", "needs approval"),
        ("silent", "SILENT", "returned nothing"),
        ("n8n-error", "SILENT", "Error in workflow"),
        ("off-contract-json", "OFF_CONTRACT", '{"result":42}'),
        ("off-contract-text", "OFF_CONTRACT", "sure, whatever you say"),
        ("not-registered", "NOT_REGISTERED", "not registered"),
        ("http-503", "HTTP_ERROR", "HTTP 503"),
        ("redirect", "REDIRECTED", "redirect"),
    ],
)
async def test_every_other_outcome_fails_the_task(
    adapter: str, text: str, outcome: str, in_reason: str
) -> None:
    task = (await rpc(adapter, send_v1(text), V1))["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_FAILED"
    assert task["metadata"] == {"outcome": outcome}
    assert "artifacts" not in task
    reason = task["status"]["message"]["parts"][0]["text"]
    assert in_reason in reason
    assert task["status"]["message"]["role"] == "ROLE_AGENT"


async def test_a_reply_past_its_bound_fails_the_task_naming_the_setting(
    start_adapter: AdapterFactory, stub: StubWebhook
) -> None:
    # The stub's "huge" reply is 2 MiB: within the default bound, past this one.
    bounded = await start_adapter(stub.url, max_reply_bytes=1024 * 1024)
    task = (await rpc(bounded, send_v1("huge"), V1))["result"]["task"]
    assert (task["status"]["state"], task["metadata"]) == (
        "TASK_STATE_FAILED",
        {"outcome": "OFF_CONTRACT"},
    )
    reason = task["status"]["message"]["parts"][0]["text"]
    assert "larger than ADAPTER_MAX_REPLY_BYTES (1,048,576 bytes)" in reason
    # At the default it is read whole, and judged on what it says (it lacks "escalate").
    whole = (await rpc(await start_adapter(stub.url), send_v1("huge"), V1))["result"]["task"]
    assert "its keys are ['answer']" in whole["status"]["message"]["parts"][0]["text"]


async def test_the_webhook_gets_the_contract_body_and_the_token_header(
    adapter: str, stub: StubWebhook
) -> None:
    document = send_v1("answer:ok")
    document["params"]["message"]["contextId"] = "ctx-42"
    task = (await rpc(adapter, document, {**V1, "Authorization": "Bearer s3cr3t.t0ken"}))["result"][
        "task"
    ]
    [received] = stub.received
    assert received.headers["x-subject-token"] == "s3cr3t.t0ken"
    assert received.headers["content-type"] == "application/json"
    assert received.json == {
        "text": "answer:ok",
        "taskId": task["id"],
        "contextId": "ctx-42",
        "messageId": document["params"]["message"]["messageId"],
        "skillId": "check_availability",
    }
    assert b"s3cr3t" not in received.body
    assert "s3cr3t" not in json.dumps(task)


async def test_a_token_echoed_by_the_workflow_is_redacted(adapter: str) -> None:
    headers = {**V1, "Authorization": "Bearer s3cr3t.t0ken"}
    task = (await rpc(adapter, send_v1("echo-token"), headers))["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert "s3cr3t" not in json.dumps(task)
    assert task["artifacts"][0]["parts"][0]["text"] == "your token is [redacted]"


@pytest.mark.parametrize(
    ("how", "outcome", "shown"),
    [
        ("escaped", "ANSWERED", "your token is [redacted]"),
        ("location", "REDIRECTED", "http://127.0.0.1:9/callback?t=[redacted]"),
        ("content-type", "OFF_CONTRACT", "text/plain; token=[redacted]"),
    ],
)
async def test_a_disguised_token_is_redacted_too(
    adapter: str, how: str, outcome: str, shown: str
) -> None:
    headers = {**V1, "Authorization": "Bearer s3cr3t.t0k/en"}
    task = (await rpc(adapter, send_v1(f"echo-token:{how}"), headers))["result"]["task"]
    assert task["metadata"]["outcome"] == outcome
    assert shown in task["status"]["message"]["parts"][0]["text"]
    listed = json.dumps(await rpc(adapter, LIST_ALL, V1))
    for piece in ("s3cr3t", "t0k", "%73%33", "\\u0033"):
        assert piece not in listed


async def test_an_answer_cut_through_an_emoji_is_repaired_and_listed(adapter: str) -> None:
    task = (await rpc(adapter, send_v1("lone-surrogate"), V1))["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["metadata"] == {"outcome": "ANSWERED", "repaired": ["reply"]}
    assert task["artifacts"][0]["parts"][0]["text"] == "flour \ufffd"
    listing = await rpc(adapter, LIST_ALL, V1)
    assert listing["result"]["tasks"][0]["id"] == task["id"]


async def test_a_compressed_answer_still_completes(adapter: str) -> None:
    task = (await rpc(adapter, send_v1("gzip:12 pallets"), V1))["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"][0]["text"] == "12 pallets"


async def test_no_token_no_header(adapter: str, stub: StubWebhook) -> None:
    await rpc(adapter, send_v1("answer:ok"), V1)
    assert "x-subject-token" not in stub.received[0].headers


async def test_get_task_later_in_both_versions_with_history_length(adapter: str) -> None:
    task = (await rpc(adapter, send_v1("answer:ok"), V1))["result"]["task"]
    get: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "GetTask",
        "params": {"id": task["id"]},
    }
    got = (await rpc(adapter, get, V1))["result"]
    assert got["id"] == task["id"]
    assert got["status"]["state"] == "TASK_STATE_COMPLETED"
    assert len(got["history"]) == 2
    get["params"]["historyLength"] = 1
    assert [m["role"] for m in (await rpc(adapter, get, V1))["result"]["history"]] == ["ROLE_AGENT"]
    legacy = {"jsonrpc": "2.0", "id": 3, "method": "tasks/get", "params": {"id": task["id"]}}
    got03 = (await rpc(adapter, {**legacy, "params": {"id": task["id"], "historyLength": 0}}))[
        "result"
    ]
    assert got03["kind"] == "task"
    assert got03["status"]["state"] == "completed"
    assert "history" not in got03  # historyLength 0: none, and so no field


async def test_unknown_task_is_32001_in_both_versions(adapter: str) -> None:
    get = {"jsonrpc": "2.0", "id": 5, "method": "GetTask", "params": {"id": "nope"}}
    error = (await rpc(adapter, get, V1))["error"]
    assert error["code"] == -32001
    assert error["data"][0]["reason"] == "TASK_NOT_FOUND"
    legacy = {"jsonrpc": "2.0", "id": 6, "method": "tasks/get", "params": {"id": "nope"}}
    assert (await rpc(adapter, legacy))["error"]["code"] == -32001


async def test_a_long_id_is_neither_echoed_nor_logged_whole(
    adapter: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    huge = {"jsonrpc": "2.0", "id": 5, "method": "GetTask", "params": {"id": "x" * 1_000_000}}
    reply = await post(
        adapter, json.dumps(huge).encode(), {**V1, "Content-Type": "application/json"}
    )
    assert reply.status_code == 200 and len(reply.content) < 1000
    assert reply.json()["error"]["code"] == -32602
    # An unknown id of the longest length taken is quoted short in the answer and the log.
    unknown = {"jsonrpc": "2.0", "id": 6, "method": "GetTask", "params": {"id": "y" * 1024}}
    error = (await rpc(adapter, unknown, V1))["error"]
    assert error["code"] == -32001 and len(error["message"]) < 120
    assert "(1024 characters)" in error["message"]
    assert max(len(record.getMessage()) for record in caplog.records) < 200


async def test_an_internal_error_after_the_envelope_echoes_the_request_id(
    adapter: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(*_: object) -> None:
        raise RuntimeError("nobody expected this")

    monkeypatch.setattr("n8n_a2a.app.jsonrpc.perform", broken)
    with caplog.at_level(logging.CRITICAL, "n8n_a2a.app.jsonrpc"):  # the traceback it logs
        reply = await rpc(adapter, {**send_v1("hi"), "id": "r-7"}, V1)
    assert reply == {
        "jsonrpc": "2.0",
        "id": "r-7",
        "error": {"code": -32603, "message": "Internal error"},
    }


async def test_a_path_of_caller_keys_is_quoted_and_cut_in_the_answer_and_the_log(
    adapter: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    forged = "x\n2026-12-01 12:00:00 ERROR   n8n_a2a.auth: forged"
    metadata: Any = [math.inf]  # refused where it sits: the path names every key above it
    for key in [forged, *["k" * 9000] * 95]:  # 864 KB of keys, 99 levels with the list
        metadata = {key: metadata}
    document = send_v1("hi") | {"id": 8}
    document["params"]["message"]["metadata"] = metadata
    raw = json.dumps(document).replace("Infinity", "1e400").encode()
    reply = await post(adapter, raw, {**V1, "Content-Type": "application/json"})
    error = reply.json()["error"]
    assert (reply.json()["id"], error["code"]) == (8, -32602)
    assert error["message"].startswith("params.message.metadata[")
    assert "beyond the range of JSON numbers" in error["message"]
    assert len(error["message"]) < 400
    logged = [r.getMessage() for r in caplog.records if "beyond the range" in r.getMessage()]
    assert logged and all(len(m) < 500 and "\n" not in m for m in logged)


async def post(
    adapter: str, body: bytes, headers: dict[str, str] | dict[bytes, bytes]
) -> httpx.Response:
    async with httpx.AsyncClient() as client:
        return await client.post(adapter, content=body, headers=headers)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def strict_json(reply: httpx.Response) -> Any:
    """The body as RFC 8259 JSON: UTF-8, and no NaN or Infinity."""
    return json.loads(reply.content.decode("utf-8"), parse_constant=_refuse_constant)


@pytest.mark.parametrize(
    ("body", "code", "request_id"),
    [
        (b"{not json", -32700, None),
        (b"[]", -32600, None),
        (b'{"jsonrpc":"2.0","method":"GetTask","params":{}}', -32600, None),
        (b'{"jsonrpc":"1.0","id":9,"method":"GetTask"}', -32600, 9),
        (b'{"jsonrpc":"2.0","id":"a","method":"Nope","params":{}}', -32601, "a"),
        (b'{"jsonrpc":"2.0","id":1.5,"method":"GetTask","params":{}}', -32602, 1.5),
        (b'{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{}}}', -32602, 1),
        (b"[" * 100_000, -32700, None),
        # Not JSON, or an id that JSON cannot carry back: the id cannot be echoed.
        (b'{"jsonrpc":"2.0","id":NaN,"method":"GetTask","params":{"id":"t"}}', -32700, None),
        (b'{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":Infinity}}', -32700, None),
        (b'{"jsonrpc":"2.0","id":"\\ud800","method":"GetTask","params":{}}', -32600, None),
        (b'{"jsonrpc":"2.0","id":1e400,"method":"GetTask","params":{}}', -32600, None),
        (b'{"jsonrpc":"2.0","id":3,"method":"GetTask","params":{"id":"\\udc00"}}', -32602, 3),
    ],
)
async def test_malformed_requests_get_the_right_error(
    adapter: str, body: bytes, code: int, request_id: Any
) -> None:
    reply = await post(adapter, body, {**V1, "Content-Type": "application/json"})
    assert reply.status_code == 200
    document = strict_json(reply)
    assert document["error"]["code"] == code
    assert document["id"] == request_id
    assert "Traceback" not in reply.text


@pytest.mark.parametrize(
    ("document", "headers", "field"),
    [
        (send_v1("answer:x", request_id=3), V1, "params.message.metadata.n"),
        (send_v03("answer:x", request_id="3"), {}, "params.message.metadata.n"),
    ],
)
async def test_a_lone_surrogate_is_refused_naming_the_field_and_never_kept(
    adapter: str, stub: StubWebhook, document: dict[str, Any], headers: dict[str, str], field: str
) -> None:
    document["params"]["message"]["metadata"] = {"n": "\ud800"}
    # json.dumps writes the lone surrogate as the escape \ud800, as a careless client does.
    body = json.dumps(document).encode()
    reply = await post(adapter, body, {**headers, "Content-Type": "application/json"})
    assert reply.status_code == 200
    answer = strict_json(reply)
    assert answer["id"] == document["id"]
    assert answer["error"]["code"] == -32602
    assert answer["error"]["message"].startswith(field + " ")
    assert stub.received == []
    listed = await rpc(adapter, {"jsonrpc": "2.0", "id": 4, "method": "ListTasks"}, V1)
    assert listed["result"]["tasks"] == []


async def test_half_an_emoji_in_the_text_is_refused_before_the_workflow(
    adapter: str, stub: StubWebhook
) -> None:
    body = json.dumps(send_v1("answer:cut \ud83d", request_id=8)).encode()
    reply = await post(adapter, body, {**V1, "Content-Type": "application/json"})
    assert strict_json(reply)["id"] == 8
    assert "params.message.parts[0].text " in strict_json(reply)["error"]["message"]
    assert stub.received == []


async def test_invalid_params_name_the_field(adapter: str) -> None:
    document = send_v1("x")
    del document["params"]["message"]["messageId"]
    error = (await rpc(adapter, document, V1))["error"]
    assert error["code"] == -32602
    assert "params.message.messageId" in error["message"]


async def test_unsupported_version_is_32009(adapter: str) -> None:
    reply = await rpc(adapter, send_v1("x"), {"A2A-Version": "2.0"})
    assert reply["error"]["code"] == -32009
    assert reply["id"] == 1


@pytest.mark.parametrize("version", ["¹", "²", "1.²", "1" * 4301])
async def test_a_version_in_odd_digits_is_32009_and_gets_the_default_card(
    adapter: str, version: str
) -> None:
    headers = {b"A2A-Version": version.encode("latin-1")}
    reply = await post(
        adapter,
        json.dumps(send_v1("x")).encode(),
        {**headers, b"Content-Type": b"application/json"},
    )
    assert reply.status_code == 200
    assert (strict_json(reply)["id"], strict_json(reply)["error"]["code"]) == (1, -32009)
    async with httpx.AsyncClient() as client:
        card = await client.get(adapter + ".well-known/agent-card.json", headers=headers)
    assert card.status_code == 200
    assert card.json()["url"] == adapter  # the v0.3-compatible default


@pytest.mark.parametrize(
    ("headers", "v1_shape"), [({}, False), ({"A2A-Version": "0.3"}, False), (V1, True)]
)
async def test_errors_before_the_method_answer_in_the_version_asked_for(
    adapter: str, headers: dict[str, str], v1_shape: bool
) -> None:
    """A request without A2A-Version is a v0.3 request, its errors too: no ErrorInfo."""
    wrong_type = await post(adapter, b"{}", {**headers, "Content-Type": "text/plain"})
    assert wrong_type.json()["error"]["code"] == -32005
    assert ("data" in wrong_type.json()["error"]) is v1_shape
    too_large = await post(
        adapter, b" " * (MAX_PAYLOAD_BYTES + 1), {**headers, "Content-Type": "application/json"}
    )
    assert too_large.status_code == 413
    assert too_large.json()["error"]["code"] == -32600


async def test_version_from_the_query_parameter(adapter: str) -> None:
    reply = await rpc(adapter.rstrip("/") + "/?A2A-Version=1.0", send_v1("answer:q"))
    assert reply["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_wrong_content_type_is_32005_with_the_id(adapter: str) -> None:
    async with httpx.AsyncClient() as client:
        reply = await client.post(
            adapter,
            content=json.dumps(send_v1("x", request_id=11)),
            headers={**V1, "Content-Type": "text/plain"},
        )
    assert reply.status_code == 200
    assert reply.json()["error"]["code"] == -32005
    assert reply.json()["id"] == 11


async def test_a_body_over_the_limit_is_refused_cleanly(adapter: str) -> None:
    async with httpx.AsyncClient() as client:
        reply = await client.post(
            adapter,
            content=b'{"pad":"' + b"x" * MAX_PAYLOAD_BYTES + b'"}',
            headers={**V1, "Content-Type": "application/json"},
        )
    assert reply.status_code == 413
    assert reply.json()["error"]["code"] == -32600
    shown = f"larger than ADAPTER_MAX_BODY_BYTES ({MAX_PAYLOAD_BYTES:,} bytes)"
    assert shown in reply.json()["error"]["message"]


async def test_a_non_text_part_is_32005(adapter: str) -> None:
    document = send_v1("x")
    document["params"]["message"]["parts"] = [{"url": "http://example.invalid/a.pdf"}]
    assert (await rpc(adapter, document, V1))["error"]["code"] == -32005


async def test_response_id_keeps_its_type(adapter: str) -> None:
    for request_id in (7, "7", None):
        reply = await rpc(adapter, send_v1("answer:x", request_id=request_id), V1)
        assert reply["id"] == request_id
        assert type(reply["id"]) is type(request_id)


async def test_the_card_serves_both_kinds_of_client(adapter: str) -> None:
    async with httpx.AsyncClient() as client:
        legacy = await client.get(adapter.rstrip("/") + "/.well-known/agent-card.json")
        v1 = await client.get(adapter.rstrip("/") + "/.well-known/agent-card.json", headers=V1)
        again = await client.get(
            adapter.rstrip("/") + "/.well-known/agent-card.json",
            headers={"If-None-Match": legacy.headers["etag"]},
        )
    assert legacy.json()["url"] == adapter
    assert legacy.json()["protocolVersion"] == "0.3.0"
    assert "url" not in v1.json()
    assert v1.json()["supportedInterfaces"][0] == {
        "url": adapter,
        "protocolBinding": "JSONRPC",
        "protocolVersion": "1.0",
    }
    assert legacy.headers["etag"] != v1.headers["etag"]
    assert "last-modified" in legacy.headers
    assert "max-age" in legacy.headers["cache-control"]
    assert again.status_code == 304


async def test_the_token_never_reaches_an_error_message(adapter: str) -> None:
    headers = {**V1, "Authorization": "Bearer bad token with spaces"}
    reply = await rpc(adapter, send_v1("x"), headers)
    assert reply["error"]["code"] == -32600
    assert "spaces" not in json.dumps(reply)


async def test_slow_webhook_times_out_into_a_failed_task(
    stub: StubWebhook, start_adapter: Any
) -> None:
    adapter = await start_adapter(stub.url, webhook_timeout=0.5)
    task = (await rpc(adapter, send_v1("hold"), V1))["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_FAILED"
    assert task["metadata"] == {"outcome": "TIMEOUT"}
    assert "ADAPTER_WEBHOOK_TIMEOUT" in task["status"]["message"]["parts"][0]["text"]
    with trio.fail_after(5):
        await stub.wait_released()


async def test_unreachable_webhook_fails_the_task(start_adapter: Any) -> None:
    adapter = await start_adapter("http://127.0.0.1:9/webhook/none")
    task = (await rpc(adapter, send_v1("x"), V1))["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_FAILED"
    assert task["metadata"] == {"outcome": "UNREACHABLE"}


async def test_a_public_url_with_a_path_serves_the_card_and_rpc_there(
    stub: StubWebhook, start_adapter: Any
) -> None:
    port = free_port()
    public = f"http://127.0.0.1:{port}/agents/supply"
    adapter = await start_adapter(stub.url, port=port, public_url=public)
    async with httpx.AsyncClient() as client:
        card = await client.get(f"{adapter}/.well-known/agent-card.json", headers=V1)
        root_card = await client.get(f"http://127.0.0.1:{port}/.well-known/agent-card.json")
    assert card.json()["supportedInterfaces"][0]["url"] == public
    assert root_card.status_code == 200
    reply = await rpc(public, send_v1("answer:routed"), V1)
    assert reply["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
