"""The official a2a-sdk 1.3.0 Python client against the real adapter, both transports.

The SDK runs on asyncio, the adapter on trio: the client runs in a worker thread with
its own event loop, as it would in another process.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from functools import partial
from importlib.metadata import version

import httpx
import pytest
import trio
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.compat.v0_3.versions import is_legacy_version
from a2a.types import (
    AgentCard,
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    Task,
)
from a2a.types import TaskState as SdkTaskState
from a2a.utils.errors import TaskNotCancelableError, TaskNotFoundError

from tests.stub_webhook import StubWebhook

TOKEN = "eyJhbGciOi.interop-token"


@dataclass
class Seen:
    transport: str
    tasks: dict[str, Task]
    fetched: Task
    not_found: bool


def _only_v03(card: AgentCard) -> AgentCard:
    legacy = AgentCard()
    legacy.CopyFrom(card)
    keep = [i for i in legacy.supported_interfaces if is_legacy_version(i.protocol_version)]
    del legacy.supported_interfaces[:]
    legacy.supported_interfaces.extend(keep)
    return legacy


async def _drive(base_url: str, texts: list[str], *, v03: bool) -> Seen:
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        card = await A2ACardResolver(http, base_url).get_agent_card()
        client = ClientFactory(ClientConfig(streaming=False, httpx_client=http)).create(
            _only_v03(card) if v03 else card
        )
        tasks = {}
        for text in texts:
            message = Message(
                role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=[Part(text=text)]
            )
            [event] = [e async for e in client.send_message(SendMessageRequest(message=message))]
            assert event.WhichOneof("payload") == "task"
            tasks[text] = event.task
        first = tasks[texts[0]]
        fetched = await client.get_task(GetTaskRequest(id=first.id, history_length=1))
        try:
            await client.get_task(GetTaskRequest(id=str(uuid.uuid4())))
            not_found = False
        except TaskNotFoundError:
            not_found = True
        transport = type(getattr(client, "_transport")).__name__  # noqa: B009 - private
        await client.close()
        return Seen(transport, tasks, fetched, not_found)


TEXTS = [
    "answer:4 pallets in stock",
    "escalate:needs approval",
    "silent",
    "n8n-error",
    "off-contract-json",
    "not-registered",
]


SDK = "a2a-sdk (Python)"
SDK_VERSION = version("a2a-sdk")
V1_MODE = pytest.mark.client(SDK, SDK_VERSION, "v1.0")
V03_MODE = pytest.mark.client(SDK, SDK_VERSION, "v0.3 compat")


@pytest.mark.parametrize(
    ("v03", "transport"),
    [
        pytest.param(False, "JsonRpcTransport", marks=V1_MODE, id="v1.0"),
        pytest.param(True, "CompatJsonRpcTransport", marks=V03_MODE, id="v0.3-compat"),
    ],
)
async def test_official_client_drives_every_outcome(
    adapter: str, stub: StubWebhook, v03: bool, transport: str
) -> None:
    seen = await trio.to_thread.run_sync(partial(asyncio.run, _drive(adapter, TEXTS, v03=v03)))
    assert seen.transport == transport

    answered = seen.tasks["answer:4 pallets in stock"]
    assert answered.status.state == SdkTaskState.TASK_STATE_COMPLETED
    assert [p.text for p in answered.artifacts[0].parts] == ["4 pallets in stock"]
    assert [m.role for m in answered.history] == [Role.ROLE_USER, Role.ROLE_AGENT]
    assert answered.history[1].parts[0].text == "4 pallets in stock"

    for text in TEXTS[1:]:
        failed = seen.tasks[text]
        assert failed.status.state == SdkTaskState.TASK_STATE_FAILED, text
        assert not failed.artifacts
        assert failed.status.message.role == Role.ROLE_AGENT
    assert "needs approval" in seen.tasks["escalate:needs approval"].status.message.parts[0].text
    assert '{"result":42}' in seen.tasks["off-contract-json"].status.message.parts[0].text

    assert seen.fetched.id == answered.id
    assert seen.fetched.status.state == SdkTaskState.TASK_STATE_COMPLETED
    assert [m.role for m in seen.fetched.history] == [Role.ROLE_AGENT]
    assert seen.not_found

    assert {r.headers.get("x-subject-token") for r in stub.received} == {TOKEN}
    assert all(TOKEN.encode() not in r.body for r in stub.received)


@dataclass
class Lifecycle:
    first_state: SdkTaskState
    polled_states: list[SdkTaskState]
    final: Task
    canceled: Task
    not_cancelable: bool


async def _drive_lifecycle(base_url: str, *, v03: bool) -> Lifecycle:
    async with httpx.AsyncClient() as http:
        card = await A2ACardResolver(http, base_url).get_agent_card()
        client = ClientFactory(ClientConfig(streaming=False, httpx_client=http)).create(
            _only_v03(card) if v03 else card
        )

        async def send_now(text: str) -> Task:
            message = Message(
                role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=[Part(text=text)]
            )
            request = SendMessageRequest(
                message=message, configuration=SendMessageConfiguration(return_immediately=True)
            )
            [event] = [e async for e in client.send_message(request)]
            return event.task

        slow = await send_now("sleep:0.4")
        polled = []
        task = slow
        while task.status.state not in TERMINAL:
            await asyncio.sleep(0.05)
            task = await client.get_task(GetTaskRequest(id=slow.id))
            polled.append(task.status.state)
        held = await send_now("hold")
        canceled = await client.cancel_task(CancelTaskRequest(id=held.id))
        try:
            await client.cancel_task(CancelTaskRequest(id=held.id))
            not_cancelable = False
        except TaskNotCancelableError:
            not_cancelable = True
        await client.close()
        return Lifecycle(slow.status.state, polled, task, canceled, not_cancelable)


TERMINAL = {
    SdkTaskState.TASK_STATE_COMPLETED,
    SdkTaskState.TASK_STATE_FAILED,
    SdkTaskState.TASK_STATE_CANCELED,
}


@pytest.mark.parametrize(
    "v03",
    [
        pytest.param(False, marks=V1_MODE, id="v1.0"),
        pytest.param(True, marks=V03_MODE, id="v0.3-compat"),
    ],
)
async def test_official_client_polls_a_non_blocking_task_and_cancels(
    adapter: str, stub: StubWebhook, v03: bool
) -> None:
    seen = await trio.to_thread.run_sync(partial(asyncio.run, _drive_lifecycle(adapter, v03=v03)))
    assert seen.first_state == SdkTaskState.TASK_STATE_WORKING
    assert SdkTaskState.TASK_STATE_WORKING in seen.polled_states
    assert seen.final.status.state == SdkTaskState.TASK_STATE_COMPLETED
    assert seen.final.artifacts[0].parts[0].text == "slept"
    assert seen.canceled.status.state == SdkTaskState.TASK_STATE_CANCELED
    assert seen.not_cancelable
    with trio.fail_after(5):
        await stub.wait_released()
