"""Fixtures the PostgreSQL store's tests share."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest

from n8n_a2a.store.postgres import Pool, PostgresTaskStore


@pytest.fixture
async def replicas(postgres_url: str) -> AsyncIterator[Callable[..., PostgresTaskStore]]:
    """Stores as two replicas would have them: each its own pool on one database."""
    pools: list[Pool] = []

    def replica(lease_seconds: float = 15.0) -> PostgresTaskStore:
        pool = Pool(postgres_url)
        pool.problem = None  # the fixture migrated the schema
        pools.append(pool)
        return PostgresTaskStore(pool, lease_seconds=lease_seconds)

    yield replica
    for pool in pools:
        await pool.close()
