"""What a send's message becomes: a new task, a next turn, or a refusal; and its push config."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pytest
import trio
import trio.testing

from n8n_a2a.auth.caller import Caller
from n8n_a2a.core.owners import Owner
from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.protocol.model import Message, Part, Role, SendMessage, Task, TaskState
from n8n_a2a.protocol.push import PushConfig
from n8n_a2a.store.memory import MemoryTaskStore
from tests.support.executor import (
    ScriptedWorkflow,
    events_of,
    executor_for,
    message,
    reply_to,
    said,
    status_of,
)


async def test_a_message_naming_a_task_is_refused() -> None:
    async with executor_for(ScriptedWorkflow(everything=True)) as executor:
        task = await executor.send(message("done", blocking=True), Caller())
        naming = Message("m-2", Role.USER, (Part("more"),), task.id, task.context_id)
        with pytest.raises(A2AError) as raised:
            await executor.send(SendMessage(naming), Caller())
        assert raised.value.code is ErrorCode.UNSUPPORTED_OPERATION
        other_context = Message("m-3", Role.USER, (Part("more"),), task.id, "c-other")
        with pytest.raises(A2AError) as raised:
            await executor.send(SendMessage(other_context), Caller())
        assert raised.value.code is ErrorCode.INVALID_PARAMS


async def test_a_question_waits_and_the_next_message_continues_the_same_task() -> None:
    workflow = ScriptedWorkflow(everything=True)
    async with executor_for(workflow, input_required=True) as executor:
        asked = await executor.send(message("ask: which item?", blocking=True), Caller())
        assert asked.status.state is TaskState.INPUT_REQUIRED
        assert asked.status.message is not None
        assert asked.status.message.parts == (Part("ask: which item?"),)
        assert asked.metadata == {"outcome": "INPUT_REQUIRED"}
        assert asked.artifacts == ()
        # Its contextId left out: the task's is inferred.
        second = SendMessage(reply_to(asked, "flour").message, blocking=True, history_length=3)
        done = await executor.send(second, Caller())
    assert (done.id, done.context_id) == (asked.id, asked.context_id)
    assert done.status.state is TaskState.COMPLETED
    assert done.metadata == {"outcome": "ANSWERED"}
    assert said(done) == [
        (Role.AGENT, "ask: which item?"),
        (Role.USER, "flour"),
        (Role.AGENT, "flour"),
    ]
    assert done.history[1].task_id == asked.id
    assert done.history[1].context_id == asked.context_id
    first, then = workflow.calls
    assert (then.task_id, then.context_id, then.text) == (asked.id, asked.context_id, "flour")
    assert then.message_id == "m-flour" != first.message_id


@pytest.mark.parametrize(
    ("text", "state", "outcome"),
    [
        ("escalate: a person must approve", TaskState.FAILED, "ESCALATED"),
        ("ask: and how many?", TaskState.INPUT_REQUIRED, "INPUT_REQUIRED"),
    ],
)
async def test_the_next_turn_decides_the_next_state(
    text: str, state: TaskState, outcome: str
) -> None:
    async with executor_for(ScriptedWorkflow(everything=True), input_required=True) as executor:
        asked = await executor.send(message("ask: which item?", blocking=True), Caller())
        after = await executor.send(reply_to(asked, text, blocking=True), Caller())
        assert (after.id, after.status.state, after.metadata) == (
            asked.id,
            state,
            {"outcome": outcome},
        )
        assert [role for role, _ in said(after)] == [Role.USER, Role.AGENT] * 2
        if state is TaskState.INPUT_REQUIRED:  # and a third turn answers
            done = await executor.send(reply_to(after, "flour", blocking=True), Caller())
            assert done.status.state is TaskState.COMPLETED
            assert len(done.history) == 6


async def test_a_message_for_a_task_that_does_not_wait_for_input_is_refused() -> None:
    workflow = ScriptedWorkflow()
    async with executor_for(workflow, input_required=True) as executor:
        running = await executor.send(message("hold"), Caller())
        with pytest.raises(A2AError) as raised:
            await executor.send(reply_to(running, "more"), Caller())
        assert raised.value.code is ErrorCode.UNSUPPORTED_OPERATION
        assert f"Task {running.id} is working: it takes a message only while it asks for one" in (
            raised.value.message
        )
        workflow.release("hold")
        workflow.release("ask")
        asked = await executor.send(message("ask", blocking=True), Caller())
        with pytest.raises(A2AError) as raised:
            await executor.send(reply_to(asked, "x", context_id="c-other"), Caller())
        assert raised.value.code is ErrorCode.INVALID_PARAMS
        finished = await executor.get(running.id, Caller())
        with pytest.raises(A2AError) as raised:
            await executor.send(reply_to(finished, "more"), Caller())
        assert raised.value.code is ErrorCode.UNSUPPORTED_OPERATION
        assert "is completed and takes no further messages" in raised.value.message
        with pytest.raises(A2AError) as raised:
            await executor.send(reply_to(replace_id(asked, "nope"), "x"), Caller())
        assert raised.value.code is ErrorCode.TASK_NOT_FOUND
        assert (await executor.get(asked.id, Caller())).status.state is TaskState.INPUT_REQUIRED
        assert sorted(c.text for c in workflow.calls) == ["ask", "hold"]


def replace_id(task: Task, task_id: str) -> Task:
    return Task(task_id, task.context_id, task.status)


@dataclass
class RecordingPush:
    """Takes inline configs, noting the version of the task (in the store) at the time."""

    store: MemoryTaskStore
    refuse: bool = False
    registered: list[tuple[str, int]] = field(default_factory=list)
    checked_for: list[Owner] = field(default_factory=list)

    async def check(self, config: PushConfig, owner: Owner) -> None:
        self.checked_for.append(owner)
        if self.refuse:
            raise A2AError.invalid_params("The push notification URL is refused")

    async def register(self, task: Task, config: PushConfig) -> PushConfig:
        stored = await self.store.get(task.id)
        self.registered.append((config.url, stored.version))
        return config.for_task(task.id)


def with_push(text: str, *, streaming: bool = False) -> SendMessage:
    config = PushConfig("", "", "https://bridge.example/hook")
    return replace(message(text, blocking=True), push_config=config, streaming=streaming)


@pytest.mark.parametrize("streaming", [False, True])
async def test_an_inline_push_config_is_held_before_the_tasks_first_event(streaming: bool) -> None:
    store = MemoryTaskStore()
    push = RecordingPush(store)
    caller = Caller(owner="token:a")
    async with executor_for(ScriptedWorkflow(everything=True), store, push=push) as executor:
        if streaming:
            async with executor.stream(with_push("x", streaming=True), caller) as stream:
                while await stream.next() is not None:
                    pass
        else:
            await executor.send(with_push("x"), caller)
    assert push.registered == [("https://bridge.example/hook", 0)]
    # Its lookup counts against the sender's share (push/lookups.py).
    assert push.checked_for == ["token:a"]


async def test_a_refused_inline_config_makes_no_task() -> None:
    store = MemoryTaskStore()
    workflow = ScriptedWorkflow(everything=True)
    async with executor_for(workflow, store, push=RecordingPush(store, refuse=True)) as executor:
        with pytest.raises(A2AError) as raised:
            await executor.send(with_push("x"), Caller())
    assert raised.value.code is ErrorCode.INVALID_PARAMS
    assert (len(store), workflow.calls) == (0, [])


async def test_an_inline_config_without_push_is_32003() -> None:
    async with executor_for(ScriptedWorkflow(everything=True)) as executor:
        with pytest.raises(A2AError) as raised:
            await executor.send(with_push("x"), Caller())
    assert raised.value.code is ErrorCode.PUSH_NOTIFICATION_NOT_SUPPORTED


# A message sent again (core/sent.py): one run per message.


async def test_a_blocking_send_sent_again_is_answered_by_its_first_task() -> None:
    workflow = ScriptedWorkflow(everything=True)
    async with executor_for(workflow) as executor:
        first = await executor.send(message("order 30 pallets", blocking=True), Caller())
        again = await executor.send(message("order 30 pallets", blocking=True), Caller())
    assert again == first
    assert [call.text for call in workflow.calls] == ["order 30 pallets"]


async def test_a_retry_while_the_first_still_runs_waits_for_its_end() -> None:
    workflow = ScriptedWorkflow()
    async with executor_for(workflow) as executor, trio.open_nursery() as nursery:
        answers: list[Task] = []

        async def send() -> None:
            answers.append(await executor.send(message("slow", blocking=True), Caller()))

        nursery.start_soon(send)
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(send)  # the caller gave up on the first answer: sent again
        await trio.testing.wait_all_tasks_blocked()
        assert len(workflow.calls) == 1 and answers == []
        workflow.release("slow")
    assert len(answers) == 2 and answers[0] == answers[1]
    assert answers[0].status.state is TaskState.COMPLETED
    assert len(workflow.calls) == 1


async def test_a_retry_after_the_first_caller_hung_up_is_its_task() -> None:
    """The client gives up before the workflow answers, then sends the same message."""
    workflow = ScriptedWorkflow()
    async with executor_for(workflow) as executor:
        with trio.move_on_after(0.01):
            await executor.send(message("slow", blocking=True), Caller())
        assert len(workflow.calls) == 1  # its call goes on without its caller
        workflow.release("slow")
        answered = await executor.send(message("slow", blocking=True), Caller())
    assert answered.status.state is TaskState.COMPLETED
    assert answered.artifacts[0].parts == (Part("slow"),)
    assert len(workflow.calls) == 1


async def test_a_non_blocking_retry_returns_the_task_as_it_stands() -> None:
    workflow = ScriptedWorkflow()
    async with executor_for(workflow) as executor:
        first = await executor.send(message("slow"), Caller())
        again = await executor.send(message("slow"), Caller())
        assert (again.id, again.status.state) == (first.id, TaskState.WORKING)
        workflow.release("slow")
    assert len(workflow.calls) == 1


async def test_a_streaming_retry_streams_the_first_task() -> None:
    workflow = ScriptedWorkflow()
    async with executor_for(workflow) as executor:
        first = await executor.send(message("slow"), Caller())
        async with executor.stream(message("slow"), Caller()) as running:
            assert running.task.id == first.id
            workflow.release("slow")
            heard = [status_of(event) async for event in events_of(running)]
        assert heard == ["artifact", "completed"]
        # Its turn over, a retry shows the task and ends.
        async with executor.stream(message("slow"), Caller()) as ended:
            assert ended.task.status.state is TaskState.COMPLETED
            assert await ended.next() is None
    assert len(workflow.calls) == 1


async def test_another_message_under_a_used_id_is_refused_and_runs_nothing() -> None:
    workflow = ScriptedWorkflow(everything=True)
    async with executor_for(workflow) as executor:
        first = await executor.send(message("order 30 pallets", blocking=True), Caller())
        other = SendMessage(
            replace(message("order 30 pallets").message, parts=(Part("order 31 pallets"),))
        )
        for refused in (executor.send(other, Caller()), executor.check_stream(other, Caller())):
            with pytest.raises(A2AError) as raised:
                await refused
            assert raised.value.code is ErrorCode.INVALID_PARAMS
            assert first.id in raised.value.message
    assert len(workflow.calls) == 1


async def test_a_next_turn_sent_again_posts_no_second_turn() -> None:
    workflow = ScriptedWorkflow(everything=True)
    async with executor_for(workflow, input_required=True) as executor:
        asked = await executor.send(message("ask: which item?", blocking=True), Caller())
        answer = reply_to(asked, "ask: how many?", blocking=True)
        again = await executor.send(answer, Caller())
        retried = await executor.send(answer, Caller())
        await executor.check_stream(answer, Caller())  # no refusal either
    assert retried == again
    assert [text for _, text in said(retried)] == [
        "ask: which item?",
        "ask: which item?",
        "ask: how many?",
        "ask: how many?",
    ]
    assert len(workflow.calls) == 2


async def test_another_callers_message_id_is_never_matched() -> None:
    workflow = ScriptedWorkflow(everything=True)
    alice, bob = Caller(owner="alice"), Caller(owner="bob")
    async with executor_for(workflow) as executor:
        hers = await executor.send(message("order", blocking=True), alice)
        his = await executor.send(message("order", blocking=True), bob)
    assert hers.id != his.id
    assert len(workflow.calls) == 2


# ifGenerationMatch (A2A 1.1 as drafted): a next turn only from the generation it names.


def expecting(send: SendMessage, generation: int) -> SendMessage:
    return replace(send, if_generation_match=generation)


async def test_a_next_turn_at_another_generation_is_refused_and_runs_nothing() -> None:
    workflow, store = ScriptedWorkflow(everything=True), MemoryTaskStore()
    push = RecordingPush(store)
    async with executor_for(workflow, store, input_required=True, push=push) as executor:
        asked = await executor.send(message("ask: which item?", blocking=True), Caller())
        # submitted 1, working 2, input-required 3.
        assert (asked.status.state, asked.generation) == (TaskState.INPUT_REQUIRED, 3)
        for send in (reply_to(asked, "flour"), with_push_to(reply_to(asked, "flour"))):
            with pytest.raises(A2AError) as raised:
                await executor.send(expecting(send, 2), Caller())
            assert raised.value.code is ErrorCode.TASK_GENERATION_MISMATCH
            assert raised.value.metadata == {
                "taskId": asked.id,
                "expectedGeneration": "2",
                "currentGeneration": "3",
            }
            assert "expected 2 but current generation is 3" in raised.value.message
        assert (len(workflow.calls), push.registered) == (1, [])
        answered = await executor.send(
            expecting(reply_to(asked, "flour", blocking=True), 3), Caller()
        )
        assert (answered.status.state, len(workflow.calls)) == (TaskState.COMPLETED, 2)


def with_push_to(send: SendMessage) -> SendMessage:
    return replace(send, push_config=PushConfig("", "", "https://bridge.example/hook"))


async def test_a_new_task_ignores_the_generation_and_a_retry_is_its_first_task() -> None:
    workflow = ScriptedWorkflow(everything=True)
    async with executor_for(workflow, input_required=True) as executor:
        made = await executor.send(expecting(message("ask", blocking=True), 42), Caller())
        assert made.status.state is TaskState.INPUT_REQUIRED
        turn = expecting(reply_to(made, "flour", blocking=True), made.generation)
        answered = await executor.send(turn, Caller())
        # Sent again, after the task moved on: the same task, not a mismatch.
        again = await executor.send(turn, Caller())
        assert (again.id, again.status.state) == (answered.id, TaskState.COMPLETED)
        assert len(workflow.calls) == 2
