"""One n8n execution across turns, over real HTTP: a question carrying its execution's
`resumeUrl` sends the next message there (on the webhook's origin, whatever host the URL
names), the URL never shown; n8n's refusals to resume fail the task saying which. The
stub answers the waiting path as n8n 2.41 does (tests/support/stub_webhook.py)."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
import trio

from n8n_a2a.protocol.push import AllowList
from tests.support.adapter import AdapterFactory, get
from tests.support.jsonrpc import V1, call, rpc, send_v1
from tests.support.push_receiver import start_push_receiver
from tests.support.sse import open_stream, streaming
from tests.support.stub_webhook import StubWebhook


@pytest.fixture
async def asking(stub: StubWebhook, start_adapter: AdapterFactory) -> str:
    url: str = await start_adapter(stub.url, allow_input_required=True)
    return url


def naming(document: dict[str, Any], task: dict[str, Any]) -> dict[str, Any]:
    document["params"]["message"]["taskId"] = task["id"]
    return document


async def test_the_next_turn_goes_to_the_waiting_execution_on_the_webhooks_origin(
    asking: str, stub: StubWebhook, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    asked = (await rpc(asking, send_v1("ask-resume:231"), V1))["result"]["task"]
    assert asked["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    turn = naming(send_v1("answer:flour"), asked)
    async with open_stream(asking, streaming(turn), V1) as stream:
        events = await stream.rest()
    assert events[-1]["result"]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    first, second = stub.received
    assert first.target == "/webhook/supply"
    # n8n named its own host (localhost:5678): the adapter kept to the webhook's origin.
    assert second.target == "/webhook-waiting/231?signature=5ecret-231"
    assert second.json["taskId"] == asked["id"] and second.json["text"] == "answer:flour"
    # Nothing the caller sees, nor any log line, holds the URL's signature.
    task = (await rpc(asking, call("GetTask", id=asked["id"]), V1))["result"]
    listed = (await rpc(asking, call("ListTasks"), V1))["result"]
    shown = json.dumps([asked, task, events, listed]) + caplog.text
    shown += (await get(asking + "metrics")).text
    assert "5ecret" not in shown and "webhook-waiting" not in shown


async def test_a_resume_n8n_refuses_fails_the_task_saying_which(
    asking: str, stub: StubWebhook
) -> None:
    for execution, status, said in (
        ("gone", 409, "no longer waiting"),
        ("unknown", 404, "no waiting execution"),
        ("stuck", 409, "running still"),
    ):
        asked = (await rpc(asking, send_v1(f"ask-resume:{execution}"), V1))["result"]["task"]
        failed = (await rpc(asking, naming(send_v1("answer:x"), asked), V1))["result"]["task"]
        assert failed["status"]["state"] == "TASK_STATE_FAILED"
        assert failed["metadata"] == {"outcome": "RESUME_FAILED"}
        reason = failed["status"]["message"]["parts"][0]["text"]
        assert said in reason and f"HTTP {status}" in reason and "5ecret" not in reason


async def test_a_push_receiver_never_gets_the_resume_url(
    stub: StubWebhook, start_adapter: AdapterFactory, nursery: trio.Nursery
) -> None:
    receiver = await start_push_receiver(nursery)
    adapter = await start_adapter(
        stub.url, allow_input_required=True, push_allow_hosts=AllowList.parse("127.0.0.1")
    )
    push = {"url": receiver.url, "token": "push-token"}
    asked = (await rpc(adapter, send_v1("ask-resume:7", taskPushNotificationConfig=push), V1))[
        "result"
    ]["task"]
    await rpc(adapter, naming(send_v1("answer:salt"), asked), V1)
    with trio.fail_after(10):  # every event of both turns, the last one completed
        while b"TASK_STATE_COMPLETED" not in b"".join(d.body for d in receiver.received):
            await receiver.wait_received(len(receiver.received) + 1)
    assert all(b"5ecret" not in d.body for d in receiver.received)


async def test_a_resume_before_the_execution_waits_is_sent_again_until_it_does(
    asking: str, stub: StubWebhook
) -> None:
    """The caller answered before n8n's execution reached its Wait node: n8n says 409, "is
    running already", twice; the third try resumes it."""
    asked = (await rpc(asking, send_v1("ask-resume:busy"), V1))["result"]["task"]
    done = (await rpc(asking, naming(send_v1("answer:rice"), asked), V1))["result"]["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert stub.resumes == {"busy": 3}
