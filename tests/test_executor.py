"""The executor against a scripted workflow: every state change can lose a race, gracefully.

Races are made deterministic with a trio instrument that acts just before a given task
takes its next step: a cancel lands in exactly the tick a queued call gets its slot, a
workflow's reply, or the end of the drain's grace.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
import trio
import trio.lowlevel
import trio.testing

from n8n_a2a.executor import Executor
from n8n_a2a.outcome import HttpReply, WebhookReply
from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.protocol.model import (
    ListTasks,
    Message,
    Part,
    Role,
    SendMessage,
    SubscribeToTask,
    Task,
    TaskState,
)
from n8n_a2a.store import Change, Moved
from n8n_a2a.store.memory import MemoryTaskEvents, MemoryTaskStore
from n8n_a2a.streams import SubscriberTooSlow
from n8n_a2a.webhook import Caller, WebhookRequest


@dataclass
class ScriptedWorkflow:
    """Answers each message once the test releases it (all at once with `release_all`)."""

    released: dict[str, trio.Event] = field(default_factory=dict)
    calls: list[WebhookRequest] = field(default_factory=list)
    closed: list[str] = field(default_factory=list)
    everything: bool = False

    def release(self, text: str) -> None:
        self.released.setdefault(text, trio.Event()).set()

    def release_all(self) -> None:
        self.everything = True
        for event in self.released.values():
            event.set()

    async def call(self, request: WebhookRequest, caller: Caller) -> WebhookReply:
        self.calls.append(request)
        try:
            if not self.everything:
                await self.released.setdefault(request.text, trio.Event()).wait()
        except trio.Cancelled:
            self.closed.append(request.text)
            raise
        return HttpReply(200, b'{"answer": "%s", "escalate": false}' % request.text.encode())


class CheckpointingStore(MemoryTaskStore):
    """The memory store, but every method yields first, as a networked store would."""

    async def create(self, task: Task) -> None:
        await trio.lowlevel.checkpoint()
        await super().create(task)

    async def get(self, task_id: str) -> Task:
        await trio.lowlevel.checkpoint()
        return await super().get(task_id)

    async def move(self, task_id: str, version: int, change: Change) -> Moved | None:
        await trio.lowlevel.checkpoint()
        return await super().move(task_id, version, change)


class BeforeStep(trio.abc.Instrument):
    """Runs `action` just before the named task's `nth` step from now."""

    def __init__(self, name: str, nth: int, action: Callable[[], Any]) -> None:
        self.name, self.nth, self.action, self.steps = name, nth, action, 0

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        if task.name == self.name:
            self.steps += 1
            if self.steps == self.nth:
                self.action()


@asynccontextmanager
async def executor_for(
    workflow: ScriptedWorkflow,
    store: MemoryTaskStore | None = None,
    *,
    max_concurrent_calls: int = 1024,
    stream_buffer: int = 64,
) -> AsyncIterator[Executor]:
    async with trio.open_nursery() as nursery:
        executor = Executor(
            nursery,
            store or MemoryTaskStore(),
            MemoryTaskEvents(),
            workflow,
            "skill",
            max_concurrent_calls=max_concurrent_calls,
            stream_buffer=stream_buffer,
        )
        await nursery.start(executor.listen)
        yield executor
        nursery.cancel_scope.cancel()


def message(text: str, *, blocking: bool = False) -> SendMessage:
    return SendMessage(Message(f"m-{text}", Role.USER, (Part(text),)), blocking=blocking)


def cancel_now(executor: Executor, task_id: str, canceled: list[Task]) -> Callable[[], None]:
    """CancelTask, run to its end right where the instrument calls it (the memory store
    never yields, so its whole move is one step)."""

    def cancel() -> None:
        try:
            executor.cancel(task_id).send(None)
        except StopIteration as done:
            canceled.append(done.value)

    return cancel


def runner(task: Task) -> str:
    return f"webhook call of task {task.id}"


