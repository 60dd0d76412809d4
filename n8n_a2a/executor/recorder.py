"""The executor's way to its tasks: read them, and record every change of them.

Every change goes through `TaskRecorder._move`: core/turns.py says what the change is, the
lifecycle whether it may still happen, the store records it compare-and-set, and the
events carry it to whoever listens: a cut (a cancel, a shutdown) too, wherever it was
made, which is how the cut call hears it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime

from ..auth.caller import Caller
from ..core import lifecycle, turns
from ..core.changes import Change
from ..core.owners import Owner
from ..core.replies import Verdict
from ..core.sent import Sent
from ..protocol.errors import A2AError
from ..protocol.model import ListTasks, Message, Task, TaskPage
from ..store import TaskEvents, TaskStore


class TaskRecorder:
    """The tasks of the store, as the executor reads and moves them."""

    def __init__(
        self,
        store: TaskStore,
        events: TaskEvents,
        clock: Callable[[], datetime],
    ) -> None:
        self._store = store
        self._events = events
        self._clock = clock

    async def get(self, task_id: str) -> Task:
        return await self._store.get(task_id)

    async def owned(self, task_id: str, caller: Caller) -> Task:
        """The task, if the caller owns it; TASK_NOT_FOUND alike for an unknown id and for
        another's task, so that nobody learns which ids exist (spec §13.1). Every operation
        on a task the caller names goes through here."""
        task = await self._store.get(task_id)
        if task.owner != caller.owner:
            raise A2AError.task_not_found(task_id)
        return task

    async def list(self, query: ListTasks, owner: Owner) -> TaskPage:
        return await self._store.list(query, owner)

    async def sent(self, owner: Owner, message_id: str) -> Sent | None:
        """The message `owner` sent under `message_id`, while its task is kept."""
        return await self._store.sent(owner, message_id)

    async def create(self, message: Message, owner: Owner, sent: Sent | None = None) -> Task:
        """A new task for the message, `submitted`; the message remembered as `sent`
        (AlreadySent, and no task, if it was sent before)."""
        task = turns.first_turn(message, owner, self._clock())
        await self._store.create(task, sent)
        return task

    async def begin_turn(
        self, task: Task, message: Message, sent: Sent | None = None, generation: int | None = None
    ) -> Task:
        """The next turn of `task`, which asked for input: `submitted` again with the
        caller's message (remembered as `sent`, as `create`'s), or the A2AError saying why
        the task takes no message. `generation`: the one the send expects the task at."""
        turns.check_generation(task, generation)
        change = replace(turns.next_turn(task, message, self._clock()), sent=sent)
        moved = await self._move(task.id, change, task, from_version=task.version)
        if moved is None:
            # Another message, a cancel or the end of the wait came first.
            now = await self._store.get(task.id)
            turns.check_generation(now, generation)
            raise turns.takes_no_message(now)
        return moved

    async def start(self, task_id: str, task: Task | None = None) -> Task | None:
        """The turn's call has its slot: `working`; None if the task was cut meanwhile."""
        return await self._move(task_id, turns.started(self._clock()), task)

    async def end(
        self,
        task_id: str,
        verdict: Verdict,
        task: Task | None = None,
        *,
        from_version: int | None = None,
        answer_id: str | None = None,
        relayed: int = 0,
    ) -> Task | None:
        """End the task's turn with the verdict; None if the move lost (the task has ended
        already). `task`: the task as last seen, if known (a stale one only costs a second
        try); `from_version`: see `_move`; `answer_id`: see turns.ended; `relayed`: the
        chunks of its answer relayed here (Change.relayed)."""
        task = task or await self._store.get(task_id)
        change = turns.ended(task, verdict, self._clock(), answer_id)
        if relayed:
            change = replace(change, relayed=relayed)
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
