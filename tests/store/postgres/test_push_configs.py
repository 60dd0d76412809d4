"""Push configs in PostgreSQL: what the in-memory store does, seen from every replica, and
gone with their task."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest

from n8n_a2a.core.changes import Change
from n8n_a2a.protocol.model import Message, Part, Role, Task, TaskState, TaskStatus
from n8n_a2a.protocol.push import PushAuthentication, PushConfig
from n8n_a2a.store.postgres import Pool, PostgresPushConfigStore, PostgresTaskStore


@pytest.fixture
async def pools(postgres_url: str) -> AsyncIterator[tuple[Pool, Pool]]:
    """Two replicas' pools on one database."""
    here, there = Pool(postgres_url), Pool(postgres_url)
    await here.prepare()
    await there.prepare()
    yield here, there
    await here.close()
    await there.close()


async def a_task(pool: Pool, task_id: str, when: datetime | None = None) -> PostgresTaskStore:
    store = PostgresTaskStore(pool, ttl_seconds=60, clock=lambda: when or datetime.now(UTC))
    user = Message("m", Role.USER, (Part("hi"),), task_id, "c")
    now = when or datetime.now(UTC)
    await store.create(Task(task_id, "c", TaskStatus(TaskState.SUBMITTED, now), (user,)))
    return store


def config(task_id: str, config_id: str, url: str = "http://b.example/") -> PushConfig:
    return PushConfig(task_id, config_id, url)


async def test_put_get_list_delete_from_either_replica(pools: tuple[Pool, Pool]) -> None:
    here, there = (PostgresPushConfigStore(pool) for pool in pools)
    await a_task(pools[0], "t")
    full = PushConfig(
        "t", "a", "https://r.example/hook", "tok", PushAuthentication("Bearer", "c"), "0.3"
    )
    assert await here.put(full, limit=8)
    assert await here.put(config("t", "b"), limit=8)
    assert await there.get("t", "a") == full
    assert await there.get("t", "z") is None
    assert [c.id for c in await there.list("t")] == ["a", "b"]
    assert await there.delete("t", "a")
    assert not await here.delete("t", "a")  # idempotent
    assert [c.id for c in await here.list("t")] == ["b"]
    assert await here.list("other") == ()


async def test_a_replaced_config_keeps_its_place_and_the_limit_holds(
    pools: tuple[Pool, Pool],
) -> None:
    store = PostgresPushConfigStore(pools[0])
    await a_task(pools[0], "t")
    await store.put(config("t", "a"), limit=2)
    await store.put(config("t", "b"), limit=2)
    assert await store.put(config("t", "a", "http://new.example/"), limit=2)
    assert not await store.put(config("t", "c"), limit=2)
    assert [(c.id, c.url) for c in await store.list("t")] == [
        ("a", "http://new.example/"),
        ("b", "http://b.example/"),
    ]


async def test_configs_leave_with_their_task(pools: tuple[Pool, Pool]) -> None:
    configs = PostgresPushConfigStore(pools[0])
    long_ago = datetime.now(UTC) - timedelta(hours=2)
    tasks = await a_task(pools[0], "t", long_ago)
    await configs.put(config("t", "a"), limit=8)
    await configs.task_ended("t")
    assert [c.id for c in await configs.list("t")] == ["a"]  # readable while the task is
    assert await tasks.move("t", 0, Change(TaskState.CANCELED, long_ago)) is not None
    await PostgresTaskStore(pools[0], ttl_seconds=60).expire()
    assert await configs.list("t") == ()
