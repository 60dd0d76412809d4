"""The memory backend: its stores opened with a StoreConfig's bounds, the budget told of
the finished tasks' payloads and able to release them, no leases, always ready."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from n8n_a2a.budget import MemoryBudget
from n8n_a2a.core.errors import AtCapacity
from n8n_a2a.protocol.push import PushConfig
from n8n_a2a.store import StoreConfig
from n8n_a2a.store.fanout import LocalTaskEvents
from n8n_a2a.store.memory import MemoryPushConfigStore, MemoryTaskStore, open_memory_stores
from tests.support.store_tasks import Ticking, finished, new_task, waiting


async def test_the_stores_are_in_memory_ready_and_without_leases() -> None:
    async with open_memory_stores(StoreConfig()) as stores:
        assert isinstance(stores.tasks, MemoryTaskStore)
        assert isinstance(stores.events, LocalTaskEvents)
        assert isinstance(stores.configs, MemoryPushConfigStore)
        assert stores.leases is None
        assert stores.problem() is None


async def test_the_tasks_held_are_counted_and_bounded_by_max_tasks() -> None:
    clock = Ticking()
    clock.now = datetime.now(UTC)
    async with open_memory_stores(StoreConfig(max_tasks=2)) as stores:
        assert stores.held() == 0
        await waiting(stores.tasks, clock)
        await stores.tasks.create(new_task(clock))
        assert stores.held() == 2
        with pytest.raises(AtCapacity):
            await stores.tasks.create(new_task(clock))
        # The push configs are bounded by the same number of tasks.
        assert await stores.configs.put(PushConfig("t-a", "p", "https://r.example/"), limit=8)
        assert await stores.configs.put(PushConfig("t-b", "p", "https://r.example/"), limit=8)
        with pytest.raises(AtCapacity):
            await stores.configs.put(PushConfig("t-c", "p", "https://r.example/"), limit=8)


async def test_the_budget_counts_the_finished_payloads_and_may_release_them() -> None:
    budget = MemoryBudget(40_000, wait=0.0)
    clock = Ticking()
    clock.now = datetime.now(UTC)  # the store's own clock: none of them expired yet
    async with open_memory_stores(StoreConfig(budget=budget)) as stores:
        old = await finished(stores.tasks, clock, "o" * 15_000)
        new = await finished(stores.tasks, clock, "n" * 15_000)
        assert budget.kept == 2 + 15_000 + 2 + 15_000  # each task's "hi" and its answer
        room = budget.reservation("")
        await room.grow(20_000)  # room made by releasing the oldest's payload
        assert "released" in (await stores.tasks.get(old)).metadata
        assert "released" not in (await stores.tasks.get(new)).metadata
        room.give_back()
