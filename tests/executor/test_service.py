"""The executor as the routes and the server use it: sends, streams, gets, cancels, a loss."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import trio
import trio.testing

from n8n_a2a.auth.caller import Caller
from n8n_a2a.core.errors import SubscriberTooSlow
from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.protocol.model import (
    ListTasks,
    Message,
    Part,
    Role,
    SendMessage,
    SubscribeToTask,
    TaskState,
)
from tests.support.executor import (
    ScriptedWorkflow,
    events_of,
    executor_for,
    message,
    reply_to,
    said,
    status_of,
)


async def test_a_blocking_send_answers_with_the_terminal_task() -> None:
    workflow = ScriptedWorkflow(everything=True)
    async with executor_for(workflow) as executor:
        task = await executor.send(message("12 pallets", blocking=True), Caller())
    assert task.status.state is TaskState.COMPLETED
    assert task.artifacts[0].parts == (Part("12 pallets"),)
    assert workflow.calls[0].task_id == task.id


async def test_a_subscriber_too_slow_is_dropped_and_the_task_and_others_go_on() -> None:
    workflow = ScriptedWorkflow()
    async with executor_for(workflow, max_concurrent_calls=1, stream_buffer=2) as executor:
        await executor.send(message("first"), Caller())
        queued = await executor.send(message("second"), Caller())
        subscribe = SubscribeToTask(queued.id)
        async with executor.stream(subscribe, Caller()) as slow:
            async with executor.stream(subscribe, Caller()) as fast:
                assert slow.task.status.state is fast.task.status.state is TaskState.SUBMITTED
                workflow.release("first")
                heard = [await fast.next()]  # working
                workflow.release("second")  # its artifact and the end come in one step
                while (event := await fast.next()) is not None:
                    heard.append(event)
            assert [type(e).__name__ for e in heard] == [
                "StatusUpdate",
                "ArtifactUpdate",
                "StatusUpdate",
            ]
            # The slow one still gets what its buffer held, then the error.
            assert (await slow.next()) is not None
            assert (await slow.next()) is not None
            with pytest.raises(SubscriberTooSlow):
                await slow.next()
        assert (await executor.get(queued.id, Caller())).status.state is TaskState.COMPLETED


async def test_cancel_of_a_finished_task_is_32002_and_of_an_unknown_one_32001() -> None:
    async with executor_for(ScriptedWorkflow(everything=True)) as executor:
        task = await executor.send(message("done", blocking=True), Caller())
        with pytest.raises(A2AError) as raised:
            await executor.cancel(task.id, Caller())
        assert raised.value.code is ErrorCode.TASK_NOT_CANCELABLE
        with pytest.raises(A2AError) as raised:
            await executor.cancel("nope", Caller())
        assert raised.value.code is ErrorCode.TASK_NOT_FOUND


ALICE = Caller("alice-token", owner="token:alice")


BOB = Caller("bob-token", owner="token:bob")


async def refusal(
    attempt: Callable[[str, Caller], Any], task_id: str, caller: Caller
) -> tuple[ErrorCode, str]:
    """The code and message an attempt on `task_id` is refused with (its id masked)."""
    with pytest.raises(A2AError) as raised:
        await attempt(task_id, caller)
    return raised.value.code, raised.value.message.replace(task_id, "<id>")


async def test_a_task_is_its_owners_alone() -> None:
    """Another caller gets exactly what an unknown id gets, whatever it asks of the task."""
    workflow = ScriptedWorkflow()
    async with executor_for(workflow) as executor:
        task = await executor.send(message("hold"), ALICE)
        assert task.owner == "token:alice"

        async def subscribe(task_id: str, caller: Caller) -> None:
            async with executor.stream(SubscribeToTask(task_id), caller):
                pass

        def continue_(task_id: str, caller: Caller) -> Any:
            naming = Message("m-more", Role.USER, (Part("more"),), task_id, task.context_id)
            return executor.send(SendMessage(naming), caller)

        attempts = [
            lambda task_id, caller: executor.get(task_id, caller),
            lambda task_id, caller: executor.cancel(task_id, caller),
            subscribe,
            continue_,
        ]
        for caller in (BOB, Caller()):  # another owner, and the anonymous caller
            for attempt in attempts:
                foreign = await refusal(attempt, task.id, caller)
                assert foreign == await refusal(attempt, "t-unknown", caller)
                assert foreign[0] is ErrorCode.TASK_NOT_FOUND
            assert (await executor.list(ListTasks(), caller)).total_size == 0
        await trio.testing.wait_all_tasks_blocked()
        assert [call.text for call in workflow.calls] == ["hold"]  # no attempt reached it
        assert [t.id for t in (await executor.list(ListTasks(), ALICE)).tasks] == [task.id]
        assert (await executor.get(task.id, ALICE)).status.state is TaskState.WORKING
        assert (await executor.cancel(task.id, ALICE)).status.state is TaskState.CANCELED


async def test_each_turn_streams_until_its_own_final_event() -> None:
    async with executor_for(ScriptedWorkflow(everything=True), input_required=True) as executor:
        first = SendMessage(message("ask: which item?").message, streaming=True)
        async with executor.stream(first, Caller()) as stream:
            asked = stream.task
            heard = [event async for event in events_of(stream)]
        assert [status_of(e) for e in heard] == ["working", "input-required"]
        # A subscription to the waiting task begins with it and hears the next turn.
        async with executor.stream(SubscribeToTask(asked.id), Caller()) as subscription:
            assert subscription.task.status.state is TaskState.INPUT_REQUIRED
            second = SendMessage(reply_to(asked, "flour").message, streaming=True)
            async with executor.stream(second, Caller()) as stream:
                assert stream.task.status.state is TaskState.SUBMITTED
                assert said(stream.task)[-1] == (Role.USER, "flour")
                heard = [event async for event in events_of(stream)]
            assert [status_of(e) for e in heard] == ["working", "artifact", "completed"]
            assert [status_of(e) async for e in events_of(subscription)] == [
                "submitted",
                "working",
                "artifact",
                "completed",
            ]


async def test_a_task_whose_replica_died_ends_lost_and_its_call_is_cut() -> None:
    workflow = ScriptedWorkflow()
    async with executor_for(workflow) as executor:
        task = await executor.send(message("hold"), Caller())
        assert await executor.lose(task.id)
        lost = await executor.get(task.id, Caller())
        assert lost.status.state is TaskState.FAILED
        assert lost.metadata == {"outcome": "LOST"}
        assert "may or may not have run" in lost.status.message.parts[0].text  # type: ignore[union-attr]
        await trio.testing.wait_all_tasks_blocked()
        assert workflow.closed == ["hold"]
        assert not await executor.lose(task.id)  # once
