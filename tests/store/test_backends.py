"""The table of backends: ADAPTER_STORE_URL's scheme chooses one, none means memory."""

from __future__ import annotations

import pytest

from n8n_a2a.store import StoreConfig, open_stores
from n8n_a2a.store.backends import backend, scheme
from n8n_a2a.store.memory import MemoryTaskStore, open_memory_stores


@pytest.mark.parametrize(
    ("url", "found"),
    [
        (None, None),
        ("postgresql://ann@db.example/a2a", "postgresql"),
        ("postgres://ann@db.example/a2a", "postgres"),
        ("PostgreSQL://ann@db.example/a2a", "postgresql"),
        ("host=db.example dbname=a2a", ""),
    ],
)
def test_the_scheme_is_what_comes_before_the_first_colon_and_slashes(
    url: str | None, found: str | None
) -> None:
    assert scheme(url) == found


def test_no_url_is_the_memory_backend() -> None:
    assert backend(None) is open_memory_stores


@pytest.mark.parametrize("url", ["postgresql://ann@db/a2a", "POSTGRES://ann@db/a2a"])
def test_both_postgresql_schemes_are_the_postgresql_backend(url: str) -> None:
    from n8n_a2a.store.postgres import open_postgres_stores  # the postgres extra

    assert backend(url) is open_postgres_stores


@pytest.mark.parametrize("url", ["mysql://ann@db/a2a", "host=db dbname=a2a", "://db"])
def test_a_url_no_backend_takes_is_refused_without_being_quoted(url: str) -> None:
    with pytest.raises(ValueError, match="ADAPTER_STORE_URL") as refused:
        backend(url)
    assert url not in str(refused.value)


async def test_open_stores_opens_the_chosen_backends_stores() -> None:
    async with open_stores(StoreConfig(max_tasks=3)) as stores:
        assert isinstance(stores.tasks, MemoryTaskStore)
