"""The in-memory task table and the task state machine.

Tasks are frozen; the table swaps in a new version on each legal transition
(submitted -> working -> one terminal state, which is final). Pure: no I/O.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime

from .outcome import Verdict
from .protocol.errors import A2AError, ErrorCode
from .protocol.model import Artifact, Message, Part, Role, Task, TaskState, TaskStatus

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

    def __init__(self, clock: Clock = _utc_now) -> None:
        self._tasks: dict[str, Task] = {}
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
        return moved


class IllegalTransition(Exception):
    """A change of state the A2A task lifecycle does not allow (a bug, never client input)."""

    def __init__(self, task: Task, state: TaskState) -> None:
        super().__init__(f"task {task.id}: {task.status.state.value} -> {state.value}")
        self.task = task
        self.state = state
