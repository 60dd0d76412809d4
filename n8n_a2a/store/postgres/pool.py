"""The connections to the shared store's database, and the worker threads that use them.

psycopg from trio: psycopg's async API runs on asyncio only. Here its sync API runs in
worker threads, one statement (or one short transaction) per hop, on a bounded pool of
connections: each thread holds one connection for the length of one piece of work, and a
trio semaphore (not a blocked thread) makes the rest wait their turn. A hop costs about
0.1 ms, an eighth of a move; in exchange it keeps to psycopg's public, documented API
(no private asyncio shims, no wire protocol of our own), and `trio.to_thread` lets a
statement that has started finish even when its caller is cancelled, so a cancel never
leaves a connection half-way through a transaction. What a pool size costs and gives:
bench/README.md, under `store.py`.

When the database cannot be reached every operation raises StoreUnavailable (-32000 with
the reason, which names but never quotes the pieces of the URL) after at most one attempt
to connect, nothing half-written; the pool reconnects by itself when the database is back.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import psycopg
import trio
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import dict_row
from psycopg.types.json import set_json_loads

from ...core.errors import StoreUnavailable
from ...protocol.errors import A2AError
from ...protocol.writing import dump
from ..documents import stored_json
from .schema import migrate

logger = logging.getLogger(__name__)

T = TypeVar("T")
Row = dict[str, Any]
Connection = psycopg.Connection[Row]

#: Connections (and worker threads) per replica; measured in bench/README.md.
POOL_SIZE = 8
#: A connection whose piece of work sent and read more JSON than this (a file's, in a
#: document) is closed once the work is done, not kept: libpq keeps the buffers it grew
#: for them for as long as the connection lives (a 20 MiB reply left each connection that
#: carried it 27 MiB bigger for good: bench/probes/whole_file.py --postgres).
LARGE_BYTES = 1 << 20
#: Backoff between attempts to prepare the schema or to listen again, in seconds.
FIRST_RETRY, LAST_RETRY = 0.25, 2.0
#: Seconds a replica stops trying after a failed connect, answering at once instead.
_PAUSE_AFTER_FAILURE = 0.5

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
        #: Failures so far: a call that began before the last one proves nothing of now.
        self._failures = 0
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
            failures = self._failures
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
            if connection is not None:
                self._idle.append(connection)
            if failures == self._failures:
                # Under way through a failure (a restart), a query may still have finished
                # on its old connection: only one begun after the failure says it is over.
                self.note_up()
            if isinstance(result, _Raised):
                raise result.error
            return result

    def note_down(self, reason: str) -> None:
        """Log the first failure of a run of them, with why."""
        self._failures += 1
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
            self._paused_until = 0.0  # back: a new connection may be tried at once

    async def listener(self, *channels: str) -> Connection:
        """A connection of its own that LISTENs on `channels`."""
        try:
            return await trio.to_thread.run_sync(_listening, self._url, channels)
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


class _Carried(threading.local):
    """The bytes of JSON documents the piece of work this worker thread is doing has sent
    and read, as psycopg dumps and loads them."""

    size = 0


_CARRIED = _Carried()


def dumped(document: Any) -> bytes:
    """A document as a statement sends it (a Json's dumps: protocol/writing.py's, a file's
    base64 spliced in), counted."""
    data = dump(document)
    _CARRIED.size += len(data)
    return data


def _loaded(data: str | bytes) -> Any:
    _CARRIED.size += len(data)
    return stored_json(data)


def _connect(url: str) -> Connection:
    connection = psycopg.connect(url, row_factory=dict_row, **_CONNECT)  # type: ignore[arg-type]
    # A file read back is a slice of its document's bytes, not a str and bytes of its own.
    set_json_loads(_loaded, connection)
    connection.execute(_SESSION)
    return connection


def _with_connection(
    url: str, connection: Connection | None, work: Callable[[Connection], T]
) -> tuple[Connection | None, T | _Raised]:
    """In a worker thread: connect if need be, then do the work; the connection to keep
    for the next (None: closed, as one that carried more than LARGE_BYTES is). A
    connection that broke is closed, never returned to the pool; any other error goes
    back with it."""
    if connection is None:
        try:
            connection = _connect(url)
        except psycopg.Error as error:  # refused, unknown host or database, bad URL
            raise _Broken(_reason(error, url)) from error
    _CARRIED.size = 0
    outcome: T | _Raised
    try:
        outcome = work(connection)
    except (psycopg.OperationalError, psycopg.InterfaceError) as error:
        connection.close()
        raise _Broken(_reason(error, url)) from error
    except psycopg.DataError as error:
        # What PostgreSQL cannot hold (a NUL character in an id): the request's fault.
        refused = A2AError.invalid_params(f"The task store cannot keep this: {_reason(error, url)}")
        outcome = _Raised(refused)
    except Exception as error:
        outcome = _Raised(error)
    if _CARRIED.size > LARGE_BYTES:
        connection.close()
        return None, outcome
    return connection, outcome


def _listening(url: str, channels: tuple[str, ...]) -> Connection:
    try:
        connection = _connect(url)
        for channel in channels:
            connection.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
    except psycopg.Error as error:
        raise _Broken(_reason(error, url)) from error
    return connection
