"""Push lookups: in threads of their own, each caller's share held until its threads end."""

from __future__ import annotations

import ipaddress

import trio
import trio.testing

from n8n_a2a.push.lookups import LOOKUP_THREADS, Lookups, system_lookup
from tests.support.push import Blackhole, Resolver

PUBLIC = ipaddress.ip_address("93.184.215.14")
LOOPBACK = ipaddress.ip_address("127.0.0.1")


async def test_names_that_never_answer_hold_push_threads_never_the_webhooks() -> None:
    blackhole = Blackhole(Resolver({}).lookup)
    lookups = Lookups(lookup=blackhole)
    default = trio.to_thread.current_default_thread_limiter()
    try:
        async with trio.open_nursery() as nursery:
            for n in range(60):
                nursery.start_soon(lookups.resolve, f"h{n}.blackhole.test", 443)
            await trio.testing.wait_all_tasks_blocked()
            held = lookups.threads.statistics()
            assert held.borrowed_tokens == LOOKUP_THREADS
            assert held.tasks_waiting == 60 - LOOKUP_THREADS
            assert default.borrowed_tokens == 0
            # What the webhook's connections do (httpcore, on trio): it proceeds.
            assert await trio.socket.getaddrinfo("localhost", 80)
            nursery.cancel_scope.cancel()
    finally:
        blackhole.end()


async def test_an_abandoned_lookup_keeps_its_thread_until_the_lookup_ends() -> None:
    blackhole = Blackhole(Resolver({"bridge.example": [PUBLIC]}).lookup)
    lookups = Lookups(threads=1, lookup=blackhole)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(lookups.resolve, "h.blackhole.test", 443)
        await trio.testing.wait_all_tasks_blocked()
        nursery.cancel_scope.cancel()
    assert lookups.threads.borrowed_tokens == 1
    async with trio.open_nursery() as nursery:
        nursery.start_soon(lookups.resolve, "bridge.example", 443)
        await trio.testing.wait_all_tasks_blocked()
        assert lookups.threads.statistics().tasks_waiting == 1
        blackhole.end()  # the next lookup gets the thread once the abandoned one ends


async def test_a_callers_share_is_held_until_its_threads_end_others_go_on() -> None:
    blackhole = Blackhole(Resolver({"bridge.example": [PUBLIC]}).lookup)
    lookups = Lookups(per_caller=2, lookup=blackhole)
    mine = [lookups.for_caller("token:a") for _ in range(3)]
    async with trio.open_nursery() as nursery:
        for n, lookup in enumerate(mine):
            nursery.start_soon(lookup, f"h{n}.blackhole.test", 443)
        await trio.testing.wait_all_tasks_blocked()
        assert sorted((lookup.has_share, lookup.started) for lookup in mine) == [
            (False, False),
            (True, True),
            (True, True),
        ]
        assert await lookups.for_caller("token:b")("bridge.example", 443) == [PUBLIC]
        assert await lookups.for_caller(None)("bridge.example", 443) == [PUBLIC]
        nursery.cancel_scope.cancel()
    # Abandoned, its two lookups still hold the caller's share: the next one waits.
    assert lookups.threads.borrowed_tokens == 2
    async with trio.open_nursery() as nursery:
        for _ in range(2):
            nursery.start_soon(lookups.for_caller("token:a"), "bridge.example", 443)
        await trio.testing.wait_all_tasks_blocked()
        assert lookups.shares.of("token:a").statistics().tasks_waiting == 2
        blackhole.end()
    assert lookups.threads.borrowed_tokens == 0
    assert len(lookups.shares) == 0  # nothing kept of a caller with no lookup under way


async def test_the_system_lookup_answers_each_address_once() -> None:
    addresses = await trio.to_thread.run_sync(system_lookup, "localhost", 80)
    assert LOOPBACK in addresses
    assert len(addresses) == len(set(addresses))
