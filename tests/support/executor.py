"""The executor against a scripted workflow, the next turns of tasks that ask for input,
and a store whose moves wait at a gate."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import trio

from n8n_a2a.auth.caller import Caller
from n8n_a2a.budget import MemoryBudget
from n8n_a2a.core.changes import Change
from n8n_a2a.core.replies import HttpReply, WebhookReply
from n8n_a2a.executor import Executor, ExecutorConfig
from n8n_a2a.executor.intake import InlinePush
from n8n_a2a.executor.subscriptions import TaskStream
from n8n_a2a.observability.metrics import Metrics
from n8n_a2a.protocol.model import (
    Message,
    Part,
    Role,
    SendMessage,
    StatusUpdate,
    Task,
    TaskEvent,
)
from n8n_a2a.store import Moved
from n8n_a2a.store.fanout import LocalTaskEvents
from n8n_a2a.store.memory import MemoryTaskStore
from n8n_a2a.webhook.reading import Relay, ReplyRoom
from n8n_a2a.webhook.request import WebhookRequest


@dataclass
class ScriptedWorkflow:
    """Answers each message once the test releases it (all at once with `release_all`):
    with the text itself, escalated if it begins with `escalate`, a question (input
    required) if it begins with `ask`, a request to sign in if with `signin`."""

    released: dict[str, trio.Event] = field(default_factory=dict)
    calls: list[WebhookRequest] = field(default_factory=list)
    closed: list[str] = field(default_factory=list)
    everything: bool = False

    def release(self, text: str) -> None:
        self.released.setdefault(text, trio.Event()).set()

    def release_all(self) -> None:
        self.everything = True
        for event in self.released.values():
            event.set()

    async def call(
        self,
        request: WebhookRequest,
        caller: Caller,
        relay: Relay | None = None,
        room: ReplyRoom | None = None,
    ) -> WebhookReply:
        self.calls.append(request)
        try:
            if not self.everything:
                await self.released.setdefault(request.text, trio.Event()).wait()
        except trio.Cancelled:
            self.closed.append(request.text)
            raise
        reply = {"answer": request.text, "escalate": request.text.startswith("escalate")}
        if request.text.startswith("ask"):
            reply["inputRequired"] = True
        if request.text.startswith("signin"):
            reply["authRequired"] = True
        return HttpReply(200, json.dumps(reply).encode())


@asynccontextmanager
async def executor_for(
    workflow: ScriptedWorkflow,
    store: MemoryTaskStore | None = None,
    *,
    max_concurrent_calls: int = 1024,
    stream_buffer: int = 64,
    input_required: bool = False,
    auth_required: bool = False,
    input_ttl: float = 86400.0,
    metrics: Metrics | None = None,
    push: InlinePush | None = None,
    budget: MemoryBudget | None = None,
) -> AsyncIterator[Executor]:
    async with trio.open_nursery() as nursery:
        config = ExecutorConfig(
            skill_id="skill",
            max_concurrent_calls=max_concurrent_calls,
            stream_buffer=stream_buffer,
            input_required=input_required,
            auth_required=auth_required,
            input_ttl=input_ttl,
        )
        executor = Executor(
            nursery,
            MemoryTaskStore() if store is None else store,
            LocalTaskEvents(),
            workflow,
            config,
            metrics=metrics,
            push=push,
            budget=budget,
        )
        await nursery.start(executor.listen)
        yield executor
        nursery.cancel_scope.cancel()


def message(text: str, *, blocking: bool = False) -> SendMessage:
    return SendMessage(Message(f"m-{text}", Role.USER, (Part(text),)), blocking=blocking)


def reply_to(
    task: Task, text: str, *, blocking: bool = False, context_id: str | None = None
) -> SendMessage:
    """The caller's next message on `task`: it names the task (and maybe its context)."""
    turn = Message(f"m-{text}", Role.USER, (Part(text),), task.id, context_id)
    return SendMessage(turn, blocking=blocking)


def said(task: Task) -> list[tuple[Role, str]]:
    return [(m.role, m.parts[0].text) for m in task.history]


class GatedStore(MemoryTaskStore):
    """The memory store, where each move that `holds` waits at a gate after the mover read
    the task and before its compare-and-set: a networked store's round trip, made long."""

    def __init__(self, holds: Callable[[Change], bool]) -> None:
        super().__init__()
        self.holds = holds
        self.reached = trio.Event()
        self.gate = trio.Event()

    async def move(self, task_id: str, version: int, change: Change) -> Moved | None:
        if self.holds(change):
            self.reached.set()
            await self.gate.wait()
        return await super().move(task_id, version, change)


def turn_of(text: str) -> Callable[[Change], bool]:
    """A next turn's move: the one that puts the caller's `text` into the history."""
    return lambda change: [m.parts[0].text for m in change.history] == [text]


async def events_of(stream: TaskStream) -> AsyncIterator[TaskEvent]:
    while (event := await stream.next()) is not None:
        yield event


def status_of(event: TaskEvent) -> str:
    return event.status.state.value if isinstance(event, StatusUpdate) else "artifact"
