"""Push notifications: every update of a task POSTed to the receivers its callers registered.

A `PushConfigStore` holds the configs (beside the TaskStore, so that a database can
hold them later); `deliverer.Deliverer` hears every event of a task with configs and
delivers it to each config's receiver, in order, with retries, never holding up the
task, as the config's `route.Route` decides (sans-I/O: events in, actions out);
`guard` decides where a POST may go, after a lookup that `lookups` runs in threads of
its own;
`service.PushNotifications` is what the JSON-RPC methods and the executor's inline
configs call.
"""

from __future__ import annotations

from typing import Protocol

from ..protocol.push import PushConfig


class PushConfigStore(Protocol):
    """Push configs by task and id. Every method may be called from any task of the process."""

    async def put(self, config: PushConfig, limit: int) -> bool:
        """Hold the config, replacing the task's config of the same id; False (and nothing
        held) when the task has `limit` configs already and this id is new."""

    async def get(self, task_id: str, config_id: str) -> PushConfig | None: ...

    async def list(self, task_id: str) -> tuple[PushConfig, ...]:
        """The task's configs, in the order they were first made."""

    async def delete(self, task_id: str, config_id: str) -> bool:
        """Forget the config; False if there was none (a delete is idempotent)."""

    async def task_ended(self, task_id: str) -> None:
        """The task has ended and its updates are delivered: its configs may go once a
        finished task would leave the TaskStore."""
