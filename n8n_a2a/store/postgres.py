"""The shared task store: tasks in PostgreSQL, their events across replicas by LISTEN/NOTIFY.

Any replica answers for any task. A move is one statement: a compare-and-set UPDATE on
the task's version (and on the states the lifecycle lets it leave), the insert of its
events into `a2a_task_events`, and a NOTIFY of the task's id and latest event number, all
committed together or not at all. A replica that hears a NOTIFY for a task someone there
listens to reads the events it has not delivered yet and hands them to its listeners, so
the payload stays small and the row stays the truth. Events a replica publishes itself
reach its listeners at once; the NOTIFY that comes back is then recognised by its number
and costs nothing. Any role that can connect may NOTIFY on the channel too: a payload that
is not a task id and an event number is counted and ignored.

psycopg from trio: psycopg's async API runs on asyncio only. Here its sync API runs in
worker threads, one statement (or one short transaction) per hop, on a bounded pool of
connections: each thread holds one connection for the length of one piece of work, and a
trio semaphore (not a blocked thread) makes the rest wait their turn. A hop costs about
0.1 ms, an eighth of a move; in exchange it keeps to psycopg's public, documented API
(no private asyncio shims, no wire protocol of our own), and `trio.to_thread` lets a
statement that has started finish even when its caller is cancelled, so a cancel never
leaves a connection half-way through a transaction.
Measured with `bench/store.py` on the project's 2-core machine, other engineers' tests
running beside it (noisy: the load average was about 3): the store alone on a local
PostgreSQL 18 with durable settings, 64 trio tasks each creating a task and moving it
twice, as fast as they can:

    pool  4: 1,598 store ops/s (1,066 moves/s), a move p50 39.3 ms, p99 75.4 ms
    pool  8: 1,826 store ops/s (1,217 moves/s), a move p50 30.9 ms, p99 75.6 ms  (default)
    pool 16: 1,790 store ops/s (1,193 moves/s), a move p50 32.5 ms, p99 80.5 ms

At 64 tasks a move mostly waits its turn (64 movers, 8 connections, each commit a WAL
flush); a lone move takes 0.8 ms (p99 1.4 ms) when the flush is out of the way (fsync
off), about 7 ms with this machine's disk flushing each commit; the hop to a thread and
back is about 0.1 ms of it (89 to 158 µs measured). Four connections do as well as
sixteen: the disk and the two cores bound it, not the pool.

The listening connection needs no thread: trio waits on its socket
(`trio.lowlevel.wait_readable`) and psycopg's libpq wrapper (`Connection.pgconn`, public)
reads the notifications.

When the database cannot be reached every operation raises StoreUnavailable (-32000 with
the reason, which names but never quotes the pieces of the URL) after at most one attempt
to connect, nothing half-written; the pool reconnects by itself when the database is back,
and so does the listener, which then catches its listeners up from the events table.
"""

from __future__ import annotations

import functools
import itertools
import logging
import re
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, asynccontextmanager, contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, LiteralString, TypeVar

import psycopg
import trio
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import dict_row
from psycopg.types.json import Json, Jsonb

from .. import lifecycle
from ..protocol.errors import A2AError
from ..protocol.model import ListTasks, Task, TaskEvent, TaskPage, TaskState, TaskStatus
from ..protocol.params import MAX_ID_CHARS
from . import MAX_PAGE_BYTES, Change, Listener, Moved, StoreUnavailable, change_events
from .documents import (
    artifact_doc,
    artifact_of,
    event_doc,
    event_of,
    message_doc,
    message_of,
)
from .memory import MemoryTaskEvents, utc_now
from .pages import decode_cursor, encode_cursor, fit
from .schema import migrate

logger = logging.getLogger(__name__)

T = TypeVar("T")
Row = dict[str, Any]
Connection = psycopg.Connection[Row]

