"""Long-polls (A2A 1.1 as drafted): a GetTask with currentGeneration held until its task's
generation passes it, or its wait ends; bounded per caller, answered at shutdown."""

from __future__ import annotations

import pytest
import trio

from n8n_a2a.auth.caller import Caller
from n8n_a2a.core import turns
from n8n_a2a.core.errors import AtCapacity
from n8n_a2a.executor.polls import LongPolls
from n8n_a2a.executor.recorder import TaskRecorder
from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.protocol.model import (
    Artifact,
    ArtifactUpdate,
    Message,
    Part,
    Role,
    Task,
    TaskState,
    TaskStatus,
)
from n8n_a2a.store.fanout import LocalTaskEvents, utc_now
from n8n_a2a.store.memory import MemoryTaskStore
from tests.support.executor import ScriptedWorkflow, executor_for, message

ALICE = Caller(owner="alice")


class Polls:
    """LongPolls over a memory store, with a task of Alice's `working` at generation 2."""

    def __init__(self, timeout: float = 30.0, per_caller: int = 4) -> None:
        self.store = MemoryTaskStore()
        self.events = LocalTaskEvents()
        self.tasks = TaskRecorder(self.store, self.events, utc_now)
        self.polls = LongPolls(self.tasks, self.events, timeout, per_caller)

    async def working(self, owner: str | None = "alice") -> Task:
        made = await self.tasks.create(Message("m-1", Role.USER, (Part("hi"),)), owner)
        started = await self.tasks.start(made.id)
        assert started is not None and started.generation == 2
        return started


async def test_a_generation_passed_already_is_answered_at_once() -> None:
    polls = Polls()
    task = await polls.working()
    found = await polls.polls.get(task.id, ALICE, 1)
    assert found.generation == 2 and polls.polls.held == 0


async def test_a_state_change_wakes_a_held_poll_with_the_task_as_it_is_then(
    autojump_clock: trio.abc.Clock,
) -> None:
    polls = Polls()
    task = await polls.working()
    answered: list[Task] = []

    async def poll() -> None:
        answered.append(await polls.polls.get(task.id, ALICE, 2))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(poll)
        await trio.sleep(5)
        assert not answered and polls.polls.held == 1
        await polls.tasks.end(task.id, turns.CANCELED)
    [woken] = answered
    assert (woken.status.state, woken.generation) == (TaskState.CANCELED, 3)
    assert trio.current_time() == pytest.approx(5, abs=0.01)  # at the change, not at 30 s
    assert polls.polls.held == 0


async def test_a_held_poll_ends_at_its_timeout_with_the_task_unchanged(
    autojump_clock: trio.abc.Clock,
) -> None:
    polls = Polls(timeout=30)
    task = await polls.working()
    found = await polls.polls.get(task.id, ALICE, 2)
    assert trio.current_time() == pytest.approx(30)
    assert found == task


async def test_a_chunk_relayed_wakes_no_poll(autojump_clock: trio.abc.Clock) -> None:
    polls = Polls(timeout=30)
    task = await polls.working()

    async def relay() -> None:
        await trio.sleep(1)
        chunk = Artifact("a-1", "answer", (Part("Yes"),))
        polls.events.relay(ArtifactUpdate(task.id, task.context_id, chunk, 2, last_chunk=False))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(relay)
        found = await polls.polls.get(task.id, ALICE, 2)
    assert trio.current_time() == pytest.approx(30) and found == task


async def test_a_finished_task_is_answered_at_once_whatever_the_generation() -> None:
    polls = Polls()
    task = await polls.working()
    ended = await polls.tasks.end(task.id, turns.CANCELED)
    assert ended is not None
    with trio.move_on_after(5) as waited:
        found = await polls.polls.get(task.id, ALICE, 99)
    assert not waited.cancelled_caught and found == ended


async def test_another_callers_task_is_not_found_and_nothing_is_left_listening() -> None:
    polls = Polls()
    task = await polls.working()
    with pytest.raises(A2AError) as raised:
        await polls.polls.get(task.id, Caller(owner="mallory"), 2)
    assert raised.value.code is ErrorCode.TASK_NOT_FOUND
    with pytest.raises(A2AError):
        await polls.polls.get("no-such-task", ALICE, 2)
    assert polls.events._by_task == {}


async def test_a_caller_has_at_most_its_quota_held_and_others_are_not_counted(
    autojump_clock: trio.abc.Clock,
) -> None:
    polls = Polls(timeout=30, per_caller=2)
    task = await polls.working()
    bobs = await polls.working(owner="bob")
    async with trio.open_nursery() as nursery:
        for _ in range(2):
            nursery.start_soon(polls.polls.get, task.id, ALICE, 2)
        await trio.sleep(1)
        with pytest.raises(AtCapacity) as refused:
            await polls.polls.get(task.id, ALICE, 2)
        assert "ADAPTER_MAX_POLLS_PER_CALLER" in refused.value.message
        # A poll that would be answered at once takes no place; Bob has his own count.
        assert (await polls.polls.get(task.id, ALICE, 1)).generation == 2
        nursery.start_soon(polls.polls.get, bobs.id, Caller(owner="bob"), 2)
        await trio.sleep(1)
        assert polls.polls.held == 3
    assert polls.polls.held == 0


async def test_shutdown_answers_every_held_poll_at_once_and_holds_none_after(
    autojump_clock: trio.abc.Clock,
) -> None:
    polls = Polls(timeout=30)
    task = await polls.working()
    answered: list[float] = []

    async def poll() -> None:
        await polls.polls.get(task.id, ALICE, 2)
        answered.append(trio.current_time())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(poll)
        nursery.start_soon(poll)
        await trio.sleep(3)
        polls.polls.close()
    assert answered == [pytest.approx(3), pytest.approx(3)]
    with trio.move_on_after(1) as waited:
        await polls.polls.get(task.id, ALICE, 2)
    assert not waited.cancelled_caught


async def test_the_executor_holds_a_get_with_a_generation_until_the_turn_ends(
    autojump_clock: trio.abc.Clock,
) -> None:
    workflow = ScriptedWorkflow()
    async with executor_for(workflow) as executor:
        task = await executor.send(message("go"), Caller())
        assert (task.status.state, task.generation) == (TaskState.WORKING, 2)
        async with trio.open_nursery() as nursery:

            async def release() -> None:
                await trio.sleep(2)
                workflow.release("go")

            nursery.start_soon(release)
            done = await executor.get(task.id, Caller(), history_length=0, current_generation=2)
        # Its answer (an artifact), then its status: two generations on.
        assert (done.status.state, done.generation, done.history) == (
            TaskState.COMPLETED,
            4,
            (),
        )
        # And shutdown answers a held one at once.
        asked = await executor.send(message("hold"), Caller())
        async with trio.open_nursery() as nursery:

            async def stop() -> None:
                await trio.sleep(1)
                executor.stop_accepting()

            nursery.start_soon(stop)
            held = await executor.get(asked.id, Caller(), current_generation=2)
        assert held.generation == 2 and trio.current_time() == pytest.approx(3, abs=0.01)
        workflow.release_all()


def test_a_task_just_made_is_at_generation_one_and_each_event_one_more() -> None:
    made = Task("t", "c", TaskStatus(TaskState.SUBMITTED, utc_now()))
    assert made.generation == 1
    # Version 3 and 2 chunks relayed before: 3 events and 2 chunks after its making.
    assert Task("t", "c", made.status, version=3, relayed=2).generation == 6
