"""The call runner against a scripted workflow: every state change can lose a race, gracefully.

Races are made deterministic with a trio instrument that acts just before a given task
takes its next step: a cancel lands in exactly the tick a queued call gets its slot, a
workflow's reply, or the end of the drain's grace.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
import trio
import trio.lowlevel
import trio.testing

from n8n_a2a.auth.caller import Caller
from n8n_a2a.budget import MemoryBudget
from n8n_a2a.core.changes import Change
from n8n_a2a.core.errors import StoreUnavailable
from n8n_a2a.core.lifecycle import is_terminal
from n8n_a2a.core.replies import WebhookReply
from n8n_a2a.core.sent import Sent
from n8n_a2a.executor import Executor, ExecutorConfig
from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.protocol.model import (
    ArtifactUpdate,
    ListTasks,
    Role,
    StatusUpdate,
    SubscribeToTask,
    Task,
    TaskEvent,
    TaskState,
)
from n8n_a2a.store import Moved
from n8n_a2a.store.fanout import LocalTaskEvents
from n8n_a2a.store.memory import MemoryTaskStore
from n8n_a2a.webhook.reading import Relay, ReplyRoom
from n8n_a2a.webhook.request import WebhookRequest
from tests.support.executor import (
    ScriptedWorkflow,
    events_of,
    executor_for,
    message,
    reply_to,
    said,
)


class CheckpointingStore(MemoryTaskStore):
    """The memory store, but every method yields first, as a networked store would."""

    async def create(self, task: Task, sent: Sent | None = None) -> None:
        await trio.lowlevel.checkpoint()
        await super().create(task, sent)

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


async def test_a_workflow_bug_fails_one_task_and_the_executor_goes_on() -> None:
    class Broken(ScriptedWorkflow):
        async def call(
            self,
            request: WebhookRequest,
            caller: Caller,
            relay: Relay | None = None,
            room: ReplyRoom | None = None,
        ) -> WebhookReply:
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
        assert all(is_terminal(state) for state in states)
        page = await executor.list(ListTasks(page_size=100), Caller())
        assert page.total_size == 60
        # Nothing left of any call: none held, none in a slot, none in line.
        assert repr(executor) == (
            "<Executor <CallRunner calls=0 in_flight=0 queued=0 accepting=False>>"
        )


async def test_without_the_setting_a_question_is_off_contract() -> None:
    async with executor_for(ScriptedWorkflow(everything=True)) as executor:
        task = await executor.send(message("ask: which item?", blocking=True), Caller())
    assert (task.status.state, task.metadata) == (TaskState.FAILED, {"outcome": "OFF_CONTRACT"})


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


async def test_a_cancel_made_elsewhere_on_the_shared_store_cuts_the_call() -> None:
    """Two executors on one store and its events, as two replicas: a cancel through one
    closes the call the other runs."""
    workflow = ScriptedWorkflow()
    store, events = MemoryTaskStore(), LocalTaskEvents()
    async with trio.open_nursery() as nursery:
        runs, other = (
            Executor(nursery, store, events, workflow, ExecutorConfig("skill")) for _ in range(2)
        )
        task = await runs.send(message("hold"), Caller())
        assert runs.running == (task.id,)
        canceled = await other.cancel(task.id, Caller())
        assert canceled.status.state is TaskState.CANCELED
        await trio.testing.wait_all_tasks_blocked()
        assert workflow.closed == ["hold"]
        assert not runs.running


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


async def test_a_task_made_as_the_store_goes_out_of_reach_starts_once_it_is_back(
    autojump_clock: trio.abc.Clock,
) -> None:
    """The task was made, then the store went out of reach (a database restarting) before
    it could move to `working`: the send answers it `submitted`, its call tries the move
    again and calls the workflow once the store is back (a caller that sends the message
    again finds it: nothing is left for a lease to end LOST)."""
    store = FlakyStore()
    workflow = ScriptedWorkflow(everything=True)
    async with executor_for(workflow, store, max_concurrent_calls=1) as executor:
        store.down = True
        made = await executor.send(message("first"), Caller())
        assert made.status.state is TaskState.SUBMITTED
        await trio.sleep(5)
        assert (executor.running, workflow.calls) == ((made.id,), [])
        store.down = False
        await trio.sleep(3)
        assert [call.text for call in workflow.calls] == ["first"]
        assert (await executor.get(made.id, Caller())).status.state is TaskState.COMPLETED
        assert executor.running == () and executor.in_flight == 0


async def test_past_the_stores_patience_a_task_that_never_started_runs_nothing(
    autojump_clock: trio.abc.Clock,
) -> None:
    store = FlakyStore()
    workflow = ScriptedWorkflow(everything=True)
    async with executor_for(workflow, store) as executor:
        store.down = True
        await executor.send(message("first"), Caller())
        await trio.sleep(20)  # past the default patience of 15 s: left to its lease
        assert executor.running == () and executor.in_flight == 0
        assert workflow.calls == []


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


class OneTaskOutOfReach(MemoryTaskStore):
    """The memory store, refusing every move of the task named by `down`."""

    down: str | None = None

    async def move(self, task_id: str, version: int, change: Change) -> Moved | None:
        if task_id == self.down:
            raise StoreUnavailable("PostgreSQL: connection refused")
        return await super().move(task_id, version, change)


async def test_a_verdict_waiting_for_the_store_holds_no_call_slot(
    autojump_clock: trio.abc.Clock,
) -> None:
    store = OneTaskOutOfReach()
    workflow = ScriptedWorkflow()
    async with executor_for(workflow, store, max_concurrent_calls=1) as executor:
        first = await executor.send(message("first"), Caller())
        second = await executor.send(message("second"), Caller())
        assert (executor.in_flight, executor.queued) == (1, 1)
        store.down = first.id
        workflow.release("first")
        await trio.sleep(1)
        # The first's verdict waits for the store; its slot went to the second at once.
        assert executor.running == (first.id, second.id)
        assert [call.text for call in workflow.calls] == ["first", "second"]
        assert (executor.in_flight, executor.queued) == (1, 0)
        store.down = None
        await trio.sleep(3)
        assert list(executor.running) == [second.id]
        assert (await executor.get(first.id, Caller())).status.state is TaskState.COMPLETED


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


class Relaying(ScriptedWorkflow):
    """Relays a chunk, then one more read in the very step its task is cut (shielded: as
    a read that came in with the cut does), then answers."""

    def __init__(self) -> None:
        super().__init__(everything=True)
        self.waiting, self.gate, self.done = trio.Event(), trio.Event(), trio.Event()

    async def call(
        self,
        request: WebhookRequest,
        caller: Caller,
        relay: Relay | None = None,
        room: ReplyRoom | None = None,
    ) -> WebhookReply:
        assert relay is not None
        relay("first ")
        self.waiting.set()
        with trio.CancelScope(shield=True):
            await self.gate.wait()
        relay("late ")
        self.done.set()
        return await super().call(request, caller)


async def test_a_chunk_read_in_the_step_of_a_cut_does_not_follow_the_end() -> None:
    workflow, events = Relaying(), LocalTaskEvents()
    heard: list[TaskEvent] = []
    async with trio.open_nursery() as nursery:
        executor = Executor(nursery, MemoryTaskStore(), events, workflow, ExecutorConfig("skill"))
        await nursery.start(executor.listen)
        task = await executor.send(message("go"), Caller())
        with events.subscribe(task.id, heard.append):  # before the call's first step
            await workflow.waiting.wait()
            await executor.cancel(task.id, Caller())
            workflow.gate.set()
            await workflow.done.wait()
        nursery.cancel_scope.cancel()
    shown = [
        e.artifact.parts[0].text if isinstance(e, ArtifactUpdate) else e.status.state for e in heard
    ]
    assert shown == ["first ", TaskState.CANCELED]
    # The cancel counts the chunk that went out: one generation each, none twice.
    assert [event.generation for event in heard] == [3, 4]


class Streaming(ScriptedWorkflow):
    """Relays its answer in three chunks, then answers it whole."""

    async def call(
        self,
        request: WebhookRequest,
        caller: Caller,
        relay: Relay | None = None,
        room: ReplyRoom | None = None,
    ) -> WebhookReply:
        assert relay is not None
        for chunk in ("g", "o", "!"):
            relay(chunk)
            await trio.lowlevel.checkpoint()
        return await super().call(request, caller)


async def test_each_chunk_of_a_streamed_answer_is_a_generation_the_end_counts() -> None:
    workflow, events = Streaming(everything=True), LocalTaskEvents()
    heard: list[TaskEvent] = []
    async with trio.open_nursery() as nursery:
        executor = Executor(nursery, MemoryTaskStore(), events, workflow, ExecutorConfig("skill"))
        await nursery.start(executor.listen)
        stream = message("go!")
        async with executor.stream(replace(stream, streaming=True), Caller()) as task_stream:
            assert task_stream.task.generation == 1
            while (event := await task_stream.next()) is not None:
                heard.append(event)
        done = await executor.get(task_stream.task.id, Caller())
        nursery.cancel_scope.cancel()
    # working 2, the chunks 3 to 5, the whole answer 6, completed 7: what GetTask says too.
    assert [event.generation for event in heard] == [2, 3, 4, 5, 6, 7]
    assert (done.generation, done.version, done.relayed) == (7, 3, 3)


class Reading(ScriptedWorkflow):
    """Takes room for a reply of `size` bytes as the webhook client reads it, its request
    forwarded first, then answers."""

    def __init__(self, size: int) -> None:
        super().__init__(everything=True)
        self.size = size

    async def call(
        self,
        request: WebhookRequest,
        caller: Caller,
        relay: Relay | None = None,
        room: ReplyRoom | None = None,
    ) -> WebhookReply:
        assert room is not None
        room.forwarded()
        await room.take(self.size)
        return await super().call(request, caller)


async def test_a_reply_the_budget_cannot_hold_fails_its_task_naming_the_budget() -> None:
    budget = MemoryBudget(1024 * 1024, wait=0.1)
    async with executor_for(Reading(2 * 1024 * 1024), budget=budget) as executor:
        failed = await executor.send(message("big", blocking=True), Caller())
        assert (failed.status.state, failed.metadata) == (
            TaskState.FAILED,
            {"outcome": "ADAPTER_ERROR"},
        )
        assert failed.status.message is not None
        reason = failed.status.message.parts[0].text
        assert "its reply could not be held" in reason
        assert "of the memory budget (ADAPTER_MEMORY_BUDGET, 1,048,576 bytes)" in reason
        assert budget.held == 0


async def test_a_call_holds_its_request_then_its_reply_until_it_ends() -> None:
    budget = MemoryBudget(4 * 1024 * 1024, wait=0.1)
    workflow = Reading(1000)
    workflow.everything = False
    async with executor_for(workflow, budget=budget) as executor:
        held = budget.reservation("ann")
        await held.grow(100_000)
        started = await executor.send(message("wait"), Caller(), held)
        held.give_back()  # the request is answered: its call holds the bytes now
        await trio.testing.wait_all_tasks_blocked()
        assert len(workflow.calls) == 1
        # The reply's first 1000 bytes fit in what the forwarded request held.
        assert budget.held == 100_000
        assert budget.caller_holds("ann") == 100_000
        workflow.release("wait")
        await trio.testing.wait_all_tasks_blocked()
        assert is_terminal((await executor.get(started.id, Caller())).status.state)
        assert budget.held == 0


class HeldMidAnswer(ScriptedWorkflow):
    """Relays two chunks, waits to be let go on, relays a third, then answers."""

    def __init__(self) -> None:
        super().__init__(everything=True)
        self.halfway, self.go_on = trio.Event(), trio.Event()

    async def call(
        self,
        request: WebhookRequest,
        caller: Caller,
        relay: Relay | None = None,
        room: ReplyRoom | None = None,
    ) -> WebhookReply:
        assert relay is not None
        relay("Yes")
        await trio.sleep(0.1)  # each its own relay
        relay(", 12")
        self.halfway.set()
        await self.go_on.wait()
        relay(" pallets")
        await trio.lowlevel.checkpoint()
        return await super().call(request, caller)


async def test_a_subscriber_who_joins_mid_answer_begins_with_what_was_relayed() -> None:
    workflow = HeldMidAnswer()
    async with executor_for(workflow) as executor:
        task = await executor.send(message("Yes, 12 pallets"), Caller())
        await workflow.halfway.wait()
        async with executor.stream(SubscribeToTask(task.id), Caller()) as late:
            first = late.task
            workflow.go_on.set()
            heard = [event async for event in events_of(late)]
    assert first.artifacts[-1].parts[0].text == "Yes, 12"
    assert first.generation == 4  # working 2, its two chunks 3 and 4
    chunk, whole, end = heard
    assert isinstance(chunk, ArtifactUpdate) and chunk.append
    assert (chunk.artifact.parts[0].text, chunk.generation) == (" pallets", 5)
    assert isinstance(whole, ArtifactUpdate) and whole.artifact.parts[0].text == "Yes, 12 pallets"
    assert isinstance(end, StatusUpdate) and end.generation == 7
