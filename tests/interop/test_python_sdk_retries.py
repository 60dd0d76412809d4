"""The official a2a-sdk 1.3.0 client, every mode (JSON-RPC v1.0 and v0.3, HTTP+JSON v1.0),
streamed or not, sending a message again after its answer was lost: one workflow run
per message (docs/calling.md, Sending a message again).

The client gives up on its first sending before the workflow answers (its HTTP
timeout, shorter than the stub's `sleep:` reply), then sends the same message, same
`messageId`, with time enough: it gets the first sending's task with the answer, and
the stub webhook was called once.
"""

from __future__ import annotations

import asyncio
import uuid
from functools import partial

import httpx
import pytest
import trio
from a2a.client import A2ACardResolver
from a2a.types import Message, Part, Role, SendMessageRequest, StreamResponse
from a2a.types import TaskState as SdkTaskState

from tests.interop import sdk_modes
from tests.interop.sdk_modes import SdkMode
from tests.support.adapter import AdapterFactory
from tests.support.stub_webhook import StubWebhook

SLOW = "sleep:1.5"  # the stub's reply comes after 1.5 s: past the first client's patience


async def _send(
    base_url: str, message: Message, mode: SdkMode, *, streaming: bool, patience: float
) -> list[StreamResponse]:
    """The message sent by a client whose HTTP reads wait `patience` seconds at most."""
    async with httpx.AsyncClient(timeout=patience) as http:
        card = await A2ACardResolver(http, base_url).get_agent_card()
        client = mode.client(card, streaming=streaming, httpx_client=http)
        request = SendMessageRequest(message=message)
        try:
            return [event async for event in client.send_message(request)]
        finally:
            await client.close()


async def _lost_then_sent_again(
    base_url: str, mode: SdkMode, *, streaming: bool
) -> tuple[BaseException, list[StreamResponse]]:
    message = Message(role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=[Part(text=SLOW)])
    try:
        await _send(base_url, message, mode, streaming=streaming, patience=0.4)
    except Exception as lost:  # the SDK's timeout error, whichever transport raised it
        given_up = lost
    else:
        raise AssertionError("the first sending was answered before its client gave up")
    return given_up, await _send(base_url, message, mode, streaming=streaming, patience=10)


@sdk_modes.parametrize(" retries")
@pytest.mark.parametrize("streaming", [False, True], ids=["send", "stream"])
async def test_a_message_sent_again_after_a_lost_answer_runs_the_workflow_once(
    stub: StubWebhook, start_adapter: AdapterFactory, mode: SdkMode, streaming: bool
) -> None:
    adapter = await start_adapter(stub.url)
    given_up, events = await trio.to_thread.run_sync(
        partial(asyncio.run, _lost_then_sent_again(adapter, mode, streaming=streaming))
    )
    assert "timeout" in f"{type(given_up).__name__} {given_up}".lower(), repr(given_up)
    tasks = [event.task for event in events if event.HasField("task")]
    states = [task.status.state for task in tasks] + [
        event.status_update.status.state for event in events if event.HasField("status_update")
    ]
    assert states[-1] == SdkTaskState.TASK_STATE_COMPLETED
    task_id = tasks[0].id
    artifacts = [task.artifacts for task in tasks] + [
        [event.artifact_update.artifact] for event in events if event.HasField("artifact_update")
    ]
    assert any(a and a[0].parts[0].text == "slept" for a in artifacts), events
    # One workflow call: the retry is the first sending's task.
    assert [(r.json["taskId"], r.json["text"]) for r in stub.received] == [(task_id, SLOW)]
