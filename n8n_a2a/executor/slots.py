"""The slots webhook calls run in (ADAPTER_MAX_CONCURRENT_CALLS), and the line of sends
that wait for one, in order, up to a bound (ADAPTER_MAX_QUEUED_CALLS).

A call's slot is taken the moment its send comes when one is free, so that a
non-blocking send already answers `working`; otherwise the call gets a place in line,
and its own task waits there for its turn (`wait`). Either way the call holds it for the
webhook call alone, and gives it back when that ends, however it ends (`give_back`, as
its machine says, call.py; its driver makes sure on the way out): a verdict still
waiting for the store holds no slot. Every take and give-back of
a slot is in this module.
"""

from __future__ import annotations

import trio


class CallSlots:
    def __init__(self, total: int, max_waiting: int) -> None:
        self._limiter = trio.CapacityLimiter(total)
        self._max_waiting = max_waiting
        self._waiting = 0

    @property
    def in_use(self) -> int:
        """Slots held: webhook calls under way."""
        return int(self._limiter.borrowed_tokens)

    @property
    def waiting(self) -> int:
        """Calls in line for a slot."""
        return self._waiting

    @property
    def full(self) -> bool:
        """No slot is free and the line is as long as it may be: a new call is refused."""
        return self._limiter.available_tokens == 0 and self._waiting >= self._max_waiting

    def claim(self, call: object) -> Slot:
        """A slot for the call: taken now when one is free, else a place in line."""
        return Slot(self, call)


class Slot:
    """One call's slot, from its claim until it is given back (once)."""

    def __init__(self, slots: CallSlots, call: object) -> None:
        self._slots = slots
        self._call = call
        #: It had to wait in line: its task moves it to `working` once it has the slot.
        self.waited = slots._limiter.available_tokens == 0
        self._held = not self.waited
        if self._held:
            slots._limiter.acquire_on_behalf_of_nowait(call)
        else:
            slots._waiting += 1

    async def wait(self) -> None:
        """Wait in line for the slot, unless it was taken at once. A cancel while in line
        leaves the line, holding nothing."""
        if self._held:
            return
        try:
            await self._slots._limiter.acquire_on_behalf_of(self._call)
        finally:
            self._slots._waiting -= 1
        self._held = True

    def give_back(self) -> None:
        """Free the slot for the next in line (or leave the line); nothing the second time."""
        if self._held:
            self._held = False
            self._slots._limiter.release_on_behalf_of(self._call)
