"""The official a2a-sdk 1.3.0 client asking for the A2A 1.1 draft (its httpx client's
A2A-Version: 1.1, which the SDK keeps) on both v1.0 bindings: every answer and event then
carries the task's generation (docs/calling.md), and the SDK, which knows no such field,
reads them as it reads 1.0's. Its v0.3 transport speaks v0.3's methods, which 1.1 has not."""

from __future__ import annotations

import asyncio
import uuid
from functools import partial

import httpx
import pytest
import trio
from a2a.client import A2ACardResolver
from a2a.types import GetTaskRequest, Message, Part, Role, SendMessageRequest
from a2a.types import TaskState as SdkTaskState

from tests.interop import sdk_modes
from tests.interop.sdk_modes import SdkMode
from tests.support.adapter import AdapterFactory
from tests.support.stub_webhook import StubWebhook


async def _conversation(base_url: str, mode: SdkMode) -> tuple[list[SdkTaskState], list[bytes]]:
    """A blocking send, a streamed one and a GetTask; the states the SDK read, and the
    bodies of the answers as they came."""
    bodies: list[bytes] = []

    async def keep(response: httpx.Response) -> None:
        if response.request.method == "POST" or "/tasks/" in response.request.url.path:
            await response.aread()
            bodies.append(response.content)

    headers = {"A2A-Version": "1.1"}
    async with httpx.AsyncClient(
        timeout=10, headers=headers, event_hooks={"response": [keep]}
    ) as http:
        card = await A2ACardResolver(http, base_url).get_agent_card()
        states: list[SdkTaskState] = []
        for streaming in (False, True):
            client = mode.client(card, streaming=streaming, httpx_client=http)
            message = Message(
                role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=[Part(text="hello")]
            )
            events = [e async for e in client.send_message(SendMessageRequest(message=message))]
            last = events[-1]
            state = (
                last.task.status.state if last.HasField("task") else last.status_update.status.state
            )
            states.append(state)
            task_id = next(e.task.id for e in events if e.HasField("task"))
            states.append((await client.get_task(GetTaskRequest(id=task_id))).status.state)
            await client.close()
    return states, bodies


@pytest.mark.parametrize(
    "mode", [sdk_modes.V1.param(" 1.1 draft"), sdk_modes.REST.param(" 1.1 draft")]
)
async def test_the_sdk_reads_answers_carrying_the_generation(
    stub: StubWebhook, start_adapter: AdapterFactory, mode: SdkMode
) -> None:
    adapter = await start_adapter(stub.url)
    states, bodies = await trio.to_thread.run_sync(
        partial(asyncio.run, _conversation(adapter, mode))
    )
    assert states == [SdkTaskState.TASK_STATE_COMPLETED] * 4
    # The answers did carry it: a blocking send's, a stream's every event, a GetTask's.
    assert bodies and all(b'"generation":"' in body for body in bodies), bodies[:2]
    assert len(stub.received) == 2
