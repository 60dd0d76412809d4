"""The executor: what the routes and the server ask of tasks, over the rooms that do it.

A send's message becomes a task's turn (intake.py), its webhook call runs in the
server's nursery until its verdict is recorded (calls.py, call.py), a task that asked a
question waits for the next message until ADAPTER_INPUT_TTL (waits.py), and each ended
turn is reported (reports.py). Every change of a task is recorded one way (recorder.py),
as core/turns.py and core/lifecycle.py decide. This module only ties them to the
operations. A store out of reach (a database restarting) refuses a send or a get with
its StoreUnavailable; calls.py says what becomes of a verdict meanwhile.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractContextManager, asynccontextmanager, nullcontext
from dataclasses import dataclass
from datetime import datetime
from types import TracebackType

import trio

from ..auth.caller import Caller
from ..budget import MemoryBudget, Reservation
from ..core import lifecycle, turns
from ..observability.metrics import Metrics
from ..protocol.errors import A2AError, ErrorCode
from ..protocol.model import (
    ListTasks,
    SendMessage,
    StatusUpdate,
    SubscribeToTask,
    Task,
    TaskEvent,
    TaskPage,
    TaskState,
)
from ..store import TaskEvents, TaskStore
from ..store.fanout import utc_now
from ..store.relays import joined
from .calls import CallRunner, Drained, Workflow
from .config import ExecutorConfig
from .intake import InlinePush, Intake, Retried
from .polls import LongPolls
from .recorder import TaskRecorder
from .reports import TurnReporter
from .subscriptions import TaskStream
from .waits import InputWaits

#: What hears a task's events.
Listener = Callable[[TaskEvent], None]


@dataclass(frozen=True, slots=True)
class _Turn:
    """A send's turn: the task as its message left it (a stream begins with it), as it
    stands now (started, `working` with a free slot), and whether the message was sent
    before (`retried`: both are its first sending's task, as read)."""

    made: Task
    now: Task
    retried: bool


class Executor:
    """Submits tasks and runs their webhook calls, cancels them, and drains them at shutdown."""

    def __init__(
        self,
        nursery: trio.Nursery,
        store: TaskStore,
        events: TaskEvents,
        workflow: Workflow,
        config: ExecutorConfig,
        *,
        metrics: Metrics | None = None,
        clock: Callable[[], datetime] = utc_now,
        push: InlinePush | None = None,
        budget: MemoryBudget | None = None,
    ) -> None:
        self._events = events
        self._stream_buffer = config.stream_buffer
        self._tasks = TaskRecorder(store, events, clock)
        self._reports = TurnReporter(metrics or Metrics())
        self._intake = Intake(self._tasks, push)
        self._calls = CallRunner(
            nursery, self._tasks, events, workflow, self._reports, config, budget
        )
        self._waits = InputWaits(self._tasks, self._reports, config.input_ttl)
        self._polls = LongPolls(
            self._tasks, events, config.long_poll_timeout, config.max_long_polls_per_caller
        )
        self._drained = trio.Event()

    def __repr__(self) -> str:
        return f"<Executor {self._calls!r}>"

    @property
    def accepting(self) -> bool:
        """False once shutdown has begun."""
        return self._calls.accepting

    @property
    def in_flight(self) -> int:
        """Webhook calls under way now."""
        return self._calls.in_flight

    @property
    def queued(self) -> int:
        """Sends waiting for a free slot."""
        return self._calls.queued

    @property
    def running(self) -> tuple[str, ...]:
        """The tasks whose calls run (or wait for a slot) here."""
        return self._calls.running

    async def listen(
        self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """The executor's own work, until the drain at shutdown is over: end the tasks that
        waited too long for input. Start it before the first send. (Each call hears its own
        task's events, from any request or process, to be cut: see calls.py.)"""
        with self._events.subscribe_all(self._waits.hear):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._waits.expire, name="end of waits for input")
                task_status.started()
                await self._drained.wait()
                nursery.cancel_scope.cancel()

    async def get(
        self,
        task_id: str,
        caller: Caller,
        history_length: int | None = None,
        current_generation: int | None = None,
    ) -> Task:
        """The caller's task; with `current_generation`, once its generation passes it
        (polls.py: held at most ADAPTER_LONG_POLL_TIMEOUT)."""
        if current_generation is None:
            task = await self._tasks.owned(task_id, caller)
        else:
            task = await self._polls.get(task_id, caller, current_generation)
        return task.with_history_length(history_length)

    async def list(self, query: ListTasks, caller: Caller) -> TaskPage:
        """The caller's own tasks: nobody lists another's."""
        return await self._tasks.list(query, caller.owner)

    async def send(
        self, operation: SendMessage, caller: Caller, held: Reservation | None = None
    ) -> Task:
        """Submit a task for the message; a blocking send waits until it is terminal.
        `held`: the request's bytes under the memory budget, which its call gives back
        (the caller's, as before, if no call starts)."""
        if not operation.blocking:
            async with self._turn(operation, caller, held) as turn:
                return turn.now.with_history_length(operation.history_length)
        ended = trio.Event()

        def hear(event: TaskEvent) -> None:
            if isinstance(event, StatusUpdate) and event.final:
                ended.set()

        async with self._turn(operation, caller, held, hear) as turn:
            if not (turn.retried and lifecycle.ends_turn(turn.now.status.state)):
                await ended.wait()
        return await self.get(turn.now.id, caller, operation.history_length)

    @asynccontextmanager
    async def stream(
        self,
        operation: SendMessage | SubscribeToTask,
        caller: Caller,
        held: Reservation | None = None,
    ) -> AsyncIterator[TaskStream]:
        """A stream of a new task (a streaming send) or of a running one (a subscription):
        it begins with the task, then hears every later event until the final one."""
        stream = TaskStream(self._stream_buffer)
        if isinstance(operation, SubscribeToTask):
            # Listen first, then look: an event between the two is skipped by version.
            with self._events.subscribe(operation.task_id, stream.hear):
                task = await self._subscribable(operation.task_id, caller)
                if task.status.state is TaskState.WORKING:  # an answer may be streaming
                    task = joined(task, await self._events.relayed_so_far(task.id))
                stream.begin(task)
                yield stream
            return
        async with self._turn(operation, caller, held, stream.hear) as turn:
            # A retry of a turn that ended shows the task as it stands, and ends.
            over = turn.retried and lifecycle.ends_turn(turn.made.status.state)
            stream.begin(turn.made, over=over)
            yield stream

    def _turn(
        self,
        operation: SendMessage,
        caller: Caller,
        held: Reservation | None,
        hear: Listener | None = None,
    ) -> _Begun:
        """`async with`: the message made a task's turn and its call started, the task's
        events heard by `hear` from before the start; or, for a message sent before, its
        first sending's task, heard from before it is read (nothing is made, nothing runs
        again). See _Begun."""
        return _Begun(self, operation, caller, held, hear)

    async def check_stream(self, operation: SendMessage | SubscribeToTask, caller: Caller) -> None:
        """Raise now what `stream` would raise before its first event, changing nothing: a
        caller told no at once gets a plain answer instead of a stream of one error."""
        if isinstance(operation, SubscribeToTask):
            await self._subscribable(operation.task_id, caller)
            return
        self._calls.admit()
        await self._intake.check(operation, caller)

    async def _subscribable(self, task_id: str, caller: Caller) -> Task:
        task = await self._tasks.owned(task_id, caller)
        if lifecycle.is_terminal(task.status.state):
            raise A2AError(
                ErrorCode.UNSUPPORTED_OPERATION,
                f"Task {task.id} is {task.status.state.value}: a finished task has no "
                "more events to subscribe to (GetTask shows it)",
            )
        return task

    async def cancel(self, task_id: str, caller: Caller) -> Task:
        """Cancel a task that has not finished: it is `canceled` at once, its call cut."""
        await self._tasks.owned(task_id, caller)
        moved = await self._tasks.end(task_id, turns.CANCELED, relayed=self._calls.seal(task_id))
        if moved is None:
            raise turns.not_cancelable(await self._tasks.get(task_id))
        if not self._calls.runs(task_id):
            self._reports.turn_ended(moved)  # it waited for input: no call's end reports it
        return moved

    def stop_accepting(self) -> None:
        """Refuse new sends from now on; gets, lists and cancels still work (a held
        long-poll answers at once)."""
        self._calls.stop_accepting()
        self._polls.close()

    async def drain(self, grace_seconds: float) -> Drained:
        """Let calls under way finish within the grace period, then cut the rest as failed."""
        drained = await self._calls.drain(grace_seconds)
        self._drained.set()
        return drained

    async def lose(self, task_id: str) -> bool:
        """End, failed with outcome LOST, a task whose replica stopped renewing its lease
        (it died, or lost the store); False if it had ended already."""
        task = await self._tasks.end(task_id, turns.LOST, relayed=self._calls.seal(task_id))
        if task is None:
            return False
        self._reports.lost(task)
        return True

    async def end_wait(self, task_id: str, version: int) -> bool:
        """End a task that waited for input past ADAPTER_INPUT_TTL, if it still does at
        `version` (the wait a replica gone since could not end); False otherwise."""
        return await self._waits.end(task_id, version)


class _Begun:
    """A send's turn, begun for as long as the block runs (Executor._turn).

    A caller that hangs up must not leave a task made and never started: one shielded
    scope from the task's making to its call's start, the block itself unshielded (a
    blocking send's wait, a stream's reading). A class, not a generator's context
    manager: every send enters one, and a generator costs trio's hooks for it too."""

    __slots__ = ("_caller", "_executor", "_hear", "_hearing", "_held", "_operation")

    def __init__(
        self,
        executor: Executor,
        operation: SendMessage,
        caller: Caller,
        held: Reservation | None,
        hear: Listener | None,
    ) -> None:
        self._executor = executor
        self._operation = operation
        self._caller = caller
        self._held = held
        self._hear = hear
        self._hearing: AbstractContextManager[None] = nullcontext()

    async def __aenter__(self) -> _Turn:
        executor, operation, caller = self._executor, self._operation, self._caller
        executor._calls.admit()
        with trio.CancelScope(shield=True):
            taken = await executor._intake.receive(operation, caller)
            if not isinstance(taken, Retried):
                self._hear_from(taken.id)
                try:
                    started = await executor._calls.start(
                        taken, operation.message, caller, self._held
                    )
                except BaseException:
                    self._hearing.__exit__(None, None, None)
                    raise
                return _Turn(taken, started, retried=False)
        assert isinstance(taken, Retried)  # (a shield swallows nothing: only returns get here)
        # Nothing was made: nothing to shield.
        self._hear_from(taken.task_id)
        try:
            task = await executor._tasks.owned(taken.task_id, caller)
        except BaseException:
            self._hearing.__exit__(None, None, None)
            raise
        return _Turn(task, task, retried=True)

    def _hear_from(self, task_id: str) -> None:
        if self._hear is not None:  # a non-blocking send hears nothing: it is not free
            self._hearing = self._executor._events.subscribe(task_id, self._hear)
            self._hearing.__enter__()

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._hearing.__exit__(kind, error, traceback)
