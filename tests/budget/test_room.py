"""The memory budget's driver: waits bounded, the line asked again as room comes, releases
by the store, the request's bytes room for its reply once forwarded, and cancels that
leave nothing reserved."""

from __future__ import annotations

import pytest
import trio

from n8n_a2a.budget.room import REPLY_STEP, MemoryBudget, Reservation
from n8n_a2a.core.errors import AtCapacity
from n8n_a2a.store.memory import MemoryTaskStore
from tests.support.store_tasks import Ticking, finished

MiB = 1024 * 1024


class Keeper:
    """A store of finished tasks' payload sizes, the budget's keeper; releasing one frees
    all but 100 bytes."""

    def __init__(self, budget: MemoryBudget, **sizes: tuple[str, int]) -> None:
        self.released: list[str] = []
        self._sizes = {task_id: size for task_id, (_, size) in sizes.items()}
        budget.keep_in(self)
        for task_id, (caller, size) in sizes.items():
            budget.works_for(task_id, caller)
            budget.keep(task_id, size)

    def release_payloads(self, task_id: str) -> int:
        self.released.append(task_id)
        return self._sizes[task_id] - 100


async def reserved(budget: MemoryBudget, size: int, caller: str = "ann") -> Reservation:
    reservation = budget.reservation(caller)
    await reservation.grow(size)
    return reservation


async def test_whoever_fits_is_granted_when_room_is_given_back(
    autojump_clock: trio.abc.Clock,
) -> None:
    budget = MemoryBudget(10 * MiB, wait=5.0)
    first = await reserved(budget, 8 * MiB)
    order: list[str] = []

    async def reserve(name: str, size: int) -> None:
        held = await reserved(budget, size, name)
        order.append(name)
        held.give_back()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(reserve, "big", 11 * MiB - 1 * MiB)  # never fits beside first
        await trio.sleep(0.1)
        nursery.start_soon(reserve, "small", 1 * MiB)  # fits at once: not behind big
        await trio.sleep(1.0)
        assert (order, budget.waiting) == (["small"], 1)
        first.give_back()
    assert order == ["small", "big"]
    assert (budget.held, budget.waiting) == (0, 0)


async def test_a_wait_past_the_bound_is_a_retryable_refusal_naming_the_budget(
    autojump_clock: trio.abc.Clock,
) -> None:
    budget = MemoryBudget(10 * MiB, wait=3.0)
    held = await reserved(budget, 8 * MiB)
    started = trio.current_time()
    with pytest.raises(AtCapacity) as refused:
        await reserved(budget, 3 * MiB, "bob")
    assert trio.current_time() - started == pytest.approx(3.0)
    message = refused.value.message
    assert "ADAPTER_MEMORY_BUDGET, 10,485,760 bytes" in message
    assert "ADAPTER_MEMORY_WAIT (3 s)" in message and "retry later" in message
    assert (budget.held, budget.waiting) == (8 * MiB, 0)
    held.give_back()
    assert budget.held == 0


async def test_a_caller_s_own_oldest_results_are_released_before_it_waits() -> None:
    budget = MemoryBudget(10 * MiB, wait=0.0)
    keeper = Keeper(budget, old=("ann", 4 * MiB), new=("ann", 4 * MiB))
    held = await reserved(budget, 5 * MiB)  # 2 MiB were free: the oldest makes room
    assert keeper.released == ["old"]
    assert (budget.held, budget.kept) == (5 * MiB, 4 * MiB + 100)
    held.give_back()


async def test_another_caller_s_results_are_not_released_for_a_caller_s_send(
    autojump_clock: trio.abc.Clock,
) -> None:
    budget = MemoryBudget(10 * MiB, wait=1.0, share=5 * MiB)
    keeper = Keeper(budget, victims=("victim", 4 * MiB), more=("other", 4 * MiB))
    with pytest.raises(AtCapacity):
        await reserved(budget, 4 * MiB, "stranger")
    assert (keeper.released, budget.kept) == ([], 8 * MiB)


async def test_a_reservation_canceled_while_it_waits_leaves_the_line_and_holds_nothing(
    autojump_clock: trio.abc.Clock,
) -> None:
    budget = MemoryBudget(10 * MiB, wait=60.0)
    first = await reserved(budget, 8 * MiB)
    with trio.move_on_after(1.0):
        await reserved(budget, 5 * MiB, "bob")
    assert (budget.held, budget.waiting) == (8 * MiB, 0)
    first.give_back()
    assert budget.held == 0
    later = await reserved(budget, 10 * MiB)  # the canceled ask left nothing behind it
    later.give_back()


async def test_a_passed_on_reservation_is_given_back_once_by_its_new_holder() -> None:
    budget = MemoryBudget(10 * MiB, wait=1.0)
    request = await reserved(budget, 6 * MiB)
    call = request.pass_on()
    request.give_back()  # the request is done; its call still holds the bytes
    assert (budget.held, call.size, call.caller) == (6 * MiB, 6 * MiB, "ann")
    call.give_back()
    call.give_back()
    assert budget.held == 0


