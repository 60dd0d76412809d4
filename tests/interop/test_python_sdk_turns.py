"""The official a2a-sdk 1.3.0 client, every mode (JSON-RPC v1.0 and v0.3, HTTP+JSON v1.0), on
tasks that ask for input.

The adapter runs with ADAPTER_ALLOW_INPUT_REQUIRED=true in front of the stub webhook,
whose `ask:X` reply is a question. The client sends the answer as a message naming the
task, as a chat bridge or a workflow engine resuming a human-in-the-loop step does.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from functools import partial

import httpx
import pytest
import trio
from a2a.client import A2ACardResolver, Client
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    Task,
)
from a2a.types import TaskState as SdkTaskState
from a2a.utils.errors import UnsupportedOperationError

from tests.interop import sdk_modes
from tests.interop.sdk_modes import SdkMode
from tests.support.adapter import AdapterFactory
from tests.support.stub_webhook import StubWebhook

QUESTION = "ask:Which item: flour, sugar, rice or salt?"


async def _client(
    http: httpx.AsyncClient, base_url: str, mode: SdkMode, *, streaming: bool
) -> Client:
    card = await A2ACardResolver(http, base_url).get_agent_card()
    return mode.client(card, streaming=streaming, httpx_client=http)


def _message(text: str, task: Task | None = None) -> Message:
    """A user message; naming `task` makes it that task's next turn."""
    return Message(
        role=Role.ROLE_USER,
        message_id=str(uuid.uuid4()),
        parts=[Part(text=text)],
        task_id=task.id if task else "",
        context_id=task.context_id if task else "",
    )


def _states(events: list[StreamResponse]) -> list[SdkTaskState]:
    """The state each event shows (artifact updates show none)."""
    shown = []
    for event in events:
        if event.HasField("task"):
            shown.append(event.task.status.state)
        elif event.HasField("status_update"):
            shown.append(event.status_update.status.state)
    return shown


@dataclass
class Turns:
    first: list[StreamResponse]
    second: list[StreamResponse]
    task: Task


async def _two_turns(
    base_url: str, answer: str, mode: SdkMode, *, streaming: bool, asking: str = QUESTION
) -> Turns:
    async with httpx.AsyncClient(timeout=10) as http:
        client = await _client(http, base_url, mode, streaming=streaming)
        request = SendMessageRequest(message=_message(asking))
        first = [event async for event in client.send_message(request)]
        asked = first[0].task
        # What a chat bridge does: the person's reply goes to the same task.
        request = SendMessageRequest(message=_message(answer, asked))
        second = [event async for event in client.send_message(request)]
        task = await client.get_task(GetTaskRequest(id=asked.id))
        await client.close()
        return Turns(first, second, task)


@sdk_modes.parametrize()
@pytest.mark.parametrize("streaming", [False, True], ids=["send", "stream"])
@pytest.mark.parametrize(
    ("answer", "state", "outcome"),
    [
        ("answer:12 pallets of flour", SdkTaskState.TASK_STATE_COMPLETED, "ANSWERED"),
        ("escalate:a person must approve", SdkTaskState.TASK_STATE_FAILED, "ESCALATED"),
        ("sleep:4", SdkTaskState.TASK_STATE_FAILED, "TIMEOUT"),
    ],
    ids=["answered", "escalated", "timed-out"],
)
async def test_official_client_two_turns_on_one_task(
    stub: StubWebhook,
    start_adapter: AdapterFactory,
    mode: SdkMode,
    streaming: bool,
    answer: str,
    state: SdkTaskState,
    outcome: str,
) -> None:
    # The timeout leaves an answered turn room on a loaded machine (at 0.5 s, a load
    # average of 6 timed one out) and still ends the sleeping one well before its reply.
    adapter = await start_adapter(stub.url, allow_input_required=True, webhook_timeout=1.5)
    turns = await trio.to_thread.run_sync(
        partial(asyncio.run, _two_turns(adapter, answer, mode, streaming=streaming))
    )
    asking, answering = _states(turns.first), _states(turns.second)
    assert asking[-1] == SdkTaskState.TASK_STATE_INPUT_REQUIRED
    assert answering[-1] == state
    if streaming:  # each stream closed at its turn's end, having shown it working
        assert SdkTaskState.TASK_STATE_WORKING in asking
        assert SdkTaskState.TASK_STATE_WORKING in answering
    task = turns.task
    assert task.id == turns.first[0].task.id
    assert task.status.state == state
    assert task.metadata["outcome"] == outcome
    assert [(m.role, m.parts[0].text) for m in task.history[:3]] == [
        (Role.ROLE_USER, QUESTION),
        (Role.ROLE_AGENT, "Which item: flour, sugar, rice or salt?"),
        (Role.ROLE_USER, answer),
    ]
    assert [m.role for m in task.history] == [Role.ROLE_USER, Role.ROLE_AGENT] * 2
    assert [(r.json["taskId"], r.json["contextId"]) for r in stub.received] == [
        (task.id, task.context_id)
    ] * 2


SIGN_IN = "signin:Sign in to the ERP at https://erp.example/login, then say done."


