"""How the executor records its tasks: what a task keeps, and each move compare-and-set.

Races of a move, made deterministic by a store whose chosen move waits at a gate between
the mover's read of the task and its compare-and-set.
"""

from __future__ import annotations

import pytest
import trio
import trio.testing

from n8n_a2a.auth.caller import Caller
from n8n_a2a.core.replies import HttpReply, WebhookReply
from n8n_a2a.executor import Executor, ExecutorConfig
from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.protocol.model import Message, Part, Role, SendMessage, Task, TaskState
from n8n_a2a.store.fanout import LocalTaskEvents
from n8n_a2a.store.memory import MemoryTaskStore
from n8n_a2a.webhook.reading import Relay, ReplyRoom
from n8n_a2a.webhook.request import WebhookRequest
from tests.support.executor import (
    GatedStore,
    ScriptedWorkflow,
    executor_for,
    message,
    reply_to,
    said,
    turn_of,
)


def stored_texts(task: Task) -> list[str]:
    """Every text the task holds: its messages' and its artifacts'."""
    messages = [*task.history, *([task.status.message] if task.status.message else [])]
    parts = [p for m in messages for p in m.parts] + [p for a in task.artifacts for p in a.parts]
    return [part.text for part in parts]


async def test_a_task_keeps_each_text_whole() -> None:
    class Long(ScriptedWorkflow):
        async def call(
            self,
            request: WebhookRequest,
            caller: Caller,
            relay: Relay | None = None,
            room: ReplyRoom | None = None,
        ) -> WebhookReply:
            self.calls.append(request)
            body = b'{"answer": "%s", "escalate": false}' % (b"y" * 500_000)
            return HttpReply(200, body)

    workflow = Long()
    async with trio.open_nursery() as nursery:
        executor = Executor(
            nursery, MemoryTaskStore(), LocalTaskEvents(), workflow, ExecutorConfig("s")
        )
        await nursery.start(executor.listen)
        long = SendMessage(Message("m-1", Role.USER, (Part("x" * 500_000),)), blocking=True)
        done = await executor.send(long, Caller())
        nursery.cancel_scope.cancel()
    assert workflow.calls[0].text == "x" * 500_000  # the workflow gets all of it
    assert done.metadata == {"outcome": "ANSWERED"}
    assert stored_texts(done) == ["x" * 500_000] + ["y" * 500_000] * 3


async def test_a_cancel_between_a_next_turns_read_and_its_move_wins() -> None:
    workflow = ScriptedWorkflow(everything=True)
    store = GatedStore(turn_of("flour"))
    async with (
        executor_for(workflow, store, input_required=True) as executor,
        trio.open_nursery() as nursery,
    ):
        asked = await executor.send(message("ask", blocking=True), Caller())
        refused: list[A2AError] = []

        async def next_turn() -> None:
            with pytest.raises(A2AError) as raised:
                await executor.send(reply_to(asked, "flour", blocking=True), Caller())
            refused.append(raised.value)

        nursery.start_soon(next_turn)
        await store.reached.wait()
        canceled = await executor.cancel(asked.id, Caller())
        store.gate.set()
    [error] = refused
    assert error.code is ErrorCode.UNSUPPORTED_OPERATION
    assert f"Task {asked.id} is canceled and takes no further messages" in error.message
    assert await executor.get(asked.id, Caller()) == canceled
    assert [call.text for call in workflow.calls] == ["ask"]


async def test_a_cancel_that_read_the_waiting_task_still_cuts_the_next_turn() -> None:
    workflow = ScriptedWorkflow()
    store = GatedStore(lambda change: change.state is TaskState.CANCELED)
    async with (
        executor_for(workflow, store, input_required=True) as executor,
        trio.open_nursery() as nursery,
    ):
        workflow.release("ask")
        asked = await executor.send(message("ask", blocking=True), Caller())
        canceled: list[Task] = []
        answered: list[Task] = []

        async def cancel() -> None:
            canceled.append(await executor.cancel(asked.id, Caller()))

        async def next_turn() -> None:
            answered.append(await executor.send(reply_to(asked, "flour", blocking=True), Caller()))

        nursery.start_soon(cancel)
        await store.reached.wait()  # the cancel read the task waiting for input
        nursery.start_soon(next_turn)
        await trio.testing.wait_all_tasks_blocked()
        assert (await executor.get(asked.id, Caller())).status.state is TaskState.WORKING
        store.gate.set()  # its compare-and-set loses; it reads again and cuts the turn
    assert canceled[0].status.state is TaskState.CANCELED
    assert answered == canceled
    assert workflow.closed == ["flour"]


@pytest.mark.parametrize(
    ("second", "why"),
    [
        ("second", "is working: it takes a message only while it asks"),
        ("ask: how many?", "has asked another question since this message was sent"),
    ],
)
async def test_of_two_next_turns_at_once_one_wins_and_the_other_hears_why(
    second: str, why: str
) -> None:
    workflow = ScriptedWorkflow()
    store = GatedStore(turn_of("first"))
    async with (
        executor_for(workflow, store, input_required=True) as executor,
        trio.open_nursery() as nursery,
    ):
        workflow.release("ask")
        asked = await executor.send(message("ask", blocking=True), Caller())
        refused: list[A2AError] = []

        async def first() -> None:
            with pytest.raises(A2AError) as raised:
                await executor.send(reply_to(asked, "first", blocking=True), Caller())
            refused.append(raised.value)

        nursery.start_soon(first)
        await store.reached.wait()
        await executor.send(reply_to(asked, second), Caller())
        if second.startswith("ask"):  # its turn asks again before the first's move lands
            workflow.release(second)
            await trio.testing.wait_all_tasks_blocked()
        store.gate.set()
        await trio.testing.wait_all_tasks_blocked()
        [error] = refused
        assert error.code is ErrorCode.UNSUPPORTED_OPERATION
        assert f"Task {asked.id} {why}" in error.message
        workflow.release(second)
    after = await executor.get(asked.id, Caller())
    assert said(after)[2:] == [(Role.USER, second), (Role.AGENT, second)]
    assert [call.text for call in workflow.calls] == ["ask", second]