async def test_a_blocking_send_answers_with_the_terminal_task() -> None:
    workflow = ScriptedWorkflow(everything=True)
    async with executor_for(workflow) as executor:
        task = await executor.send(message("12 pallets", blocking=True), Caller())
    assert task.status.state is TaskState.COMPLETED
    assert task.artifacts[0].parts == (Part("12 pallets"),)
    assert workflow.calls[0].task_id == task.id


async def test_a_call_that_answered_is_not_cut_by_its_own_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The task's end reaches the executor's listener too. The call has left its scope by
    # then: a cancel would change nothing and costs trio a cancel reason on every send.
    cancelled: list[trio.CancelScope] = []
    cancel = trio.CancelScope.cancel

    def counting(scope: trio.CancelScope, reason: str | None = None) -> None:
        cancelled.append(scope)
        cancel(scope, reason)

    async with executor_for(ScriptedWorkflow(everything=True)) as executor:
        monkeypatch.setattr(trio.CancelScope, "cancel", counting)
        task = await executor.send(message("12 pallets", blocking=True), Caller())
        await trio.testing.wait_all_tasks_blocked()
        monkeypatch.undo()
    assert task.status.state is TaskState.COMPLETED
    assert cancelled == []


async def test_cancel_in_the_tick_a_queued_task_gets_its_slot() -> None:
    workflow = ScriptedWorkflow()
    async with executor_for(workflow, max_concurrent_calls=1) as executor:
        await executor.send(message("first"), Caller())
        queued = await executor.send(message("second"), Caller())
        assert queued.status.state is TaskState.SUBMITTED
        canceled: list[Task] = []
        # Its second step is the one in which the freed slot wakes it.
        hook = BeforeStep(runner(queued), 2, cancel_now(executor, queued.id, canceled))
        trio.lowlevel.add_instrument(hook)
        try:
            workflow.release("first")
            await trio.testing.wait_all_tasks_blocked()
        finally:
            trio.lowlevel.remove_instrument(hook)
        assert hook.steps >= 2 and canceled
        assert (await executor.get(queued.id)).status.state is TaskState.CANCELED
        assert [call.text for call in workflow.calls] == ["first"]  # never called
        assert executor.in_flight == 0 and executor.queued == 0
        # And the executor still serves.
        workflow.release("third")
        third = await executor.send(message("third", blocking=True), Caller())
        assert third.status.state is TaskState.COMPLETED


async def test_a_cut_beats_a_verdict_in_the_same_tick() -> None:
    workflow = ScriptedWorkflow()
    async with executor_for(workflow) as executor:
        task = await executor.send(message("answer"), Caller())
        await trio.testing.wait_all_tasks_blocked()
        canceled: list[Task] = []
        hook = BeforeStep(runner(task), 1, cancel_now(executor, task.id, canceled))
        trio.lowlevel.add_instrument(hook)
        try:
            workflow.release("answer")  # the reply wakes the call; the cancel lands first
            await trio.testing.wait_all_tasks_blocked()
        finally:
            trio.lowlevel.remove_instrument(hook)
        assert canceled
        done = await executor.get(task.id)
        assert done.status.state is TaskState.CANCELED
        assert done.metadata == {"outcome": "CANCELED"}
        assert done.artifacts == ()


async def test_a_cancel_at_the_end_of_the_drain_grace(autojump_clock: trio.abc.Clock) -> None:
    workflow = ScriptedWorkflow()
    async with executor_for(workflow) as executor, trio.open_nursery() as nursery:
        task = await executor.send(message("slow"), Caller())
        answered = trio.Event()
        sent: list[Task] = []

        async def blocking_sender() -> None:
            sent.append(await executor.send(message("other", blocking=True), Caller()))
            answered.set()

        nursery.start_soon(blocking_sender)
        await trio.testing.wait_all_tasks_blocked()
        canceled: list[Task] = []
        # The drain's second step is the one in which its grace has run out.
        hook = BeforeStep("drain", 2, cancel_now(executor, task.id, canceled))
        trio.lowlevel.add_instrument(hook)
        try:
            nursery.start_soon(executor.drain, 1.0, name="drain")
            with trio.fail_after(10):
                await answered.wait()
        finally:
            trio.lowlevel.remove_instrument(hook)
        assert canceled
        assert (await executor.get(task.id)).status.state is TaskState.CANCELED
        # The blocked sender got the shutdown answer, not a reset.
        [other] = sent
        assert (other.status.state, other.metadata) == (TaskState.FAILED, {"outcome": "SHUTDOWN"})
        assert sorted(workflow.closed) == ["other", "slow"]


