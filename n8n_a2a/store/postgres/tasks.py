"""Tasks in PostgreSQL, shared by replicas: any replica answers for any task.

A move is one statement: a compare-and-set UPDATE on the task's version (and on the states
the lifecycle lets it leave), the insert of its events into `a2a_task_events`, of the
caller's message it takes in into `a2a_sent_messages` (core/sent.py), and a NOTIFY of the
task's id and latest event number (events.py), all committed together or not at all. A
new task and the message that made it are one statement too.
"""

from __future__ import annotations

import itertools
from datetime import timedelta
from typing import Any, LiteralString

import psycopg
from psycopg.types.json import Jsonb

from ...core import lifecycle
from ...core.changes import Change, change_events, moved_task
from ...core.errors import AlreadySent
from ...core.owners import Owner
from ...core.sent import Sent
from ...protocol.errors import A2AError
from ...protocol.model import (
    ListTasks,
    Task,
    TaskPage,
    TaskState,
)
from ..api import Moved
from ..documents import artifact_doc, message_doc
from ..fanout import Clock, utc_now
from ..pages import MAX_PAGE_BYTES, decode_cursor, encode_cursor, fit
from .leases import PostgresLeases
from .pool import Connection, Pool, Row
from .schema import CHANNEL
from .task_rows import (
    TASK_COLUMNS,
    json_value,
    leaves_for,
    logged,
    sender,
    sent_parameters,
    task_of,
)

#: The advisory lock the expiry takes, so that one replica at a time deletes.
EXPIRY_LOCK = 0x61326165
#: Finished tasks one expiry deletes at most (the next one takes the rest).
_EXPIRY_BATCH = 5000


