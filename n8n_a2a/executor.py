"""Runs each task's webhook call in a nursery that outlives the request that asked for it.

A client that hangs up cancels its request handler, not the call: the task still
reaches its terminal state and is there to get. Every change of a task goes through
`_move`: the lifecycle decides whether it may happen, the store records it
compare-and-set, and the events carry it to whoever listens. A cut (CancelTask,
shutdown) is such a change too: the call whose task ends that way hears it through the
events and closes its connection, wherever the cut was made (another replica, with a
shared store). A capacity limiter bounds the calls in flight; sends past it wait in order.

A task whose workflow asked a question (where ADAPTER_ALLOW_INPUT_REQUIRED allows it)
waits in `input-required` with no call; the caller's next message naming it starts its
next turn, and ADAPTER_INPUT_TTL bounds the wait.

A store may be out of reach for a while (a database restarting): then a send or a get
is refused with its StoreUnavailable, a verdict is recorded once the store is back (for
up to `store_patience` seconds), and whatever could not be recorded is left to the
store's leases, which make another replica end the task LOST.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import ExitStack, asynccontextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Protocol

import trio

from . import lifecycle
from .identity import Owner
from .keep import MAX_STORED_TEXT, check_ids, kept_message, kept_reply
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
from .protocol.push import PushConfig
from .store import Change, StoreUnavailable, TaskEvents, TaskStore
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
LOST = Verdict(
    Outcome.LOST,
    "The adapter replica running this task stopped before the workflow answered; the "
    "workflow may or may not have run. Send the message again if it should run.",
)
ADAPTER_FAILED = Verdict(
    Outcome.ADAPTER_ERROR, "The adapter failed while calling the workflow; see its log."
)


class Workflow(Protocol):
    """The one call to the workflow (webhook.WebhookClient; a script in tests)."""

    async def call(self, request: WebhookRequest, caller: Caller) -> WebhookReply: ...


class InlinePush(Protocol):
    """Takes the push config a send carries (push.service.PushNotifications)."""

    async def check(self, config: PushConfig, owner: Owner) -> None:
        """A2AError when the config cannot be taken: before its task is made or moved."""

    async def register(self, task: Task, config: PushConfig) -> PushConfig:
        """Hold the config for the task, before the send's first event."""


@dataclass(frozen=True, slots=True)
class Drained:
    """What a drain came to: calls that ended within the grace period, and calls cut."""

    finished: int
    cut: int