async def test_a_reply_in_the_tick_the_grace_ends_loses_to_the_cut(
    autojump_clock: trio.abc.Clock,
) -> None:
    workflow = ScriptedWorkflow()
    async with executor_for(workflow) as executor, trio.open_nursery() as nursery:
        task = await executor.send(message("late"), Caller())
        hook = BeforeStep("drain", 2, lambda: workflow.release("late"))
        trio.lowlevel.add_instrument(hook)
        try:
            nursery.start_soon(executor.drain, 1.0, name="drain")
            await trio.sleep(5)
        finally:
            trio.lowlevel.remove_instrument(hook)
        done = await executor.get(task.id)
        assert (done.status.state, done.metadata) == (TaskState.FAILED, {"outcome": "SHUTDOWN"})


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
            with pytest.raises(SubscriberTooSlow) as raised:
                await slow.next()
            assert raised.value.code is ErrorCode.SERVER_BUSY
        assert (await executor.get(queued.id)).status.state is TaskState.COMPLETED


async def test_cancel_of_a_finished_task_is_32002_and_of_an_unknown_one_32001() -> None:
    async with executor_for(ScriptedWorkflow(everything=True)) as executor:
        task = await executor.send(message("done", blocking=True), Caller())
        with pytest.raises(A2AError) as raised:
            await executor.cancel(task.id)
        assert raised.value.code is ErrorCode.TASK_NOT_CANCELABLE
        with pytest.raises(A2AError) as raised:
            await executor.cancel("nope")
        assert raised.value.code is ErrorCode.TASK_NOT_FOUND


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


async def test_a_workflow_bug_fails_one_task_and_the_executor_goes_on() -> None:
    class Broken(ScriptedWorkflow):
        async def call(self, request: WebhookRequest, caller: Caller) -> WebhookReply:
            if request.text == "bug":
                raise RuntimeError("boom")
            return await super().call(request, caller)

    async with executor_for(Broken(everything=True)) as executor:
        failed = await executor.send(message("bug", blocking=True), Caller())
        assert failed.metadata == {"outcome": "ADAPTER_ERROR"}
        ok = await executor.send(message("fine", blocking=True), Caller())
        assert ok.status.state is TaskState.COMPLETED


@pytest.mark.parametrize("seed", range(5))
async def test_a_cancel_storm_leaves_every_task_ended_and_the_executor_serving(
    seed: int,
) -> None:
    """Random sends, cancels, replies and a drain over a store that yields on every call."""
    rng = random.Random(seed)
    workflow = ScriptedWorkflow()
    store = CheckpointingStore(max_tasks=1000)
    async with executor_for(workflow, store, max_concurrent_calls=3) as executor:
        sent = [await executor.send(message(f"t{i}"), Caller()) for i in range(60)]
        async with trio.open_nursery() as storm:
            for task in sent:

                async def cancel(task_id: str = task.id) -> None:
                    await trio.sleep(rng.random() * 0.01)
                    try:
                        await executor.cancel(task_id)
                    except A2AError as error:
                        assert error.code is ErrorCode.TASK_NOT_CANCELABLE

                async def reply(text: str = task.history[0].parts[0].text) -> None:
                    await trio.sleep(rng.random() * 0.01)
                    workflow.release(text)

                storm.start_soon(cancel if rng.random() < 0.6 else reply)
                if rng.random() < 0.3:
                    storm.start_soon(cancel)
        workflow.release_all()
        await executor.drain(0.05)
        states = {(await executor.get(t.id)).status.state for t in sent}
        assert all(state.is_terminal for state in states)
        page = await executor.list(ListTasks(page_size=100))
        assert page.total_size == 60
        assert executor.in_flight == 0 and executor.queued == 0
