"""The in-memory task table and the task state machine.

Tasks are frozen; the table swaps in a new version on each legal transition
(submitted -> working -> one terminal state, which is final). The table is bounded:
finished tasks leave after a time-to-live, or oldest first when it is full; a
running task never does. What one task keeps is bounded too: each message's text
(the caller's and the agent's) up to a number of characters, cut with a marker past
it, and only text UTF-8 can encode. A ListTasks page is bounded in bytes as well as
in tasks. Pure: no I/O.
"""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from .outcome import Verdict
from .protocol.errors import A2AError, ErrorCode
from .protocol.model import (
    Artifact,
    JSONObject,
    ListTasks,
    Message,
    Part,
    Role,
    Task,
    TaskPage,
    TaskState,
    TaskStatus,
)
from .text import cut, repair

Clock = Callable[[], datetime]

#: The default of ADAPTER_MAX_STORED_TEXT: characters of text a task keeps of each message.
MAX_STORED_TEXT = 8192
#: The longest messageId, contextId or taskId a message may carry.
MAX_ID_CHARS = 1024
#: About the most bytes of tasks one ListTasks page carries (always at least one task).
MAX_PAGE_BYTES = 1024 * 1024
# What a part counts for beside its text when a message is measured against the limit.
_PART_CHARS = 16
# Generous JSON sizes of what a task has beside its strings: keys, states, timestamps.
_TASK_BYTES = 160
_MESSAGE_BYTES = 96
_PART_BYTES = 32


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
        self,
        max_tasks: int = 10_000,
        ttl_seconds: float = 3600.0,
        clock: Clock = _utc_now,
        *,
        max_stored_text: int = MAX_STORED_TEXT,
        max_page_bytes: int = MAX_PAGE_BYTES,
    ) -> None:
        self._tasks: dict[str, Task] = {}
        # Finished task ids in the order they finished: eviction takes from the front.
        self._finished: dict[str, None] = {}
        self._max_tasks = max_tasks
        self._ttl = timedelta(seconds=ttl_seconds)
        self._clock = clock
        self._max_text = max_stored_text
        self._max_page_bytes = max_page_bytes

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
        tasks end in a terminal state and ask for no further input. The task keeps the
        message as `_kept` bounds it; the workflow gets all of it.
        """
        _check_ids(message)
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
        kept, marks = _kept(message, self._max_text)
        task = Task(
            id=task_id,
            context_id=context_id,
            status=TaskStatus(TaskState.SUBMITTED, self._clock()),
            history=(replace(kept, task_id=task_id, context_id=context_id),),
            metadata=marks,
        )
        self._tasks[task_id] = task
        return task

    def start(self, task_id: str) -> Task:
        return self._move(task_id, TaskState.WORKING)

    def finish(self, task_id: str, verdict: Verdict) -> Task:
        """Record the webhook's verdict: the agent's reply joins the history, and an
        answer also becomes the task's artifact. Both keep at most the stored-text limit."""
        task = self.get(task_id)
        text = cut(verdict.text, self._max_text)
        reply = Message(
            message_id=_new_id(),
            role=Role.AGENT,
            parts=(Part(text),),
            task_id=task.id,
            context_id=task.context_id,
            metadata={"outcome": verdict.outcome.value},
        )
        artifacts = task.artifacts
        if verdict.task_state is TaskState.COMPLETED:
            artifacts += (Artifact(_new_id(), "answer", (Part(text),)),)
        metadata: JSONObject = {"outcome": verdict.outcome.value}
        cut_here = len(verdict.text) > self._max_text
        for mark, made in (("cut", cut_here), ("repaired", verdict.repaired)):
            if made:
                metadata[mark] = [*task.metadata.get(mark, ()), "reply"]
        return self._move(
            task_id, verdict.task_state, message=reply, artifacts=artifacts, metadata=metadata
        )

    def list(self, query: ListTasks) -> TaskPage:
        """A page of tasks, the most recently updated first (ties broken by id): at most
        `page_size` of them, and no more than fit in the page's bytes (at least one)."""
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
        shown: list[Task] = []
        size = 0
        for task in found[start : start + query.page_size]:
            view = replace(
                task.with_history_length(query.history_length),
                artifacts=task.artifacts if query.include_artifacts else (),
            )
            size += _encoded_size(view)
            if shown and size > self._max_page_bytes:
                break
            shown.append(view)
        more = start + len(shown) < len(found)
        return TaskPage(
            tasks=tuple(shown),
            next_page_token=_encode_cursor(shown[-1]) if more else "",
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
        metadata: JSONObject | None = None,
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


def _check_ids(message: Message) -> None:
    """Ids are kept whole, so each must be short and valid Unicode: -32602 otherwise."""
    for name, value in (
        ("messageId", message.message_id),
        ("contextId", message.context_id),
        ("taskId", message.task_id),
    ):
        if value is not None and (len(value) > MAX_ID_CHARS or repair(value)[1]):
            raise A2AError.invalid_params(
                f"params.message.{name} must be at most {MAX_ID_CHARS} characters of valid Unicode"
            )


def _kept(message: Message, limit: int) -> tuple[Message, JSONObject]:
    """What a task keeps of a caller's message, and the task metadata saying what changed.

    A message whose text and metadata fit in `limit` characters is kept as it came. A
    larger one is kept as one text part, the text the workflow got cut at `limit` with a
    marker, without its metadata: "cut": ["message"]. A lone surrogate (which UTF-8
    cannot encode) becomes U+FFFD: "repaired": ["message"].
    """
    marks: JSONObject = {}
    extras = [message.metadata, *(part.metadata for part in message.parts)]
    try:
        extras_json = json.dumps(extras, ensure_ascii=False)
    except (ValueError, RecursionError):
        extras_json = None  # too deep to encode again: not kept
    texts = sum(len(part.text) + _PART_CHARS for part in message.parts)
    if extras_json is not None and texts + len(extras_json) <= limit:
        repaired_json, repaired = repair(extras_json)
        metadata, *part_metadata = json.loads(repaired_json) if repaired else extras
        parts = []
        for part, part_extra in zip(message.parts, part_metadata, strict=True):
            text, fixed = repair(part.text)
            repaired = repaired or fixed
            parts.append(Part(text, part_extra))
        kept = replace(message, parts=tuple(parts), metadata=metadata)
    else:
        text, repaired = repair(cut(message.text, limit))
        kept = replace(message, parts=(Part(text),), metadata=None)
        marks["cut"] = ["message"]
    if repaired:
        marks["repaired"] = ["message"]
    return kept, marks


def _encoded_size(task: Task) -> int:
    """About the bytes the task takes in a JSON answer: its strings and metadata exactly,
    the rest (keys, states, timestamps) generously."""
    strings: list[object] = [task.id, task.context_id, task.metadata]
    size = _TASK_BYTES
    messages = task.history + ((task.status.message,) if task.status.message else ())
    for message in messages:
        strings += (message.message_id, message.task_id, message.context_id, message.metadata)
        strings += [(part.text, part.metadata) for part in message.parts]
        size += _MESSAGE_BYTES + _PART_BYTES * len(message.parts)
    for artifact in task.artifacts:
        strings += (artifact.artifact_id, artifact.name)
        strings += [(part.text, part.metadata) for part in artifact.parts]
        size += _MESSAGE_BYTES + _PART_BYTES * len(artifact.parts)
    return size + len(json.dumps(strings, ensure_ascii=False).encode())


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
