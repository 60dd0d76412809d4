"""Tasks that ask for input, over real HTTP: the wire in both versions, the next turn on
the same task, streams that close at the question, the bounds on waiting tasks."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.support.adapter import AdapterFactory
from tests.support.jsonrpc import V1, call, get_task, rpc, send_v03, send_v1, wait_for_state
from tests.support.sse import kinds_v1, open_stream, results, streaming
from tests.support.stub_webhook import StubWebhook

QUESTION = "ask:Which item: flour, sugar, rice or salt?"


@pytest.fixture
async def asking(stub: StubWebhook, start_adapter: AdapterFactory) -> str:
    """An adapter that lets its workflow ask for input."""
    url: str = await start_adapter(stub.url, allow_input_required=True)
    return url


def naming(document: dict[str, Any], task: dict[str, Any], *, context: bool) -> dict[str, Any]:
    """The send `document`, its message naming `task` (and its context, if asked)."""
    message = document["params"]["message"]
    message["taskId"] = task["id"]
    if context:
        message["contextId"] = task["contextId"]
    return document


async def test_a_v1_question_then_the_answer_on_the_same_task(
    asking: str, stub: StubWebhook
) -> None:
    asked = (await rpc(asking, send_v1(QUESTION), V1))["result"]["task"]
    assert asked["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert asked["status"]["message"]["role"] == "ROLE_AGENT"
    assert asked["status"]["message"]["parts"] == [
        {"text": "Which item: flour, sugar, rice or salt?"}
    ]
    assert asked["metadata"] == {"outcome": "INPUT_REQUIRED"}
    assert "artifacts" not in asked
    # Only the taskId: the context is the task's.
    reply = naming(send_v1("answer:12 pallets of flour", historyLength=3), asked, context=False)
    done = (await rpc(asking, reply, V1))["result"]["task"]
    assert (done["id"], done["contextId"]) == (asked["id"], asked["contextId"])
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert done["artifacts"][0]["parts"] == [{"text": "12 pallets of flour"}]
    assert [(m["role"], m["parts"][0]["text"]) for m in done["history"]] == [
        ("ROLE_AGENT", "Which item: flour, sugar, rice or salt?"),
        ("ROLE_USER", "answer:12 pallets of flour"),
        ("ROLE_AGENT", "12 pallets of flour"),
    ]
    assert all(m["taskId"] == asked["id"] for m in done["history"])
    whole = await get_task(asking, asked["id"])
    assert [m["role"] for m in whole["history"]] == ["ROLE_USER", "ROLE_AGENT"] * 2
    assert [(r.json["taskId"], r.json["contextId"]) for r in stub.received] == [
        (asked["id"], asked["contextId"])
    ] * 2


async def test_a_v03_question_then_the_answer_on_the_same_task(asking: str) -> None:
    asked = (await rpc(asking, send_v03(QUESTION)))["result"]
    assert (asked["kind"], asked["status"]["state"]) == ("task", "input-required")
    assert asked["status"]["message"]["parts"] == [
        {"kind": "text", "text": "Which item: flour, sugar, rice or salt?"}
    ]
    done = (await rpc(asking, naming(send_v03("answer:yes"), asked, context=True)))["result"]
    assert (done["id"], done["status"]["state"]) == (asked["id"], "completed")
    assert [m["role"] for m in done["history"]] == ["user", "agent", "user", "agent"]


async def test_a_v1_stream_closes_at_the_question_and_the_next_turn_streams_anew(
    asking: str,
) -> None:
    async with open_stream(asking, streaming(send_v1(QUESTION)), V1) as stream:
        first = await stream.rest()
    assert kinds_v1(first) == [
        "task TASK_STATE_SUBMITTED",
        "statusUpdate TASK_STATE_WORKING",
        "statusUpdate TASK_STATE_INPUT_REQUIRED",
    ]
    asked = first[0]["result"]["task"]
    reply = naming(streaming(send_v1("answer:flour")), asked, context=True)
    async with open_stream(asking, reply, V1) as stream:
        second = await stream.rest()
    assert kinds_v1(second) == [
        "task TASK_STATE_SUBMITTED",
        "statusUpdate TASK_STATE_WORKING",
        "artifactUpdate",
        "statusUpdate TASK_STATE_COMPLETED",
    ]
    again = second[0]["result"]["task"]
    assert again["id"] == asked["id"]
    assert [m["role"] for m in again["history"]] == ["ROLE_USER", "ROLE_AGENT", "ROLE_USER"]


async def test_a_v03_stream_marks_the_question_final(asking: str) -> None:
    async with open_stream(asking, streaming(send_v03(QUESTION))) as stream:
        events = await stream.rest()
    shown = [(r["kind"], r.get("final"), r.get("status", {}).get("state")) for r in results(events)]
    assert shown == [
        ("task", None, "submitted"),
        ("status-update", False, "working"),
        ("status-update", True, "input-required"),
    ]


async def test_a_subscription_to_a_waiting_task_hears_its_next_turn(asking: str) -> None:
    asked = (await rpc(asking, send_v1(QUESTION), V1))["result"]["task"]
    async with open_stream(asking, call("SubscribeToTask", id=asked["id"]), V1) as stream:
        joined = await stream.next()
        assert joined is not None
        assert joined["result"]["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        await rpc(asking, naming(send_v1("escalate:a person decides"), asked, context=False), V1)
        events = await stream.rest()
    assert kinds_v1(events) == [
        "statusUpdate TASK_STATE_SUBMITTED",
        "statusUpdate TASK_STATE_WORKING",
        "statusUpdate TASK_STATE_FAILED",
    ]


async def test_a_message_for_a_running_task_is_refused_naming_its_state(
    asking: str, stub: StubWebhook
) -> None:
    running = (await rpc(asking, send_v1("hold", returnImmediately=True), V1))["result"]["task"]
    refused = await rpc(asking, naming(send_v1("more"), running, context=True), V1)
    assert refused["error"]["code"] == -32004
    assert f"Task {running['id']} is working" in refused["error"]["message"]
    await rpc(asking, call("CancelTask", id=running["id"]), V1)
    refused = await rpc(asking, naming(send_v1("more"), running, context=True), V1)
    assert refused["error"]["code"] == -32004
    assert "is canceled and takes no further messages" in refused["error"]["message"]
    assert len(stub.received) == 1


async def test_a_streamed_message_for_a_running_task_is_refused_in_each_versions_way(
    asking: str,
) -> None:
    running = (await rpc(asking, send_v1("hold", returnImmediately=True), V1))["result"]["task"]
    # v1.0: a plain JSON-RPC error, before any stream; v0.3: the stream's one error event.
    refused = await rpc(asking, naming(streaming(send_v1("more")), running, context=True), V1)
    assert refused["error"]["code"] == -32004
    assert f"Task {running['id']} is working" in refused["error"]["message"]
    async with open_stream(asking, naming(streaming(send_v03("more")), running, context=True)) as s:
        [event] = await s.rest()
    assert event["error"]["code"] == -32004
    await rpc(asking, call("CancelTask", id=running["id"]), V1)


async def test_cancel_of_a_waiting_task(asking: str) -> None:
    asked = (await rpc(asking, send_v1(QUESTION), V1))["result"]["task"]
    canceled = (await rpc(asking, call("CancelTask", id=asked["id"]), V1))["result"]
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    assert canceled["metadata"] == {"outcome": "CANCELED"}


async def test_a_waiting_task_ends_when_no_answer_comes_in_time(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await start_adapter(stub.url, allow_input_required=True, input_ttl=0.3)
    asked = (await rpc(adapter, send_v1(QUESTION), V1))["result"]["task"]
    expired = await wait_for_state(adapter, asked["id"], "TASK_STATE_FAILED")
    assert expired["metadata"] == {"outcome": "INPUT_EXPIRED"}
    assert "within 0.3 s (ADAPTER_INPUT_TTL)" in expired["status"]["message"]["parts"][0]["text"]
    refused = await rpc(adapter, naming(send_v1("answer:late"), asked, context=True), V1)
    assert refused["error"]["code"] == -32004


async def test_a_second_turn_that_times_out_fails_the_task(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await start_adapter(stub.url, allow_input_required=True, webhook_timeout=0.3)
    asked = (await rpc(adapter, send_v1(QUESTION), V1))["result"]["task"]
    done = (await rpc(adapter, naming(send_v1("sleep:2"), asked, context=True), V1))["result"]
    assert done["task"]["status"]["state"] == "TASK_STATE_FAILED"
    assert done["task"]["metadata"] == {"outcome": "TIMEOUT"}


async def test_without_the_setting_a_third_key_is_off_contract(adapter: str) -> None:
    task = (await rpc(adapter, send_v1(QUESTION), V1))["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_FAILED"
    assert task["metadata"] == {"outcome": "OFF_CONTRACT"}
    assert (
        "its keys are ['answer', 'escalate', 'inputRequired']"
        in (task["status"]["message"]["parts"][0]["text"])
    )


async def test_a_table_full_of_waiting_tasks_refuses_a_new_send_naming_the_limits(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await start_adapter(
        stub.url,
        allow_input_required=True,
        max_tasks=2,
        max_concurrent_calls=1,
        max_queued_calls=1,
    )
    first = (await rpc(adapter, send_v1(QUESTION), V1))["result"]["task"]
    await rpc(adapter, send_v1(QUESTION), V1)
    refused = await rpc(adapter, send_v1("answer:x"), V1)
    assert refused["error"]["code"] == -32000
    for named in ("waiting for input", "ADAPTER_MAX_TASKS", "ADAPTER_INPUT_TTL"):
        assert named in refused["error"]["message"]
    # Nothing was dropped: the waiting tasks are there, and answering one still works.
    done = (await rpc(adapter, naming(send_v1("answer:x"), first, context=True), V1))["result"]
    assert done["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    # A finished task may leave the table: the next send finds room.
    assert "result" in await rpc(adapter, send_v1("answer:y"), V1)


async def test_the_metrics_count_each_turn(asking: str) -> None:
    asked = (await rpc(asking, send_v1(QUESTION), V1))["result"]["task"]
    await rpc(asking, naming(send_v1("answer:flour"), asked, context=True), V1)
    async with httpx.AsyncClient() as client:
        shown = (await client.get(asking + "metrics")).text
    assert 'n8n_a2a_tasks_total{outcome="INPUT_REQUIRED"} 1.0' in shown
    assert 'n8n_a2a_tasks_total{outcome="ANSWERED"} 1.0' in shown
