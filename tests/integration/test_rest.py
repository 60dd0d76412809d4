"""The HTTP+JSON binding over real HTTP: every operation, its streams, push config CRUD, its
errors with their HTTP statuses, callers kept apart, the official client configured for it."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
import trio
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.client.errors import A2AClientError
from a2a.types import GetTaskRequest, Message, Part, Role, SendMessageRequest, TaskState
from a2a.utils.errors import TaskNotFoundError

from n8n_a2a.protocol.push import AllowList
from tests.support.adapter import AdapterFactory, free_port, get
from tests.support.metrics import sample
from tests.support.stub_webhook import StubWebhook

V1 = {"A2A-Version": "1.0"}
A2A_JSON = "application/a2a+json"


def message(text: str, **fields: Any) -> dict[str, Any]:
    """A send's body: one user text part."""
    parts = [{"text": text}]
    return {
        "message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": parts},
        **fields,
    }


async def call(
    adapter: str, method: str, path: str, body: Any = None, **headers: str
) -> httpx.Response:
    """One request of the binding, with A2A-Version: 1.0 unless `headers` say otherwise."""
    async with httpx.AsyncClient(timeout=10) as http:
        return await http.request(method, adapter + path, json=body, headers={**V1, **headers})


def error_of(reply: httpx.Response) -> tuple[int, str, str]:
    """The status, google.rpc.Code name and ErrorInfo reason of an error answer."""
    error = reply.json()["error"]
    assert error["code"] == reply.status_code
    [info] = error["details"]
    assert info["@type"] == "type.googleapis.com/google.rpc.ErrorInfo"
    return reply.status_code, error["status"], info["reason"]


@asynccontextmanager
async def events(
    adapter: str, method: str, path: str, body: Any = None
) -> AsyncIterator[list[tuple[str, dict[str, Any]]]]:
    """A stream's events, read to its end: (the event's name, its JSON)."""
    found: list[tuple[str, dict[str, Any]]] = []
    async with (
        httpx.AsyncClient(timeout=10) as http,
        http.stream(method, adapter + path, json=body, headers=V1) as reply,
    ):
        assert reply.status_code == 200
        assert reply.headers["content-type"] == "text/event-stream"
        name, data = "message", []
        with trio.fail_after(10):
            async for line in reply.aiter_lines():
                if line.startswith("event: "):
                    name = line.removeprefix("event: ")
                elif line.startswith("data: "):
                    data.append(line.removeprefix("data: "))
                elif line == "" and data:
                    found.append((name, json.loads("\n".join(data))))
                    name, data = "message", []
        yield found


