"""The embedded default: push configs in this process's memory, bounded like the task table.

The configs of a task that has ended stay readable (GetTaskPushNotificationConfig,
ListTaskPushNotificationConfigs) as long as the task itself would: they leave after the
table's time to live, or oldest first when as many tasks have configs as the table
holds tasks. The configs of a task still running never leave but by a delete.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from ...core.errors import AtCapacity
from ...protocol.push import PushConfig
from ..fanout import Clock, utc_now


class MemoryPushConfigStore:
    def __init__(
        self, max_tasks: int = 10_000, ttl_seconds: float = 3600.0, clock: Clock = utc_now
    ) -> None:
        self._by_task: dict[str, dict[str, PushConfig]] = {}
        # Tasks that have ended, in the order they ended, with when: eviction takes from
        # the front.
        self._ended: dict[str, datetime] = {}
        self._max_tasks = max_tasks
        self._ttl = timedelta(seconds=ttl_seconds)
        self._clock = clock

    def __len__(self) -> int:
        """Configs held."""
        return sum(len(configs) for configs in self._by_task.values())

    async def put(self, config: PushConfig, limit: int) -> bool:
        configs = self._by_task.get(config.task_id)
        if configs is None:
            self._make_room()
            configs = self._by_task[config.task_id] = {}
        if config.id not in configs and len(configs) >= limit:
            return False
        configs[config.id] = config
        return True

    async def get(self, task_id: str, config_id: str) -> PushConfig | None:
        return self._by_task.get(task_id, {}).get(config_id)

    async def list(self, task_id: str) -> tuple[PushConfig, ...]:
        return tuple(self._by_task.get(task_id, {}).values())

    async def delete(self, task_id: str, config_id: str) -> bool:
        configs = self._by_task.get(task_id, {})
        if configs.pop(config_id, None) is None:
            return False
        if not configs:
            self._forget(task_id)
        return True

    async def task_ended(self, task_id: str) -> None:
        if task_id in self._by_task and task_id not in self._ended:
            self._ended[task_id] = self._clock()

    def _make_room(self) -> None:
        expired_before = self._clock() - self._ttl
        while self._ended and next(iter(self._ended.values())) < expired_before:
            self._forget(next(iter(self._ended)))
        while len(self._by_task) >= self._max_tasks and self._ended:
            self._forget(next(iter(self._ended)))
        if len(self._by_task) >= self._max_tasks:
            raise AtCapacity(
                f"Server busy: {self._max_tasks} running tasks have push notification configs "
                "(ADAPTER_MAX_TASKS); retry later",
            )

    def _forget(self, task_id: str) -> None:
        self._by_task.pop(task_id, None)
        self._ended.pop(task_id, None)