@dataclass(eq=False)
class _Call:
    """One task's webhook call: its cancel scope and what it came to."""

    request: WebhookRequest
    caller: Caller
    holds_slot: bool
    scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    ended: trio.Event = field(default_factory=trio.Event)
    hearing: ExitStack = field(default_factory=ExitStack)  # its task's events, to cut it
    task: Task | None = None  # as its last move here left it: a read saved when it ends
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
        max_stored_text: int = MAX_STORED_TEXT,
        input_required: bool = False,
        input_ttl: float = 86400.0,
        push: InlinePush | None = None,
        store_patience: float = 15.0,
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
        self._max_text = max_stored_text
        self._input_required = input_required
        self._input_ttl = input_ttl
        # Tasks waiting for input: id -> (its version as it began to wait, the trio time its
        # wait ends), in the order they began, which with one TTL is the order they end.
        self._waiting: dict[str, tuple[int, float]] = {}
        self._someone_waits = trio.Event()
        self._push = push
        self._store_patience = store_patience

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

    @property
    def running(self) -> tuple[str, ...]:
        """The tasks whose calls run (or wait for a slot) here."""
        return tuple(self._calls)

    async def listen(
        self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """The executor's own work, until the drain at shutdown is over: end the tasks that
        waited too long for input. Start it before the first send. (Each call hears its own
        task's events, from any request or process, to be cut: see `_start`.)"""
        with self._events.subscribe_all(self._note_waiting):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._expire_waits, name="end of waits for input")
                task_status.started()
                await self._drained.wait()
                nursery.cancel_scope.cancel()

    async def get(self, task_id: str, caller: Caller, history_length: int | None = None) -> Task:
        return (await self._owned(task_id, caller)).with_history_length(history_length)

    async def list(self, query: ListTasks, caller: Caller) -> TaskPage:
        """The caller's own tasks: nobody lists another's."""
        return await self._store.list(query, caller.owner)

    async def send(self, operation: SendMessage, caller: Caller) -> Task:
        """Submit a task for the message; a blocking send waits until it is terminal."""
        self._admit()
        # A caller that hangs up must not leave a task made and never started.
        with trio.CancelScope(shield=True):
            task = await self._take(operation, caller)
            if not operation.blocking:
                return (await self._start(task, operation, caller)).with_history_length(
                    operation.history_length
                )
        ended = trio.Event()

        def hear(event: TaskEvent) -> None:
            if isinstance(event, StatusUpdate) and event.final:
                ended.set()

        with self._events.subscribe(task.id, hear):
            with trio.CancelScope(shield=True):
                await self._start(task, operation, caller)
            await ended.wait()
        return await self.get(task.id, caller, operation.history_length)

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
                stream.begin(await self._subscribable(operation.task_id, caller))
                yield stream
            return
        self._admit()
        with trio.CancelScope(shield=True):
            task = await self._take(operation, caller)
        with self._events.subscribe(task.id, stream.hear):
            stream.begin(task)
            with trio.CancelScope(shield=True):
                await self._start(task, operation, caller)
            yield stream

    async def check_stream(self, operation: SendMessage | SubscribeToTask, caller: Caller) -> None:
        """Raise now what `stream` would raise before its first event, changing nothing: a
        caller told no at once gets a plain answer instead of a stream of one error."""
        if isinstance(operation, SubscribeToTask):
            await self._subscribable(operation.task_id, caller)
            return
        self._admit()
        await self._check_push(operation, caller)
        message = operation.message
        if message.task_id is not None:
            check_ids(message)
            _check_turn(await self._owned(message.task_id, caller), message)

    async def _subscribable(self, task_id: str, caller: Caller) -> Task:
        task = await self._owned(task_id, caller)
        if task.status.state.is_terminal:
            raise A2AError(
                ErrorCode.UNSUPPORTED_OPERATION,
                f"Task {task.id} is {task.status.state.value}: a finished task has no "
                "more events to subscribe to (GetTask shows it)",
            )
        return task

    async def cancel(self, task_id: str, caller: Caller) -> Task:
        """Cancel a task that has not finished: it is `canceled` at once, its call cut."""
        await self._owned(task_id, caller)
        moved = await self._end(task_id, CANCELED)
        if moved is None:
            task = await self._store.get(task_id)
            raise A2AError(
                ErrorCode.TASK_NOT_CANCELABLE,
                f"Task {task_id} is {task.status.state.value} and cannot be canceled",
            )
        if task_id not in self._calls:
            self._report(moved)  # it waited for input: no call's end reports it
        return moved

    def stop_accepting(self) -> None:
        """Refuse new sends from now on; gets, lists and cancels still work."""
        self._accepting = False

    async def drain(self, grace_seconds: float) -> Drained:
        """Let calls under way finish within the grace period, then cut the rest as failed."""
        self.stop_accepting()
        under_way = len(self._calls)
        with trio.move_on_after(grace_seconds):
            await self._all_ended()
        cut = 0
        for task_id in list(self._calls):
            try:
                if await self._end(task_id, CUT_BY_SHUTDOWN) is None:
                    continue
                logger.warning("shutdown cut the webhook call of task %s", task_id)
            except StoreUnavailable:
                # Cut it all the same: its lease runs out, another replica ends it LOST.
                logger.warning("shutdown cut the webhook call of task %s unrecorded", task_id)
                if (call := self._calls.get(task_id)) is not None:
                    call.scope.cancel()
            cut += 1
        await self._all_ended()
        self._drained.set()
        return Drained(finished=under_way - cut, cut=cut)

    async def _owned(self, task_id: str, caller: Caller) -> Task:
        """The task, if the caller owns it; TASK_NOT_FOUND alike for an unknown id and for
        another's task, so that nobody learns which ids exist (spec §13.1). Every operation
        on a task the caller names goes through here."""
        task = await self._store.get(task_id)
        if task.owner != caller.owner:
            raise A2AError.task_not_found(task_id)
        return task

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

    async def _take(self, operation: SendMessage, caller: Caller) -> Task:
        """The send's task (see `_submit`), with the push config the send carries held
        before the send's first event: a new task's first, or a next turn's."""
        config = await self._check_push(operation, caller)
        if config is None:
            return await self._submit(operation.message, caller)
        assert self._push is not None  # else the check refused it
        message = operation.message
        if message.task_id is None:
            task = await self._submit(message, caller)
            await self._push.register(task, config)
            return task
        check_ids(message)
        waiting = await self._owned(message.task_id, caller)
        _check_turn(waiting, message)
        await self._push.register(waiting, config)
        return await self._submit(message, caller)

    async def _check_push(self, operation: SendMessage, caller: Caller) -> PushConfig | None:
        """The send's push config, if it carries one that can be taken."""
        config = operation.push_config
        if config is not None:
            if self._push is None:
                raise A2AError(
                    ErrorCode.PUSH_NOTIFICATION_NOT_SUPPORTED,
                    "Push notifications are not supported by this agent",
                )
            await self._push.check(config, caller.owner)
        return config

    async def _submit(self, message: Message, caller: Caller) -> Task:
        """The message's task, in SUBMITTED: a new one, on the message's context or a new
        one, or the task the message names, when that task waits for input. The task keeps
        the message as `kept_message` makes it; the workflow gets all of it."""
        check_ids(message)
        if message.task_id is not None:
            return await self._next_turn(message, message.task_id, caller)
        task_id = _new_id()
        context_id = message.context_id or _new_id()
        kept, marks = kept_message(message, self._max_text)
        task = Task(
            id=task_id,
            context_id=context_id,
            status=TaskStatus(TaskState.SUBMITTED, self._clock()),
            history=(replace(kept, task_id=task_id, context_id=context_id),),
            metadata=marks,
            owner=caller.owner,
        )
        await self._store.create(task)
        return task

    async def _next_turn(self, message: Message, task_id: str, caller: Caller) -> Task:
        """The next turn of a task that asked for input: the caller's message joins its
        history and the task is `submitted` again. Any other task refuses the message."""
        task = await self._owned(task_id, caller)
        _check_turn(task, message)
        kept, marks = kept_message(message, self._max_text)
        turn = replace(kept, task_id=task.id, context_id=task.context_id)
        # What was cut or repaired of this message adds to the task's earlier marks.
        metadata = {mark: [*task.metadata.get(mark, ()), *made] for mark, made in marks.items()}
        change = Change(
            TaskState.SUBMITTED, self._clock(), metadata=metadata or None, history=(turn,)
        )
        moved = await self._move(task.id, change, task, from_version=task.version)
        if moved is None:
            # Another message, a cancel or the end of the wait came first.
            raise _takes_no_message(await self._store.get(task.id))
        return moved

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
        # From now on a cut of the task, made anywhere, reaches the call.
        call.hearing.enter_context(self._events.subscribe(task.id, self._cut_if_ended))
        if call.holds_slot:
            # Take the slot now, so a non-blocking send already answers `working`.
            self._slots.acquire_on_behalf_of_nowait(call)
            try:
                working = Change(TaskState.WORKING, self._clock())
                task = await self._move(task.id, working, task) or task
                call.task = task
            except BaseException:
                # The store failed: no call starts, the task's lease will end it.
                self._slots.release_on_behalf_of(call)
                self._forget(call)
                raise
        else:
            self._queued += 1
        self._nursery.start_soon(self._run, call, name=f"webhook call of task {task.id}")
        return task

    async def _run(self, call: _Call) -> None:
        task_id = call.request.task_id
        verdict: Verdict | None = None
        ended: Task | None = None
        try:
            with call.scope:
                if not call.holds_slot:
                    try:
                        await self._slots.acquire_on_behalf_of(call)
                    finally:
                        self._queued -= 1
                try:
                    # A task cut while it waited for its slot stays cut: the move loses.
                    if not call.holds_slot:
                        working = Change(TaskState.WORKING, self._clock())
                        call.task = await self._move(task_id, working)
                    if call.task is not None:
                        verdict = await self._call_workflow(call)
                finally:
                    self._slots.release_on_behalf_of(call)
            call.over = True
            if verdict is not None:
                ended = await self._record(task_id, verdict, call.task)
        except Exception:
            # A bug here must fail one task, not take down the nursery that serves them all.
            logger.exception("the call of task %s failed", task_id)
            try:
                ended = await self._end(task_id, ADAPTER_FAILED)
            except Exception:
                logger.exception("task %s could not be ended", task_id)
        finally:
            self._forget(call)
            try:
                # The task as this turn left it (a later turn may have moved it since), or
                # as the cut that ended it did.
                self._report(ended or await self._store.get(task_id), call)
            except StoreUnavailable:
                logger.warning("task %s: its end could not be read back", task_id)

    def _forget(self, call: _Call) -> None:
        # A question recorded, the task's next turn may have its own call already.
        if self._calls.get(call.request.task_id) is call:
            del self._calls[call.request.task_id]
        call.hearing.close()
        call.ended.set()

    async def _record(self, task_id: str, verdict: Verdict, task: Task | None) -> Task | None:
        """End the task with its call's verdict, waiting for the store while it is
        unavailable, for `store_patience` seconds at most; None if it had ended."""
        deadline = trio.current_time() + self._store_patience
        pause = 0.1
        while True:
            try:
                return await self._end(task_id, verdict, task)
            except StoreUnavailable:
                task = None  # read it again once the store is back
                if trio.current_time() + pause > deadline:
                    raise
            await trio.sleep(pause)
            pause = min(pause * 2, 2.0)

    async def lose(self, task_id: str) -> bool:
        """End, failed with outcome LOST, a task whose replica stopped renewing its lease
        (it died, or lost the store); False if it had ended already."""
        task = await self._end(task_id, LOST)
        if task is None:
            return False
        self._metrics.task_finished(Outcome.LOST)
        fields = {
            "event": "task",
            "task_id": task.id,
            "context_id": task.context_id,
            "outcome": Outcome.LOST.value,
            "state": task.status.state.value,
        }
        logger.warning("task %s lost with its replica", task.id, extra={"fields": fields})
        return True

    async def _call_workflow(self, call: _Call) -> Verdict:
        started = trio.current_time()
        try:
            reply = await self._workflow.call(call.request, call.caller)
            call.webhook_status = reply.status if isinstance(reply, HttpReply) else None
            return classify(reply, input_required=self._input_required)
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

    def _note_waiting(self, event: TaskEvent) -> None:
        """Keep when each task waiting for input stops waiting (a TaskEvents listener)."""
        if not isinstance(event, StatusUpdate):
            return
        self._waiting.pop(event.task_id, None)
        if event.status.state is TaskState.INPUT_REQUIRED:
            if not self._waiting:
                self._someone_waits.set()
            ends = trio.current_time() + self._input_ttl
            self._waiting[event.task_id] = (event.sequence, ends)

    async def _expire_waits(self) -> None:
        """End each task that waited ADAPTER_INPUT_TTL for input, as its wait runs out."""
        while True:
            if not self._waiting:
                self._someone_waits = trio.Event()
                await self._someone_waits.wait()
                continue  # it may have stopped waiting again meanwhile
            task_id, (version, ends) = next(iter(self._waiting.items()))
            if trio.current_time() < ends:
                await trio.sleep_until(ends)
                continue  # the first to run out may have stopped waiting meanwhile
            del self._waiting[task_id]
            try:
                expired = await self._end(task_id, self._no_answer(), from_version=version)
            except Exception:
                logger.exception("the wait of task %s could not be ended", task_id)
                continue
            if expired is not None:  # else its answer, or a cancel, came first
                self._report(expired)

    async def end_wait(self, task_id: str, version: int) -> bool:
        """End a task that waited for input past ADAPTER_INPUT_TTL, if it still does at
        `version` (the wait a replica gone since could not end); False otherwise."""
        expired = await self._end(task_id, self._no_answer(), from_version=version)
        if expired is not None:
            self._report(expired)
        return expired is not None

    def _no_answer(self) -> Verdict:
        return Verdict(
            Outcome.INPUT_EXPIRED,
            f"No answer to the agent's question came within {self._input_ttl:g} s "
            "(ADAPTER_INPUT_TTL), so the task ended. Send a new message to start again.",
        )

    async def _end(
        self,
        task_id: str,
        verdict: Verdict,
        task: Task | None = None,
        *,
        from_version: int | None = None,
    ) -> Task | None:
        """End the task's turn with the verdict: the state it earns, the agent's message (and
        the answer, when completed); None if the move lost (the task has ended already).
        `task`: the task as last seen, if known (a stale one only costs a second try)."""
        task = task or await self._store.get(task_id)
        text, marks = kept_reply(verdict.text, verdict.repaired, self._max_text, task.metadata)
        reply = Message(
            message_id=_new_id(),
            role=Role.AGENT,
            parts=(Part(text),),
            task_id=task.id,
            context_id=task.context_id,
            metadata={"outcome": verdict.outcome.value},
        )
        state = lifecycle.state_for(verdict.outcome)
        answer = None
        if state is TaskState.COMPLETED:
            answer = Artifact(_new_id(), "answer", (Part(text),))
        change = Change(
            state,
            self._clock(),
            message=reply,
            artifact=answer,
            metadata={"outcome": verdict.outcome.value, **marks},
        )
        return await self._move(task_id, change, task, from_version=from_version)

    async def _move(
        self,
        task_id: str,
        change: Change,
        task: Task | None = None,
        *,
        from_version: int | None = None,
    ) -> Task | None:
        """Record a change the lifecycle allows and publish its events; None if it lost.

        With `from_version`, only from that version: a change meant for the task as it was
        then (a next turn, the end of a wait) loses to any change since."""
        while True:
            task = task or await self._store.get(task_id)
            if from_version is not None and task.version != from_version:
                return None
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

    def _report(self, task: Task, call: _Call | None = None) -> None:
        """One log line and the metrics for a turn that has ended: with its call, or without
        one (a task that waited for input, canceled or out of time)."""
        outcome = task.metadata.get("outcome")
        if outcome is None:  # only if the adapter itself is being torn down mid-call
            return
        self._metrics.task_finished(Outcome(outcome))
        seconds = None if call is None else call.seconds
        if seconds is not None:
            self._metrics.webhook_answered(seconds)
        fields = {
            "event": "task",
            "task_id": task.id,
            "context_id": task.context_id,
            "turn": sum(1 for message in task.history if message.role is Role.USER),
            "outcome": outcome,
            "state": task.status.state.value,
            "webhook_status": None if call is None else call.webhook_status,
            "webhook_ms": None if seconds is None else round(seconds * 1000, 1),
        }
        logger.info("task %s %s", task.status.state.value, outcome, extra={"fields": fields})


