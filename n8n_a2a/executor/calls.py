"""The call runner: the trio driver of each turn's webhook call (its machine: call.py).

Slots (slots.py) bound the calls in flight; sends past them wait in line, up to a bound.
Each call runs in its own task in the server's nursery, not in the request that asked for
it: a client that hangs up cancels its handler, not the call. A cut of the task, made
anywhere, reaches the call through the task's events. The driver does what the machine
says, one thing awaited at a time, and holds the cancel scopes, the slot, the task's
events heard, the budget's room, the span and the logs. A streamed reply's text reaches
the task's listeners here as it comes, chunks of the `answer` artifact.
"""

from __future__ import annotations

import logging
from collections import deque
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from typing import Protocol, assert_never

import trio

from ..auth.caller import Caller
from ..budget import MemoryBudget, Reservation, caller_key
from ..core import lifecycle
from ..core.errors import AtCapacity, StoreUnavailable
from ..core.replies import WebhookReply
from ..core.turns import ADAPTER_FAILED, CUT_BY_SHUTDOWN, new_id
from ..observability import traces
from ..observability.spans import Span
from ..protocol.model import Message, StatusUpdate, Task, TaskEvent
from ..store import TaskEvents
from ..webhook.reading import Relay, ReplyRoom
from ..webhook.request import WebhookRequest
from . import call_events as steps
from .call import Call, Phase
from .config import ExecutorConfig
from .recorder import TaskRecorder
from .reports import TurnReporter
from .slots import CallSlots, Slot

