"""Tasks waiting for input: the end of their wait, and its races with a next turn.

Races made deterministic by a store whose chosen move waits at a gate between the
mover's read of the task and its compare-and-set.
"""

from __future__ import annotations

import pytest
import trio
import trio.testing

from n8n_a2a.auth.caller import Caller
from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.protocol.model import StatusUpdate, SubscribeToTask, TaskState
from tests.support.executor import (
    GatedStore,
    ScriptedWorkflow,
    events_of,
    executor_for,
    message,
    reply_to,
    status_of,
    turn_of,
)


async def test_a_task_that_waits_too_long_fails_and_its_listeners_hear_it(
    autojump_clock: trio.abc.Clock,
) -> None:
    async with executor_for(
        ScriptedWorkflow(everything=True), input_required=True, input_ttl=60
    ) as executor:
        asked = await executor.send(message("ask: which item?", blocking=True), Caller())
        await trio.sleep(50)
        # An answer before the end of the wait; the new question waits its own 60 s.
        asked = await executor.send(reply_to(asked, "ask: how many?", blocking=True), Caller())
        async with executor.stream(SubscribeToTask(asked.id), Caller()) as subscription:
            await trio.sleep(59)
            assert (await executor.get(asked.id, Caller())).status.state is TaskState.INPUT_REQUIRED
            await trio.sleep(2)
            [expired] = [event async for event in events_of(subscription)]
        done = await executor.get(asked.id, Caller())
        assert isinstance(expired, StatusUpdate) and expired.status == done.status
        assert (done.status.state, done.metadata) == (
            TaskState.FAILED,
            {"outcome": "INPUT_EXPIRED"},
        )
        assert done.status.message is not None
        assert done.status.message.parts[0].text == (
            "No answer to the agent's question came within 60 s (ADAPTER_INPUT_TTL), so the "
            "task ended. Send a new message to start again."
        )
        with pytest.raises(A2AError) as raised:
            await executor.send(reply_to(done, "flour"), Caller())
        assert raised.value.code is ErrorCode.UNSUPPORTED_OPERATION


async def test_cancel_of_a_waiting_task_ends_it_and_its_wait(
    autojump_clock: trio.abc.Clock,
) -> None:
    workflow = ScriptedWorkflow(everything=True)
    async with executor_for(workflow, input_required=True, input_ttl=60) as executor:
        asked = await executor.send(message("ask", blocking=True), Caller())
        canceled = await executor.cancel(asked.id, Caller())
        assert (canceled.status.state, canceled.metadata) == (
            TaskState.CANCELED,
            {"outcome": "CANCELED"},
        )
        await trio.sleep(120)
        assert await executor.get(asked.id, Caller()) == canceled
        with pytest.raises(A2AError) as raised:
            await executor.cancel(asked.id, Caller())
        assert raised.value.code is ErrorCode.TASK_NOT_CANCELABLE


async def test_a_shutdown_leaves_a_waiting_task_alone() -> None:
    async with executor_for(ScriptedWorkflow(everything=True), input_required=True) as executor:
        asked = await executor.send(message("ask", blocking=True), Caller())
        drained = await executor.drain(1.0)
        assert (drained.finished, drained.cut) == (0, 0)
        assert await executor.get(asked.id, Caller()) == asked


async def test_the_end_of_a_wait_between_a_next_turns_read_and_its_move_wins(
    autojump_clock: trio.abc.Clock,
) -> None:
    workflow = ScriptedWorkflow(everything=True)
    store = GatedStore(turn_of("flour"))
    async with (
        executor_for(workflow, store, input_required=True, input_ttl=60) as executor,
        trio.open_nursery() as nursery,
    ):
        asked = await executor.send(message("ask", blocking=True), Caller())
        await trio.sleep(59)
        refused: list[A2AError] = []

        async def next_turn() -> None:
            with pytest.raises(A2AError) as raised:
                await executor.send(reply_to(asked, "flour", blocking=True), Caller())
            refused.append(raised.value)

        nursery.start_soon(next_turn)
        await store.reached.wait()
        await trio.sleep(2)  # the wait runs out while the turn's move is on its way
        assert (await executor.get(asked.id, Caller())).metadata == {"outcome": "INPUT_EXPIRED"}
        store.gate.set()
    [error] = refused
    assert f"Task {asked.id} is failed and takes no further messages" in error.message
    assert [call.text for call in workflow.calls] == ["ask"]


async def test_a_next_turn_beats_the_end_of_a_wait_that_read_the_task_before_it(
    autojump_clock: trio.abc.Clock,
) -> None:
    workflow = ScriptedWorkflow()
    store = GatedStore(lambda change: change.metadata == {"outcome": "INPUT_EXPIRED"})
    async with executor_for(workflow, store, input_required=True, input_ttl=60) as executor:
        workflow.release("ask")
        asked = await executor.send(message("ask", blocking=True), Caller())
        await store.reached.wait()  # 60 s later, the end of the wait read the task
        turn = await executor.send(reply_to(asked, "flour"), Caller())
        assert turn.status.state is TaskState.WORKING
        store.gate.set()  # its compare-and-set loses: the turn goes on
        await trio.testing.wait_all_tasks_blocked()
        assert (await executor.get(asked.id, Caller())).status.state is TaskState.WORKING
        async with executor.stream(SubscribeToTask(asked.id), Caller()) as subscription:
            workflow.release("flour")
            heard = [status_of(event) async for event in events_of(subscription)]
        assert heard == ["artifact", "completed"]
    done = await executor.get(asked.id, Caller())
    assert (done.status.state, done.metadata) == (TaskState.COMPLETED, {"outcome": "ANSWERED"})


async def test_a_wait_another_replica_left_is_ended_once_at_its_version() -> None:
    async with executor_for(
        ScriptedWorkflow(everything=True), input_required=True, input_ttl=3600
    ) as executor:
        asked = await executor.send(message("ask: which item?", blocking=True), Caller())
        assert not await executor.end_wait(asked.id, asked.version - 1)  # not that wait
        assert await executor.end_wait(asked.id, asked.version)
        done = await executor.get(asked.id, Caller())
        assert (done.status.state, done.metadata) == (
            TaskState.FAILED,
            {"outcome": "INPUT_EXPIRED"},
        )
        assert not await executor.end_wait(asked.id, asked.version)  # once


async def test_a_sign_in_nobody_does_ends_saying_so_here_or_on_another_replica(
    autojump_clock: trio.abc.Clock,
) -> None:
    async with executor_for(
        ScriptedWorkflow(everything=True), auth_required=True, input_ttl=60
    ) as executor:
        asked = await executor.send(message("signin: to the ERP", blocking=True), Caller())
        assert asked.status.state is TaskState.AUTH_REQUIRED
        other = await executor.send(message("signin: again", blocking=True), Caller())
        # A wait another replica began, ended here: its state read, the same words.
        assert await executor.end_wait(other.id, other.version)
        await trio.sleep(61)
        for task_id in (asked.id, other.id):
            done = await executor.get(task_id, Caller())
            assert (done.status.state, done.metadata) == (
                TaskState.FAILED,
                {"outcome": "INPUT_EXPIRED"},
            )
            assert done.status.message is not None
            assert done.status.message.parts[0].text.startswith("No sign-in came within 60 s")
