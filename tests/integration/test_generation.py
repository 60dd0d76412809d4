"""A task's generation (A2A 1.1 as drafted) over real HTTP, on both bindings: served to a
caller that asks for 1.1 only, a GetTask held until it passes a generation (or its wait
ends), a send refused when the task is not at the generation it names."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
import trio
from a2a.types import a2a_pb2
from google.protobuf import json_format  # type: ignore[import-untyped]

from tests.support.adapter import AdapterFactory
from tests.support.jsonrpc import V1, call, rpc, send_v03, send_v1
from tests.support.sse import open_stream, streaming
from tests.support.stub_webhook import StubWebhook

V11 = {"A2A-Version": "1.1"}


@pytest.fixture
async def adapter_11(stub: StubWebhook, start_adapter: AdapterFactory) -> str:
    """Questions allowed, a long-poll held 0.5 s at most."""
    url: str = await start_adapter(stub.url, allow_input_required=True, long_poll_timeout=0.5)
    return url


async def get_11(adapter: str, task_id: str, **params: Any) -> dict[str, Any]:
    task: dict[str, Any] = (await rpc(adapter, call("GetTask", id=task_id, **params), V11))[
        "result"
    ]
    return task


def naming(document: dict[str, Any], task: dict[str, Any]) -> dict[str, Any]:
    document["params"]["message"]["taskId"] = task["id"]
    return document


async def test_a_task_and_its_events_carry_the_generation_each_one_more(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    streamed = await start_adapter(stub.url, webhook_streaming=True)
    async with open_stream(streamed, streaming(send_v1("stream:3")), V11) as stream:
        events = await stream.rest()
    first, *updates = [event["result"] for event in events]
    assert first["task"]["generation"] == "1"
    kinds = [next(iter(update)) for update in updates]
    generations = [
        int(update[kind]["generation"]) for kind, update in zip(kinds, updates, strict=True)
    ]
    # working, the chunks as relayed (those that came together as one), the whole
    # answer, completed: one generation each, in order.
    assert kinds[0] == "statusUpdate" and kinds[-2:] == ["artifactUpdate", "statusUpdate"]
    assert len(kinds) >= 4 and generations == list(range(2, 2 + len(updates)))
    task = await get_11(streamed, first["task"]["id"])
    assert task["generation"] == str(generations[-1])


async def test_v1_0_and_v0_3_answers_carry_no_generation_and_parse_strictly(
    adapter_11: str,
) -> None:
    done = (await rpc(adapter_11, send_v1("hello"), V1))["result"]
    assert "generation" not in done["task"]
    # a2a-sdk 1.0 to 1.2 parse a v1.0 answer so, refusing any field they do not know.
    json_format.ParseDict(done, a2a_pb2.SendMessageResponse())
    old = (await rpc(adapter_11, send_v03("hello")))["result"]
    assert "generation" not in old


async def test_a_long_poll_is_woken_by_a_state_change(adapter_11: str) -> None:
    made = (await rpc(adapter_11, send_v1("sleep:0.3", returnImmediately=True), V11))["result"]
    task = made["task"]
    assert (task["status"]["state"], task["generation"]) == ("TASK_STATE_WORKING", "2")
    with trio.fail_after(5):
        woken = await get_11(adapter_11, task["id"], currentGeneration=task["generation"])
    assert woken["status"]["state"] == "TASK_STATE_COMPLETED"
    assert woken["generation"] == "4"  # its answer, then its status


async def test_a_long_poll_ends_at_its_timeout_with_the_task_unchanged(adapter_11: str) -> None:
    asked = (await rpc(adapter_11, send_v1("ask:Which item?"), V11))["result"]["task"]
    assert (asked["status"]["state"], asked["generation"]) == ("TASK_STATE_INPUT_REQUIRED", "3")
    started = trio.current_time()
    unchanged = await get_11(adapter_11, asked["id"], currentGeneration=3)
    assert trio.current_time() - started >= 0.45
    assert (unchanged["generation"], unchanged["status"]) == ("3", asked["status"])
    # A generation passed already is answered at once.
    with trio.fail_after(0.4):
        assert (await get_11(adapter_11, asked["id"], currentGeneration=2))["generation"] == "3"


async def test_a_send_at_another_generation_is_refused_and_runs_nothing(
    adapter_11: str, stub: StubWebhook
) -> None:
    asked = (await rpc(adapter_11, send_v1("ask:Which item?"), V11))["result"]["task"]
    stale = naming(send_v1("answer:flour", ifGenerationMatch="2"), asked)
    refused = (await rpc(adapter_11, stale, V11))["error"]
    assert refused["code"] == -32010
    assert refused["data"][0]["reason"] == "TASK_GENERATION_MISMATCH"
    assert refused["data"][0]["metadata"] == {
        "taskId": asked["id"],
        "expectedGeneration": "2",
        "currentGeneration": "3",
    }
    assert len(stub.received) == 1
    fresh = naming(send_v1("answer:flour", ifGenerationMatch=3), asked)
    done = (await rpc(adapter_11, fresh, V11))["result"]["task"]
    assert (done["status"]["state"], done["generation"]) == ("TASK_STATE_COMPLETED", "7")
    assert len(stub.received) == 2


async def test_the_http_json_binding_long_polls_and_refuses_a_mismatch_409(
    adapter_11: str, stub: StubWebhook
) -> None:
    async with httpx.AsyncClient(timeout=10, headers=V11) as http:
        body = {
            "message": {"messageId": "m-rest-1", "role": "ROLE_USER", "parts": [{"text": "ask:?"}]}
        }
        asked = (await http.post(f"{adapter_11}/message:send", json=body)).json()["task"]
        assert asked["generation"] == "3"
        started = trio.current_time()
        held = await http.get(f"{adapter_11}/tasks/{asked['id']}?currentGeneration=3")
        assert held.json()["generation"] == "3" and trio.current_time() - started >= 0.45
        stale = {
            "message": {
                "messageId": "m-rest-2",
                "role": "ROLE_USER",
                "parts": [{"text": "answer:flour"}],
                "taskId": asked["id"],
            },
            "configuration": {"ifGenerationMatch": "1"},
        }
        refused = await http.post(f"{adapter_11}/message:send", json=stale)
        assert refused.status_code == 409
        error = refused.json()["error"]
        assert (error["status"], error["details"][0]["reason"]) == (
            "ABORTED",
            "TASK_GENERATION_MISMATCH",
        )
        assert error["details"][0]["metadata"]["currentGeneration"] == "3"
        # Without the 1.1 header: 1.0's answer, no generation.
        plain = await http.get(f"{adapter_11}/tasks/{asked['id']}", headers=V1)
        assert plain.status_code == 200 and "generation" not in plain.json()
    assert len(stub.received) == 1