#: Connections (and worker threads) per replica; see the measurements above.
POOL_SIZE = 8
#: The channel every replica listens on.
CHANNEL = "a2a_task_events"
#: The advisory lock the expiry takes, so that one replica at a time deletes.
EXPIRY_LOCK = 0x61326165
#: Seconds a replica stops trying after a failed connect, answering at once instead.
_PAUSE_AFTER_FAILURE = 0.5
#: Backoff between attempts to prepare the schema or to listen again, in seconds.
_FIRST_RETRY, _LAST_RETRY = 0.25, 2.0
#: Finished tasks one expiry deletes at most (the next one takes the rest).
_EXPIRY_BATCH = 5000
#: The largest event number: `a2a_task_events.sequence` is an integer.
_MAX_SEQUENCE = 2**31 - 1

_CONNECT = {
    "autocommit": True,
    "connect_timeout": 5,
    # A dead peer is noticed in seconds, not at the kernel's two hours.
    "keepalives": 1,
    "keepalives_idle": 5,
    "keepalives_interval": 2,
    "keepalives_count": 3,
    "application_name": "n8n-a2a",
}
# Times come back in UTC whatever the server's zone; no statement runs past 10 s.
_SESSION = "SET TIME ZONE 'UTC'; SET statement_timeout = 10000"

_TASK_COLUMNS = (
    "id, context_id, owner, state, status_timestamp, status_message, history, artifacts, "
    "metadata, version"
)


def _reason(error: BaseException, url: str) -> str:
    """What went wrong, in one short line, each piece of the store's URL in it replaced by
    its name: libpq's messages quote the host, port, user and database, psycopg's even the
    password, and the reason goes to the logs, to /readyz and to callers."""
    pattern, names = _url_pieces(url)

    def name(found: re.Match[str]) -> str:
        return names[next(i for i, piece in enumerate(found.groups()) if piece is not None)]

    lines = pattern.sub(name, str(error)).strip().splitlines()
    return (lines[0] if lines else type(error).__name__)[:200]


@functools.lru_cache(maxsize=4)
def _url_pieces(url: str) -> tuple[re.Pattern[str], tuple[str, ...]]:
    """A pattern that finds each piece of a connection URL (the longest first, in any case),
    and each one's name: every value libpq reads from it, each item of a list of them (a
    list of hosts), the user and password as written, percent-encoded; and the address
    libpq names beside a host it resolved."""
    try:
        conninfo = {key: str(value) for key, value in conninfo_to_dict(url).items()}
    except psycopg.Error:
        raise ValueError("the store URL is not a valid connection URL") from None
    pieces = {url: "<store url>"}
    userinfo, at, _ = url.partition("://")[2].partition("@")
    user, _, password = userinfo.partition(":") if at else ("", "", "")
    pieces |= {user: "<user>", password: "<password>"}
    for key, value in conninfo.items():
        pieces |= dict.fromkeys((value, *value.split(",")), f"<{key}>")
    found = sorted(filter(None, pieces), key=len, reverse=True)
    # The password is found anywhere; the rest only where it stands alone, or a user named
    # "a" would take every "a" of the message with it.
    passwords = {password, conninfo.get("password")}
    alternatives = [
        re.escape(piece) if piece in passwords else rf"(?<!\w){re.escape(piece)}(?!\w)"
        for piece in found
    ]
    alternatives.append(r"\([0-9A-F:.]*[:.][0-9A-F:.]*\)")  # "(10.0.0.7)"
    pattern = re.compile("|".join(f"({one})" for one in alternatives), re.IGNORECASE)
    return pattern, (*(pieces[piece] for piece in found), "(<address>)")


