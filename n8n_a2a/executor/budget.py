"""ADAPTER_MEMORY_BUDGET's trio driver: core/budget.py's ledger, its line woken, its
releases done by the store, its waits bounded by ADAPTER_MEMORY_WAIT.

A Reservation is what one holder holds: a request body (app/admission.py takes it
before a route reads a byte; a send passes it on to its webhook call, which gives it back
when it ends) or a reply as the webhook client reads it (`take`, ahead of new requests).
A holder canceled while it waits leaves the line; one canceled while it holds gives its
bytes back in its `finally`: either way nothing stays reserved.
"""

from __future__ import annotations

import ctypes
from typing import Protocol

import trio

from ..core.budget import Granted, Ledger, Never, Release, Wait
from ..core.errors import AtCapacity

#: A reply's room grows by at least this much at a time: one ask per 1 MiB read, not
#: one per chunk.
REPLY_STEP = 1024 * 1024


#: glibc's mallopt parameter for the size from which a block is mapped on its own.
_M_MMAP_THRESHOLD = -3


def return_freed_payloads() -> None:
    """Have malloc map every block of 128 KiB or more on its own, so that a payload's
    megabytes go back to the system once freed. glibc raises that threshold as large
    blocks are freed (up to 32 MiB), and its heap then keeps what a burst of files took:
    after 16 sends of 20 MiB files RSS stayed 31 MiB over idle without it, 10 MiB with it.
    Nothing where the C library has no mallopt."""
    mallopt = getattr(ctypes.CDLL(None), "mallopt", None)
    if mallopt is not None:
        mallopt(_M_MMAP_THRESHOLD, 128 * 1024)


class Keeper(Protocol):
    """The store whose finished tasks' payloads can make room (store/memory.py)."""

    def release_payloads(self, task_id: str) -> int:
        """Release the finished task's large parts; the payload bytes that freed."""
        ...


class MemoryBudget:
    """The process's one budget for payload bytes, `budget` of them; a holder waits in
    line at most `wait` seconds."""

    def __init__(self, budget: int, wait: float) -> None:
        self._ledger = Ledger(budget)
        self._wait = wait
        self._woken: dict[object, trio.Event] = {}
        self._keeper: Keeper | None = None

    @property
    def budget(self) -> int:
        return self._ledger.budget

    @property
    def held(self) -> int:
        """Payload bytes held by requests and calls in flight."""
        return self._ledger.held

    @property
    def kept(self) -> int:
        """Payload bytes finished tasks in this process's store hold."""
        return self._ledger.kept

    @property
    def waiting(self) -> int:
        return self._ledger.waiting

    def holds(self, holder: object) -> int:
        return self._ledger.holds(holder)

    def keep_in(self, keeper: Keeper) -> None:
        """The store whose finished tasks' payloads count and can be released."""
        self._keeper = keeper

    def keep(self, task_id: str, size: int) -> None:
        """A finished task holds `size` payload bytes (the store's hook)."""
        self._ledger.keep(task_id, size)

    def forget(self, task_id: str) -> None:
        """A finished task left the store: its bytes are room (the store's hook)."""
        self._ledger.forget(task_id)
        self._wake_next()

    def reservation(self) -> Reservation:
        """A reservation holding nothing yet."""
        return Reservation(self, object())

    async def reserve(self, size: int) -> Reservation:
        """`size` bytes held (a request body's); AtCapacity naming the budget when they
        cannot be within the wait."""
        reservation = self.reservation()
        await reservation.grow(size)
        return reservation

    async def _take(self, holder: object, size: int, urgent: bool) -> None:
        ledger = self._ledger
        deadline: float | None = None  # the wait's end, once it has to wait
        try:
            while True:
                match ledger.ask(holder, size, urgent=urgent):
                    case Granted():
                        self._wake_next()
                        return
                    case Never():
                        raise AtCapacity(self._never(holder, size))
                    case Release(task_ids):
                        self._release(task_ids)
                    case Wait():
                        if deadline is None:
                            deadline = trio.current_time() + self._wait
                        woken = self._woken[holder] = trio.Event()
                        with trio.move_on_at(deadline):
                            await woken.wait()
                        self._woken.pop(holder, None)
                        if not woken.is_set():
                            raise AtCapacity(self._full(size, urgent))
        except BaseException:
            ledger.leave(holder)
            self._wake_next()
            raise

    def _release(self, task_ids: tuple[str, ...]) -> None:
        for task_id in task_ids:
            freed = self._keeper.release_payloads(task_id) if self._keeper is not None else 0
            self._ledger.released(task_id, freed)

    def _give_back(self, holder: object) -> None:
        self._ledger.give_back(holder)
        self._wake_next()

    def _wake_next(self) -> None:
        first = self._ledger.next_in_line()
        if first is not None and first in self._woken:
            self._woken[first].set()

    def _full(self, size: int, reply: bool) -> str:
        full = (
            f"no room for {size:,} more payload bytes within ADAPTER_MEMORY_WAIT "
            f"({self._wait:g} s): the memory budget (ADAPTER_MEMORY_BUDGET, "
            f"{self.budget:,} bytes) is held by requests and replies in flight"
        )
        return full if reply else f"Server busy: {full}; nothing was done, retry later"

    def _never(self, holder: object, size: int) -> str:
        held = self._ledger.holds(holder)
        return (
            f"{held + size:,} payload bytes are more than the whole memory budget "
            f"(ADAPTER_MEMORY_BUDGET, {self.budget:,} bytes)"
        )


class Reservation:
    """One holder's bytes under the budget, until given back (once)."""

    def __init__(self, budget: MemoryBudget, holder: object) -> None:
        self._budget = budget
        self._holder = holder
        self._ahead = 0  # a reply's bytes held but not read yet
        self._over = False

    @property
    def size(self) -> int:
        """The bytes held."""
        return self._budget.holds(self._holder)

    async def grow(self, size: int) -> None:
        """Hold `size` more bytes, waiting in line for them."""
        if size > 0:
            await self._budget._take(self._holder, size, urgent=False)

    async def take(self, size: int) -> None:
        """A reply's next `size` bytes, read: held ahead of new requests, REPLY_STEP at a
        time; AtCapacity naming the budget when they cannot be."""
        if size <= self._ahead:
            self._ahead -= size
            return
        # A small budget (tests, a tiny pod) takes smaller steps: a step is room others wait for.
        step = max(size - self._ahead, min(REPLY_STEP, self._budget.budget // 16))
        await self._budget._take(self._holder, step, urgent=True)
        self._ahead += step - size

    def pass_on(self) -> Reservation:
        """The same bytes, now the new reservation's to give back; this one holds none."""
        self._over = True
        return Reservation(self._budget, self._holder)

    def give_back(self) -> None:
        """Free the bytes for the next in line; nothing the second time, nor once passed on."""
        if not self._over:
            self._over = True
            self._budget._give_back(self._holder)