def _new_id() -> str:
    return str(uuid.uuid4())


def _check_turn(task: Task, message: Message) -> None:
    """Raise unless `message` may be the next turn of `task`: its context, and a question."""
    if message.context_id is not None and message.context_id != task.context_id:
        raise A2AError.invalid_params(
            f"Task {task.id} belongs to another context than "
            f"message.contextId {message.context_id!r}"
        )
    if task.status.state is not TaskState.INPUT_REQUIRED:
        raise _takes_no_message(task)


def _takes_no_message(task: Task) -> A2AError:
    """Why a message naming `task` cannot start a turn of it: it is not waiting for input."""
    state = task.status.state.value
    if task.status.state is TaskState.INPUT_REQUIRED:
        return A2AError(
            ErrorCode.UNSUPPORTED_OPERATION,
            f"Task {task.id} has asked another question since this message was sent (another "
            "message answered the one before): read it (GetTask) and reply to it",
        )
    if task.status.state.is_terminal:
        return A2AError(
            ErrorCode.UNSUPPORTED_OPERATION,
            f"Task {task.id} is {state} and takes no further messages; send a new message "
            "without taskId (the same contextId continues the conversation)",
        )
    return A2AError(
        ErrorCode.UNSUPPORTED_OPERATION,
        f"Task {task.id} is {state}: it takes a message only while it asks for one "
        "(input-required). Wait for its answer (GetTask or SubscribeToTask), then reply to "
        "its question, or send a new message without taskId",
    )