class Pool:
    """A bounded set of connections to one database, each used by one worker thread at a time."""

    def __init__(self, url: str, size: int = POOL_SIZE) -> None:
        _url_pieces(url)  # ValueError now, not at the first failure it must tell of
        self._url = url
        self._idle: list[Connection] = []
        self._slots = trio.Semaphore(size)
        self._threads = trio.CapacityLimiter(size)
        self._paused_until = 0.0
        self._down: str | None = None
        #: Why the store is not ready yet (None once its schema is in place).
        self.problem: str | None = "not connected yet"

    async def prepare(self) -> int:
        """Connect and bring the schema up to date; the schema version. Raises
        StoreUnavailable if the database cannot be reached."""
        version = await self._run(migrate, ready=False)
        self.problem = None
        return version

    async def run(self, work: Callable[[Connection], T]) -> T:
        """`work` with a connection, in a worker thread; StoreUnavailable if the database
        cannot be reached (or the store is not ready)."""
        if self.problem is not None:
            raise StoreUnavailable(f"not ready: {self.problem}")
        return await self._run(work, ready=True)

    async def _run(self, work: Callable[[Connection], T], *, ready: bool) -> T:
        async with self._slots:
            idle = self._idle.pop() if self._idle else None
            if idle is None and trio.current_time() < self._paused_until:
                raise StoreUnavailable(f"PostgreSQL: {self._down}")
            try:
                connection, result = await trio.to_thread.run_sync(
                    _with_connection, self._url, idle, work, limiter=self._threads
                )
            except _Broken as broken:
                # The others idle beside it most likely broke with it (a restart).
                stale, self._idle = self._idle, []
                for other in stale:
                    other.close()
                self._paused_until = trio.current_time() + _PAUSE_AFTER_FAILURE
                self.note_down(broken.reason)
                if not ready:
                    self.problem = broken.reason
                raise StoreUnavailable(f"PostgreSQL: {broken.reason}") from None
            self._idle.append(connection)
            self.note_up()
            if isinstance(result, _Raised):
                raise result.error
            return result

    def note_down(self, reason: str) -> None:
        """Log the first failure of a run of them, with why."""
        if self._down is None:
            logger.warning(
                "task store unavailable: %s",
                reason,
                extra={"fields": {"event": "store_down", "reason": reason}},
            )
        self._down = reason

    def reason(self, error: BaseException) -> str:
        """Why the database failed, told without any piece of its URL."""
        return _reason(error, self._url)

    def note_up(self) -> None:
        """Log that the database is back, once, after a failure."""
        if self._down is not None:
            logger.info("task store available again", extra={"fields": {"event": "store_up"}})
            self._down = None

    async def listener(self) -> Connection:
        """A connection of its own that LISTENs on the events channel."""
        try:
            return await trio.to_thread.run_sync(_listening, self._url)
        except _Broken as broken:
            self.note_down(broken.reason)
            raise StoreUnavailable(f"PostgreSQL: {broken.reason}") from None

    async def close(self) -> None:
        idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()


@dataclass(frozen=True, slots=True)
class _Raised:
    """What the work raised, on a connection that is still good (an unknown task, input
    PostgreSQL cannot hold): carried out of the thread so the connection goes back."""

    error: Exception