#: The actions done at once, which the driver does not await (call_events.Now).
_DONE_AT_ONCE = (steps.Relay, steps.Cancel, steps.FreeSlot, steps.Release, steps.Report)

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
class _Running:
    """What the driver holds for one call beside its machine: the things that do I/O."""

    call: Call
    request: WebhookRequest
    caller: Caller
    hearing: AbstractContextManager[None]  # its task's events, to cut it (entered by `start`)
    slot: Slot
    #: The cuttable await's, one each: a cut heard before it starts cancels it at once.
    scope: trio.CancelScope = field(default_factory=trio.CancelScope)
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
        self._calls: dict[str, _Running] = {}
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
        call = Call(task, new_id(), self._config)
        running = _Running(
            call,
            self._request(task, message),
            caller,
            self._events.subscribe(task.id, self._cut_if_ended),
            self._slots.claim(call),
            span=span,
            room=self._room(task, caller, held),
        )
        self._calls[task.id] = running
        running.hearing.__enter__()  # from now on a cut of the task, made anywhere, reaches it
        first = call.begin(running.slot.waited)
        actions: list[steps.Action] = [first]
        if isinstance(first, steps.MarkWorking):
            # The slot is taken now, so a non-blocking send already answers `working`.
            try:  # (the store out of reach: the machine tries again, the task `submitted`)
                working = await self._awaited(running, first)
            except BaseException:
                running.slot.give_back()
                self._forget(running)
                if span is not None:
                    span.fail("the store failed")
                    span.end()
                raise
            if isinstance(working, steps.Working) and working.task is not None:
                task = working.task
            actions = call.handle(working)
        self._nursery.start_soon(
            self._run, running, actions, name=f"webhook call of task {task.id}"
        )
        return task

    def _request(self, task: Task, message: Message) -> WebhookRequest:
        return WebhookRequest(
            text=message.text,
            task_id=task.id,
            context_id=task.context_id,
            message_id=message.message_id,
            skill_id=self._config.skill_id,
            parts=message.parts,
            resume=task.resume,
        )

    def _room(self, task: Task, caller: Caller, held: Reservation | None) -> Reservation | None:
        """The call's room under the budget: its send's, passed on (or its owner's, new)."""
        if self._budget is None:
            return None
        room = (
            held.pass_on()
            if held is not None
            else self._budget.reservation(caller_key(caller.owner))
        )
        self._budget.works_for(task.id, room.caller)
        return room

    async def _run(self, running: _Running, actions: list[steps.Action]) -> None:
        """The call's own task: its machine's actions, one awaited at a time, to its report."""
        call, pending = running.call, deque(actions)
        try:
            while pending:
                action = pending.popleft()
                try:
                    if isinstance(action, _DONE_AT_ONCE):
                        self._now(running, action)
                        continue
                    event = await self._awaited(running, action)
                except Exception:
                    # A bug must fail one task, not take down the nursery that serves all.
                    logger.exception("the call of task %s failed", call.task_id)
                    pending.clear()
                    event = steps.Broke()
                pending.extend(call.handle(event))
        finally:
            # Past the server's nursery cancelled (or a bug in a bug's path): nothing held.
            running.slot.give_back()
            if not call.released:
                self._forget(running)

    def _now(self, running: _Running, action: steps.Now) -> None:
        """Do an action that is done at once (from the call's task or from an event heard)."""
        match action:
            case steps.Relay(update=update):
                self._events.relay(update)
            case steps.Cancel():
                running.scope.cancel()
            case steps.FreeSlot():
                running.slot.give_back()
            case steps.Release():
                self._forget(running)
            case steps.Report():
                self._reports.call_ended(action, running.span)
            case _:
                assert_never(action)

    async def _awaited(self, running: _Running, action: steps.Awaited) -> steps.Event:
        """Do an awaited action, under a cancel scope of its own if its phase is cuttable."""
        if not running.call.phase.cuttable:
            return await self._await(running, action)
        started = trio.current_time()
        event: steps.Event | None = None
        with running.scope:
            event = await self._await(running, action)
        if running.call.phase is not Phase.CALLING:  # the workflow's call is the last one
            running.scope = trio.CancelScope()  # (a scope is entered once; none is free)
        if event is None:  # cut
            seconds = trio.current_time() - started
            return steps.CutOff(seconds if isinstance(action, steps.CallWorkflow) else None)
        return event

    async def _await(self, running: _Running, action: steps.Awaited) -> steps.Event:
        task_id = running.call.task_id
        match action:
            case steps.TakeSlot():
                await running.slot.wait()
                return steps.SlotTaken()
            case steps.MarkWorking(known=known):
                try:
                    return steps.Working(await self._tasks.start(task_id, known))
                except StoreUnavailable:
                    return steps.StoreOut(trio.current_time())
            case steps.CallWorkflow():
                return await self._call_workflow(running)
            case steps.Record():
                return await self._record(task_id, action)
            case steps.WaitUntil(at=at):
                await trio.sleep_until(at)
                return steps.Ready(trio.current_time())
            case steps.Fail(why=why, relayed=relayed):
                return steps.Recorded(await self._fail(task_id, why, relayed))
            case steps.ReadEnd():
                return await self._read_end(task_id)
            case _:
                assert_never(action)

    async def _record(self, task_id: str, action: steps.Record) -> steps.Event:
        if action.relayed:  # its chunks go everywhere before its end
            await self._events.settled()
        verdict, known, answer_id = action.verdict, action.known, action.answer_id
        try:
            ended = await self._tasks.end(
                task_id, verdict, known, answer_id=answer_id, relayed=action.relayed
            )
        except StoreUnavailable:
            return steps.StoreOut(trio.current_time())
        return steps.Recorded(ended)

    async def _read_end(self, task_id: str) -> steps.Event:
        try:
            return steps.ReadBack(await self._tasks.get(task_id))
        except StoreUnavailable:
            logger.warning("task %s: its end could not be read back", task_id)
            return steps.ReadBack(None)

    async def _call_workflow(self, running: _Running) -> steps.Event:
        started = trio.current_time()

        def relay(text: str) -> None:
            self._hear(running, steps.Chunk(text))

        full: str | None = None  # the reply was past the budget: its words
        try:
            reply = await self._workflow.call(running.request, running.caller, relay, running.room)
        except AtCapacity as refused:
            full = refused.message
        except Exception:
            logger.exception("webhook call for task %s failed", running.call.task_id)
        else:
            now = trio.current_time()
            return steps.Replied(reply, now - started, now)
        now = trio.current_time()
        return steps.WorkflowFailed(now - started, now, full)

    async def _fail(self, task_id: str, why: str, relayed: int) -> Task | None:
        if why:
            logger.error("task %s: %s", task_id, why)
        try:
            return await self._tasks.end(task_id, ADAPTER_FAILED, relayed=relayed)
        except Exception:
            logger.exception("task %s could not be ended", task_id)
            return None

    def _forget(self, running: _Running) -> None:
        # A question recorded, the task's next turn may have its own call already.
        if self._calls.get(running.call.task_id) is running:
            del self._calls[running.call.task_id]
        running.hearing.__exit__(None, None, None)
        if running.room is not None:
            running.room.give_back()
        if not self._calls and self._none_left is not None:
            self._none_left.set()

    def _hear(self, running: _Running, event: steps.Chunk | steps.Cut) -> None:
        for action in running.call.hear(event):
            self._now(running, action)

    def seal(self, task_id: str) -> int:
        """Call.seal of the task's call here (0 without one), for a move about to be made."""
        return 0 if (running := self._calls.get(task_id)) is None else running.call.seal()

    def _cut_if_ended(self, event: TaskEvent) -> None:
        """A task whose call is under way ended otherwise (cancel, shutdown): cut the call."""
        ended = isinstance(event, StatusUpdate) and lifecycle.is_terminal(event.status.state)
        if ended and (running := self._calls.get(event.task_id)) is not None:
            self._hear(running, steps.Cut())

    async def drain(self, grace_seconds: float) -> Drained:
        """Let calls under way finish within the grace period, then cut the rest as failed."""
        self.stop_accepting()
        under_way = len(self._calls)
        with trio.move_on_after(grace_seconds):
            await self._all_ended()
        cut = 0
        for task_id in list(self._calls):
            try:
                cut_off = self._tasks.end(task_id, CUT_BY_SHUTDOWN, relayed=self.seal(task_id))
                if await cut_off is None:
                    continue
                logger.warning("shutdown cut the webhook call of task %s", task_id)
            except StoreUnavailable:
                # Cut it all the same: its lease runs out, another replica ends it LOST.
                logger.warning("shutdown cut the webhook call of task %s unrecorded", task_id)
                if (running := self._calls.get(task_id)) is not None:
                    self._hear(running, steps.Cut())
            cut += 1
        await self._all_ended()
        return Drained(finished=under_way - cut, cut=cut)

    async def _all_ended(self) -> None:
        """Until every call has ended (no new ones start once sends are refused)."""
        if self._calls:
            self._none_left = trio.Event()
            await self._none_left.wait()
