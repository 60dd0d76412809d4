"""Push hosts looked up in threads of their own, never in those the webhook's calls need.

trio looks a name up in a worker thread under one process-wide limiter (40 threads),
which httpx's connections to the webhook use too. A name whose DNS never answers holds
its thread for the system resolver's whole timeout, however soon the one who asked stops
waiting: enough such names, and the webhook's own lookups wait. So push lookups run under
a small limiter of their own. An abandoned lookup keeps its token until its thread ends,
which is what bounds the threads.

When a config is made, its lookup also takes a token of its caller's share (anonymous
callers share one), kept the same way: one caller's names cannot hold every thread.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, cast

import trio

from ..core.owners import Owner
from ..protocol.push import literal_address
from .limiters import KeyedLimiters

if TYPE_CHECKING:  # imported by the first address judged: a start that never pushes
    from ..protocol.addresses import IPAddress

#: Threads looking push hosts up at once: configs being made and deliveries together.
LOOKUP_THREADS = 8
#: Lookups one caller's new configs may have under way at once; the next waits its turn.
LOOKUPS_PER_CALLER = 2

#: Looks a name up, blocking: its addresses, in the order to try them; OSError if none.
BlockingLookup = Callable[[str, int], Sequence["IPAddress"]]


def system_lookup(host: str, port: int) -> list[IPAddress]:
    """The system resolver's addresses for the host, each once. Blocks: run it in a thread."""
    found: list[IPAddress] = []
    for *_, sockaddr in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
        address = literal_address(str(sockaddr[0]))
        if address is not None and address not in found:
            found.append(address)
    return found


class Lookups:
    """The threads push lookups run in, and each caller's share of them."""

    def __init__(
        self,
        threads: int = LOOKUP_THREADS,
        per_caller: int = LOOKUPS_PER_CALLER,
        *,
        lookup: BlockingLookup = system_lookup,
    ) -> None:
        """`lookup` replaces the system resolver (tests)."""
        self.threads = trio.CapacityLimiter(threads)
        self.shares: KeyedLimiters[Owner] = KeyedLimiters(per_caller)
        self._lookup = lookup

    async def resolve(self, host: str, port: int) -> Sequence[IPAddress]:
        """A delivery's lookup (a guard.Resolve): its attempt's deadline bounds the wait."""
        return await self._run(host, port, self.threads)

    def for_caller(self, owner: Owner) -> CallerLookup:
        """A lookup for a config the caller makes."""
        return CallerLookup(self, owner)

    async def _run(
        self, host: str, port: int, limiter: trio.CapacityLimiter
    ) -> Sequence[IPAddress]:
        return await trio.to_thread.run_sync(
            self._lookup, host, port, limiter=limiter, abandon_on_cancel=True
        )


class CallerLookup:
    """One lookup for a config a caller makes (a guard.Resolve).

    It is also the limiter its thread runs under: trio takes any object with these two
    methods (its documentation says so, its annotation names CapacityLimiter only), and
    gives the tokens back when the thread ends, not when the lookup is abandoned.
    """

    def __init__(self, lookups: Lookups, owner: Owner) -> None:
        self._lookups = lookups
        self._owner = owner
        self.has_share = False  # a token of the caller's share
        self.started = False  # and a thread: a lookup that is late now is the name's doing

    async def __call__(self, host: str, port: int) -> Sequence[IPAddress]:
        return await self._lookups._run(host, port, cast(trio.CapacityLimiter, self))

    async def acquire_on_behalf_of(self, borrower: object) -> None:
        shares = self._lookups.shares
        share = shares.of(self._owner)
        try:
            await share.acquire_on_behalf_of(borrower)
        except BaseException:
            shares.forget_idle(self._owner)
            raise
        self.has_share = True
        try:
            await self._lookups.threads.acquire_on_behalf_of(borrower)
        except BaseException:
            share.release_on_behalf_of(borrower)
            shares.forget_idle(self._owner)
            raise
        self.started = True

    def release_on_behalf_of(self, borrower: object) -> None:
        self._lookups.threads.release_on_behalf_of(borrower)
        self._lookups.shares.of(self._owner).release_on_behalf_of(borrower)
        self._lookups.shares.forget_idle(self._owner)
