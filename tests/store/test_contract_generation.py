"""The store contract's generation (A2A 1.1 as drafted), run against every TaskStore: one a
recorded event, and the chunks relayed before a move, which the move counts
(Change.relayed), on the task as read back and listed and on each event of the move."""

from __future__ import annotations

from dataclasses import replace

from n8n_a2a.core.changes import Change
from n8n_a2a.protocol.model import ListTasks, TaskState
from tests.support.store_tasks import StoreFactory, Ticking, answer, new_task


async def test_a_task_is_at_one_generation_a_change_and_a_chunk_counted(
    make_store: StoreFactory,
) -> None:
    clock = Ticking()
    store = make_store(clock=clock)
    task = new_task(clock, owner="o-1")
    await store.create(task)
    assert (await store.get(task.id)).generation == 1
    working = await store.move(task.id, 0, Change(TaskState.WORKING, clock()))
    assert working is not None
    assert [event.generation for event in working.events] == [2]
    assert working.task.generation == 2
    # Three chunks went out (generations 3 to 5), then the whole answer and its status.
    done = await store.move(task.id, 1, replace(answer(clock), relayed=3))
    assert done is not None
    assert [event.generation for event in done.events] == [6, 7]
    assert [event.sequence for event in done.events] == [2, 3]
    assert (done.task.generation, done.task.version, done.task.relayed) == (7, 3, 3)
    assert (await store.get(task.id)).generation == 7
    page = await store.list(ListTasks(), "o-1")
    assert [listed.generation for listed in page.tasks] == [7]
