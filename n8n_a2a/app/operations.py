"""What each A2A operation that answers at once does, whatever binding carried it: the
executor's or push's call, and its result in the codec's shapes. Streams go to streams.py."""

from __future__ import annotations

from ..auth.caller import Caller
from ..core.release import task_payload_bytes
from ..executor import Reservation
from ..observability import traces
from ..protocol.codec import Codec
from ..protocol.model import CancelTask, GetTask, ListTasks, Operation, SendMessage
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
    delivery: Reservation | None = None,
) -> object:
    """The operation's encoded result; A2AError for one refused. Under the memory budget:
    `held`, a send's request bytes, for its call to give back; `delivery`, where a
    GetTask or a ListTasks holds its tasks' payload bytes while its answer is made and
    sent (AtCapacity when there is no room within the wait: a read, retryable)."""
    executor = edge.executor
    match operation:
        case SendMessage():
            task = await executor.send(operation, caller, held)
            traces.active.annotate("a2a.task_id", task.id)
            return codec.encode_send_result(task)
        case GetTask(task_id, history_length):
            traces.active.annotate("a2a.task_id", task_id)
            task = await executor.get(task_id, caller, history_length)
            if delivery is not None:
                await delivery.grow(task_payload_bytes(task))
            return codec.encode_task(task)
        case CancelTask(task_id):
            traces.active.annotate("a2a.task_id", task_id)
            return codec.encode_task(await executor.cancel(task_id, caller))
        case ListTasks():
            page = await executor.list(operation, caller)
            if delivery is not None:
                await delivery.grow(sum(map(task_payload_bytes, page.tasks)))
            return codec.encode_page(page)
        case CreatePushConfig() | GetPushConfig() | ListPushConfigs() | DeletePushConfig():
            # A task the caller may not see is unknown here too, as GetTask answers.
            await executor.get(operation.task_id, caller)
            return await _perform_push(edge, codec, operation, caller)
    raise AssertionError(f"not a JSON operation: {operation!r}")  # streams go elsewhere


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
