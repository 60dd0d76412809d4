"""Leases on running tasks, and the reaper of tasks whose replica died.

With a shared store, the replica that runs a task's call holds a lease on the task, in
the store: it takes it when it moves the task to run, and renews it here, every third of
a lease, for as long as the call is under way. A replica that dies (SIGKILL, a lost
node) renews nothing; once its lease has run out, whichever replica's reaper comes first
ends the task failed with outcome LOST (the workflow may or may not have run), through
the executor, so that streams and blocking sends hear it like any other end. A
compare-and-set move makes sure one reaper only does.

A reaper ends only what it has watched go silent: it reaps once it has reached the
database for a whole lease without a break. A database that was down for everyone (an
outage, a restart) left every lease run out, the live replicas' too; each live replica
renews its leases first thing when the database is back (a failed round is tried again
within a second), well within the lease every other reaper then watches, and records
its calls' verdicts (call.py waits for the store until the call's own webhook timeout).
A replica that really died renews nothing and is found out a lease after the database
is reachable. A replica cut off alone while the others reach the database loses its
tasks as a dead one does: nobody can tell the two apart, and its late verdict then
loses its compare-and-set. Finished tasks past their time to live are deleted from
here too, and tasks left waiting for input past ADAPTER_INPUT_TTL by a replica gone
since are ended.
"""

from __future__ import annotations

import logging
from typing import Protocol

import trio

from ..core.errors import StoreUnavailable
from ..store import Leases

logger = logging.getLogger(__name__)

#: Seconds between two expiries of finished tasks, on each replica.
EXPIRY_INTERVAL = 60.0
#: The longest pause before a round that failed (the store out of reach) is tried again.
RETRY_PAUSE = 1.0


class Runner(Protocol):
    """The executor, as the reaper sees it."""

    @property
    def running(self) -> tuple[str, ...]: ...

    async def lose(self, task_id: str) -> bool: ...

    async def end_wait(self, task_id: str, version: int) -> bool: ...


class Takeover(Protocol):
    """Who takes over what a dead replica did for a task besides its call (its push
    deliveries), so that the task's end reaches them."""

    async def take_over(self, task_id: str) -> None:
        """Before the task is ended here."""

    def stand_down(self, task_id: str) -> None:
        """It had ended already: nothing to take over after all."""


async def keep_leases(
    leases: Leases, runner: Runner, lease_seconds: float, takeover: Takeover | None = None
) -> None:
    """Renew this replica's leases, end the tasks whose replica died, expire finished
    tasks; until cancelled. A store out of reach skips a round (it logs that itself), is
    tried again within RETRY_PAUSE, and starts the reaper's watch anew."""
    expired_at = -EXPIRY_INTERVAL
    watching_since: float | None = trio.current_time()
    while True:
        pause = lease_seconds / 3
        try:
            await leases.renew(runner.running)
            watching_since = trio.current_time() if watching_since is None else watching_since
            if trio.current_time() - watching_since >= lease_seconds:
                await _reap(leases, runner, takeover)
            if trio.current_time() - expired_at >= EXPIRY_INTERVAL:
                await leases.expire()
                expired_at = trio.current_time()
        except StoreUnavailable:
            watching_since = None  # what went silent meanwhile was not seen to
            pause = min(pause, RETRY_PAUSE)
        await trio.sleep(pause)


async def _reap(leases: Leases, runner: Runner, takeover: Takeover | None) -> None:
    """End the tasks whose replica died, and the waits of a replica gone since."""
    for task_id in await leases.lapsed():
        if takeover is not None:
            await takeover.take_over(task_id)
        if not await runner.lose(task_id) and takeover is not None:
            takeover.stand_down(task_id)
    # The replica that made a task wait ends the wait on time; this is for the waits of a
    # replica gone since.
    for task_id, version in await leases.overdue_waits():
        await runner.end_wait(task_id, version)
