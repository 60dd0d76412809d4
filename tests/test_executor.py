"""The executor against a scripted workflow: every state change can lose a race, gracefully.

Races are made deterministic with a trio instrument that acts just before a given task
takes its next step: a cancel lands in exactly the tick a queued call gets its slot, a
workflow's reply, or the end of the drain's grace.
"""

from __future__ import annotations

import json
import random
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
import trio
import trio.lowlevel
import trio.testing

from n8n_a2a.executor import Executor, InlinePush
from n8n_a2a.identity import Owner
from n8n_a2a.metrics import Metrics
from n8n_a2a.outcome import HttpReply, WebhookReply
from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.protocol.model import (
    ListTasks,
    Message,
    Part,
    Role,
    SendMessage,
    StatusUpdate,
    SubscribeToTask,
    Task,
    TaskEvent,
    TaskState,
)
from n8n_a2a.protocol.push import PushConfig
from n8n_a2a.store import Change, Moved, StoreUnavailable
from n8n_a2a.store.memory import MemoryTaskEvents, MemoryTaskStore
from n8n_a2a.streams import SubscriberTooSlow, TaskStream
from n8n_a2a.webhook import Caller, WebhookRequest


@dataclass
class ScriptedWorkflow:
    """Answers each message once the test releases it (all at once with `release_all`):
    with the text itself, escalated if it begins with `escalate`, a question (input
    required) if it begins with `ask`."""

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
        reply = {"answer": request.text, "escalate": request.text.startswith("escalate")}
        if request.text.startswith("ask"):
            reply["inputRequired"] = True
        return HttpReply(200, json.dumps(reply).encode())


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
    input_required: bool = False,
    input_ttl: float = 86400.0,
    metrics: Metrics | None = None,
    push: InlinePush | None = None,
) -> AsyncIterator[Executor]:
    async with trio.open_nursery() as nursery:
        executor = Executor(
            nursery,
            MemoryTaskStore() if store is None else store,
            MemoryTaskEvents(),
            workflow,
            "skill",
            max_concurrent_calls=max_concurrent_calls,
            stream_buffer=stream_buffer,
            input_required=input_required,
            input_ttl=input_ttl,
            metrics=metrics,
            push=push,
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
            executor.cancel(task_id, Caller()).send(None)
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
        assert (await executor.get(queued.id, Caller())).status.state is TaskState.CANCELED
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
        done = await executor.get(task.id, Caller())
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
        assert (await executor.get(task.id, Caller())).status.state is TaskState.CANCELED
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
        done = await executor.get(task.id, Caller())
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
        assert (await executor.get(queued.id, Caller())).status.state is TaskState.COMPLETED


def stored_texts(task: Task) -> list[str]:
    """Every text the task holds: its messages' and its artifacts'."""
    messages = [*task.history, *([task.status.message] if task.status.message else [])]
    parts = [p for m in messages for p in m.parts] + [p for a in task.artifacts for p in a.parts]
    return [part.text for part in parts]


async def test_a_task_keeps_each_text_cut_at_its_limit() -> None:
    class Long(ScriptedWorkflow):
        async def call(self, request: WebhookRequest, caller: Caller) -> WebhookReply:
            self.calls.append(request)
            body = b'{"answer": "%s", "escalate": false}' % (b"y" * 500)
            return HttpReply(200, body)

    workflow = Long()
    async with trio.open_nursery() as nursery:
        executor = Executor(
            nursery, MemoryTaskStore(), MemoryTaskEvents(), workflow, "s", max_stored_text=100
        )
        await nursery.start(executor.listen)
        done = await executor.send(message("x" * 500, blocking=True), Caller())
        nursery.cancel_scope.cancel()
    assert workflow.calls[0].text == "x" * 500  # the workflow gets all of it
    assert done.metadata == {"outcome": "ANSWERED", "cut": ["message", "reply"]}
    assert (
        stored_texts(done)
        == ["x" * 100 + "[... cut at 100 characters]"]
        + ["y" * 100 + "[... cut at 100 characters]"] * 3
    )


async def test_cancel_of_a_finished_task_is_32002_and_of_an_unknown_one_32001() -> None:
    async with executor_for(ScriptedWorkflow(everything=True)) as executor:
        task = await executor.send(message("done", blocking=True), Caller())
        with pytest.raises(A2AError) as raised:
            await executor.cancel(task.id, Caller())
        assert raised.value.code is ErrorCode.TASK_NOT_CANCELABLE
        with pytest.raises(A2AError) as raised:
            await executor.cancel("nope", Caller())
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
                        await executor.cancel(task_id, Caller())
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
        states = {(await executor.get(t.id, Caller())).status.state for t in sent}
        assert all(state.is_terminal for state in states)
        page = await executor.list(ListTasks(page_size=100), Caller())
        assert page.total_size == 60
        assert executor.in_flight == 0 and executor.queued == 0


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


# Tasks that ask for input (ADAPTER_ALLOW_INPUT_REQUIRED) and their next turns.


def reply_to(
    task: Task, text: str, *, blocking: bool = False, context_id: str | None = None
) -> SendMessage:
    """The caller's next message on `task`: it names the task (and maybe its context)."""
    turn = Message(f"m-{text}", Role.USER, (Part(text),), task.id, context_id)
    return SendMessage(turn, blocking=blocking)


def said(task: Task) -> list[tuple[Role, str]]:
    return [(m.role, m.parts[0].text) for m in task.history]


class GatedStore(MemoryTaskStore):
    """The memory store, where each move that `holds` waits at a gate after the mover read
    the task and before its compare-and-set: a networked store's round trip, made long."""

    def __init__(self, holds: Callable[[Change], bool]) -> None:
        super().__init__()
        self.holds = holds
        self.reached = trio.Event()
        self.gate = trio.Event()

    async def move(self, task_id: str, version: int, change: Change) -> Moved | None:
        if self.holds(change):
            self.reached.set()
            await self.gate.wait()
        return await super().move(task_id, version, change)


def turn_of(text: str) -> Callable[[Change], bool]:
    """A next turn's move: the one that puts the caller's `text` into the history."""
    return lambda change: [m.parts[0].text for m in change.history] == [text]


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


async def test_without_the_setting_a_question_is_off_contract() -> None:
    async with executor_for(ScriptedWorkflow(everything=True)) as executor:
        task = await executor.send(message("ask: which item?", blocking=True), Caller())
    assert (task.status.state, task.metadata) == (TaskState.FAILED, {"outcome": "OFF_CONTRACT"})


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


async def test_a_next_turn_waits_for_a_call_slot_like_a_new_task() -> None:
    workflow = ScriptedWorkflow()
    async with executor_for(workflow, max_concurrent_calls=1, input_required=True) as executor:
        workflow.release("ask")
        asked = await executor.send(message("ask", blocking=True), Caller())
        await executor.send(message("hold"), Caller())
        queued = await executor.send(reply_to(asked, "flour"), Caller())
        assert queued.status.state is TaskState.SUBMITTED
        assert said(queued)[-1] == (Role.USER, "flour")
        assert executor.queued == 1
        workflow.release("hold")
        workflow.release("flour")
        await trio.testing.wait_all_tasks_blocked()
        assert (await executor.get(asked.id, Caller())).status.state is TaskState.COMPLETED


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


async def events_of(stream: TaskStream) -> AsyncIterator[TaskEvent]:
    while (event := await stream.next()) is not None:
        yield event


def status_of(event: TaskEvent) -> str:
    return event.status.state.value if isinstance(event, StatusUpdate) else "artifact"


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


async def test_one_log_line_and_one_count_per_turn(
    autojump_clock: trio.abc.Clock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("INFO", logger="n8n_a2a.executor")
    metrics = Metrics()
    workflow = ScriptedWorkflow(everything=True)
    async with executor_for(
        workflow, input_required=True, input_ttl=60, metrics=metrics
    ) as executor:
        asked = await executor.send(message("ask: which item?", blocking=True), Caller())
        await executor.send(reply_to(asked, "ask: how many?", blocking=True), Caller())
        await trio.sleep(61)
        other = await executor.send(message("ask", blocking=True), Caller())
        await executor.cancel(other.id, Caller())
    lines = [getattr(r, "fields") for r in caplog.records if hasattr(r, "fields")]  # noqa: B009
    assert [(f["task_id"], f["turn"], f["outcome"], f["state"]) for f in lines] == [
        (asked.id, 1, "INPUT_REQUIRED", "input-required"),
        (asked.id, 2, "INPUT_REQUIRED", "input-required"),
        (asked.id, 2, "INPUT_EXPIRED", "failed"),
        (other.id, 1, "INPUT_REQUIRED", "input-required"),
        (other.id, 1, "CANCELED", "canceled"),
    ]
    assert [f["webhook_status"] for f in lines] == [200, 200, None, 200, None]
    shown = metrics.render().decode()
    assert 'n8n_a2a_tasks_total{outcome="INPUT_REQUIRED"} 3.0' in shown
    assert 'n8n_a2a_tasks_total{outcome="INPUT_EXPIRED"} 1.0' in shown
    assert 'n8n_a2a_tasks_total{outcome="CANCELED"} 1.0' in shown


# Races of a next turn, made deterministic by a store whose chosen move waits at a gate
# between the mover's read of the task and its compare-and-set.


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


async def test_a_cancel_made_elsewhere_on_the_shared_store_cuts_the_call() -> None:
    """Two executors on one store and its events, as two replicas: a cancel through one
    closes the call the other runs."""
    workflow = ScriptedWorkflow()
    store, events = MemoryTaskStore(), MemoryTaskEvents()
    async with trio.open_nursery() as nursery:
        runs, other = (Executor(nursery, store, events, workflow, "skill") for _ in range(2))
        task = await runs.send(message("hold"), Caller())
        assert runs.running == (task.id,)
        canceled = await other.cancel(task.id, Caller())
        assert canceled.status.state is TaskState.CANCELED
        await trio.testing.wait_all_tasks_blocked()
        assert workflow.closed == ["hold"]
        assert not runs.running


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


class FlakyStore(MemoryTaskStore):
    """The memory store, out of reach while `down` (as a database restarting)."""

    down = False

    def _check(self) -> None:
        if self.down:
            raise StoreUnavailable("PostgreSQL: connection refused")

    async def get(self, task_id: str) -> Task:
        self._check()
        return await super().get(task_id)

    async def move(self, task_id: str, version: int, change: Change) -> Moved | None:
        self._check()
        return await super().move(task_id, version, change)


async def test_a_store_out_of_reach_refuses_the_send_and_holds_no_call() -> None:
    store = FlakyStore()
    workflow = ScriptedWorkflow(everything=True)
    async with executor_for(workflow, store, max_concurrent_calls=1) as executor:
        store.down = True
        with pytest.raises(StoreUnavailable) as refused:
            await executor.send(message("first", blocking=True), Caller())
        assert refused.value.code is ErrorCode.SERVER_BUSY
        assert executor.running == () and executor.in_flight == 0
        assert workflow.calls == []
        store.down = False
        done = await executor.send(message("second", blocking=True), Caller())
        assert done.status.state is TaskState.COMPLETED


async def test_a_verdict_is_recorded_once_the_store_is_back(
    autojump_clock: trio.abc.Clock,
) -> None:
    store = FlakyStore()
    workflow = ScriptedWorkflow()
    async with executor_for(workflow, store) as executor:
        task = await executor.send(message("answer"), Caller())
        store.down = True
        workflow.release("answer")
        await trio.sleep(5)
        assert executor.running == (task.id,)  # its verdict waits
        store.down = False
        await trio.sleep(3)
        assert not executor.running
        assert (await executor.get(task.id, Caller())).status.state is TaskState.COMPLETED


async def test_shutdown_cuts_calls_even_when_the_store_is_out_of_reach() -> None:
    store = FlakyStore()
    workflow = ScriptedWorkflow()
    async with executor_for(workflow, store) as executor:
        await executor.send(message("hold"), Caller())
        store.down = True
        with trio.fail_after(5):
            drained = await executor.drain(0.01)
        assert drained.cut == 1
        assert workflow.closed == ["hold"]


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