class PostgresTaskStore(PostgresLeases):
    """Tasks in PostgreSQL, moved compare-and-set; also this replica's leases on them."""

    def __init__(
        self,
        pool: Pool,
        *,
        replica: str | None = None,
        lease_seconds: float = 15.0,
        ttl_seconds: float = 3600.0,
        clock: Clock = utc_now,
        max_page_bytes: int = MAX_PAGE_BYTES,
        input_ttl: float = 86400.0,
    ) -> None:
        super().__init__(pool, replica=replica, lease_seconds=lease_seconds)
        self._max_page_bytes = max_page_bytes
        self._input_ttl = input_ttl
        self._ttl = ttl_seconds
        self._clock = clock

    async def create(self, task: Task, sent: Sent | None = None) -> None:
        parameters = {
            "id": task.id,
            "context": task.context_id,
            "owner": task.owner,
            "state": task.status.state.value,
            "timestamp": task.status.timestamp,
            "message": (
                None
                if task.status.message is None
                else json_value(message_doc(task.status.message))
            ),
            "history": [json_value(message_doc(m)) for m in task.history],
            "artifacts": [json_value(artifact_doc(a)) for a in task.artifacts],
            "metadata": Jsonb(task.metadata),
            "version": task.version,
            "holder": self.replica,
            "lease": self.lease_seconds,
            **sent_parameters(sent),
        }

        def insert(connection: Connection) -> None:
            _remembering(connection, _CREATE, parameters, sent)

        await self.pool.run(insert)

    async def sent(self, owner: Owner, message_id: str) -> Sent | None:
        def select(connection: Connection) -> Row | None:
            return connection.execute(_SENT, (sender(owner), message_id)).fetchone()

        row = await self.pool.run(select)
        if row is None:
            return None
        return Sent(owner, message_id, row["fingerprint"], row["task_id"])

    async def get(self, task_id: str) -> Task:
        def select(connection: Connection) -> Row | None:
            return connection.execute(
                f"SELECT {TASK_COLUMNS} FROM a2a_tasks WHERE id = %s", (task_id,)
            ).fetchone()

        row = await self.pool.run(select)
        if row is None:
            raise A2AError.task_not_found(task_id)
        return task_of(row)

    async def move(self, task_id: str, version: int, change: Change) -> Moved | None:
        # Numbered as the task's version says (the relayed count, which only makes their
        # generations, is the row's: the events' column takes it in the same statement).
        events = change_events(task_id, "", version, 0, change)
        running = lifecycle.leased(change.state)
        parameters = {
            "id": task_id,
            "from": version,
            "to": events[-1].sequence,
            "leaves": leaves_for(change.state),
            "state": change.state.value,
            "timestamp": change.timestamp,
            "message": None if change.message is None else json_value(message_doc(change.message)),
            # The caller's message that starts a next turn, then the status message.
            "said": [
                json_value(message_doc(m))
                for m in (*change.history, *((change.message,) if change.message else ()))
            ],
            "made": [json_value(artifact_doc(artifact)) for artifact in change.artifacts],
            "metadata": Jsonb(change.metadata or {}),
            "finished": change.timestamp if lifecycle.is_terminal(change.state) else None,
            # The replica that moves a task to run takes its lease; one that ends it, or
            # makes it wait for the caller, lets it go.
            "holder": self.replica if running else None,
            "lease": self.lease_seconds if running else None,
            # A question asked: how long the caller has to answer, on the database's clock.
            "wait": self._input_ttl if lifecycle.takes_message(change.state) else None,
            "relayed": change.relayed,
            # A turn's end says where the next goes (None: the webhook); other moves keep it.
            "ends": lifecycle.ends_turn(change.state),
            "waiting": None if change.resume is None else Jsonb({"resume": change.resume}),
            "sequences": [event.sequence for event in events],
            **logged(events),
            "channel": CHANNEL,
            **sent_parameters(change.sent),
        }

        def update(connection: Connection) -> Row | None:
            row = _remembering(connection, _MOVE, parameters, change.sent)
            if row is not None:
                return row
            now = connection.execute(
                "SELECT state, version FROM a2a_tasks WHERE id = %s", (task_id,)
            ).fetchone()
            if now is None:
                raise A2AError.task_not_found(task_id)
            if now["version"] == version:
                lifecycle.check_move(task_id, TaskState(now["state"]), change.state)
            return None

        row = await self.pool.run(update)
        if row is None:
            return None
        # The row as the move found it, which it made the moved task of as the memory
        # store does (a reply's file is the change's own object, not 27 MiB read back).
        task = task_of(row)
        made = change_events(task.id, task.context_id, version, task.relayed, change)
        return Moved(moved_task(task, change, made), made)

    async def list(self, query: ListTasks, owner: str | None) -> TaskPage:
        """A page of the owner's tasks, the most recently updated first (ties broken by id):
        at most `page_size` of them, and no more than fit in the page's bytes (at least one)."""
        after = decode_cursor(query.page_token) if query.page_token else None
        parameters = {
            "owner": owner,
            "context": query.context_id,
            "state": None if query.state is None else query.state.value,
            "since": query.status_timestamp_after,
            "before": None if after is None else after[0],
            "before_id": None if after is None else after[1],
            "artifacts": query.include_artifacts,
            "size": query.page_size + 1,
        }

        def select(connection: Connection) -> tuple[int, list[Row]]:
            with connection.transaction():
                counted = connection.execute(f"SELECT count(*) AS n {_FOUND}", parameters)
                total = int((counted.fetchone() or {"n": 0})["n"])
                rows = connection.execute(_PAGE, parameters).fetchall()
            return total, rows

        total, rows = await self.pool.run(select)
        views = (task_of(row).with_history_length(query.history_length) for row in rows)
        page = fit(itertools.islice(views, query.page_size), self._max_page_bytes)
        more = len(page) < len(rows)
        return TaskPage(
            tasks=tuple(page),
            next_page_token=encode_cursor(page[-1]) if more else "",
            page_size=query.page_size,
            total_size=total,
        )

    async def expire(self) -> None:
        """Delete finished tasks past their time to live (their events and push configs
        with them). One replica at a time: the others find the lock taken and skip."""
        cutoff = self._clock() - timedelta(seconds=self._ttl)

        def delete(connection: Connection) -> None:
            with connection.transaction():
                locked = connection.execute(
                    "SELECT pg_try_advisory_xact_lock(%s) AS locked", (EXPIRY_LOCK,)
                ).fetchone()
                if locked is not None and locked["locked"]:
                    connection.execute(_EXPIRE, (cutoff, _EXPIRY_BATCH))

        await self.pool.run(delete)


def _remembering(
    connection: Connection, statement: LiteralString, parameters: dict[str, Any], sent: Sent | None
) -> Row | None:
    """Run a statement that remembers `sent` with its change, in one: AlreadySent (and
    nothing done) if its sender sent that messageId before, even a moment ago on another
    replica (the primary key waits for that one's commit, then refuses)."""
    try:
        return connection.execute(statement, parameters).fetchone()
    except psycopg.errors.UniqueViolation as taken:
        if sent is None or taken.diag.table_name != "a2a_sent_messages":
            raise
        row = connection.execute(_SENT, (sender(sent.owner), sent.message_id)).fetchone()
        if row is None:  # its task left in the same moment: the conflict stands as it is
            raise
        raise AlreadySent(
            Sent(sent.owner, sent.message_id, row["fingerprint"], row["task_id"])
        ) from None


