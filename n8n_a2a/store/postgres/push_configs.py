"""Push configs in PostgreSQL, beside the tasks (`a2a_push_configs`): any replica reads,
lists and deletes a task's configs, and they leave with their task when it expires."""

from __future__ import annotations

from typing import Any

from psycopg.types.json import Json

from ...protocol.push import PushAuthentication, PushConfig
from .pool import Connection, Pool


def _doc(config: PushConfig) -> dict[str, Any]:
    authentication = config.authentication
    return {
        "url": config.url,
        "token": config.token,
        "authentication": None
        if authentication is None
        else {"scheme": authentication.scheme, "credentials": authentication.credentials},
        "version": config.version,
    }


def _config(task_id: str, config_id: str, doc: dict[str, Any]) -> PushConfig:
    authentication = doc["authentication"]
    return PushConfig(
        task_id,
        config_id,
        doc["url"],
        doc["token"],
        None if authentication is None else PushAuthentication(**authentication),
        doc["version"],
    )


class PostgresPushConfigStore:
    """Push configs by task and id, in the shared store's database."""

    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    async def put(self, config: PushConfig, limit: int) -> bool:
        def upsert(connection: Connection) -> bool:
            with connection.transaction():
                # The task's row, locked: two puts for one task take turns on its limit.
                connection.execute(
                    "SELECT 1 FROM a2a_tasks WHERE id = %s FOR UPDATE", (config.task_id,)
                )
                row = connection.execute(
                    "SELECT count(*) AS n, count(*) FILTER (WHERE id = %s) AS same"
                    " FROM a2a_push_configs WHERE task_id = %s",
                    (config.id, config.task_id),
                ).fetchone()
                if row is not None and not row["same"] and row["n"] >= limit:
                    return False
                connection.execute(
                    "INSERT INTO a2a_push_configs (task_id, id, config) VALUES (%s, %s, %s)"
                    " ON CONFLICT (task_id, id) DO UPDATE SET config = EXCLUDED.config",
                    (config.task_id, config.id, Json(_doc(config))),
                )
            return True

        return await self._pool.run(upsert)

    async def get(self, task_id: str, config_id: str) -> PushConfig | None:
        def select(connection: Connection) -> PushConfig | None:
            row = connection.execute(
                "SELECT config FROM a2a_push_configs WHERE task_id = %s AND id = %s",
                (task_id, config_id),
            ).fetchone()
            return None if row is None else _config(task_id, config_id, row["config"])

        return await self._pool.run(select)

    async def list(self, task_id: str) -> tuple[PushConfig, ...]:
        def select(connection: Connection) -> tuple[PushConfig, ...]:
            rows = connection.execute(
                "SELECT id, config FROM a2a_push_configs WHERE task_id = %s"
                " ORDER BY created_at, id",
                (task_id,),
            ).fetchall()
            return tuple(_config(task_id, row["id"], row["config"]) for row in rows)

        return await self._pool.run(select)

    async def delete(self, task_id: str, config_id: str) -> bool:
        def remove(connection: Connection) -> bool:
            deleted = connection.execute(
                "DELETE FROM a2a_push_configs WHERE task_id = %s AND id = %s",
                (task_id, config_id),
            )
            return deleted.rowcount > 0

        return await self._pool.run(remove)

    async def task_ended(self, task_id: str) -> None:
        """Nothing to do: the configs leave with their task, when it expires."""