class _Broken(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _connect(url: str) -> Connection:
    connection = psycopg.connect(url, row_factory=dict_row, **_CONNECT)  # type: ignore[arg-type]
    connection.execute(_SESSION)
    return connection


def _with_connection(
    url: str, connection: Connection | None, work: Callable[[Connection], T]
) -> tuple[Connection, T | _Raised]:
    """In a worker thread: connect if need be, then do the work. A connection that broke
    is closed, never returned to the pool; any other error goes back with it."""
    if connection is None:
        try:
            connection = _connect(url)
        except psycopg.Error as error:  # refused, unknown host or database, bad URL
            raise _Broken(_reason(error, url)) from error
    try:
        return connection, work(connection)
    except (psycopg.OperationalError, psycopg.InterfaceError) as error:
        connection.close()
        raise _Broken(_reason(error, url)) from error
    except psycopg.DataError as error:
        # What PostgreSQL cannot hold (a NUL character in an id): the request's fault.
        refused = A2AError.invalid_params(f"The task store cannot keep this: {_reason(error, url)}")
        return connection, _Raised(refused)
    except Exception as error:
        return connection, _Raised(error)


def _listening(url: str) -> Connection:
    try:
        connection = _connect(url)
        connection.execute(f"LISTEN {CHANNEL}")
    except psycopg.Error as error:
        raise _Broken(_reason(error, url)) from error
    return connection


def _task_of(row: Row) -> Task:
    return Task(
        id=row["id"],
        context_id=row["context_id"],
        status=TaskStatus(
            TaskState(row["state"]),
            row["status_timestamp"],
            None if row["status_message"] is None else message_of(row["status_message"]),
        ),
        history=tuple(message_of(m) for m in row["history"]),
        artifacts=tuple(artifact_of(a) for a in row["artifacts"]),
        metadata=row["metadata"],
        version=row["version"],
        owner=row["owner"],
    )


def _leaves_for(to: TaskState) -> list[str]:
    """The states a task may be moved to `to` from: the lifecycle decides, the UPDATE checks."""
    return [state.value for state in TaskState if lifecycle.may_move(state, to)]


@dataclass(frozen=True, slots=True)
class _Seen:
    """Where one task's listeners in this replica are: how many, and the last event number
    handed to them."""

    listeners: int
    sequence: int


class PostgresTaskStore:
    """Tasks in PostgreSQL, moved compare-and-set; also this replica's leases on them."""

    def __init__(
        self,
        pool: Pool,
        *,
        replica: str | None = None,
        lease_seconds: float = 15.0,
        ttl_seconds: float = 3600.0,
        clock: Callable[[], datetime] = utc_now,
        max_page_bytes: int = MAX_PAGE_BYTES,
        input_ttl: float = 86400.0,
    ) -> None:
        self.pool = pool
        self._max_page_bytes = max_page_bytes
        #: Who holds the leases this replica takes: unique to this process's life.
        self.replica = replica or str(uuid.uuid4())
        self._lease = lease_seconds
        self._input_ttl = input_ttl
        self._ttl = ttl_seconds
        self._clock = clock

    async def create(self, task: Task) -> None:
        def insert(connection: Connection) -> None:
            connection.execute(
                "INSERT INTO a2a_tasks (id, context_id, owner, state, status_timestamp,"
                " status_message, history, artifacts, metadata, version, lease_holder,"
                " lease_until)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s::json[], %s::json[], %s, %s, %s,"
                " now() + %s * interval '1 second')",
                (
                    task.id,
                    task.context_id,
                    task.owner,
                    task.status.state.value,
                    task.status.timestamp,
                    None if task.status.message is None else Json(message_doc(task.status.message)),
                    [Json(message_doc(m)) for m in task.history],
                    [Json(artifact_doc(a)) for a in task.artifacts],
                    Jsonb(task.metadata),
                    task.version,
                    self.replica,
                    self._lease,
                ),
            )

        await self.pool.run(insert)

    async def get(self, task_id: str) -> Task:
        def select(connection: Connection) -> Row | None:
            return connection.execute(
                f"SELECT {_TASK_COLUMNS} FROM a2a_tasks WHERE id = %s", (task_id,)
            ).fetchone()

        row = await self.pool.run(select)
        if row is None:
            raise A2AError.task_not_found(task_id)
        return _task_of(row)

    async def move(self, task_id: str, version: int, change: Change) -> Moved | None:
        events = change_events(task_id, "", version, change)
        running = not (change.state.is_terminal or change.state.is_interrupted)
        parameters = {
            "id": task_id,
            "from": version,
            "to": events[-1].sequence,
            "leaves": _leaves_for(change.state),
            "state": change.state.value,
            "timestamp": change.timestamp,
            "message": None if change.message is None else Json(message_doc(change.message)),
            # The caller's message that starts a next turn, then the status message.
            "said": [
                Json(message_doc(m))
                for m in (*change.history, *((change.message,) if change.message else ()))
            ],
            "made": [] if change.artifact is None else [Json(artifact_doc(change.artifact))],
            "metadata": Jsonb(change.metadata or {}),
            "finished": change.timestamp if change.state.is_terminal else None,
            # The replica that moves a task to run takes its lease; one that ends it, or
            # makes it wait for the caller, lets it go.
            "holder": self.replica if running else None,
            "lease": self._lease if running else None,
            # A question asked: how long the caller has to answer, on the database's clock.
            "wait": self._input_ttl if change.state is TaskState.INPUT_REQUIRED else None,
            "sequences": [event.sequence for event in events],
            "events": [Json(event_doc(event)) for event in events],
            "channel": CHANNEL,
        }

        def update(connection: Connection) -> Row | None:
            row = connection.execute(_MOVE, parameters).fetchone()
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
        task = _task_of(row)
        return Moved(task, change_events(task.id, task.context_id, version, change))

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
        views = (_task_of(row).with_history_length(query.history_length) for row in rows)
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

    async def renew(self, task_ids: Sequence[str]) -> None:
        """Extend this replica's leases on the tasks whose calls it runs."""
        if not task_ids:
            return

        def update(connection: Connection) -> None:
            connection.execute(
                "UPDATE a2a_tasks SET lease_until = now() + %s * interval '1 second'"
                " WHERE id = ANY(%s) AND lease_holder = %s",
                (self._lease, list(task_ids), self.replica),
            )

        await self.pool.run(update)

    async def lapsed(self) -> tuple[str, ...]:
        """Tasks whose replica stopped renewing its lease: it died, or lost the database
        for longer than a lease. Oldest first, a bounded batch."""

        def select(connection: Connection) -> tuple[str, ...]:
            rows = connection.execute(
                "SELECT id FROM a2a_tasks WHERE lease_until < now() ORDER BY lease_until LIMIT 100"
            ).fetchall()
            return tuple(row["id"] for row in rows)

        return await self.pool.run(select)

    async def overdue_waits(self) -> tuple[tuple[str, int], ...]:
        """Tasks waiting for input past ADAPTER_INPUT_TTL, with their versions: whichever
        replica made them wait, and whether it still runs. A bounded batch."""

        def select(connection: Connection) -> tuple[tuple[str, int], ...]:
            rows = connection.execute(
                "SELECT id, version FROM a2a_tasks WHERE waiting_until < now()"
                " AND state = %s ORDER BY waiting_until LIMIT 100",
                (TaskState.INPUT_REQUIRED.value,),
            ).fetchall()
            return tuple((row["id"], row["version"]) for row in rows)

        return await self.pool.run(select)

    async def events_after(self, after: Mapping[str, int]) -> tuple[TaskEvent, ...]:
        """Each task's events numbered past the one given, in order."""

        def select(connection: Connection) -> list[Row]:
            return connection.execute(_EVENTS, (list(after), list(after.values()))).fetchall()

        return tuple(
            event_of(row["task_id"], row["context_id"], row["sequence"], row["event"])
            for row in await self.pool.run(select)
        )


class PostgresTaskEvents:
    """Events published here reach their listeners here at once; events made by other
    replicas arrive through LISTEN/NOTIFY and the events table. Each listener hears each
    event of its task once, in order."""

    def __init__(
        self, store: PostgresTaskStore, *, ignored: Callable[[], None] = lambda: None
    ) -> None:
        self._store = store
        #: Called for each notification on the channel that is none of ours.
        self._ignored = ignored
        self._everyone = MemoryTaskEvents()  # subscribe_all: what this replica publishes
        self._by_task = MemoryTaskEvents()  # subscribe: every event, from anywhere
        self._seen: dict[str, _Seen] = {}

    def publish(self, event: TaskEvent) -> None:
        self._everyone.publish(event)
        self._hand(event)

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
        seen = self._seen.get(event.task_id)
        if seen is None or event.sequence <= seen.sequence:
            return
        self._seen[event.task_id] = _Seen(seen.listeners, event.sequence)
        self._by_task.publish(event)

    async def listen(self) -> None:
        """Hear the other replicas' events until cancelled. After the connection broke,
        listen again and catch the listeners up on what they missed meanwhile."""
        retry = _FIRST_RETRY
        while True:
            try:
                with await self._store.pool.listener() as connection:
                    await self._catch_up({t: seen.sequence for t, seen in self._seen.items()})
                    retry = _FIRST_RETRY
                    await self._hear(connection)
            except (psycopg.OperationalError, psycopg.InterfaceError) as error:
                self._store.pool.note_down(self._store.pool.reason(error))
            except StoreUnavailable:
                pass  # the pool has logged it
            await trio.sleep(retry)
            retry = min(retry * 2, _LAST_RETRY)

    async def _hear(self, connection: Connection) -> None:
        pgconn = connection.pgconn
        while True:
            await trio.lowlevel.wait_readable(pgconn.socket)
            pgconn.consume_input()  # OperationalError once the server has gone
            heard: dict[str, int] = {}
            while (notify := pgconn.notifies()) is not None:
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

    async def _catch_up(self, wanted: Mapping[str, int]) -> None:
        """Read the events past these numbers and hand them on."""
        if wanted:
            for event in await self._store.events_after(wanted):
                self._hand(event)


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


@asynccontextmanager
async def open_postgres(
    url: str,
    *,
    lease_seconds: float = 15.0,
    ttl_seconds: float = 3600.0,
    input_ttl: float = 86400.0,
    pool_size: int = POOL_SIZE,
    ignored: Callable[[], None] = lambda: None,
) -> AsyncIterator[tuple[PostgresTaskStore, PostgresTaskEvents]]:
    """The store and its events, on a pool that connects and migrates in the background:
    until it has, the store answers StoreUnavailable and `pool.problem` says why.
    `ignored` is called for each notification on the channel that is none of ours."""
    pool = Pool(url, pool_size)
    store = PostgresTaskStore(
        pool, lease_seconds=lease_seconds, ttl_seconds=ttl_seconds, input_ttl=input_ttl
    )
    events = PostgresTaskEvents(store, ignored=ignored)
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_prepare_then_listen, pool, events)
            yield store, events
            nursery.cancel_scope.cancel()
    finally:
        with trio.CancelScope(shield=True):
            await pool.close()


