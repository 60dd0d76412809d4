"""The storage seam: what each store is (mypy holds the assignments below to the
Protocols), and what a StoreConfig and Stores say when a backend says no more."""

from __future__ import annotations

from n8n_a2a.budget import MemoryBudget
from n8n_a2a.store import (
    Keeper,
    PayloadBudget,
    PushConfigStore,
    StoreConfig,
    Stores,
    TaskEvents,
    TaskStore,
)
from n8n_a2a.store.fanout import LocalTaskEvents
from n8n_a2a.store.memory import MemoryPushConfigStore, MemoryTaskStore


def test_the_memory_stores_and_the_budget_are_what_the_seam_names() -> None:
    tasks = MemoryTaskStore()
    as_tasks: TaskStore = tasks
    as_keeper: Keeper = tasks
    events: TaskEvents = LocalTaskEvents()
    configs: PushConfigStore = MemoryPushConfigStore()
    budget: PayloadBudget = MemoryBudget(1024, wait=0.0)
    budget.keep_in(as_keeper)
    assert as_tasks is tasks and events is not None and configs is not None


def test_a_config_keeps_its_url_out_of_its_repr() -> None:
    config = StoreConfig("postgresql://ann:s3cret@db.example/a2a")
    assert "s3cret" not in repr(config)
    assert config.url == "postgresql://ann:s3cret@db.example/a2a"


def test_a_config_by_default_is_in_memory_with_the_settings_defaults() -> None:
    config = StoreConfig()
    assert (config.url, config.max_tasks, config.task_ttl) == (None, 10_000, 3600.0)
    assert (config.lease_seconds, config.input_ttl) == (15.0, 86400.0)
    assert config.budget is None
    config.ignored()  # nothing happens


def test_stores_by_default_are_ready_without_leases_and_hold_nothing_here() -> None:
    stores = Stores(MemoryTaskStore(), LocalTaskEvents(), MemoryPushConfigStore())
    assert stores.leases is None
    assert stores.problem() is None
    assert stores.held() == 0
