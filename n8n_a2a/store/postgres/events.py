"""The shared store's events, across replicas by LISTEN/NOTIFY.

A move commits a NOTIFY of the task's id and latest event number with it (tasks.py). A
replica that hears one for a task someone there listens to reads the events it has not
delivered yet from `a2a_task_events` and hands them to its listeners, so the payload stays
small and the row stays the truth. Events a replica publishes itself reach its listeners
at once; the NOTIFY that comes back is then recognised by its number and costs nothing.
Any role that can connect may NOTIFY on the channel too: a payload that is not a task id
and an event number is counted and ignored.

The chunks of a streamed answer, which no move records, go to the other replicas the same
way, on a channel of their own (chunks.py): NOTIFYed in order by one task here, as they
are relayed, and handed to the task's listeners where they are heard. A chunk that cannot
be sent (the store out of reach, more than CHUNKS_QUEUED waiting) is dropped: it is a
preview, the turn's end brings the whole answer.

The listening connection needs no thread: trio waits on its socket
(`trio.lowlevel.wait_readable`) and psycopg's libpq wrapper (`Connection.pgconn`, public)
reads the notifications. When the connection breaks, the listener listens again and
catches its listeners up from the events table.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, suppress
from dataclasses import dataclass
from typing import LiteralString

import psycopg
import trio
from psycopg.types.json import Json

from ...core.errors import StoreUnavailable
from ...protocol.errors import A2AError
from ...protocol.model import Artifact, ArtifactUpdate, Part, TaskEvent
from ...protocol.params import MAX_ID_CHARS
from ..api import Listener
from ..documents import event_of
from ..fanout import LocalTaskEvents
from ..relays import RelayedSoFar
from .chunks import CHUNKS, Reassembly, chunk_payloads
from .pool import FIRST_RETRY, LAST_RETRY, Connection, Pool, Row
from .schema import CHANNEL

#: The largest event number: `a2a_task_events.sequence` is an integer.
_MAX_SEQUENCE = 2**31 - 1
#: Chunks waiting to be sent to the other replicas at most (past it, one is dropped).
CHUNKS_QUEUED = 1024
CHUNKS_NAME = CHUNKS.encode()
#: The longest a turn's end waits for its chunks to be sent (`settled`), seconds.
SETTLE_SECONDS = 1.0


@dataclass(frozen=True, slots=True)
class _Seen:
    """Where one task's listeners in this replica are: how many, and the last event number
    handed to them."""

    listeners: int
    sequence: int


class PostgresTaskEvents:
    """Events published here reach their listeners here at once; events made by other
    replicas arrive through LISTEN/NOTIFY and the events table. Each listener hears each
    event of its task once, in order."""

    def __init__(self, pool: Pool, *, ignored: Callable[[], None] = lambda: None) -> None:
        self._pool = pool
        #: Called for each notification on the channel that is none of ours.
        self._ignored = ignored
        self._everyone = LocalTaskEvents()  # subscribe_all: what this replica publishes
        self._by_task = LocalTaskEvents()  # subscribe: every event, from anywhere
        self._seen: dict[str, _Seen] = {}
        #: This replica, as the chunks it sends name it: it skips its own when heard.
        self.origin = str(uuid.uuid4())
        self._chunks = Reassembly(self.origin)
        self._so_far = RelayedSoFar()  # the chunks relayed here, until the task's next move
        # Chunks queued to be sent, and sent (or dropped on the way): `settled` waits on them.
        self._queued = self._sent = 0
        self._progress = trio.Event()
        self._send_chunk, self._chunks_to_send = trio.open_memory_channel[ArtifactUpdate](
            CHUNKS_QUEUED
        )

    def publish(self, event: TaskEvent) -> None:
        self._everyone.publish(event)
        self._hand(event)

    def relay(self, event: ArtifactUpdate) -> None:
        # Past `_hand`: a chunk is not numbered, the move that follows it is.
        self._so_far.add(event)
        self._by_task.relay(event, keep=False)
        # To the other replicas, by `speak`; past its bound a preview is dropped (the turn's
        # end brings the whole answer).
        with suppress(trio.WouldBlock):
            self._send_chunk.send_nowait(event)
            self._queued += 1

    async def speak(self) -> None:
        """Send the chunks relayed here to the other replicas, in order, until cancelled."""
        async for update in self._chunks_to_send:
            updates = [update]
            while True:  # what has come meanwhile, in one round trip
                try:
                    updates.append(self._chunks_to_send.receive_nowait())
                except trio.WouldBlock:
                    break
            payloads = [p for u in updates for p in chunk_payloads(self.origin, u)]

            def notify(
                connection: Connection,
                payloads: list[str] = payloads,
                updates: list[ArtifactUpdate] = updates,
            ) -> None:
                for update in updates:  # kept for a subscriber who joins mid-answer
                    connection.execute(_KEEP, _kept(update))
                for payload in payloads:
                    connection.execute("SELECT pg_notify(%s, %s)", (CHUNKS, payload))

            with suppress(StoreUnavailable, A2AError):  # dropped, as above
                await self._pool.run(notify)
            self._sent += len(updates)
            self._progress.set()
            self._progress = trio.Event()

    async def settled(self) -> None:
        """Until the chunks queued so far are sent, SETTLE_SECONDS at most: a chunk's
        NOTIFY then commits before the move that ends its turn, and every replica hears
        the two in that order (one listening connection hears commits in order)."""
        queued = self._queued
        with trio.move_on_after(SETTLE_SECONDS):
            while self._sent < queued:
                await self._progress.wait()

    async def relayed_so_far(self, task_id: str) -> ArtifactUpdate | None:
        so_far = self._so_far.get(task_id)  # relayed here: the row may lag behind
        if so_far is not None:
            return so_far

        def select(connection: Connection) -> Row | None:
            return connection.execute(_KEPT, (task_id,)).fetchone()

        row = await self._pool.run(select)
        if row is None:
            return None
        artifact = Artifact(row["artifact_id"], row["name"], (Part("".join(row["pieces"])),))
        return ArtifactUpdate(
            task_id,
            row["context_id"],
            artifact,
            row["sequence"],
            append=False,
            last_chunk=False,
            relayed=row["relayed"],
        )

    @contextmanager
    def subscribe(self, task_id: str, listener: Listener) -> Iterator[None]:
        seen = self._seen.get(task_id, _Seen(0, 0))
        self._seen[task_id] = _Seen(seen.listeners + 1, seen.sequence)
        try:
            with self._by_task.subscribe(task_id, listener):
                yield
        finally:
            seen = self._seen[task_id]
            if seen.listeners == 1:
                del self._seen[task_id]
            else:
                self._seen[task_id] = _Seen(seen.listeners - 1, seen.sequence)

    def subscribe_all(self, listener: Listener) -> AbstractContextManager[None]:
        return self._everyone.subscribe_all(listener)

    def _hand(self, event: TaskEvent) -> None:
        """To the task's listeners, unless they have had it (a NOTIFY of an event
        published here, or caught up twice)."""
        if self._so_far:  # a move after chunks ends their turn, wherever it was made
            self._so_far.drop(event.task_id)
        seen = self._seen.get(event.task_id)
        if seen is None or event.sequence <= seen.sequence:
            return
        self._seen[event.task_id] = _Seen(seen.listeners, event.sequence)
        self._by_task.publish(event)

    async def listen(self) -> None:
        """Hear the other replicas' events until cancelled. After the connection broke,
        listen again and catch the listeners up on what they missed meanwhile."""
        retry = FIRST_RETRY
        while True:
            try:
                with await self._pool.listener(CHANNEL, CHUNKS) as connection:
                    await self._catch_up({t: seen.sequence for t, seen in self._seen.items()})
                    retry = FIRST_RETRY
                    await self._hear(connection)
            except (psycopg.OperationalError, psycopg.InterfaceError) as error:
                self._pool.note_down(self._pool.reason(error))
            except StoreUnavailable:
                pass  # the pool has logged it
            await trio.sleep(retry)
            retry = min(retry * 2, LAST_RETRY)

    async def _hear(self, connection: Connection) -> None:
        pgconn = connection.pgconn
        while True:
            await trio.lowlevel.wait_readable(pgconn.socket)
            pgconn.consume_input()  # OperationalError once the server has gone
            heard: dict[str, int] = {}
            while (notify := pgconn.notifies()) is not None:
                if notify.relname == CHUNKS_NAME:
                    self._heard_chunk(notify.extra)
                    continue
                notified = parse_notification(notify.extra)
                if notified is None:
                    self._ignored()
                    continue
                task_id, sequence = notified
                heard[task_id] = max(heard.get(task_id, 0), sequence)
            await self._catch_up(
                {
                    task_id: seen.sequence
                    for task_id, sequence in heard.items()
                    if (seen := self._seen.get(task_id)) is not None and sequence > seen.sequence
                }
            )

    def _heard_chunk(self, payload: bytes) -> None:
        """A piece of a chunk another replica relayed: to the task's listeners here once
        whole, if it has any."""
        chunk = self._chunks.take(payload)
        if chunk is False:
            self._ignored()
        elif isinstance(chunk, ArtifactUpdate) and chunk.task_id in self._seen:
            self._by_task.relay(chunk, keep=False)  # the calling replica keeps it

    async def _catch_up(self, wanted: Mapping[str, int]) -> None:
        """Read each task's events numbered past the one given, in order, and hand them on."""
        if not wanted:
            return

        def select(connection: Connection) -> list[Row]:
            return connection.execute(_EVENTS, (list(wanted), list(wanted.values()))).fetchall()

        events = [
            event_of(
                row["task_id"], row["context_id"], row["sequence"], row["event"], row["relayed"]
            )
            for row in await self._pool.run(select)
        ]
        for event in events:
            self._hand(event)