async def test_a_blocking_send_answers_the_done_task_in_json(adapter: str) -> None:
    reply = await call(adapter, "POST", "message:send", message("answer:12 pallets"))
    assert reply.status_code == 200
    assert reply.headers["content-type"] == "application/json"
    task = reply.json()["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["status"]["message"]["parts"] == [{"text": "12 pallets"}]


async def test_a_client_that_takes_only_the_a2a_media_type_is_answered_in_it(
    adapter: str,
) -> None:
    reply = await call(adapter, "POST", "message:send", message("answer:yes"), Accept=A2A_JSON)
    assert reply.headers["content-type"] == A2A_JSON


async def test_get_list_and_cancel_work_on_the_task_of_a_send(adapter: str) -> None:
    sent = await call(
        adapter,
        "POST",
        "message:send",
        message("sleep:5", configuration={"returnImmediately": True}),
    )
    task_id = sent.json()["task"]["id"]
    got = await call(adapter, "GET", f"tasks/{task_id}?historyLength=0")
    assert got.json()["id"] == task_id
    assert "history" not in got.json()  # A2A 1.0.1 §3.2.4: SHOULD be omitted
    listed = await call(adapter, "GET", "tasks?pageSize=5&includeArtifacts=true")
    assert [task["id"] for task in listed.json()["tasks"]] == [task_id]
    canceled = await call(adapter, "POST", f"tasks/{task_id}:cancel", {"id": task_id})
    assert canceled.status_code == 200
    assert canceled.json()["status"]["state"] == "TASK_STATE_CANCELED"
    again = await call(adapter, "POST", f"tasks/{task_id}:cancel")
    assert error_of(again) == (400, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE")


async def test_a_streaming_send_is_the_task_then_its_events_as_stream_responses(
    adapter: str,
) -> None:
    async with events(adapter, "POST", "message:stream", message("answer:ok")) as found:
        pass
    names = {name for name, _ in found}
    assert names == {"message"}
    members = [next(iter(document)) for _, document in found]
    assert members[0] == "task"
    assert found[-1][1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_a_subscriber_gets_the_task_then_the_rest_by_post_or_get(adapter: str) -> None:
    for verb in ("POST", "GET"):
        sent = await call(
            adapter,
            "POST",
            "message:send",
            message("sleep:0.3", configuration={"returnImmediately": True}),
        )
        task_id = sent.json()["task"]["id"]
        async with events(adapter, verb, f"tasks/{task_id}:subscribe") as found:
            pass
        assert found[0][1]["task"]["id"] == task_id
        assert found[-1][1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_a_subscription_to_an_unknown_task_is_a_404_before_any_stream(adapter: str) -> None:
    reply = await call(adapter, "POST", "tasks/nope:subscribe")
    assert error_of(reply) == (404, "NOT_FOUND", "TASK_NOT_FOUND")


async def test_push_configs_are_created_got_listed_and_deleted(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await start_adapter(stub.url, push_allow_hosts=AllowList.parse("127.0.0.1"))
    sent = await call(adapter, "POST", "message:send", message("answer:ok"))
    task_id = sent.json()["task"]["id"]
    base = f"tasks/{task_id}/pushNotificationConfigs"
    config = {"url": "http://127.0.0.1:9/hook", "id": "c1", "token": "t"}
    created = await call(adapter, "POST", base, config)
    assert created.status_code == 200
    assert created.json() == {"taskId": task_id, **config}
    assert (await call(adapter, "GET", f"{base}/c1")).json()["url"] == config["url"]
    listed = await call(adapter, "GET", base + "?pageSize=10")
    assert [found["id"] for found in listed.json()["configs"]] == ["c1"]
    deleted = await call(adapter, "DELETE", f"{base}/c1")
    assert (deleted.status_code, deleted.json()) == (200, {})
    gone = await call(adapter, "GET", f"{base}/c1")
    assert error_of(gone)[0] == 404
    elsewhere = await call(adapter, "POST", base, {**config, "taskId": "another"})
    assert error_of(elsewhere) == (400, "INVALID_ARGUMENT", "INVALID_PARAMS")
    assert "taskId" in elsewhere.json()["error"]["message"]


@pytest.mark.parametrize(
    ("method", "path", "body", "expected"),
    [
        ("GET", "tasks/unknown", None, (404, "NOT_FOUND", "TASK_NOT_FOUND")),
        ("POST", "message:send", {"message": {}}, (400, "INVALID_ARGUMENT", "INVALID_PARAMS")),
        ("POST", "message:send", [1], (400, "INVALID_ARGUMENT", "INVALID_REQUEST")),
        ("GET", "tasks?pageSize=lots", None, (400, "INVALID_ARGUMENT", "INVALID_PARAMS")),
        ("GET", "tasks?pageSize=1000", None, (400, "INVALID_ARGUMENT", "INVALID_PARAMS")),
        ("GET", "tasks/" + "x" * 1025, None, (400, "INVALID_ARGUMENT", "INVALID_PARAMS")),
        ("GET", "nowhere", None, (404, "NOT_FOUND", "METHOD_NOT_FOUND")),
        ("DELETE", "message:send", None, (405, "UNIMPLEMENTED", "METHOD_NOT_FOUND")),
        # §3.3.4: the card does not claim an extended card.
        ("GET", "extendedAgentCard", None, (400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION")),
    ],
)
async def test_each_error_has_its_http_status_and_reason(
    adapter: str, method: str, path: str, body: Any, expected: tuple[int, str, str]
) -> None:
    assert error_of(await call(adapter, method, path, body)) == expected


async def test_a_body_that_is_not_json_is_refused_naming_what_is_wrong(adapter: str) -> None:
    async with httpx.AsyncClient() as http:
        typed = {**V1, "Content-Type": A2A_JSON}
        broken = await http.post(adapter + "message:send", content=b"{", headers=typed)
        form = await http.post(adapter + "message:send", data={"a": "b"}, headers=V1)
    assert error_of(broken) == (400, "INVALID_ARGUMENT", "INVALID_REQUEST")
    assert broken.json()["error"]["message"].startswith("Parse error")
    assert error_of(form) == (400, "INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED")


async def test_a_body_past_the_bound_is_a_413_in_the_binding_s_shape(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await start_adapter(stub.url, max_body_bytes=64)
    reply = await call(adapter, "POST", "message:send", message("x" * 100))
    assert error_of(reply) == (413, "INVALID_ARGUMENT", "INVALID_REQUEST")
    assert "larger than ADAPTER_MAX_BODY_BYTES (64 bytes)" in reply.json()["error"]["message"]


async def test_the_version_header_is_as_for_json_rpc_but_none_is_1_0_here(adapter: str) -> None:
    assert (await call(adapter, "GET", "tasks", **{"A2A-Version": ""})).status_code == 200
    for version in ("0.3", "2.0"):
        reply = await call(adapter, "GET", "tasks", **{"A2A-Version": version})
        assert error_of(reply) == (400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED")


async def test_callers_see_only_their_own_tasks(adapter: str) -> None:
    mine = {"Authorization": "Bearer mine.token"}
    sent = await call(adapter, "POST", "message:send", message("answer:ok"), **mine)
    task_id = sent.json()["task"]["id"]
    other = {"Authorization": "Bearer other.token"}
    assert error_of(await call(adapter, "GET", f"tasks/{task_id}", **other))[0] == 404
    assert (await call(adapter, "GET", "tasks", **other)).json()["tasks"] == []
    assert (await call(adapter, "GET", f"tasks/{task_id}", **mine)).status_code == 200


async def test_a_token_refused_is_a_401_with_the_bearer_challenge(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await start_adapter(stub.url, require_token=True)
    reply = await call(adapter, "GET", "tasks")
    assert error_of(reply)[:2] == (401, "UNAUTHENTICATED")
    assert reply.headers["www-authenticate"].startswith("Bearer")


async def test_the_workflow_gets_the_caller_s_token(stub: StubWebhook, adapter: str) -> None:
    await call(adapter, "POST", "message:send", message("ok"), Authorization="Bearer tok.en")
    assert stub.received[-1].headers["x-subject-token"] == "tok.en"


async def test_requests_are_counted_by_binding(adapter: str) -> None:
    await call(adapter, "POST", "message:send", message("ok"))
    await call(adapter, "GET", "tasks/unknown")
    text = (await get(adapter + "metrics")).text
    name = "n8n_a2a_jsonrpc_requests_total"
    assert sample(text, name, binding="http_json", method="SendMessage", code="0") == 1
    assert sample(text, name, binding="http_json", method="GetTask", code="-32001") == 1


async def test_the_official_client_configured_for_rest_sends_and_gets(adapter: str) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        card = await A2ACardResolver(http, adapter).get_agent_card()
        config = ClientConfig(
            streaming=False, httpx_client=http, supported_protocol_bindings=["HTTP+JSON"]
        )
        client = ClientFactory(config).create(card)
        request = SendMessageRequest(
            message=Message(
                role=Role.ROLE_USER, message_id="m-1", parts=[Part(text="answer:12 pallets")]
            )
        )
        [event] = [event async for event in client.send_message(request)]
        assert event.task.status.state == TaskState.TASK_STATE_COMPLETED
        task = await client.get_task(GetTaskRequest(id=event.task.id))
        assert task.id == event.task.id
        with pytest.raises((TaskNotFoundError, A2AClientError)) as refused:
            await client.get_task(GetTaskRequest(id="unknown"))
        assert isinstance(refused.value, TaskNotFoundError)
        await client.close()


async def test_both_bindings_share_each_caller_s_stream_quota(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await start_adapter(stub.url, max_streams_per_caller=1)
    async with (
        httpx.AsyncClient(timeout=10) as http,
        http.stream("POST", adapter + "message:stream", json=message("hold"), headers=V1) as held,
    ):
        assert held.status_code == 200
        await stub.wait_held()
        second = await call(adapter, "POST", "message:stream", message("answer:ok"))
        assert error_of(second) == (503, "UNAVAILABLE", "SERVER_BUSY")
        assert "ADAPTER_MAX_STREAMS_PER_CALLER" in second.json()["error"]["message"]
        rpc = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": message("x")}
        over_json_rpc = await http.post(adapter, json=rpc, headers=V1)
        assert over_json_rpc.json()["error"]["code"] == -32000


async def test_under_a_public_url_with_a_path_the_routes_are_there_beside_the_card(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    port = free_port()
    public = f"http://127.0.0.1:{port}/agents/supply"
    await start_adapter(stub.url, port=port, public_url=public)
    sent = await call(public + "/", "POST", "message:send", message("answer:routed"))
    assert sent.json()["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    card = await call(public + "/", "GET", ".well-known/agent-card.json")
    assert card.json()["supportedInterfaces"][-1] == {
        "url": public,
        "protocolBinding": "HTTP+JSON",
        "protocolVersion": "1.0",
    }
    elsewhere = await call(f"http://127.0.0.1:{port}/", "POST", "message:send", message("x"))
    assert elsewhere.status_code == 404  # outside the public URL's path: no binding there
