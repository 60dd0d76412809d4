"""The PostgreSQL schema of the shared task store, and its migrations.

Each replica migrates at start. The migrations run in one transaction under an advisory
lock, so that replicas starting together take turns: the first applies what is missing,
the others find it done. `a2a_schema_version` records each step applied; a step is never
changed once released, only followed by a new one, and every step leaves the schema
readable by the code of the step before (a rolling update runs both at once).

Tables:

- `a2a_tasks`: one row a task. The history and artifacts are arrays of `json` documents
  (json, not jsonb: it keeps any text as sent, NUL characters included, and appending
  to an array needs no parsing). `version` is the compare-and-set key. `owner` is who
  may see the task (NULL: the anonymous caller); `lease_holder`/`lease_until` say which
  replica runs its call and until when that replica is presumed alive; `finished_at`
  is when it ended (expiry); `waiting_until` and `waiting` hold a task that waits for
  the caller's input: its deadline, and what its workflow needs to go on (`{"resume":
  …}`: the resume target of the n8n execution waiting for it, a credential).
- `a2a_task_events`: every event of a task, numbered like `Task.version`. A replica
  that hears of an event (NOTIFY carries only the task's id and the event's number)
  reads it here; a subscriber can be caught up from a number.
- `a2a_push_configs`: the push notification configs of a task, gone with the task.
- `a2a_sent_messages` (step 2): each message a caller sent (core/sent.py), by its sender
  (the owner: `@` and the owner's digest, or `` for the anonymous caller) and
  `messageId`, with its fingerprint and the task it made or continued, gone with the
  task. Its primary key is what makes a retry race-free across replicas: of two replicas
  taking the same message at once, one inserts, the other finds it.
- `a2a_task_relays` (step 4): a streamed answer under way, as its chunks have relayed it
  so far (their texts, as JSON strings: NUL characters kept), numbered as the last; what
  a subscriber who joins mid-answer begins with. Written by the calling replica as it
  sends the chunks to the others, bounded as the reply is (ADAPTER_MAX_REPLY_BYTES), and
  deleted by the move that ends the turn.
- `relayed` (step 3), on a task and on each event: the chunks of streamed answers relayed
  before it, counted by the move that ends their turn. With the version, it makes A2A
  1.1's `generation` (protocol/model.py). A replica of step 2 leaves it as it is.

The tables and the NOTIFY channel are what replicas of different releases share.
"""

from __future__ import annotations

from typing import Any, LiteralString

import psycopg
from psycopg.rows import tuple_row

#: The channel every replica LISTENs on: a NOTIFY carries `<task id> <event number>`.
CHANNEL = "a2a_task_events"
#: The advisory lock key migrations take (any constant; "a2a" in ASCII).
MIGRATION_LOCK = 0x613261

#: (version, SQL): applied in order, each once.
MIGRATIONS: tuple[tuple[int, LiteralString], ...] = (
    (
        1,
        """
        CREATE TABLE a2a_tasks (
            id text COLLATE "C" PRIMARY KEY,
            context_id text NOT NULL,
            owner text,
            state text NOT NULL,
            status_timestamp timestamptz NOT NULL,
            status_message json,
            history json[] NOT NULL,
            artifacts json[] NOT NULL,
            metadata jsonb NOT NULL,
            version integer NOT NULL,
            lease_holder text,
            lease_until timestamptz,
            finished_at timestamptz,
            waiting_until timestamptz,
            waiting jsonb
        );
        CREATE INDEX a2a_tasks_listed ON a2a_tasks (owner, status_timestamp DESC, id DESC);
        CREATE INDEX a2a_tasks_by_context ON a2a_tasks (context_id);
        CREATE INDEX a2a_tasks_leased ON a2a_tasks (lease_until)
            WHERE lease_until IS NOT NULL;
        CREATE INDEX a2a_tasks_finished ON a2a_tasks (finished_at)
            WHERE finished_at IS NOT NULL;
        CREATE INDEX a2a_tasks_waiting ON a2a_tasks (waiting_until)
            WHERE waiting_until IS NOT NULL;
        CREATE TABLE a2a_task_events (
            task_id text COLLATE "C" NOT NULL REFERENCES a2a_tasks ON DELETE CASCADE,
            sequence integer NOT NULL,
            event json NOT NULL,
            PRIMARY KEY (task_id, sequence)
        );
        CREATE TABLE a2a_push_configs (
            task_id text COLLATE "C" NOT NULL REFERENCES a2a_tasks ON DELETE CASCADE,
            id text COLLATE "C" NOT NULL,
            config json NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (task_id, id)
        );
        """,
    ),
    (
        2,
        """
        CREATE TABLE a2a_sent_messages (
            sender text COLLATE "C" NOT NULL,
            message_id text COLLATE "C" NOT NULL,
            fingerprint text NOT NULL,
            task_id text COLLATE "C" NOT NULL REFERENCES a2a_tasks ON DELETE CASCADE,
            PRIMARY KEY (sender, message_id)
        );
        CREATE INDEX a2a_sent_messages_by_task ON a2a_sent_messages (task_id);
        """,
    ),
    (
        3,
        """
        ALTER TABLE a2a_tasks ADD COLUMN relayed integer NOT NULL DEFAULT 0;
        ALTER TABLE a2a_task_events ADD COLUMN relayed integer NOT NULL DEFAULT 0;
        """,
    ),
    (
        4,
        """
        CREATE TABLE a2a_task_relays (
            task_id text COLLATE "C" PRIMARY KEY REFERENCES a2a_tasks ON DELETE CASCADE,
            artifact_id text NOT NULL,
            name text NOT NULL,
            sequence integer NOT NULL,
            relayed integer NOT NULL,
            pieces json[] NOT NULL
        );
        """,
    ),
)

LATEST = MIGRATIONS[-1][0]


def migrate(connection: psycopg.Connection[Any]) -> int:
    """Bring the schema up to date; the version it is at. Safe to run from many replicas
    at once, and again: what is done already is not done twice."""
    with connection.transaction(), connection.cursor(row_factory=tuple_row) as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        cursor.execute(
            "CREATE TABLE IF NOT EXISTS a2a_schema_version ("
            " version integer PRIMARY KEY,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        row = cursor.execute("SELECT coalesce(max(version), 0) FROM a2a_schema_version").fetchone()
        current = int(row[0]) if row is not None else 0
        for version, sql in MIGRATIONS:
            if version > current:
                cursor.execute(sql)
                cursor.execute("INSERT INTO a2a_schema_version (version) VALUES (%s)", (version,))
                current = version
    return current
