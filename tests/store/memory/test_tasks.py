"""What only the in-memory store does: its bound of ADAPTER_MAX_TASKS, the oldest finished
task evicted first (the contract every store keeps is tests/store/test_contract.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from n8n_a2a.core.errors import AtCapacity
from n8n_a2a.protocol.errors import A2AError
from n8n_a2a.protocol.model import ListTasks
from n8n_a2a.store.memory import MemoryTaskStore
from tests.support.store_tasks import Ticking, finished, new_task, waiting


async def test_a_task_waiting_for_input_counts_toward_the_memory_bound() -> None:
    clock = Ticking()
    store = MemoryTaskStore(max_tasks=2, ttl_seconds=10, clock=clock)
    await waiting(store, clock)
    await finished(store, clock)
    clock.now += timedelta(seconds=30)
    await store.create(new_task(clock))
    with pytest.raises(AtCapacity) as raised:
        await store.create(new_task(clock))
    assert "waiting for input" in raised.value.message
    assert "ADAPTER_MAX_TASKS" in raised.value.message
    assert "ADAPTER_INPUT_TTL" in raised.value.message


async def test_a_full_memory_store_evicts_the_oldest_finished_first() -> None:
    clock = Ticking()
    store = MemoryTaskStore(max_tasks=3, clock=clock)
    running = new_task(clock)
    await store.create(running)
    first, second = await finished(store, clock), await finished(store, clock)
    third = await finished(store, clock)
    held = {t.id for t in (await store.list(ListTasks(), None)).tasks}
    assert held == {running.id, second, third}
    with pytest.raises(A2AError):
        await store.get(first)


async def test_a_memory_store_full_of_unfinished_tasks_refuses() -> None:
    clock = Ticking()
    store = MemoryTaskStore(max_tasks=2, clock=clock)
    await store.create(new_task(clock))
    await store.create(new_task(clock))
    with pytest.raises(AtCapacity) as raised:
        await store.create(new_task(clock))
    assert "ADAPTER_MAX_TASKS" in raised.value.message


class Counted:
    """What the memory budget is told of finished tasks' payloads."""

    def __init__(self) -> None:
        self.kept: dict[str, int] = {}

    def keep(self, task_id: str, size: int) -> None:
        self.kept[task_id] = size

    def forget(self, task_id: str) -> None:
        del self.kept[task_id]


async def test_finished_tasks_payloads_are_counted_until_they_leave() -> None:
    clock = Ticking()
    counted = Counted()
    store = MemoryTaskStore(max_tasks=2, clock=clock, payloads=counted)
    running = new_task(clock)
    await store.create(running)
    done = await finished(store, clock, "y" * 5000)
    # "hi" asked, "y" x 5000 answered: the status message, the history's last and the
    # artifact hold the same text, counted once.
    assert counted.kept == {done: 2 + 5000}
    await store.create(new_task(clock))  # full: the finished task makes room
    assert counted.kept == {}


async def test_a_finished_tasks_large_parts_are_released_with_the_marker() -> None:
    clock = Ticking()
    store = MemoryTaskStore(clock=clock, payloads=Counted())
    done = await finished(store, clock, "y" * 5000)
    before = await store.get(done)
    assert store.release_payloads(done) == 5000
    after = await store.get(done)
    assert after.version == before.version
    assert after.metadata["released"] == ["artifacts", "history", "status"]
    assert (after.artifacts[0].parts[0].metadata or {})["released"]["size"] == 5000
    assert after.history[0] == before.history[0]  # "hi" is small: it stays
    assert store.release_payloads(done) == 0
    running = new_task(clock)
    await store.create(running)
    assert store.release_payloads(running.id) == 0  # only a finished task's
    assert store.release_payloads("gone") == 0
