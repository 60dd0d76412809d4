"""What each A2A operation that answers at once does, whatever binding carried it: one
row an operation type, its handler (the executor's or push's call) and its result's
encoder (the codec's shapes). A method's name and how its params are read are its row
of protocol/operations.py; streams go to streams.py."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Generic, TypeVar

from ..auth.caller import Caller
from ..budget import Reservation
from ..core.release import task_payload_bytes
from ..observability import traces
from ..protocol.codec import Codec
from ..protocol.model import (
    CancelTask,
    GetTask,
    ListTasks,
    Operation,
    SendMessage,
    Task,
    TaskPage,
)
from ..protocol.push import (
    CreatePushConfig,
    DeletePushConfig,
    GetPushConfig,
    ListPushConfigs,
    PushConfig,
    PushConfigPage,
)
from .edge import Edge

_Op = TypeVar("_Op", bound=Operation)
_Result = TypeVar("_Result")


@dataclass(frozen=True, slots=True)
class Performing:
    """One operation's request, as its handler sees it. Under the memory budget: `held`,
    a send's request bytes, for its call to give back; `answer`, where a GetTask or a
    ListTasks holds what its answer will copy of its tasks, until the answer is written."""

    edge: Edge
    caller: Caller
    held: Reservation | None = None
    answer: Reservation | None = None


@dataclass(frozen=True, slots=True)
class Performer(Generic[_Op, _Result]):
    """What an operation does (`handle`), and its result as the codec writes it."""

    handle: Callable[[Performing, _Op], Awaitable[_Result]]
    encode: Callable[[Codec, _Result], object]


def _row(
    kind: type[_Op],
    handle: Callable[[Performing, _Op], Awaitable[_Result]],
    encode: Callable[[Codec, _Result], object],
) -> tuple[type[object], Performer[Any, Any]]:
    # One row's types checked together: the operation its handler takes, the result its
    # encoder writes. The table itself holds them as Any, found by the operation's type.
    return kind, Performer(handle, encode)


async def perform(
    edge: Edge,
    codec: Codec,
    operation: Operation,
    caller: Caller,
    held: Reservation | None = None,
    answer: Reservation | None = None,
) -> object:
    """The operation's encoded result; A2AError for one refused. Under the memory budget:
    `held`, a send's request bytes, for its call to give back; `answer`, where a GetTask
    or a ListTasks holds what its answer will copy of its tasks, as a read (within its
    caller's share, releasing nothing: AtCapacity past the wait, retryable), until the
    answer is written."""
    performer = PERFORMERS.get(type(operation))
    if performer is None:  # a subscription: streams.py answers it
        raise TypeError(f"{type(operation).__name__} is answered with events, not at once")
    result = await performer.handle(Performing(edge, caller, held, answer), operation)
    return performer.encode(codec, result)


async def _send(asked: Performing, operation: SendMessage) -> Task:
    task = await asked.edge.executor.send(operation, asked.caller, asked.held)
    traces.active.annotate("a2a.task_id", task.id)
    return task


async def _get(asked: Performing, operation: GetTask) -> Task:
    executor = asked.edge.executor
    task = await executor.get(
        operation.task_id, asked.caller, operation.history_length, operation.current_generation
    )
    # Once found: a span never carries an id a caller made up.
    traces.active.annotate("a2a.task_id", task.id)
    await _copied(asked.answer, (task,))
    return task


async def _cancel(asked: Performing, operation: CancelTask) -> Task:
    task = await asked.edge.executor.cancel(operation.task_id, asked.caller)
    traces.active.annotate("a2a.task_id", task.id)
    return task


async def _list(asked: Performing, operation: ListTasks) -> TaskPage:
    page = await asked.edge.executor.list(operation, asked.caller)
    await _copied(asked.answer, page.tasks)
    return page


#: What an answer's JSON takes of a text or data byte, generously: its escapes. (A file's
#: base64 is written from where it is held: the answer copies none of it.)
_COPY_FACTOR = 4 / 3


async def _copied(answer: Reservation | None, tasks: tuple[Task, ...]) -> None:
    """Hold, as a read, what the answer will copy of `tasks`' payloads (the rest of its
    bytes are held as it is sent)."""
    if answer is not None:
        size = sum(task_payload_bytes(task, files=False) for task in tasks)
        await answer.grow(int(size * _COPY_FACTOR), read=True)


# A push config's methods: a task the caller may not see is unknown here too, as GetTask
# answers (`_seen` first).


async def _seen(asked: Performing, task_id: str) -> None:
    await asked.edge.executor.get(task_id, asked.caller)


async def _create_push(asked: Performing, operation: CreatePushConfig) -> PushConfig:
    await _seen(asked, operation.task_id)
    return await asked.edge.push.create(operation, asked.caller.owner)


async def _get_push(asked: Performing, operation: GetPushConfig) -> PushConfig:
    await _seen(asked, operation.task_id)
    return await asked.edge.push.get(operation)


async def _list_push(asked: Performing, operation: ListPushConfigs) -> PushConfigPage:
    await _seen(asked, operation.task_id)
    return await asked.edge.push.list(operation)


async def _delete_push(asked: Performing, operation: DeletePushConfig) -> None:
    await _seen(asked, operation.task_id)
    await asked.edge.push.delete(operation)


def _deleted(codec: Codec, _: None) -> object:
    return codec.encode_push_deleted()


#: Every operation answered at once, by its type. A streaming send is a SendMessage too,
#: answered here only when nothing took it to streams.py first (streams.answers_with_events).
PERFORMERS: Mapping[type[object], Performer[Any, Any]] = MappingProxyType(
    dict(
        [
            _row(SendMessage, _send, Codec.encode_send_result),
            _row(GetTask, _get, Codec.encode_task),
            _row(CancelTask, _cancel, Codec.encode_task),
            _row(ListTasks, _list, Codec.encode_page),
            _row(CreatePushConfig, _create_push, Codec.encode_push_config),
            _row(GetPushConfig, _get_push, Codec.encode_push_config),
            _row(ListPushConfigs, _list_push, Codec.encode_push_page),
            _row(DeletePushConfig, _delete_push, _deleted),
        ]
    )
)
