"""A limiter per key (a caller, an address): made when asked for, forgotten when idle."""

from __future__ import annotations

import trio

from n8n_a2a.push.limiters import KeyedLimiters


async def test_each_key_has_a_limiter_of_its_own_with_the_tokens_given() -> None:
    limiters: KeyedLimiters[str] = KeyedLimiters(2)
    first = limiters.of("a")
    assert limiters.of("a") is first and limiters.of("b") is not first
    assert first.total_tokens == 2 and len(limiters) == 2


async def test_a_limiter_is_forgotten_only_once_nobody_holds_or_waits_for_it() -> None:
    limiters: KeyedLimiters[str] = KeyedLimiters(1)
    holder, waiter = object(), object()
    await limiters.of("a").acquire_on_behalf_of(holder)
    limiters.forget_idle("a")
    assert len(limiters) == 1  # held: kept
    async with trio.open_nursery() as nursery:
        nursery.start_soon(limiters.of("a").acquire_on_behalf_of, waiter)
        await trio.testing.wait_all_tasks_blocked()
        limiters.of("a").release_on_behalf_of(holder)
        limiters.forget_idle("a")
        assert len(limiters) == 1  # waited for (and now held by the waiter): kept
    limiters.of("a").release_on_behalf_of(waiter)
    limiters.forget_idle("a")
    limiters.forget_idle("never-asked-for")  # nothing to forget: no error
    assert len(limiters) == 0