def _kept(update: ArtifactUpdate) -> dict[str, object]:
    text = "".join(part.text for part in update.artifact.parts)
    return {
        "task": update.task_id,
        "artifact": update.artifact.artifact_id,
        "name": update.artifact.name,
        "sequence": update.sequence,
        "relayed": update.relayed,
        "append": update.append,
        "pieces": [Json(text)],
    }


# A chunk joins the answer so far (a first chunk begins it again), while its task works.
_KEEP: LiteralString = """
INSERT INTO a2a_task_relays AS r (task_id, artifact_id, name, sequence, relayed, pieces)
SELECT %(task)s, %(artifact)s, %(name)s, %(sequence)s, %(relayed)s, %(pieces)s::json[]
WHERE EXISTS (SELECT 1 FROM a2a_tasks WHERE id = %(task)s AND state = 'working')
ON CONFLICT (task_id) DO UPDATE SET
    pieces = CASE WHEN %(append)s AND r.artifact_id = EXCLUDED.artifact_id
                  THEN r.pieces || EXCLUDED.pieces ELSE EXCLUDED.pieces END,
    artifact_id = EXCLUDED.artifact_id,
    name = EXCLUDED.name,
    sequence = EXCLUDED.sequence,
    relayed = EXCLUDED.relayed
"""

