"""The in-memory task table and the task state machine.

Tasks are frozen; the table swaps in a new version on each legal transition
(submitted -> working -> one terminal state, which is final). The table is bounded:
finished tasks leave after a time-to-live, or oldest first when it is full; a
running task never does. Pure: no I/O.
"""

from __future__ import annotations

import base64
import binascii
import uuid
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from .outcome import Verdict
from .protocol.errors import A2AError, ErrorCode
from .protocol.model import (
    Artifact,
    ListTasks,
    Message,
    Part,
    Role,
    Task,
    TaskPage,
    TaskState,
    TaskStatus,
)

Clock = Callable[[], datetime]


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _new_id() -> str:
    return str(uuid.uuid4())


_NEXT_STATES: dict[TaskState, frozenset[TaskState]] = {
    TaskState.SUBMITTED: frozenset(
        {TaskState.WORKING, TaskState.CANCELED, TaskState.FAILED, TaskState.REJECTED}
    ),
    TaskState.WORKING: frozenset({TaskState.COMPLETED, TaskState.CANCELED, TaskState.FAILED}),
}


class TaskTable:
    """Every task this process has run, by id."""

    def __init__(
        self, max_tasks: int = 10_000, ttl_seconds: float = 3600.0, clock: Clock = _utc_now
    ) -> None:
        self._tasks: dict[str, Task] = {}
        # Finished task ids in the order they finished: eviction takes from the front.
        self._finished: dict[str, None] = {}
        self._max_tasks = max_tasks
        self._ttl = timedelta(seconds=ttl_seconds)
        self._clock = clock

    def __len__(self) -> int:
        return len(self._tasks)

    def get(self, task_id: str) -> Task:
        try:
            return self._tasks[task_id]
        except KeyError:
            raise A2AError.task_not_found(task_id) from None

    def submit(self, message: Message) -> Task:
        """A new task for a user's message, in SUBMITTED, on the message's context or a new one.

        A message that names a task continues it, which this agent never allows: its
        tasks end in a terminal state and ask for no further input.
        """
        if message.task_id is not None:
            existing = self.get(message.task_id)
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
        self._make_room()
        task_id = _new_id()
        context_id = message.context_id or _new_id()
        user_message = replace(message, task_id=task_id, context_id=context_id)
        task = Task(
            id=task_id,
            context_id=context_id,
            status=TaskStatus(TaskState.SUBMITTED, self._clock()),
            history=(user_message,),
        )
        self._tasks[task_id] = task
        return task

    def start(self, task_id: str) -> Task:
        return self._move(task_id, TaskState.WORKING)

    def finish(self, task_id: str, verdict: Verdict) -> Task:
        """Record the webhook's verdict: the agent's reply joins the history, and an
        answer also becomes the task's artifact."""
        task = self.get(task_id)
        reply = Message(
            message_id=_new_id(),
            role=Role.AGENT,
            parts=(Part(verdict.text),),
            task_id=task.id,
            context_id=task.context_id,
            metadata={"outcome": verdict.outcome.value},
        )
        artifacts = task.artifacts
        if verdict.task_state is TaskState.COMPLETED:
            artifacts += (Artifact(_new_id(), "answer", (Part(verdict.text),)),)
        return self._move(
            task_id,
            verdict.task_state,
            message=reply,
            artifacts=artifacts,
            metadata={"outcome": verdict.outcome.value},
        )

    def list(self, query: ListTasks) -> TaskPage:
        """A page of tasks, the most recently updated first (ties broken by id)."""
        found = [
            task
            for task in self._tasks.values()
            if (query.context_id is None or task.context_id == query.context_id)
            and (query.state is None or task.status.state is query.state)
            and (
                query.status_timestamp_after is None
                or task.status.timestamp >= query.status_timestamp_after
            )
        ]
        found.sort(key=_list_order, reverse=True)
        start = 0
        if query.page_token:
            after = _decode_cursor(query.page_token)
            start = next((i for i, t in enumerate(found) if _list_order(t) < after), len(found))
        page = found[start : start + query.page_size]
        more = start + query.page_size < len(found)
        shown = tuple(
            replace(
                task.with_history_length(query.history_length),
                artifacts=task.artifacts if query.include_artifacts else (),
            )
            for task in page
        )
        return TaskPage(
            tasks=shown,
            next_page_token=_encode_cursor(page[-1]) if more else "",
            page_size=query.page_size,
            total_size=len(found),
        )

    def _make_room(self) -> None:
        """Drop finished tasks past their time-to-live, then the oldest while full."""
        expired_before = self._clock() - self._ttl
        while self._finished:
            oldest = next(iter(self._finished))
            if self._tasks[oldest].status.timestamp >= expired_before:
                break
            self._forget(oldest)
        while len(self._tasks) >= self._max_tasks and self._finished:
            self._forget(next(iter(self._finished)))
        if len(self._tasks) >= self._max_tasks:
            raise A2AError(
                ErrorCode.SERVER_BUSY,
                f"Server busy: all {self._max_tasks} tasks in the table are still running "
                "(ADAPTER_MAX_TASKS); retry later",
            )

    def _forget(self, task_id: str) -> None:
        del self._finished[task_id]
        del self._tasks[task_id]

    def _move(
        self,
        task_id: str,
        state: TaskState,
        *,
        message: Message | None = None,
        artifacts: tuple[Artifact, ...] | None = None,
        metadata: dict[str, str] | None = None,
    ) -> Task:
        task = self.get(task_id)
        if state not in _NEXT_STATES.get(task.status.state, frozenset()):
            raise IllegalTransition(task, state)
        moved = replace(
            task,
            status=TaskStatus(state, self._clock(), message),
            history=task.history + ((message,) if message is not None else ()),
            artifacts=task.artifacts if artifacts is None else artifacts,
            metadata=task.metadata if metadata is None else {**task.metadata, **metadata},
        )
        self._tasks[task_id] = moved
        if state.is_terminal:
            self._finished[task_id] = None
        return moved


def _list_order(task: Task) -> tuple[datetime, str]:
    return task.status.timestamp, task.id


def _encode_cursor(task: Task) -> str:
    """An opaque page token: where the page ended, so it survives evictions."""
    position = f"{task.status.timestamp.isoformat()}|{task.id}"
    return base64.urlsafe_b64encode(position.encode()).decode()


def _decode_cursor(token: str) -> tuple[datetime, str]:
    try:
        moment, _, task_id = base64.urlsafe_b64decode(token.encode()).decode().partition("|")
        position = datetime.fromisoformat(moment), task_id
    except (binascii.Error, UnicodeError, ValueError):
        position = None
    if position is None or position[0].tzinfo is None:
        raise A2AError.invalid_params("params.pageToken is not a token this agent gave")
    return position


class IllegalTransition(Exception):
    """A change of state the A2A task lifecycle does not allow (a bug, never client input)."""

    def __init__(self, task: Task, state: TaskState) -> None:
        super().__init__(f"task {task.id}: {task.status.state.value} -> {state.value}")
        self.task = task
        self.state = state
