"""The in-memory push config store: replace by id, a limit per task, and bounded like the table."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from n8n_a2a.core.errors import AtCapacity
from n8n_a2a.protocol.push import PushConfig
from n8n_a2a.store.memory import MemoryPushConfigStore


def config(task_id: str, config_id: str, url: str = "http://b.example/") -> PushConfig:
    return PushConfig(task_id, config_id, url)


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 11, 29, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


async def test_put_get_list_delete() -> None:
    store = MemoryPushConfigStore()
    assert await store.put(config("t", "a"), limit=8)
    assert await store.put(config("t", "b"), limit=8)
    assert await store.get("t", "a") == config("t", "a")
    assert await store.get("t", "z") is None
    assert await store.get("other", "a") is None
    assert [c.id for c in await store.list("t")] == ["a", "b"]
    assert await store.delete("t", "a")
    assert not await store.delete("t", "a")  # idempotent: nothing there, no error
    assert [c.id for c in await store.list("t")] == ["b"]
    assert await store.list("other") == ()


async def test_a_config_of_the_same_id_replaces_the_old_one_in_its_place() -> None:
    store = MemoryPushConfigStore()
    await store.put(config("t", "a"), limit=2)
    await store.put(config("t", "b"), limit=2)
    assert await store.put(config("t", "a", "http://new.example/"), limit=2)
    assert [(c.id, c.url) for c in await store.list("t")] == [
        ("a", "http://new.example/"),
        ("b", "http://b.example/"),
    ]


async def test_past_the_limit_a_new_config_is_not_held() -> None:
    store = MemoryPushConfigStore()
    assert await store.put(config("t", "a"), limit=1)
    assert not await store.put(config("t", "b"), limit=1)
    assert [c.id for c in await store.list("t")] == ["a"]
    assert await store.put(config("u", "b"), limit=1)  # the limit is per task


async def test_configs_of_an_ended_task_stay_readable_for_the_time_to_live() -> None:
    clock = Clock()
    store = MemoryPushConfigStore(ttl_seconds=60, clock=clock)
    await store.put(config("ended", "a"), limit=8)
    await store.put(config("running", "a"), limit=8)
    await store.task_ended("ended")
    clock.now += timedelta(seconds=59)
    await store.put(config("new", "a"), limit=8)
    assert await store.get("ended", "a") is not None
    clock.now += timedelta(seconds=2)
    await store.put(config("newer", "a"), limit=8)  # room is made when a task comes
    assert await store.get("ended", "a") is None
    assert await store.get("running", "a") is not None  # never while its task runs
    assert len(store) == 3


async def test_full_it_drops_the_task_that_ended_first_and_never_a_running_one() -> None:
    store = MemoryPushConfigStore(max_tasks=2)
    await store.put(config("first", "a"), limit=8)
    await store.put(config("second", "a"), limit=8)
    await store.task_ended("second")
    await store.task_ended("first")
    await store.put(config("third", "a"), limit=8)
    assert await store.list("second") == ()
    assert await store.list("first") != ()
    await store.put(config("fourth", "a"), limit=8)
    assert await store.list("first") == ()
    with pytest.raises(AtCapacity, match="ADAPTER_MAX_TASKS"):
        await store.put(config("fifth", "a"), limit=8)


async def test_a_task_ended_twice_keeps_its_first_end() -> None:
    clock = Clock()
    store = MemoryPushConfigStore(ttl_seconds=60, clock=clock)
    await store.put(config("t", "a"), limit=8)
    await store.task_ended("t")
    clock.now += timedelta(seconds=50)
    await store.task_ended("t")
    await store.task_ended("unknown")  # nothing held for it: nothing to do
    clock.now += timedelta(seconds=20)
    await store.put(config("u", "a"), limit=8)
    assert await store.list("t") == ()
