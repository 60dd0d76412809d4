"""Streamed replies (ADAPTER_WEBHOOK_STREAMING) over real HTTP: the stub writes chunks as
n8n 2.41 does, and each reaches the caller's stream before the workflow has finished."""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import pytest
import trio

from n8n_a2a.protocol.push import AllowList
from n8n_a2a.server import serve
from tests.support.adapter import AdapterFactory, free_port, make_settings
from tests.support.jsonrpc import V1, call, rpc, send_v03, send_v1
from tests.support.push_receiver import start_push_receiver
from tests.support.sse import kinds_v1, open_stream, results, streaming
from tests.support.stub_webhook import StubWebhook


@pytest.fixture
async def streamed(start_adapter: AdapterFactory, stub: StubWebhook) -> str:
    url: str = await start_adapter(stub.url, webhook_streaming=True)
    return url


def artifact_of(event: dict[str, Any]) -> tuple[str, str, bool, bool]:
    """A v1.0 artifact update as (artifact id, its text, append, lastChunk)."""
    update = event["result"]["artifactUpdate"]
    text = "".join(part["text"] for part in update["artifact"]["parts"])
    return update["artifact"]["artifactId"], text, update["append"], update["lastChunk"]


async def test_the_first_chunk_reaches_the_stream_before_the_workflow_has_finished(
    streamed: str, stub: StubWebhook
) -> None:
    async with open_stream(streamed, streaming(send_v1("stream-held:3")), V1) as stream:
        submitted, working, first = [await stream.next() for _ in range(3)]
        # The stub holds the rest of its reply until released: the chunk came first.
        assert stub.streamed == 0
        stub.release_streams()
        rest = await stream.rest()
    events: list[dict[str, Any]] = [submitted, working, first, *rest]  # type: ignore[list-item]
    kinds = kinds_v1(events)
    assert kinds[:3] == [
        "task TASK_STATE_SUBMITTED",
        "statusUpdate TASK_STATE_WORKING",
        "artifactUpdate",
    ]
    assert kinds[-1] == "statusUpdate TASK_STATE_COMPLETED"
    chunks = [artifact_of(event) for event in events[2:-1]]
    answer_id = chunks[0][0]
    assert chunks[0] == (answer_id, "chunk 1 ", False, False)
    assert all(chunk[0] == answer_id and chunk[2:] == (True, False) for chunk in chunks[1:-1])
    # The whole answer last, under the same id: what the completed task carries.
    assert chunks[-1] == (answer_id, "chunk 1 chunk 2 chunk 3 ", False, True)
    assert "".join(chunk[1] for chunk in chunks[:-1]) == chunks[-1][1]


async def test_a_burst_of_tiny_chunks_keeps_its_subscriber_and_reaches_it_whole(
    start_adapter: AdapterFactory, stub: StubWebhook
) -> None:
    # Each item is an HTTP chunk of its own: one event each would fill the stream's buffer.
    items = 3_000
    whole = "".join(str(i % 10) for i in range(items))
    adapter = await start_adapter(stub.url, webhook_streaming=True, webhook_timeout=120)
    async with open_stream(adapter, streaming(send_v1(f"stream-burst:{items}")), V1) as stream:
        events = await stream.rest()
    assert "error" not in events[-1], events[-1]
    assert kinds_v1(events)[-1] == "statusUpdate TASK_STATE_COMPLETED", events[-1]
    chunks = [artifact_of(event) for event in events[2:-1]]
    assert "".join(chunk[1] for chunk in chunks[:-1]) == whole == chunks[-1][1]


