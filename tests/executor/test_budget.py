"""The memory budget's driver: waits in line, bounded; releases by the store; cancels that
leave nothing reserved."""

from __future__ import annotations

import pytest
import trio

from n8n_a2a.core.errors import AtCapacity
from n8n_a2a.executor.budget import REPLY_STEP, MemoryBudget
from n8n_a2a.store.memory import MemoryTaskStore
from tests.support.store_tasks import Ticking, finished

MiB = 1024 * 1024


class Keeper:
    """A store of finished tasks' payload sizes; releasing one frees all but 100 bytes."""

    def __init__(self, budget: MemoryBudget, **sizes: int) -> None:
        self.released: list[str] = []
        self._budget = budget
        for task_id, size in sizes.items():
            budget.keep(task_id, size)

    def release_payloads(self, task_id: str) -> int:
        self.released.append(task_id)
        return {"old": 4 * MiB, "new": 4 * MiB}[task_id] - 100


async def test_a_reservation_waits_its_turn_and_is_granted_when_room_is_given_back(
    autojump_clock: trio.abc.Clock,
) -> None:
    budget = MemoryBudget(10 * MiB, wait=5.0)
    first = await budget.reserve(8 * MiB)
    order: list[str] = []

    async def reserve(name: str, size: int) -> None:
        held = await budget.reserve(size)
        order.append(name)
        held.give_back()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(reserve, "b", 5 * MiB)
        await trio.sleep(0.1)
        nursery.start_soon(reserve, "c", 1 * MiB)  # fits, but b is first in line
        await trio.sleep(1.0)
        assert (order, budget.waiting) == ([], 2)
        first.give_back()
    assert order == ["b", "c"]
    assert (budget.held, budget.waiting) == (0, 0)


async def test_a_wait_past_the_bound_is_a_retryable_refusal_naming_the_budget(
    autojump_clock: trio.abc.Clock,
) -> None:
    budget = MemoryBudget(10 * MiB, wait=3.0)
    held = await budget.reserve(8 * MiB)
    started = trio.current_time()
    with pytest.raises(AtCapacity) as refused:
        await budget.reserve(3 * MiB)
    assert trio.current_time() - started == pytest.approx(3.0)
    message = refused.value.message
    assert "ADAPTER_MEMORY_BUDGET, 10,485,760 bytes" in message
    assert "ADAPTER_MEMORY_WAIT (3 s)" in message and "retry later" in message
    assert (budget.held, budget.waiting) == (8 * MiB, 0)
    held.give_back()
    assert budget.held == 0


async def test_the_oldest_kept_payloads_are_released_before_anyone_waits() -> None:
    budget = MemoryBudget(10 * MiB, wait=0.0)
    keeper = Keeper(budget, old=4 * MiB, new=4 * MiB)
    budget.keep_in(keeper)
    held = await budget.reserve(5 * MiB)  # 2 MiB were free: the oldest task makes room
    assert keeper.released == ["old"]
    assert (budget.held, budget.kept) == (5 * MiB, 4 * MiB + 100)
    held.give_back()


async def test_a_reservation_canceled_while_it_waits_leaves_the_line_and_holds_nothing(
    autojump_clock: trio.abc.Clock,
) -> None:
    budget = MemoryBudget(10 * MiB, wait=60.0)
    first = await budget.reserve(8 * MiB)
    with trio.move_on_after(1.0):
        await budget.reserve(5 * MiB)
    assert (budget.held, budget.waiting) == (8 * MiB, 0)
    first.give_back()
    assert budget.held == 0
    later = await budget.reserve(10 * MiB)  # the canceled ask left nothing behind it
    later.give_back()


async def test_a_passed_on_reservation_is_given_back_once_by_its_new_holder() -> None:
    budget = MemoryBudget(10 * MiB, wait=1.0)
    request = await budget.reserve(6 * MiB)
    call = request.pass_on()
    request.give_back()  # the request is done; its call still holds the bytes
    assert (budget.held, call.size) == (6 * MiB, 6 * MiB)
    call.give_back()
    call.give_back()
    assert budget.held == 0


async def test_a_reply_takes_room_a_step_ahead_and_goes_before_requests_in_line(
    autojump_clock: trio.abc.Clock,
) -> None:
    budget = MemoryBudget(16 * MiB, wait=5.0)
    request = await budget.reserve(14 * MiB)
    reply = budget.reservation()
    await reply.take(65536)
    assert reply.size == REPLY_STEP  # one ask for the first MiB, not one per piece
    small = MemoryBudget(1 * MiB, wait=5.0).reservation()
    await small.take(1)
    assert small.size == 64 * 1024  # a sixteenth of a small budget
    for _ in range(15):
        await reply.take(65536)
    assert reply.size == REPLY_STEP
    got: list[str] = []

    async def waiting_request() -> None:
        (await budget.reserve(1 * MiB)).give_back()
        got.append("request")

    async def more_reply() -> None:
        await reply.take(1 * MiB)
        await reply.take(1 * MiB)  # past the budget with the request: waits
        got.append("reply")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(waiting_request)  # 1 MiB free: it fits at once
        await trio.sleep(0.1)
        assert got == ["request"]
        nursery.start_soon(more_reply)
        await trio.sleep(0.1)
        nursery.start_soon(waiting_request)  # in line behind the reply
        await trio.sleep(1.0)
        assert got == ["request"]
        request.give_back()
    assert got == ["request", "reply", "request"]
    reply.give_back()
    assert budget.held == 0


async def test_a_reply_that_cannot_be_held_is_told_so_without_retry_later(
    autojump_clock: trio.abc.Clock,
) -> None:
    budget = MemoryBudget(2 * MiB, wait=1.0)
    reply = budget.reservation()
    with pytest.raises(AtCapacity) as refused:
        await reply.take(3 * MiB)
    assert "more than the whole memory budget (ADAPTER_MEMORY_BUDGET" in refused.value.message
    request = await budget.reserve(2 * MiB)
    with pytest.raises(AtCapacity) as refused:
        await reply.take(1)
    assert "retry later" not in refused.value.message
    request.give_back()
    reply.give_back()
    assert budget.held == 0


async def test_a_memory_store_s_finished_tasks_make_room_oldest_first() -> None:
    budget = MemoryBudget(40_000, wait=0.0)
    clock = Ticking()
    store = MemoryTaskStore(clock=clock, payloads=budget)
    budget.keep_in(store)
    old, new = (
        await finished(store, clock, "o" * 15_000),
        await finished(store, clock, "n" * 15_000),
    )
    assert budget.kept == 2 + 15_000 + 2 + 15_000
    held = await budget.reserve(20_000)
    assert "released" in (await store.get(old)).metadata
    assert "released" not in (await store.get(new)).metadata
    assert budget.kept == 2 + 2 + 15_000
    held.give_back()
