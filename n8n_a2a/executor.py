"""Runs each task's webhook call in a nursery that outlives the request that asked for it.

A client that hangs up cancels its request handler, not the call: the task still
reaches its terminal state and is there to get. Every change of a task goes through
`_move`: the lifecycle decides whether it may happen, the store records it
compare-and-set, and the events carry it to whoever listens. A cut (CancelTask,
shutdown) is such a change too: the call whose task ends that way hears it through the
events and closes its connection, wherever the cut was made. A capacity limiter bounds
the calls in flight; sends past it wait in order.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Protocol

import trio

from . import lifecycle
from .metrics import Metrics
from .outcome import HttpReply, Outcome, Verdict, WebhookReply, classify
from .protocol.errors import A2AError, ErrorCode
from .protocol.model import (
    Artifact,
    ListTasks,
    Message,
    Part,
    Role,
    SendMessage,
    StatusUpdate,
    SubscribeToTask,
    Task,
    TaskEvent,
    TaskPage,
    TaskState,
    TaskStatus,
)
from .store import Change, TaskEvents, TaskStore
from .store.memory import utc_now
from .streams import DEFAULT_BUFFER, TaskStream
from .webhook import Caller, WebhookRequest

logger = logging.getLogger(__name__)

CANCELED = Verdict(Outcome.CANCELED, "Canceled by the caller before the workflow answered.")
CUT_BY_SHUTDOWN = Verdict(
    Outcome.SHUTDOWN,
    "The adapter shut down before the workflow answered; the workflow may still have run. "
    "Send the message again.",
)
ADAPTER_FAILED = Verdict(
    Outcome.ADAPTER_ERROR, "The adapter failed while calling the workflow; see its log."
)


class Workflow(Protocol):
    """The one call to the workflow (webhook.WebhookClient; a script in tests)."""

    async def call(self, request: WebhookRequest, caller: Caller) -> WebhookReply: ...


@dataclass(eq=False)
class _Call:
    """One task's webhook call: its cancel scope and what it came to."""

    request: WebhookRequest
    caller: Caller
    holds_slot: bool
    scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    ended: trio.Event = field(default_factory=trio.Event)
    webhook_status: int | None = None
    seconds: float | None = None
    #: Out of its scope: nothing left to cut (and trio's cancel is not free, even then).
    over: bool = False


