"""The call runner: each turn's webhook call, from admission to its recorded verdict.

Slots (slots.py) bound the calls in flight; sends past them wait in line, up to a
bound past which they are refused. Each call runs under its own cancel scope in the
server's nursery, which outlives the request that asked for it: a client that hangs up
cancels its request handler, not the call, and the task still reaches its end. A cut
of the task (CancelTask, shutdown), made anywhere, reaches the call through the task's
events and closes its connection. At shutdown the drain lets calls finish within a
grace period, then cuts the rest.

A store may be out of reach for a while (a database restarting): a verdict is then
recorded once the store is back (for up to `store_patience` seconds), and whatever
could not be recorded is left to the store's leases, which make another replica end
the task LOST.

A streamed reply's text (ADAPTER_WEBHOOK_STREAMING) reaches the task's listeners in this
process as it comes, chunks of the `answer` artifact (turns.answer_chunk); the verdict's
answer then replaces them under the same artifact id.
"""

from __future__ import annotations

import logging
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from typing import Protocol

import trio

from ..auth.caller import Caller
from ..budget import MemoryBudget, Reservation, caller_key
from ..core import lifecycle
from ..core.contract import HttpReply, StreamedReply, Verdict, WebhookReply, classify
from ..core.errors import AtCapacity, StoreUnavailable
from ..core.turns import ADAPTER_FAILED, CUT_BY_SHUTDOWN, answer_chunk, new_id, reply_not_held
from ..observability import traces
from ..observability.spans import Span
from ..protocol.model import Message, StatusUpdate, Task, TaskEvent, TaskState
from ..store import TaskEvents
from ..webhook.client import WebhookRequest
from ..webhook.reading import Relay, ReplyRoom
from .config import ExecutorConfig
from .recorder import TaskRecorder
from .reports import TurnReporter
from .slots import CallSlots, Slot

# The executor's one logger, whichever of its rooms logs: the name its log lines have
# always carried, which operators filter on.
logger = logging.getLogger(__package__)


class Workflow(Protocol):
    """The one call to the workflow (webhook.client.WebhookClient; a script in tests)."""

    async def call(
        self,
        request: WebhookRequest,
        caller: Caller,
        relay: Relay | None = None,
        room: ReplyRoom | None = None,
    ) -> WebhookReply: ...


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
    hearing: AbstractContextManager[None]  # its task's events, to cut it (entered by `start`)
    scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    task: Task | None = None  # as its last move here left it: a read saved when it ends
    webhook_status: int | None = None
    seconds: float | None = None
    answer_id: str = field(default_factory=new_id)  # its streamed chunks' artifact
    relayed: bool = False  # a chunk of the answer went out
    #: Out of its scope: nothing left to cut (and trio's cancel is not free, even then).
    over: bool = False
    span: Span | None = None  # its turn's, with tracing on
    #: Under ADAPTER_MEMORY_BUDGET: its request's bytes (passed on by the send), then its
    #: reply's as read, given back when the call ends.
    room: Reservation | None = None


