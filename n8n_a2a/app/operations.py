"""What each A2A operation that answers at once does, whatever binding carried it: the
executor's or push's call, and its result in the codec's shapes. Streams go to streams.py."""

from __future__ import annotations

from ..auth.caller import Caller
from ..budget import Reservation
from ..core.release import task_payload_bytes
from ..observability import traces
from ..protocol.codec import Codec
from ..protocol.model import CancelTask, GetTask, ListTasks, Operation, SendMessage, Task
from ..protocol.push import (
    CreatePushConfig,
    DeletePushConfig,
    GetPushConfig,
    ListPushConfigs,
    PushOperation,
)
from .edge import Edge


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
    executor = edge.executor
    match operation:
        case SendMessage():
            task = await executor.send(operation, caller, held)
            traces.active.annotate("a2a.task_id", task.id)
            return codec.encode_send_result(task)
        case GetTask(task_id, history_length):
            task = await executor.get(task_id, caller, history_length)
            # Once found: a span never carries an id a caller made up.
            traces.active.annotate("a2a.task_id", task.id)
            await _copied(answer, (task,))
            return codec.encode_task(task)
        case CancelTask(task_id):
            task = await executor.cancel(task_id, caller)
            traces.active.annotate("a2a.task_id", task.id)
            return codec.encode_task(task)
        case ListTasks():
            page = await executor.list(operation, caller)
            await _copied(answer, page.tasks)
            return codec.encode_page(page)
        case CreatePushConfig() | GetPushConfig() | ListPushConfigs() | DeletePushConfig():
            # A task the caller may not see is unknown here too, as GetTask answers.
            await executor.get(operation.task_id, caller)
            return await _perform_push(edge, codec, operation, caller)
    raise AssertionError(f"not a JSON operation: {operation!r}")  # streams go elsewhere


#: What an answer's JSON takes of a payload byte, about: a file's base64 is 4/3 of it.
_COPY_FACTOR = 4 / 3


async def _copied(answer: Reservation | None, tasks: tuple[Task, ...]) -> None:
    """Hold, as a read, what the answer will copy of `tasks`' payloads (the rest of its
    bytes are held as it is sent)."""
    if answer is not None:
        size = sum(map(task_payload_bytes, tasks))
        await answer.grow(int(size * _COPY_FACTOR), read=True)


async def _perform_push(
    edge: Edge, codec: Codec, operation: PushOperation, caller: Caller
) -> object:
    push = edge.push
    match operation:
        case CreatePushConfig():
            return codec.encode_push_config(await push.create(operation, caller.owner))
        case GetPushConfig():
            return codec.encode_push_config(await push.get(operation))
        case ListPushConfigs():
            return codec.encode_push_page(await push.list(operation))
        case DeletePushConfig():
            await push.delete(operation)
            return codec.encode_push_deleted()
