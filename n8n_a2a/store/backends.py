"""Which backend opens the stores: the one ADAPTER_STORE_URL's scheme names, in a table.

A backend is a folder of store/ (memory/, postgres/) and a line here. Each is imported
only when chosen, so a backend's driver (psycopg) is an extra the base install does
without.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager

from .api import Backend, StoreConfig, Stores


def _memory() -> Backend:
    from .memory.backend import open_memory_stores

    return open_memory_stores


def _postgres() -> Backend:
    # The postgres extra: imported only when a store URL names it.
    from .postgres.backend import open_postgres_stores

    return open_postgres_stores


#: Each backend's factory by the scheme of ADAPTER_STORE_URL (None: no URL, in memory).
BACKENDS: Mapping[str | None, Callable[[], Backend]] = {
    None: _memory,
    "postgres": _postgres,
    "postgresql": _postgres,
}


def scheme(url: str | None) -> str | None:
    """A store URL's scheme, lower case ("" for none); None for no URL. Read as
    config/values.py's store_url reads it (not urlsplit, which refuses URLs libpq takes)."""
    if url is None:
        return None
    return url.partition("://")[0].lower() if "://" in url else ""


def backend(url: str | None) -> Backend:
    """The backend of the URL's scheme; ValueError for a scheme no backend has (the
    configuration lets none through)."""
    chosen = BACKENDS.get(scheme(url))
    if chosen is None:
        raise ValueError("ADAPTER_STORE_URL names no store this adapter has")
    return chosen()


def open_stores(config: StoreConfig) -> AbstractAsyncContextManager[Stores]:
    """The stores `config.url` names, opened for as long as the context lasts."""
    return backend(config.url)(config)