class Executor:
    """Starts webhook calls for new tasks, cancels them, and drains them at shutdown."""

    def __init__(
        self,
        nursery: trio.Nursery,
        store: TaskStore,
        events: TaskEvents,
        workflow: Workflow,
        skill_id: str,
        *,
        max_concurrent_calls: int = 1024,
        max_queued_calls: int = 1024,
        metrics: Metrics | None = None,
        clock: Callable[[], datetime] = utc_now,
        stream_buffer: int = DEFAULT_BUFFER,
    ) -> None:
        self._nursery = nursery
        self._store = store
        self._events = events
        self._workflow = workflow
        self._skill_id = skill_id
        self._slots = trio.CapacityLimiter(max_concurrent_calls)
        self._max_queued = max_queued_calls
        self._queued = 0
        self._calls: dict[str, _Call] = {}
        self._accepting = True
        self._metrics = metrics or Metrics()
        self._clock = clock
        self._drained = trio.Event()
        self._stream_buffer = stream_buffer

    @property
    def accepting(self) -> bool:
        """False once shutdown has begun."""
        return self._accepting

    @property
    def in_flight(self) -> int:
        """Webhook calls under way now."""
        return int(self._slots.borrowed_tokens)

    @property
    def queued(self) -> int:
        """Sends waiting for a free slot."""
        return self._queued

    async def listen(
        self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Hear the tasks that end elsewhere (a cancel, from any request or process) and cut
        their calls, until the drain at shutdown is over. Start it before the first send."""
        with self._events.subscribe_all(self._cut_if_ended):
            task_status.started()
            await self._drained.wait()

    async def get(self, task_id: str, history_length: int | None = None) -> Task:
        return (await self._store.get(task_id)).with_history_length(history_length)

    async def list(self, query: ListTasks) -> TaskPage:
        return await self._store.list(query)

    async def send(self, operation: SendMessage, caller: Caller) -> Task:
        """Submit a task for the message; a blocking send waits until it is terminal."""
        self._admit()
        task = await self._new_task(operation.message)
        if not operation.blocking:
            return (await self._start(task, operation, caller)).with_history_length(
                operation.history_length
            )
        ended = trio.Event()

        def hear(event: TaskEvent) -> None:
            if isinstance(event, StatusUpdate) and event.final:
                ended.set()

        with self._events.subscribe(task.id, hear):
            await self._start(task, operation, caller)
            await ended.wait()
        return await self.get(task.id, operation.history_length)

    @asynccontextmanager
    async def stream(
        self, operation: SendMessage | SubscribeToTask, caller: Caller
    ) -> AsyncIterator[TaskStream]:
        """A stream of a new task (a streaming send) or of a running one (a subscription):
        it begins with the task, then hears every later event until the final one."""
        stream = TaskStream(self._stream_buffer)
        if isinstance(operation, SubscribeToTask):
            # Listen first, then look: an event between the two is skipped by version.
            with self._events.subscribe(operation.task_id, stream.hear):
                task = await self._store.get(operation.task_id)
                if task.status.state.is_terminal:
                    raise A2AError(
                        ErrorCode.UNSUPPORTED_OPERATION,
                        f"Task {task.id} is {task.status.state.value}: a finished task has no "
                        "more events to subscribe to (GetTask shows it)",
                    )
                stream.begin(task)
                yield stream
            return
        self._admit()
        task = await self._new_task(operation.message)
        with self._events.subscribe(task.id, stream.hear):
            stream.begin(task)
            await self._start(task, operation, caller)
            yield stream

    async def cancel(self, task_id: str) -> Task:
        """Cancel a task that has not finished: it is `canceled` at once, its call cut."""
        moved = await self._end(task_id, CANCELED)
        if moved is None:
            task = await self._store.get(task_id)
            raise A2AError(
                ErrorCode.TASK_NOT_CANCELABLE,
                f"Task {task_id} is {task.status.state.value} and cannot be canceled",
            )
        return moved

    def stop_accepting(self) -> None:
        """Refuse new sends from now on; gets, lists and cancels still work."""
        self._accepting = False

    async def drain(self, grace_seconds: float) -> None:
        """Let calls under way finish within the grace period, then cut the rest as failed."""
        self.stop_accepting()
        with trio.move_on_after(grace_seconds):
            await self._all_ended()
        for task_id in list(self._calls):
            if await self._end(task_id, CUT_BY_SHUTDOWN) is not None:
                logger.warning("shutdown cut the webhook call of task %s", task_id)
        await self._all_ended()
        self._drained.set()

    def _admit(self) -> None:
        if not self._accepting:
            raise A2AError(
                ErrorCode.SERVER_BUSY, "The adapter is shutting down; send the message again"
            )
        if self._slots.available_tokens == 0 and self._queued >= self._max_queued:
            raise A2AError(
                ErrorCode.SERVER_BUSY,
                f"Server busy: {self.in_flight} webhook calls are running and {self._queued} "
                "are waiting (ADAPTER_MAX_CONCURRENT_CALLS, ADAPTER_MAX_QUEUED_CALLS); "
                "retry later",
            )

    async def _new_task(self, message: Message) -> Task:
        """A new task for a user's message, in SUBMITTED, on the message's context or a new one.

        A message that names a task continues it, which this agent never allows: its
        tasks end in a terminal state and ask for no further input.
        """
        if message.task_id is not None:
            existing = await self._store.get(message.task_id)
            if message.context_id is not None and message.context_id != existing.context_id:
                raise A2AError.invalid_params(
                    f"Task {existing.id} belongs to another context than "
                    f"message.contextId {message.context_id!r}"
                )
            raise A2AError(
                ErrorCode.UNSUPPORTED_OPERATION,
                f"Task {existing.id} is {existing.status.state.value} and takes no further "
                "messages; send a new message without taskId (the same contextId continues "
                "the conversation)",
            )
        task_id = _new_id()
        context_id = message.context_id or _new_id()
        task = Task(
            id=task_id,
            context_id=context_id,
            status=TaskStatus(TaskState.SUBMITTED, self._clock()),
            history=(replace(message, task_id=task_id, context_id=context_id),),
        )
        await self._store.create(task)
        return task

    async def _start(self, task: Task, operation: SendMessage, caller: Caller) -> Task:
        """Start the task's call; with a free slot the task is `working` when this returns."""
        call = _Call(
            WebhookRequest(
                text=operation.message.text,
                task_id=task.id,
                context_id=task.context_id,
                message_id=operation.message.message_id,
                skill_id=self._skill_id,
            ),
            caller,
            holds_slot=self._slots.available_tokens > 0,
        )
        self._calls[task.id] = call
        if call.holds_slot:
            # Take the slot now, so a non-blocking send already answers `working`.
            self._slots.acquire_on_behalf_of_nowait(call)
            task = await self._move(task.id, Change(TaskState.WORKING, self._clock()), task) or task
        else:
            self._queued += 1
        self._nursery.start_soon(self._run, call, name=f"webhook call of task {task.id}")
        return task

    async def _run(self, call: _Call) -> None:
        task_id = call.request.task_id
        verdict: Verdict | None = None
        try:
            with call.scope:
                if not call.holds_slot:
                    try:
                        await self._slots.acquire_on_behalf_of(call)
                    finally:
                        self._queued -= 1
                try:
                    # A task cut while it waited for its slot stays cut: the move loses.
                    started = call.holds_slot or await self._move(
                        task_id, Change(TaskState.WORKING, self._clock())
                    )
                    if started:
                        verdict = await self._call_workflow(call)
                finally:
                    self._slots.release_on_behalf_of(call)
            call.over = True
            if verdict is not None:
                await self._end(task_id, verdict)
        except Exception:
            # A bug here must fail one task, not take down the nursery that serves them all.
            logger.exception("the call of task %s failed", task_id)
            try:
                await self._end(task_id, ADAPTER_FAILED)
            except Exception:
                logger.exception("task %s could not be ended", task_id)
        finally:
            del self._calls[task_id]
            call.ended.set()
            self._report(await self._store.get(task_id), call)

    async def _call_workflow(self, call: _Call) -> Verdict:
        started = trio.current_time()
        try:
            reply = await self._workflow.call(call.request, call.caller)
            call.webhook_status = reply.status if isinstance(reply, HttpReply) else None
            return classify(reply)
        except Exception:
            logger.exception("webhook call for task %s failed", call.request.task_id)
            return ADAPTER_FAILED
        finally:
            call.seconds = trio.current_time() - started

    def _cut_if_ended(self, event: TaskEvent) -> None:
        """A task whose call is under way ended otherwise (cancel, shutdown): close the call."""
        if isinstance(event, StatusUpdate) and event.status.state.is_terminal:
            call = self._calls.get(event.task_id)
            if call is not None and not call.over:
                call.scope.cancel()

    async def _end(self, task_id: str, verdict: Verdict) -> Task | None:
        """End the task with the verdict; None if it has ended already (the move lost)."""
        task = await self._store.get(task_id)
        reply = Message(
            message_id=_new_id(),
            role=Role.AGENT,
            parts=(Part(verdict.text),),
            task_id=task.id,
            context_id=task.context_id,
            metadata={"outcome": verdict.outcome.value},
        )
        state = lifecycle.state_for(verdict.outcome)
        answer = None
        if state is TaskState.COMPLETED:
            answer = Artifact(_new_id(), "answer", (Part(verdict.text),))
        change = Change(
            state,
            self._clock(),
            message=reply,
            artifact=answer,
            metadata={"outcome": verdict.outcome.value},
        )
        return await self._move(task_id, change, task)

    async def _move(self, task_id: str, change: Change, task: Task | None = None) -> Task | None:
        """Record a change the lifecycle allows and publish its events; None if it lost."""
        while True:
            task = task or await self._store.get(task_id)
            if not lifecycle.may_move(task.status.state, change.state):
                return None
            moved = await self._store.move(task_id, task.version, change)
            if moved is not None:
                for event in moved.events:
                    self._events.publish(event)
                return moved.task
            task = None  # it moved meanwhile: look again

    async def _all_ended(self) -> None:
        """Until every call has ended (no new ones start once sends are refused)."""
        while self._calls:
            await next(iter(self._calls.values())).ended.wait()

    def _report(self, task: Task, call: _Call) -> None:
        """One log line and the metrics for a task whose call has ended."""
        outcome = task.metadata.get("outcome")
        if outcome is None:  # only if the adapter itself is being torn down mid-call
            return
        self._metrics.task_finished(Outcome(outcome))
        if call.seconds is not None:
            self._metrics.webhook_answered(call.seconds)
        fields = {
            "event": "task",
            "task_id": task.id,
            "context_id": task.context_id,
            "outcome": outcome,
            "state": task.status.state.value,
            "webhook_status": call.webhook_status,
            "webhook_ms": None if call.seconds is None else round(call.seconds * 1000, 1),
        }
        logger.info("task %s %s", task.status.state.value, outcome, extra={"fields": fields})


def _new_id() -> str:
    return str(uuid.uuid4())