class CallRunner:
    """The webhook calls this process runs, one per task at most."""

    def __init__(
        self,
        nursery: trio.Nursery,
        tasks: TaskRecorder,
        events: TaskEvents,
        workflow: Workflow,
        reports: TurnReporter,
        config: ExecutorConfig,
        budget: MemoryBudget | None = None,
    ) -> None:
        self._nursery = nursery
        self._budget = budget
        self._tasks = tasks
        self._events = events
        self._workflow = workflow
        self._reports = reports
        self._config = config
        self._slots = CallSlots(config.max_concurrent_calls, config.max_queued_calls)
        self._calls: dict[str, _Call] = {}
        self._none_left: trio.Event | None = None  # set once `_calls` empties, in a drain
        self._accepting = True

    def __repr__(self) -> str:
        """Its state in one line, what a cancellation test asserts on."""
        return (
            f"<CallRunner calls={len(self._calls)} in_flight={self.in_flight} "
            f"queued={self.queued} accepting={self._accepting}>"
        )

    @property
    def accepting(self) -> bool:
        """False once shutdown has begun."""
        return self._accepting

    @property
    def in_flight(self) -> int:
        """Webhook calls under way now."""
        return self._slots.in_use

    @property
    def queued(self) -> int:
        """Sends waiting for a free slot."""
        return self._slots.waiting

    @property
    def running(self) -> tuple[str, ...]:
        """The tasks whose calls run (or wait for a slot) here."""
        return tuple(self._calls)

    def runs(self, task_id: str) -> bool:
        """Whether the task's call runs (or waits for a slot) here."""
        return task_id in self._calls

    def admit(self) -> None:
        """Raise AtCapacity unless a new call may start or wait for its slot."""
        if not self._accepting:
            raise AtCapacity("The adapter is shutting down; send the message again")
        if self._slots.full:
            raise AtCapacity(
                f"Server busy: {self.in_flight} webhook calls are running and {self.queued} "
                "are waiting (ADAPTER_MAX_CONCURRENT_CALLS, ADAPTER_MAX_QUEUED_CALLS); "
                "retry later",
            )

    def stop_accepting(self) -> None:
        """Refuse new calls from now on (shutdown has begun)."""
        self._accepting = False

    async def start(
        self, task: Task, message: Message, caller: Caller, held: Reservation | None = None
    ) -> Task:
        """Start the call of the task's turn, on the caller's message; with a free slot the
        task is `working` when this returns. `held`: the request's bytes under the memory
        budget, the call's to give back from now on."""
        span: Span | None = None
        if traces.active.enabled:
            # The turn's span, under the request's; the webhook call's goes under it.
            span = traces.active.task(task.id, caller.trace_headers)
            caller = replace(caller, trace_headers=span.headers())
        call = _Call(
            WebhookRequest(
                text=message.text,
                task_id=task.id,
                context_id=task.context_id,
                message_id=message.message_id,
                skill_id=self._config.skill_id,
                parts=message.parts,
            ),
            caller,
            self._events.subscribe(task.id, self._cut_if_ended),
            span=span,
            room=self._room(task, caller, held),
        )
        self._calls[task.id] = call
        # From now on a cut of the task, made anywhere, reaches the call.
        call.hearing.__enter__()
        slot = self._slots.claim(call)
        if not slot.waited:
            # The slot is taken now, so a non-blocking send already answers `working`.
            try:
                task = await self._tasks.start(task.id, task) or task
                call.task = task
            except BaseException:
                # The store failed: no call starts, the task's lease will end it.
                slot.give_back()
                self._forget(call)
                if span is not None:
                    span.fail("the store failed")
                    span.end()
                raise
        self._nursery.start_soon(self._run, call, slot, name=f"webhook call of task {task.id}")
        return task

    def _room(self, task: Task, caller: Caller, held: Reservation | None) -> Reservation | None:
        """The call's room under the budget: the request's, passed on by its send (or a new
        one, for the task's owner), its results kept as that caller's."""
        if self._budget is None:
            return None
        room = (
            held.pass_on()
            if held is not None
            else self._budget.reservation(caller_key(caller.owner))
        )
        self._budget.works_for(task.id, room.caller)
        return room

    async def _run(self, call: _Call, slot: Slot) -> None:
        """The call's own task: the workflow called in the call's slot, its verdict
        recorded, its turn's end reported, whatever happens."""
        ended: Task | None = None
        try:
            verdict = await self._call_in_slot(call, slot)
            call.over = True
            if verdict is not None:
                ended = await self._record(call, verdict)
        except Exception:
            # A bug here must fail one task, not take down the nursery that serves them all.
            logger.exception("the call of task %s failed", call.request.task_id)
            ended = await self._fail(call.request.task_id)
        finally:
            self._forget(call)
            reported = await self._report_end(call, ended)
            if call.span is not None:
                _end_turn(call.span, reported)

    async def _call_in_slot(self, call: _Call, slot: Slot) -> Verdict | None:
        """The workflow's verdict, under the call's cancel scope and in its slot (waited
        for, when the send found none free); None when the task was cut first."""
        with call.scope:
            async with slot:
                # A task cut while it waited for its slot stays cut: the move loses.
                if slot.waited:
                    call.task = await self._tasks.start(call.request.task_id)
                if call.task is not None:
                    return await self._call_workflow(call)
        return None

    async def _fail(self, task_id: str) -> Task | None:
        try:
            return await self._tasks.end(task_id, ADAPTER_FAILED)
        except Exception:
            logger.exception("task %s could not be ended", task_id)
            return None

    async def _report_end(self, call: _Call, ended: Task | None) -> Task | None:
        """Report the turn's end; the task as reported (None: it could not be read)."""
        task_id = call.request.task_id
        try:
            # The task as this turn left it (a later turn may have moved it since), or as
            # the cut that ended it did.
            ended = ended or await self._tasks.get(task_id)
            self._reports.turn_ended(
                ended, webhook_status=call.webhook_status, webhook_seconds=call.seconds
            )
        except StoreUnavailable:
            logger.warning("task %s: its end could not be read back", task_id)
            return None
        return ended

    def _forget(self, call: _Call) -> None:
        # A question recorded, the task's next turn may have its own call already.
        if self._calls.get(call.request.task_id) is call:
            del self._calls[call.request.task_id]
        call.hearing.__exit__(None, None, None)
        if call.room is not None:
            call.room.give_back()
        if not self._calls and self._none_left is not None:
            self._none_left.set()

    async def _call_workflow(self, call: _Call) -> Verdict:
        started = trio.current_time()
        try:
            relay = self._relay(call)
            reply = await self._workflow.call(call.request, call.caller, relay, call.room)
            call.webhook_status = (
                reply.status if isinstance(reply, HttpReply | StreamedReply) else None
            )
            return classify(
                reply, input_required=self._config.input_required, modes=self._config.modes
            )
        except AtCapacity as full:
            return reply_not_held(full.message)
        except Exception:
            logger.exception("webhook call for task %s failed", call.request.task_id)
            return ADAPTER_FAILED
        finally:
            call.seconds = trio.current_time() - started

    def _relay(self, call: _Call) -> Relay:
        """Where the call's streamed text goes: its task's listeners here, as chunks."""

        def relay(text: str) -> None:
            # A read that came in the step the task was cut: its chunk must not follow the end.
            if call.task is not None and not call.scope.cancel_called:
                self._events.relay(answer_chunk(call.task, call.answer_id, text, not call.relayed))
                call.relayed = True

        return relay

    async def _record(self, call: _Call, verdict: Verdict) -> Task | None:
        """End the task with its call's verdict, waiting for the store while it is
        unavailable, for `store_patience` seconds at most; None if it had ended."""
        task_id, task = call.request.task_id, call.task
        deadline = trio.current_time() + self._config.store_patience
        pause = 0.1
        while True:
            try:
                return await self._tasks.end(task_id, verdict, task, answer_id=call.answer_id)
            except StoreUnavailable:
                task = None  # read it again once the store is back
                if trio.current_time() + pause > deadline:
                    raise
            await trio.sleep(pause)
            pause = min(pause * 2, 2.0)

    def _cut_if_ended(self, event: TaskEvent) -> None:
        """A task whose call is under way ended otherwise (cancel, shutdown): close the call."""
        if isinstance(event, StatusUpdate) and lifecycle.is_terminal(event.status.state):
            call = self._calls.get(event.task_id)
            if call is not None and not call.over:
                call.scope.cancel()

    async def drain(self, grace_seconds: float) -> Drained:
        """Let calls under way finish within the grace period, then cut the rest as failed."""
        self.stop_accepting()
        under_way = len(self._calls)
        with trio.move_on_after(grace_seconds):
            await self._all_ended()
        cut = 0
        for task_id in list(self._calls):
            try:
                if await self._tasks.end(task_id, CUT_BY_SHUTDOWN) is None:
                    continue
                logger.warning("shutdown cut the webhook call of task %s", task_id)
            except StoreUnavailable:
                # Cut it all the same: its lease runs out, another replica ends it LOST.
                logger.warning("shutdown cut the webhook call of task %s unrecorded", task_id)
                if (call := self._calls.get(task_id)) is not None:
                    call.scope.cancel()
            cut += 1
        await self._all_ended()
        return Drained(finished=under_way - cut, cut=cut)

    async def _all_ended(self) -> None:
        """Until every call has ended (no new ones start once sends are refused)."""
        if self._calls:
            self._none_left = trio.Event()
            await self._none_left.wait()


def _end_turn(span: Span, task: Task | None) -> None:
    """End a turn's span with the state it left the task in, and the outcome recorded."""
    if task is None:
        span.fail("the task could not be read back")
    else:
        state = task.status.state
        span.set("a2a.task.state", state.value)
        outcome = task.metadata.get("outcome")
        if isinstance(outcome, str):
            span.set("a2a.task.outcome", outcome)
        if state is TaskState.FAILED:
            span.fail(state.value)
    span.end()