_KEPT: LiteralString = """
SELECT r.artifact_id, r.name, r.sequence, r.relayed, r.pieces, t.context_id
FROM a2a_task_relays r JOIN a2a_tasks t ON t.id = r.task_id
WHERE r.task_id = %s
"""


def parse_notification(payload: bytes) -> tuple[str, int] | None:
    """The task id and event number a NOTIFY carries (`<task id> <number>`), or None for
    one that is none of ours: any role that can connect may NOTIFY on the channel."""
    try:
        task_id, _, number = payload.decode().rpartition(" ")
    except UnicodeDecodeError:
        return None
    # Ten digits at most: no sign, no other script's digits, no 4,000-digit int().
    if not (0 < len(task_id) <= MAX_ID_CHARS and re.fullmatch("[0-9]{1,10}", number)):
        return None
    sequence = int(number)
    return (task_id, sequence) if sequence <= _MAX_SEQUENCE else None


_EVENTS: LiteralString = """
SELECT e.task_id, t.context_id, e.sequence, e.event, e.relayed
FROM unnest(%s::text[], %s::integer[]) AS w(task_id, after)
JOIN a2a_task_events e ON e.task_id = w.task_id AND e.sequence > w.after
JOIN a2a_tasks t ON t.id = e.task_id
ORDER BY e.task_id, e.sequence
"""