async def test_a_blocking_send_answers_the_completed_task_with_the_whole_text(
    streamed: str,
) -> None:
    task = (await rpc(streamed, send_v1("stream:3"), V1))["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    [answer] = task["artifacts"]
    assert answer["parts"] == [{"text": "chunk 1 chunk 2 chunk 3 "}]


async def test_a_v03_stream_has_its_chunks_as_artifact_updates(streamed: str) -> None:
    async with open_stream(streamed, streaming(send_v03("stream:2"))) as stream:
        events = results(await stream.rest())
    updates = [event for event in events if event["kind"] == "artifact-update"]
    assert [(u.get("append"), u.get("lastChunk")) for u in updates][-1] == (False, True)
    assert all(u.get("lastChunk") is False for u in updates[:-1]) and len(updates) >= 2
    assert events[-1]["status"]["state"] == "completed"


async def test_a_cancel_mid_stream_closes_the_connection_to_the_workflow(
    streamed: str, stub: StubWebhook
) -> None:
    async with open_stream(streamed, streaming(send_v1("stream-held:3")), V1) as stream:
        submitted, _, _ = [await stream.next() for _ in range(3)]
        assert submitted is not None
        task_id = submitted["result"]["task"]["id"]
        canceled = await rpc(streamed, call("CancelTask", id=task_id), V1)
        assert canceled["result"]["status"]["state"] == "TASK_STATE_CANCELED"
        await stub.wait_released()
        rest = await stream.rest()
    assert kinds_v1(rest) == ["statusUpdate TASK_STATE_CANCELED"]
    assert stub.streamed == 0


async def test_a_contract_reply_in_a_stream_is_held_back_and_judged(streamed: str) -> None:
    document = streaming(send_v1('stream-json:{"answer": "30 is a lot", "escalate": true}'))
    async with open_stream(streamed, document, V1) as stream:
        events = await stream.rest()
    assert kinds_v1(events) == [
        "task TASK_STATE_SUBMITTED",
        "statusUpdate TASK_STATE_WORKING",
        "statusUpdate TASK_STATE_FAILED",
    ]
    status = events[-1]["result"]["statusUpdate"]
    assert status["metadata"]["outcome"] == "ESCALATED"


@pytest.mark.parametrize(
    ("text", "outcome", "shown"),
    [
        ("stream-error", "NODE_ERROR", "The service is down"),
        ("stream-unended", "OFF_CONTRACT", "partial"),
        ("stream-garbage", "OFF_CONTRACT", "502 Bad Gateway"),
        ("stream-unknown", "OFF_CONTRACT", "surprise"),
    ],
)
async def test_a_stream_off_its_chunks_fails_and_shows_why(
    streamed: str, text: str, outcome: str, shown: str
) -> None:
    task = (await rpc(streamed, send_v1(text), V1))["result"]["task"]
    assert (task["status"]["state"], task["metadata"]["outcome"]) == ("TASK_STATE_FAILED", outcome)
    assert shown in task["status"]["message"]["parts"][0]["text"]
    assert not task.get("artifacts")


async def test_a_streamed_text_is_whole_within_its_bound_and_fails_past_it_naming_it(
    start_adapter: AdapterFactory, stub: StubWebhook
) -> None:
    # The stub's "stream-huge" is 17 items of 64 KiB: past the 1 MiB once the bound.
    whole = await start_adapter(stub.url, webhook_streaming=True)
    task = (await rpc(whole, send_v1("stream-huge"), V1))["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][-1]["parts"] == [{"text": "x" * (17 * 64 * 1024)}]
    bounded = await start_adapter(stub.url, webhook_streaming=True, max_reply_bytes=1024 * 1024)
    task = (await rpc(bounded, send_v1("stream-huge"), V1))["result"]["task"]
    assert (task["status"]["state"], task["metadata"]["outcome"]) == (
        "TASK_STATE_FAILED",
        "OFF_CONTRACT",
    )
    reason = task["status"]["message"]["parts"][0]["text"]
    assert "larger than ADAPTER_MAX_REPLY_BYTES (1,048,576 bytes)" in reason


async def test_without_the_setting_nothing_changes(
    start_adapter: AdapterFactory, stub: StubWebhook
) -> None:
    adapter = await start_adapter(stub.url)
    async with open_stream(adapter, streaming(send_v1("stream:2")), V1) as stream:
        events = await stream.rest()
    assert "artifactUpdate" not in kinds_v1(events)
    assert events[-1]["result"]["statusUpdate"]["metadata"]["outcome"] == "OFF_CONTRACT"
    task = (await rpc(adapter, send_v1("answer:12 pallets"), V1))["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_shutdown_mid_stream_closes_the_connection_to_the_workflow(
    stub: StubWebhook, nursery: trio.Nursery
) -> None:
    stop, port = trio.Event(), free_port()
    public_url = f"http://127.0.0.1:{port}/"
    settings = make_settings(
        stub.url, port=port, public_url=public_url, webhook_streaming=True, shutdown_grace=0.1
    )
    await nursery.start(partial(serve, settings, shutdown_trigger=stop.wait))
    async with open_stream(public_url, streaming(send_v1("stream-held:3")), V1) as stream:
        for _ in range(3):  # the task, working, the first chunk
            await stream.next()
        stop.set()
        await stub.wait_released()
        rest = await stream.rest()
    assert rest[-1]["result"]["statusUpdate"]["metadata"]["outcome"] == "SHUTDOWN"
    assert stub.streamed == 0


async def test_a_push_receiver_gets_the_chunks_then_the_whole_answer(
    stub: StubWebhook, start_adapter: AdapterFactory, nursery: trio.Nursery
) -> None:
    adapter = await start_adapter(
        stub.url, webhook_streaming=True, push_allow_hosts=AllowList.parse("127.0.0.1")
    )
    receiver = await start_push_receiver(nursery)
    document = send_v1("stream-held:3", taskPushNotificationConfig={"url": receiver.url})
    async with trio.open_nursery() as sending:
        sending.start_soon(rpc, adapter, document, V1)
        with trio.fail_after(10):
            await receiver.wait_received(2)  # working, then the first chunk
        stub.release_streams()
        with trio.fail_after(10):
            while not any("COMPLETED" in json.dumps(body) for body in receiver.bodies()):
                await receiver.wait_received(len(receiver.received) + 1)
    bodies = receiver.bodies()
    updates = [body["artifactUpdate"] for body in bodies if "artifactUpdate" in body]
    assert updates[0]["artifact"]["parts"] == [{"text": "chunk 1 "}]
    assert (updates[-1]["append"], updates[-1]["lastChunk"]) == (False, True)
    appended = "".join(u["artifact"]["parts"][0]["text"] for u in updates[:-1])
    assert appended == updates[-1]["artifact"]["parts"][0]["text"] == "chunk 1 chunk 2 chunk 3 "
    assert "statusUpdate" in bodies[-1]