async def _prepare_then_listen(pool: Pool, events: PostgresTaskEvents) -> None:
    retry = _FIRST_RETRY
    while True:
        try:
            version = await pool.prepare()
            break
        except StoreUnavailable as unavailable:
            logger.debug("task store not ready: %s", unavailable.reason)
            await trio.sleep(retry)
            retry = min(retry * 2, _LAST_RETRY)
    logger.info(
        "task store ready",
        extra={"fields": {"event": "store_ready", "schema_version": version}},
    )
    await events.listen()


_MOVE: LiteralString = """
WITH moved AS (
    UPDATE a2a_tasks SET
        state = %(state)s,
        status_timestamp = %(timestamp)s,
        status_message = %(message)s,
        history = history || %(said)s::json[],
        artifacts = artifacts || %(made)s::json[],
        metadata = metadata || %(metadata)s,
        version = %(to)s,
        finished_at = %(finished)s,
        lease_holder = %(holder)s,
        lease_until = now() + %(lease)s * interval '1 second',
        waiting_until = now() + %(wait)s * interval '1 second'
    WHERE id = %(id)s AND version = %(from)s AND state = ANY(%(leaves)s)
    RETURNING *
), logged AS (
    INSERT INTO a2a_task_events (task_id, sequence, event)
    SELECT moved.id, e.sequence, e.event
    FROM moved, unnest(%(sequences)s::integer[], %(events)s::json[]) AS e(sequence, event)
)
SELECT id, context_id, owner, state, status_timestamp, status_message, history, artifacts,
       metadata, version, pg_notify(%(channel)s, id || ' ' || version) AS notified
FROM moved
"""

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
       metadata, version
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

_EVENTS: LiteralString = """
SELECT e.task_id, t.context_id, e.sequence, e.event
FROM unnest(%s::text[], %s::integer[]) AS w(task_id, after)
JOIN a2a_task_events e ON e.task_id = w.task_id AND e.sequence > w.after
JOIN a2a_tasks t ON t.id = e.task_id
ORDER BY e.task_id, e.sequence
"""
