"""The call slots: taken at once when free, else waited for in line, in the order the
calls' tasks reach it; given back once; a cancel in line holds nothing."""

from __future__ import annotations

import trio
import trio.lowlevel
import trio.testing

from n8n_a2a.executor.slots import CallSlots, Slot


def test_a_free_slot_is_taken_at_the_claim_and_the_line_is_bounded() -> None:
    slots = CallSlots(total=1, max_waiting=1)
    first = slots.claim("first")
    assert (first.waited, slots.in_use, slots.waiting, slots.full) == (False, 1, 0, False)
    second = slots.claim("second")
    assert (second.waited, slots.in_use, slots.waiting, slots.full) == (True, 1, 1, True)


async def test_a_slot_taken_at_the_claim_is_not_taken_again_by_its_wait() -> None:
    slots = CallSlots(total=2, max_waiting=0)
    slot = slots.claim("call")
    await slot.wait()
    assert slots.in_use == 1
    slot.give_back()
    assert slots.in_use == 0


async def test_calls_in_line_get_their_slots_in_order() -> None:
    slots = CallSlots(total=1, max_waiting=8)
    holder = slots.claim("holder")
    ran: list[str] = []

    async def call(name: str, slot: Slot) -> None:
        await slot.wait()
        ran.append(name)
        await trio.lowlevel.checkpoint()
        slot.give_back()

    async with trio.open_nursery() as nursery:
        for name in ("a", "b", "c"):
            nursery.start_soon(call, name, slots.claim(name))
            await trio.testing.wait_all_tasks_blocked()  # in line before the next one
        assert (ran, slots.waiting) == ([], 3)
        holder.give_back()
    assert ran == ["a", "b", "c"]
    assert (slots.in_use, slots.waiting) == (0, 0)


async def test_a_place_in_line_given_back_frees_no_slot_it_does_not_hold() -> None:
    slots = CallSlots(total=1, max_waiting=1)
    holder, queued = slots.claim("holder"), slots.claim("queued")
    assert slots.full
    queued.give_back()  # it held no slot yet: the holder's stays taken
    assert slots.in_use == 1
    holder.give_back()
    assert slots.in_use == 0


def test_a_slot_is_given_back_once() -> None:
    slots = CallSlots(total=1, max_waiting=1)
    first = slots.claim("first")
    first.give_back()
    second = slots.claim("second")
    assert not second.waited
    first.give_back()  # again: it must not free the second's slot
    assert slots.in_use == 1
    assert slots.claim("third").waited


async def test_a_cancel_in_line_leaves_the_line_holding_nothing() -> None:
    slots = CallSlots(total=1, max_waiting=8)
    holder = slots.claim("holder")
    got: list[str] = []

    async def call(name: str, slot: Slot, scope: trio.CancelScope) -> None:
        with scope:
            await slot.wait()
            got.append(name)
            slot.give_back()

    cut, kept = trio.CancelScope(), trio.CancelScope()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(call, "cut", slots.claim("cut"), cut)
        nursery.start_soon(call, "kept", slots.claim("kept"), kept)
        await trio.testing.wait_all_tasks_blocked()
        cut.cancel()
        await trio.testing.wait_all_tasks_blocked()
        assert (slots.in_use, slots.waiting) == (1, 1)
        holder.give_back()
    assert got == ["kept"]
    assert (slots.in_use, slots.waiting) == (0, 0)