@sdk_modes.parametrize(" sign-in asked")
@pytest.mark.parametrize("streaming", [False, True], ids=["send", "stream"])
async def test_official_client_signs_in_and_continues_the_task(
    stub: StubWebhook, start_adapter: AdapterFactory, mode: SdkMode, streaming: bool
) -> None:
    """ADAPTER_ALLOW_AUTH_REQUIRED: the workflow asks the caller to sign in; the client
    reads the task auth-required with what to sign in to, and its next message on the task
    is the next turn."""
    adapter = await start_adapter(stub.url, allow_auth_required=True)
    turns = await trio.to_thread.run_sync(
        partial(
            asyncio.run,
            _two_turns(adapter, "answer:done", mode, streaming=streaming, asking=SIGN_IN),
        )
    )
    assert _states(turns.first)[-1] == SdkTaskState.TASK_STATE_AUTH_REQUIRED
    assert _states(turns.second)[-1] == SdkTaskState.TASK_STATE_COMPLETED
    task = turns.task
    assert (task.id, task.metadata["outcome"]) == (turns.first[0].task.id, "ANSWERED")
    assert task.history[1].parts[0].text == SIGN_IN.removeprefix("signin:")
    assert [r.json["taskId"] for r in stub.received] == [task.id] * 2


@sdk_modes.parametrize(" resumed execution")
@pytest.mark.parametrize("streaming", [False, True], ids=["send", "stream"])
async def test_official_client_answers_a_question_its_waiting_execution_takes(
    stub: StubWebhook, start_adapter: AdapterFactory, mode: SdkMode, streaming: bool
) -> None:
    """A question carrying its n8n execution's resumeUrl: the client's answer goes to that
    execution (the stub's waiting path, on the webhook's origin), and the client never
    sees the URL."""
    adapter = await start_adapter(stub.url, allow_input_required=True)
    turns = await trio.to_thread.run_sync(
        partial(
            asyncio.run,
            _two_turns(adapter, "answer:salt", mode, streaming=streaming, asking="ask-resume:8"),
        )
    )
    assert _states(turns.first)[-1] == SdkTaskState.TASK_STATE_INPUT_REQUIRED
    assert _states(turns.second)[-1] == SdkTaskState.TASK_STATE_COMPLETED
    assert [r.target for r in stub.received] == [
        "/webhook/supply",
        "/webhook-waiting/8?signature=5ecret-8",
    ]
    shown = str([*turns.first, *turns.second, turns.task])
    assert "5ecret" not in shown and "webhook-waiting" not in shown


@dataclass
class Waits:
    expired: Task
    late_refused: bool
    canceled: Task
    running_refused: str


async def _waits(expiring_url: str, base_url: str, mode: SdkMode) -> Waits:
    async with httpx.AsyncClient(timeout=10) as http:
        client = await _client(http, expiring_url, mode, streaming=False)
        [event] = [
            e async for e in client.send_message(SendMessageRequest(message=_message(QUESTION)))
        ]
        await asyncio.sleep(0.8)  # past its ADAPTER_INPUT_TTL of 0.3 s
        expired = await client.get_task(GetTaskRequest(id=event.task.id))
        try:
            request = SendMessageRequest(message=_message("answer:too late", event.task))
            [_ async for _ in client.send_message(request)]
            late_refused = False
        except UnsupportedOperationError:
            late_refused = True
        await client.close()

        client = await _client(http, base_url, mode, streaming=False)
        [event] = [
            e async for e in client.send_message(SendMessageRequest(message=_message(QUESTION)))
        ]
        canceled = await client.cancel_task(CancelTaskRequest(id=event.task.id))
        now = SendMessageConfiguration(return_immediately=True)
        request = SendMessageRequest(message=_message("hold"), configuration=now)
        [event] = [e async for e in client.send_message(request)]
        try:
            request = SendMessageRequest(message=_message("answer:more", event.task))
            [_ async for _ in client.send_message(request)]
            running_refused = ""
        except UnsupportedOperationError as error:
            running_refused = str(error)
        await client.cancel_task(CancelTaskRequest(id=event.task.id))
        await client.close()
        return Waits(expired, late_refused, canceled, running_refused)


@sdk_modes.parametrize()
async def test_official_client_a_waiting_task_expires_or_is_canceled(
    stub: StubWebhook, start_adapter: AdapterFactory, mode: SdkMode
) -> None:
    expiring = await start_adapter(stub.url, allow_input_required=True, input_ttl=0.3)
    adapter = await start_adapter(stub.url, allow_input_required=True)
    seen = await trio.to_thread.run_sync(partial(asyncio.run, _waits(expiring, adapter, mode)))
    assert seen.expired.status.state == SdkTaskState.TASK_STATE_FAILED
    assert seen.expired.metadata["outcome"] == "INPUT_EXPIRED"
    assert "ADAPTER_INPUT_TTL" in seen.expired.status.message.parts[0].text
    assert seen.late_refused
    assert seen.canceled.status.state == SdkTaskState.TASK_STATE_CANCELED
    assert "is working" in seen.running_refused


async def _one(base_url: str, text: str, mode: SdkMode) -> Task:
    async with httpx.AsyncClient(timeout=10) as http:
        client = await _client(http, base_url, mode, streaming=False)
        [event] = [e async for e in client.send_message(SendMessageRequest(message=_message(text)))]
        await client.close()
        return event.task


@sdk_modes.parametrize()
async def test_official_client_without_the_setting_a_question_is_off_contract(
    adapter: str, mode: SdkMode
) -> None:
    task = await trio.to_thread.run_sync(partial(asyncio.run, _one(adapter, QUESTION, mode)))
    assert task.status.state == SdkTaskState.TASK_STATE_FAILED
    assert task.metadata["outcome"] == "OFF_CONTRACT"
