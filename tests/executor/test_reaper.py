"""The lease keeper: renews what runs here, ends what a dead replica left, expires."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import trio

from n8n_a2a.core.errors import StoreUnavailable
from n8n_a2a.executor.reaper import keep_leases


@dataclass
class FakeLeases:
    lapsing: list[str] = field(default_factory=list)
    renewed: list[tuple[str, ...]] = field(default_factory=list)
    expiries: int = 0
    down: bool = False
    waiting: list[tuple[str, int]] = field(default_factory=list)

    async def renew(self, task_ids: Sequence[str]) -> None:
        if self.down:
            raise StoreUnavailable("PostgreSQL: connection refused")
        self.renewed.append(tuple(task_ids))

    async def lapsed(self) -> tuple[str, ...]:
        lapsed, self.lapsing = tuple(self.lapsing), []
        return lapsed

    async def expire(self) -> None:
        self.expiries += 1

    async def overdue_waits(self) -> tuple[tuple[str, int], ...]:
        overdue, self.waiting = tuple(self.waiting), []
        return overdue


@dataclass
class FakeRunner:
    running: tuple[str, ...] = ("t-1",)
    lost: list[str] = field(default_factory=list)
    waits_ended: list[tuple[str, int]] = field(default_factory=list)

    async def lose(self, task_id: str) -> bool:
        self.lost.append(task_id)
        return True

    async def end_wait(self, task_id: str, version: int) -> bool:
        self.waits_ended.append((task_id, version))
        return True


async def test_leases_are_renewed_lost_tasks_ended_and_expiry_paced(
    autojump_clock: trio.abc.Clock,
) -> None:
    leases, runner = FakeLeases(lapsing=["t-dead"], waiting=[("t-asked", 4)]), FakeRunner()
    with trio.move_on_after(150):
        await keep_leases(leases, runner, lease_seconds=15)
    assert runner.waits_ended == [("t-asked", 4)]
    assert len(leases.renewed) == 30  # every 5 s
    assert set(leases.renewed) == {("t-1",)}
    assert runner.lost == ["t-dead"]
    assert leases.expiries == 3  # at 0, 60 and 120 s


async def test_a_store_out_of_reach_skips_a_round_and_no_more(
    autojump_clock: trio.abc.Clock,
) -> None:
    leases, runner = FakeLeases(down=True), FakeRunner()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(keep_leases, leases, runner, 3.0)
        await trio.sleep(5.5)  # rounds every second
        assert leases.renewed == []
        leases.down = False
        await trio.sleep(1)
        assert leases.renewed == [("t-1",)]
        nursery.cancel_scope.cancel()


async def test_after_an_outage_the_reaper_watches_a_whole_lease_before_it_ends_a_task(
    autojump_clock: trio.abc.Clock,
) -> None:
    """The database was down for everyone: every lease ran out, the live replicas' too.
    This replica renews its own within a second of the database's return, and ends what
    lapsed only once it has reached the database for a whole lease since."""
    leases, runner = FakeLeases(lapsing=["t-other"]), FakeRunner()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(keep_leases, leases, runner, 15.0)
        await trio.sleep(10)
        leases.down = True  # the outage, from 10 s: longer than a lease
        await trio.sleep(40)
        assert runner.lost == []  # never while it was not watching
        leases.down = False  # back at 50 s
        renewed = len(leases.renewed)
        await trio.sleep(1.01)
        assert len(leases.renewed) == renewed + 1  # renewed first thing
        await trio.sleep(13)
        assert runner.lost == []  # a lease not yet watched: a live replica renews meanwhile
        await trio.sleep(2)
        assert runner.lost == ["t-other"]  # its replica said nothing for a watched lease
        nursery.cancel_scope.cancel()


@dataclass
class FakeTakeover:
    taken_over: list[str] = field(default_factory=list)
    released: list[str] = field(default_factory=list)

    async def take_over(self, task_id: str) -> None:
        self.taken_over.append(task_id)

    def stand_down(self, task_id: str) -> None:
        self.released.append(task_id)


async def test_a_lost_task_is_taken_over_first_and_stood_down_if_it_had_ended(
    autojump_clock: trio.abc.Clock,
) -> None:
    class EndedAlready(FakeRunner):
        async def lose(self, task_id: str) -> bool:
            await super().lose(task_id)
            return task_id != "t-ended"

    leases, runner = FakeLeases(lapsing=["t-dead", "t-ended"]), EndedAlready()
    takeover = FakeTakeover()
    with trio.move_on_after(16):  # the reaper watches a lease first
        await keep_leases(leases, runner, 15, takeover)
    assert takeover.taken_over == runner.lost == ["t-dead", "t-ended"]
    assert takeover.released == ["t-ended"]
