"""This replica's leases on the tasks whose calls it runs, kept in the tasks' rows.

The move that makes a task run takes its lease, and the move that ends it, or makes it wait
for the caller, lets it go: in the move's own statement (tasks.py). Here the leases are
renewed, and the tasks found that nobody runs any more: their replica stopped renewing, or
left them waiting for input past their time. n8n_a2a/executor/reaper.py drives these.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from ...core import lifecycle
from ...protocol.model import TaskState
from .pool import Connection, Pool

#: Tasks one look for lapsed leases or overdue waits finds at most (the next finds the rest).
_BATCH = 100


class PostgresLeases:
    """The leases one replica holds, on the database's clock."""

    def __init__(self, pool: Pool, *, replica: str | None, lease_seconds: float) -> None:
        self.pool = pool
        #: Who holds the leases this replica takes: unique to this process's life.
        self.replica = replica or str(uuid.uuid4())
        #: How long a lease lasts unless renewed, in seconds.
        self.lease_seconds = lease_seconds

    async def renew(self, task_ids: Sequence[str]) -> None:
        """Extend this replica's leases on the tasks whose calls it runs."""
        if not task_ids:
            return

        def update(connection: Connection) -> None:
            connection.execute(
                "UPDATE a2a_tasks SET lease_until = now() + %s * interval '1 second'"
                " WHERE id = ANY(%s) AND lease_holder = %s",
                (self.lease_seconds, list(task_ids), self.replica),
            )

        await self.pool.run(update)

    async def lapsed(self) -> tuple[str, ...]:
        """Tasks whose replica stopped renewing its lease: it died, or lost the database
        for longer than a lease. Oldest first, a bounded batch."""

        def select(connection: Connection) -> tuple[str, ...]:
            rows = connection.execute(
                "SELECT id FROM a2a_tasks WHERE lease_until < now() ORDER BY lease_until LIMIT %s",
                (_BATCH,),
            ).fetchall()
            return tuple(row["id"] for row in rows)

        return await self.pool.run(select)

    async def overdue_waits(self) -> tuple[tuple[str, int], ...]:
        """Tasks waiting for input past ADAPTER_INPUT_TTL, with their versions: whichever
        replica made them wait, and whether it still runs. A bounded batch."""

        def select(connection: Connection) -> tuple[tuple[str, int], ...]:
            rows = connection.execute(
                "SELECT id, version FROM a2a_tasks WHERE waiting_until < now()"
                " AND state = ANY(%s) ORDER BY waiting_until LIMIT %s",
                ([s.value for s in TaskState if lifecycle.takes_message(s)], _BATCH),
            ).fetchall()
            return tuple((row["id"], row["version"]) for row in rows)

        return await self.pool.run(select)
