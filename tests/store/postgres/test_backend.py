"""The PostgreSQL backend: its stores on one pool, the task store its leases too, ready
once the pool has prepared; nothing held in this process."""

from __future__ import annotations

import pytest
import trio

from n8n_a2a.store import StoreConfig, open_stores
from n8n_a2a.store.postgres import (
    PostgresPushConfigStore,
    PostgresTaskEvents,
    PostgresTaskStore,
    open_postgres_stores,
)


async def test_a_postgresql_url_opens_the_shared_stores(postgres_url: str) -> None:
    async with open_stores(StoreConfig(postgres_url, lease_seconds=5.0)) as stores:
        assert isinstance(stores.tasks, PostgresTaskStore)
        assert isinstance(stores.events, PostgresTaskEvents)
        assert isinstance(stores.configs, PostgresPushConfigStore)
        assert stores.leases is stores.tasks
        with trio.fail_after(10):
            while stores.problem() is not None:  # noqa: ASYNC110 - the pool has no event
                await trio.sleep(0.05)
        assert stores.held() == 0


async def test_a_store_out_of_reach_says_why_it_is_not_ready() -> None:
    # Port 9 (discard) on the loopback: nothing answers PostgreSQL there.
    config = StoreConfig("postgresql://ann@127.0.0.1:9/a2a")
    async with open_postgres_stores(config) as stores:
        problem = stores.problem()
        assert problem is not None and problem.startswith("the task store is not ready: ")


async def test_the_backend_needs_a_url() -> None:
    with pytest.raises(ValueError, match="ADAPTER_STORE_URL"):
        async with open_postgres_stores(StoreConfig()):
            pass
