"""Where tasks and push configs live, and how their changes are heard: the storage seam
(api.py), its backends (memory/, postgres/), and the table that picks one by
ADAPTER_STORE_URL's scheme (backends.py)."""

from .api import (
    Backend,
    Keeper,
    Leases,
    Listener,
    Moved,
    PayloadBudget,
    Payloads,
    PushConfigStore,
    StoreConfig,
    Stores,
    TaskEvents,
    TaskStore,
)
from .backends import open_stores

__all__ = [
    "Backend",
    "Keeper",
    "Leases",
    "Listener",
    "Moved",
    "PayloadBudget",
    "Payloads",
    "PushConfigStore",
    "StoreConfig",
    "Stores",
    "TaskEvents",
    "TaskStore",
    "open_stores",
]
