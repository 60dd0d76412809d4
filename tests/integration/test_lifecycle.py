"""The whole task lifecycle over real HTTP: non-blocking sends, cancel, list, conversations,
limits and clean shutdown."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from functools import partial
from typing import Any

import httpx
import pytest
import trio

from n8n_a2a.server import serve
from tests.support.adapter import (
    AdapterFactory,
    free_port,
    make_settings,
    send_in_background,
    wait_until_serving,
)
from tests.support.jsonrpc import V1, call, get_task, rpc, send_v03, send_v1, wait_for_state
from tests.support.stub_webhook import StubWebhook


async def test_return_immediately_answers_working_and_polling_shows_the_end(
    adapter: str,
) -> None:
    reply = await rpc(adapter, send_v1("sleep:0.3", returnImmediately=True), V1)
    task = reply["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_WORKING"
    assert [m["role"] for m in task["history"]] == ["ROLE_USER"]
    done = await wait_for_state(adapter, task["id"], "TASK_STATE_COMPLETED")
    assert done["artifacts"][0]["parts"] == [{"text": "slept"}]


async def test_v03_blocking_false_answers_working(adapter: str) -> None:
    document = send_v03("sleep:0.2")
    document["params"]["configuration"]["blocking"] = False
    task = (await rpc(adapter, document))["result"]
    assert (task["kind"], task["status"]["state"]) == ("task", "working")
    await wait_for_state(adapter, task["id"], "TASK_STATE_COMPLETED")


async def test_cancel_cuts_the_call_in_flight(adapter: str, stub: StubWebhook) -> None:
    task = (await rpc(adapter, send_v1("hold", returnImmediately=True), V1))["result"]["task"]
    with trio.fail_after(5):
        await stub.wait_held()
    canceled = (await rpc(adapter, call("CancelTask", id=task["id"]), V1))["result"]
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    assert canceled["metadata"] == {"outcome": "CANCELED"}
    with trio.fail_after(5):
        await stub.wait_released()  # the connection was closed, not left dangling
    assert (await get_task(adapter, task["id"]))["status"]["state"] == "TASK_STATE_CANCELED"
    again = await rpc(adapter, call("CancelTask", id=task["id"]), V1)
    assert again["error"]["code"] == -32002
    assert again["error"]["data"][0]["reason"] == "TASK_NOT_CANCELABLE"


async def test_a_blocked_sender_sees_the_cancel(
    adapter: str, stub: StubWebhook, nursery: trio.Nursery
) -> None:
    pending = send_in_background(nursery, adapter, "hold")
    with trio.fail_after(5):
        await stub.wait_held()
    task_id = stub.received[0].json["taskId"]
    await rpc(adapter, call("CancelTask", id=task_id), V1)
    reply = await pending.answer()
    assert reply["result"]["task"]["status"]["state"] == "TASK_STATE_CANCELED"


async def test_v03_cancel_and_its_errors(adapter: str) -> None:
    document = send_v03("hold")
    document["params"]["configuration"]["blocking"] = False
    task = (await rpc(adapter, document))["result"]
    canceled = (await rpc(adapter, call("tasks/cancel", id=task["id"])))["result"]
    assert (canceled["kind"], canceled["status"]["state"]) == ("task", "canceled")
    assert (await rpc(adapter, call("tasks/cancel", id=task["id"])))["error"]["code"] == -32002
    assert (await rpc(adapter, call("tasks/cancel", id="nope")))["error"]["code"] == -32001


async def test_cancel_of_a_finished_task_is_32002(adapter: str) -> None:
    task = (await rpc(adapter, send_v1("answer:x"), V1))["result"]["task"]
    assert (await rpc(adapter, call("CancelTask", id=task["id"]), V1))["error"]["code"] == -32002


async def test_a_context_continues_and_reaches_the_workflow(
    adapter: str, stub: StubWebhook
) -> None:
    first = (await rpc(adapter, send_v1("answer:one"), V1))["result"]["task"]
    follow_up = send_v1("answer:two")
    follow_up["params"]["message"]["contextId"] = first["contextId"]
    second = (await rpc(adapter, follow_up, V1))["result"]["task"]
    assert second["contextId"] == first["contextId"]
    assert second["id"] != first["id"]
    assert [r.json["contextId"] for r in stub.received] == [first["contextId"]] * 2


async def test_a_message_for_a_finished_task_or_another_context_is_refused(
    adapter: str,
) -> None:
    task = (await rpc(adapter, send_v1("answer:one"), V1))["result"]["task"]
    again = send_v1("answer:two")
    again["params"]["message"]["taskId"] = task["id"]
    error = (await rpc(adapter, again, V1))["error"]
    assert error["code"] == -32004
    assert "completed" in error["message"]
    again["params"]["message"]["contextId"] = "another-context"
    assert (await rpc(adapter, again, V1))["error"]["code"] == -32602
    again["params"]["message"]["taskId"] = "no-such-task"
    assert (await rpc(adapter, again, V1))["error"]["code"] == -32001


async def test_list_tasks_filters_pages_and_trims(adapter: str) -> None:
    context = send_v1("answer:a")
    context["params"]["message"]["contextId"] = "ctx-list"
    ids = []
    for text in ("answer:a", "answer:b", "escalate:c", "answer:d", "answer:e"):
        document = send_v1(text)
        document["params"]["message"]["contextId"] = "ctx-list"
        ids.append((await rpc(adapter, document, V1))["result"]["task"]["id"])
    await rpc(adapter, send_v1("answer:elsewhere"), V1)

    page = (await rpc(adapter, call("ListTasks", contextId="ctx-list", pageSize=2), V1))["result"]
    assert page["totalSize"] == 5 and page["pageSize"] == 2
    assert [t["id"] for t in page["tasks"]] == ids[::-1][:2]  # newest first
    assert all("artifacts" not in t for t in page["tasks"])
    seen = [t["id"] for t in page["tasks"]]
    while page["nextPageToken"]:
        page = (
            await rpc(
                adapter,
                call(
                    "ListTasks", contextId="ctx-list", pageSize=2, pageToken=page["nextPageToken"]
                ),
                V1,
            )
        )["result"]
        seen += [t["id"] for t in page["tasks"]]
    assert seen == ids[::-1]

    failed = (
        await rpc(adapter, call("ListTasks", contextId="ctx-list", status="TASK_STATE_FAILED"), V1)
    )["result"]
    assert [t["id"] for t in failed["tasks"]] == [ids[2]]
    trimmed = (
        await rpc(
            adapter,
            call("ListTasks", contextId="ctx-list", historyLength=0, includeArtifacts=True),
            V1,
        )
    )["result"]
    assert not any("history" in t for t in trimmed["tasks"])
    assert trimmed["tasks"][0]["artifacts"][0]["parts"] == [{"text": "e"}]


@pytest.mark.parametrize(
    "params",
    [
        {"pageSize": 0},
        {"pageSize": 101},
        {"pageToken": "garbage!"},
        {"status": "DONE"},
        {"statusTimestampAfter": "yesterday"},
        {"historyLength": -1},
    ],
)
async def test_list_tasks_refuses_bad_params(adapter: str, params: dict[str, Any]) -> None:
    assert (await rpc(adapter, call("ListTasks", **params), V1))["error"]["code"] == -32602


async def test_past_the_call_limit_sends_wait_in_order_then_are_refused(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await start_adapter(stub.url, max_concurrent_calls=1, max_queued_calls=1)
    first = (await rpc(adapter, send_v1("hold", returnImmediately=True), V1))["result"]["task"]
    second = (await rpc(adapter, send_v1("answer:queued", returnImmediately=True), V1))["result"][
        "task"
    ]
    assert first["status"]["state"] == "TASK_STATE_WORKING"
    assert second["status"]["state"] == "TASK_STATE_SUBMITTED"  # waiting its turn, honestly
    refused = await rpc(adapter, send_v1("answer:third"), V1)
    assert refused["error"]["code"] == -32000
    assert "ADAPTER_MAX_QUEUED_CALLS" in refused["error"]["message"]
    await rpc(adapter, call("CancelTask", id=first["id"]), V1)
    done = await wait_for_state(adapter, second["id"], "TASK_STATE_COMPLETED")
    assert done["artifacts"][0]["parts"] == [{"text": "queued"}]


async def test_a_queued_task_can_be_canceled(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await start_adapter(stub.url, max_concurrent_calls=1, max_queued_calls=5)
    await rpc(adapter, send_v1("hold", returnImmediately=True), V1)
    queued = (await rpc(adapter, send_v1("answer:x", returnImmediately=True), V1))["result"]["task"]
    canceled = (await rpc(adapter, call("CancelTask", id=queued["id"]), V1))["result"]
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    assert len(stub.received) == 1  # the queued task never called the workflow


async def test_the_table_evicts_finished_tasks_under_a_small_limit(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    adapter = await start_adapter(stub.url, max_tasks=3, max_concurrent_calls=2, max_queued_calls=1)
    running = (await rpc(adapter, send_v1("hold", returnImmediately=True), V1))["result"]["task"]
    finished = [
        (await rpc(adapter, send_v1(f"answer:{n}"), V1))["result"]["task"]["id"] for n in range(4)
    ]
    listing = (await rpc(adapter, call("ListTasks"), V1))["result"]
    assert listing["totalSize"] == 3
    assert {t["id"] for t in listing["tasks"]} == {running["id"], *finished[-2:]}
    assert (await get_task(adapter, running["id"]))["status"]["state"] == "TASK_STATE_WORKING"
    assert (await rpc(adapter, call("GetTask", id=finished[0]), V1))["error"]["code"] == -32001


async def test_a_task_keeps_its_texts_whole(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    # 200 kB: far past the 8,192 characters a task once kept of each.
    adapter = await start_adapter(stub.url)
    task = (await rpc(adapter, send_v1("y" * 200_000), V1))["result"]["task"]
    assert stub.received[0].json["text"] == "y" * 200_000  # the workflow gets all of it
    assert task["metadata"] == {"outcome": "ANSWERED"}
    kept = [{"text": "y" * 200_000}]
    assert [m["parts"] for m in task["history"]] == [kept, kept]
    assert task["artifacts"][0]["parts"] == kept


async def start_stoppable(
    stub: StubWebhook, nursery: trio.Nursery, **overrides: Any
) -> tuple[str, trio.Event]:
    stop = trio.Event()
    port = free_port()
    settings = make_settings(
        stub.url, port=port, public_url=f"http://127.0.0.1:{port}/", **overrides
    )
    await nursery.start(partial(serve, settings, shutdown_trigger=stop.wait))
    return settings.public_url, stop


async def test_shutdown_lets_calls_finish_within_the_grace_period(
    stub: StubWebhook, nursery: trio.Nursery
) -> None:
    adapter, stop = await start_stoppable(stub, nursery, shutdown_grace=5.0)
    pending = send_in_background(nursery, adapter, "sleep:0.5")
    with trio.fail_after(5):
        await stub.wait_received()
    stop.set()
    reply = await pending.answer()
    assert reply["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_shutdown_cuts_calls_past_the_grace_period_as_failed(
    stub: StubWebhook, nursery: trio.Nursery
) -> None:
    adapter, stop = await start_stoppable(stub, nursery, shutdown_grace=0.5)
    pending = send_in_background(nursery, adapter, "hold")
    with trio.fail_after(5):
        await stub.wait_held()
    stop.set()
    task = (await pending.answer())["result"]["task"]
    with trio.fail_after(5):
        await stub.wait_released()
    assert task["status"]["state"] == "TASK_STATE_FAILED"
    assert task["metadata"] == {"outcome": "SHUTDOWN"}
    assert "shut down" in task["status"]["message"]["parts"][0]["text"]


async def test_sigterm_drains_and_exits_cleanly(stub: StubWebhook, nursery: trio.Nursery) -> None:
    port = free_port()
    environ = {
        **os.environ,
        "ADAPTER_AGENT_NAME": "a",
        "ADAPTER_AGENT_DESCRIPTION": "b",
        "ADAPTER_SKILL_ID": "s",
        "ADAPTER_SKILL_NAME": "n",
        "ADAPTER_SKILL_DESCRIPTION": "d",
        "ADAPTER_WEBHOOK_URL": stub.url,
        "ADAPTER_PUBLIC_URL": f"http://127.0.0.1:{port}/",
        "ADAPTER_HOST": "127.0.0.1",
        "ADAPTER_PORT": str(port),
        "ADAPTER_SHUTDOWN_GRACE": "0.5",
    }
    adapter = environ["ADAPTER_PUBLIC_URL"]
    process = await trio.lowlevel.open_process(
        [sys.executable, "-m", "n8n_a2a"], env=environ, stderr=subprocess.PIPE
    )
    try:
        await wait_until_serving(adapter)
        pending = send_in_background(nursery, adapter, "hold")
        with trio.fail_after(5):
            await stub.wait_held()
        process.send_signal(signal.SIGTERM)
        reply = await pending.answer()
        assert reply["result"]["task"]["metadata"] == {"outcome": "SHUTDOWN"}
        with trio.fail_after(10):
            assert await process.wait() == 0
        assert process.stderr is not None
        assert b"Traceback" not in await process.stderr.receive_some()
    finally:
        process.kill()
        await process.wait()


async def test_a_cancel_storm_against_one_call_slot_leaves_the_server_serving(
    stub: StubWebhook, start_adapter: AdapterFactory
) -> None:
    # Queued tasks canceled as they got their slot once killed the whole process.
    adapter = await start_adapter(stub.url, max_concurrent_calls=1)
    sent: list[str] = []
    answers: list[dict[str, Any]] = []
    # 200 senders share the client's 100 connections: waiting for one is the test's own
    # queue, bounded by the storm's 60 s, not a server answer late (10 s each).
    async with httpx.AsyncClient(timeout=httpx.Timeout(10, pool=60)) as client:

        async def post(document: dict[str, Any]) -> dict[str, Any]:
            reply = await client.post(adapter, json=document, headers=V1)
            answer: dict[str, Any] = reply.json()
            return answer

        async def send_then_cancel(number: int) -> None:
            document = send_v1(f"answer:{number}", returnImmediately=True)
            task_id = (await post(document))["result"]["task"]["id"]
            sent.append(task_id)
            answers.append(await post(call("CancelTask", id=task_id)))

        with trio.fail_after(60):
            async with trio.open_nursery() as storm:
                for number in range(200):
                    storm.start_soon(send_then_cancel, number)
        outcomes = {
            a["result"]["status"]["state"] if "result" in a else a["error"]["code"] for a in answers
        }
        assert outcomes <= {"TASK_STATE_CANCELED", -32002}
        states = {(await get_task(adapter, task_id))["status"]["state"] for task_id in sent}
        assert states <= {"TASK_STATE_CANCELED", "TASK_STATE_COMPLETED"}
        after = await post(send_v1("answer:still here"))
        assert after["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
