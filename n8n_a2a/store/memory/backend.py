"""The memory backend: tasks and push configs in this process's memory, their events
fanned out in it (../fanout.py). No leases: nothing is shared, so nothing is lost to
another replica; and always ready.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from ..api import StoreConfig, Stores
from ..fanout import LocalTaskEvents
from .push_configs import MemoryPushConfigStore
from .tasks import MemoryTaskStore


@asynccontextmanager
async def open_memory_stores(config: StoreConfig) -> AsyncIterator[Stores]:
    """The stores of a process of its own. The finished tasks' payloads count in the
    memory budget (`config.budget`), which may release them to make room when it is full:
    they are held here, in this process."""
    tasks = MemoryTaskStore(config.max_tasks, config.task_ttl, payloads=config.budget)
    if config.budget is not None:
        config.budget.keep_in(tasks)
    configs = MemoryPushConfigStore(config.max_tasks, config.task_ttl)
    yield Stores(tasks, LocalTaskEvents(), configs, held=lambda: len(tasks))
