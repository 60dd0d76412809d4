"""The stores the contract runs against: each test of it once in memory, once on a
PostgreSQL (that half slow, marked by its `postgres_url`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from n8n_a2a.store import TaskStore
from n8n_a2a.store.memory import MemoryTaskStore
from tests.support.store_tasks import StoreFactory


# Only the PostgreSQL half of the contract is slow: its param is marked, not the file.
@pytest.fixture(
    params=["memory", pytest.param("postgres", marks=(pytest.mark.postgres, pytest.mark.slow))]
)
async def make_store(request: pytest.FixtureRequest) -> AsyncIterator[StoreFactory]:
    if request.param == "memory":
        yield MemoryTaskStore
        return
    from n8n_a2a.store.postgres import Pool, PostgresTaskStore

    pool = Pool(request.getfixturevalue("postgres_url"))
    await pool.prepare()

    def make(**options: Any) -> TaskStore:
        options.pop("max_tasks", None)  # bounded by time to live only: see below
        return PostgresTaskStore(pool, **options)

    yield make
    await pool.close()