_CREATE: LiteralString = """
WITH made AS (
    INSERT INTO a2a_tasks (id, context_id, owner, state, status_timestamp, status_message,
                           history, artifacts, metadata, version, lease_holder, lease_until)
    VALUES (%(id)s, %(context)s, %(owner)s, %(state)s, %(timestamp)s, %(message)s,
            %(history)s::json[], %(artifacts)s::json[], %(metadata)s, %(version)s,
            %(holder)s, now() + %(lease)s * interval '1 second')
    RETURNING id
), remembered AS (
    INSERT INTO a2a_sent_messages (sender, message_id, fingerprint, task_id)
    SELECT %(sender)s, %(message_id)s, %(fingerprint)s, made.id
    FROM made WHERE %(message_id)s::text IS NOT NULL
)
SELECT id FROM made
"""

_SENT: LiteralString = """
SELECT fingerprint, task_id FROM a2a_sent_messages WHERE sender = %s AND message_id = %s
"""

# The statement's parts see the table as it was before it (one snapshot): `found` is the
# row at the version moved from, when the UPDATE takes (a row moved since, it refuses).
_MOVE: LiteralString = (
    """
WITH found AS (
    SELECT """
    + TASK_COLUMNS
    + """ FROM a2a_tasks WHERE id = %(id)s
), moved AS (
    UPDATE a2a_tasks SET
        state = %(state)s,
        status_timestamp = %(timestamp)s,
        status_message = %(message)s,
        history = history || %(said)s::json[],
        artifacts = artifacts || %(made)s::json[],
        metadata = metadata || %(metadata)s,
        version = %(to)s,
        relayed = relayed + %(relayed)s,
        finished_at = %(finished)s,
        lease_holder = %(holder)s,
        lease_until = now() + %(lease)s * interval '1 second',
        waiting_until = now() + %(wait)s * interval '1 second',
        waiting = CASE WHEN %(ends)s THEN %(waiting)s::jsonb ELSE waiting END
    WHERE id = %(id)s AND version = %(from)s AND state = ANY(%(leaves)s)
    RETURNING id, version, relayed
), logged AS (
    -- An artifact's update is its document (documents.event_doc's: the artifact, then
    -- the rest) made here with the artifact `made` sent: a file goes once (_logged).
    INSERT INTO a2a_task_events (task_id, sequence, event, relayed)
    SELECT moved.id, e.sequence,
           CASE WHEN e.made = 0 THEN e.event
                ELSE json_build_object('artifact', (%(made)s::json[])[e.made],
                                       'append', e.event->'append',
                                       'lastChunk', e.event->'lastChunk')
           END,
           moved.relayed
    FROM moved, unnest(%(sequences)s::integer[], %(events)s::json[], %(made_at)s::integer[])
                AS e(sequence, event, made)
), remembered AS (
    INSERT INTO a2a_sent_messages (sender, message_id, fingerprint, task_id)
    SELECT %(sender)s, %(message_id)s, %(fingerprint)s, moved.id
    FROM moved WHERE %(message_id)s::text IS NOT NULL
), relayed_past AS (
    DELETE FROM a2a_task_relays r USING moved WHERE r.task_id = moved.id AND %(ends)s
)
SELECT found.*, pg_notify(%(channel)s, moved.id || ' ' || moved.version) AS notified
FROM moved, found
"""
)

_FOUND: LiteralString = """
FROM a2a_tasks
WHERE owner IS NOT DISTINCT FROM %(owner)s
  AND (%(context)s::text IS NULL OR context_id = %(context)s)
  AND (%(state)s::text IS NULL OR state = %(state)s)
  AND (%(since)s::timestamptz IS NULL OR status_timestamp >= %(since)s)
"""

_PAGE: LiteralString = (
    """
SELECT id, context_id, owner, state, status_timestamp, status_message, history,
       CASE WHEN %(artifacts)s THEN artifacts ELSE '{}'::json[] END AS artifacts,
       metadata, version, relayed, waiting
"""
    + _FOUND
    + """
  AND (%(before)s::timestamptz IS NULL
       OR (status_timestamp, id) < (%(before)s, %(before_id)s::text))
ORDER BY status_timestamp DESC, id DESC
LIMIT %(size)s
"""
)

_EXPIRE: LiteralString = """
DELETE FROM a2a_tasks WHERE id IN (
    SELECT id FROM a2a_tasks WHERE finished_at < %s ORDER BY finished_at LIMIT %s
)
"""