async def test_a_forwarded_request_s_bytes_are_its_reply_s_room() -> None:
    """Admitted work completes: the budget is full, yet the reply fits in what its request
    held once the request went out."""
    budget = MemoryBudget(10 * MiB, wait=0.0)
    call = await reserved(budget, 6 * MiB)
    others = await reserved(budget, 4 * MiB, "bob")
    call.forwarded()
    for _ in range(96):
        await call.take(64 * 1024)
    assert (call.size, budget.held) == (6 * MiB, 10 * MiB)
    with pytest.raises(AtCapacity):
        await call.take(1 * MiB)  # past what the request held: no room, and no wait
    others.give_back()
    call.give_back()


async def test_a_reply_takes_room_a_step_ahead_and_goes_before_requests_in_line(
    autojump_clock: trio.abc.Clock,
) -> None:
    budget = MemoryBudget(16 * MiB, wait=5.0)
    request = await reserved(budget, 14 * MiB)
    reply = budget.reservation("ann")
    await reply.take(65536)
    assert reply.size == REPLY_STEP  # one ask for the first MiB, not one per piece
    small = MemoryBudget(1 * MiB, wait=5.0).reservation("ann")
    await small.take(1)
    assert small.size == 64 * 1024  # a sixteenth of a small budget
    for _ in range(15):
        await reply.take(65536)
    assert reply.size == REPLY_STEP
    got: list[str] = []

    async def waiting_request() -> None:
        (await reserved(budget, 1 * MiB, "bob")).give_back()
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
        nursery.start_soon(waiting_request)  # behind the reply, which waits
        await trio.sleep(1.0)
        assert got == ["request"]
        request.give_back()  # room for both: the reply asked again first, then the request
    assert sorted(got) == ["reply", "request", "request"]
    reply.give_back()
    assert budget.held == 0


async def test_a_reply_that_cannot_be_held_is_told_so_without_retry_later(
    autojump_clock: trio.abc.Clock,
) -> None:
    budget = MemoryBudget(2 * MiB, wait=1.0)
    reply = budget.reservation("ann")
    with pytest.raises(AtCapacity) as refused:
        await reply.take(3 * MiB)
    assert "more than a caller's share (ADAPTER_MEMORY_SHARE" in refused.value.message
    request = await reserved(budget, 2 * MiB, "bob")
    with pytest.raises(AtCapacity) as refused:
        await reply.take(1)
    assert "retry later" not in refused.value.message
    request.give_back()
    reply.give_back()
    assert budget.held == 0


async def test_an_answer_is_held_at_once_and_given_back_as_it_is_written() -> None:
    budget = MemoryBudget(2 * MiB, wait=0.0)
    answer = budget.reservation("ann")
    answer.force(3 * MiB)
    assert budget.held == 3 * MiB
    with pytest.raises(AtCapacity):
        await reserved(budget, 1, "bob")  # new requests wait while it is held
    answer.give_back(2 * MiB)
    assert budget.held == 1 * MiB
    answer.give_back()
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
    held = await reserved(budget, 20_000, "")  # their calls' caller is not known here
    assert "released" in (await store.get(old)).metadata
    assert "released" not in (await store.get(new)).metadata
    assert budget.kept == 2 + 2 + 15_000
    held.give_back()


async def test_a_stall_of_half_read_bodies_refuses_the_least_at_once(
    autojump_clock: trio.abc.Clock,
) -> None:
    """Sixteen bodies half read, each waiting for room the others hold, would all wait
    out ADAPTER_MEMORY_WAIT: the one holding least is refused at once, the rest go on."""
    budget = MemoryBudget(10 * MiB, wait=60.0)
    outcomes: dict[str, str] = {}

    async def body(name: str) -> None:
        reservation = budget.reservation(name)
        try:
            for _ in range(6):
                await reservation.grow(1 * MiB)
                await trio.sleep(0.01)
            outcomes[name] = "read"
        except AtCapacity:
            outcomes[name] = "refused"
        finally:
            reservation.give_back()

    started = trio.current_time()
    async with trio.open_nursery() as nursery:
        for name in "abc":
            nursery.start_soon(body, name)
    assert sorted(outcomes.values()).count("read") >= 1
    assert trio.current_time() - started < 1.0  # nobody waited out the minute
    assert (budget.held, budget.waiting) == (0, 0)


async def test_without_a_keeper_no_task_s_caller_is_remembered() -> None:
    """With PostgreSQL the store keeps results: nothing here may grow a task at a time."""
    budget = MemoryBudget(10 * MiB, wait=0.0)
    budget.works_for("t-1", "ann")
    budget.keep_in(Keeper(budget))
    budget.works_for("t-2", "ann")
    budget.keep("t-1", 1 * MiB)
    budget.keep("t-2", 1 * MiB)
    assert (budget.caller_holds("ann"), budget.caller_holds("")) == (1 * MiB, 1 * MiB)
    budget.forget("t-2")
    assert budget.caller_holds("ann") == 0
