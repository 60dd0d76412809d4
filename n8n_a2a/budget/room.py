"""ADAPTER_MEMORY_BUDGET's trio driver: the ledger (ledger.py), its line asked again when
room comes, its releases done by the store, its waits bounded by ADAPTER_MEMORY_WAIT.

A Reservation is what one holder holds for one caller: a request's body, charged piece by
piece as it is read (app/exchange.py), passed on by a send to its webhook call, whose
reply then grows it (`take`, ahead of new requests), the request's bytes once forwarded
making room for the reply (`forwarded`); or an answer's bytes until written (`force`).
A holder canceled while it waits leaves the line; one canceled while it holds gives its
bytes back in its `finally`: either way nothing stays reserved.
"""

from __future__ import annotations

import ctypes
from typing import assert_never

import trio

from ..core.errors import AtCapacity
from ..store.api import Keeper
from .ledger import Ask, CallerKey, Granted, Ledger, Never, Release, Wait

#: A reply's room grows by at least this much at a time: one ask per 1 MiB read, not
#: one per chunk.
REPLY_STEP = 1024 * 1024
#: The caller of tasks whose calls this process did not start (before a restart).
UNKNOWN_CALLER = ""

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


class MemoryBudget:
    """The process's one budget for payload bytes, `budget` of them, each caller's share
    `share` of it; a holder waits for room at most `wait` seconds."""

    def __init__(self, budget: int, wait: float, share: int | None = None) -> None:
        self._ledger = Ledger(budget, share)
        self._wait = wait
        self._woken: dict[object, trio.Event] = {}
        self._keeper: Keeper | None = None
        self._callers: dict[str, CallerKey] = {}  # each running or kept task's caller

    @property
    def budget(self) -> int:
        return self._ledger.budget

    @property
    def share(self) -> int:
        return self._ledger.share

    @property
    def held(self) -> int:
        """Payload bytes held by requests, calls and answers in flight."""
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

    def caller_holds(self, caller: CallerKey) -> int:
        """What the caller holds and keeps now."""
        return self._ledger.caller_holds(caller)

    def keep_in(self, keeper: Keeper) -> None:
        """The store whose finished tasks' payloads count and can be released."""
        self._keeper = keeper

    def works_for(self, task_id: str, caller: CallerKey) -> None:
        """The task's call runs for `caller`: its kept results will be that caller's.
        (Nothing without a keeper: a shared store keeps results out of this process, and
        would never say when one leaves.)"""
        if self._keeper is not None:
            self._callers[task_id] = caller

    def keep(self, task_id: str, size: int) -> None:
        """A finished task holds `size` payload bytes (the store's hook)."""
        self._ledger.keep(task_id, self._callers.get(task_id, UNKNOWN_CALLER), size)

    def forget(self, task_id: str) -> None:
        """A finished task left the store: its bytes are room (the store's hook)."""
        self._callers.pop(task_id, None)
        self._ledger.forget(task_id)
        self._ask_again()

    def reservation(self, caller: CallerKey) -> Reservation:
        """A reservation for `caller`, holding nothing yet."""
        return Reservation(self, caller, object())

    async def _take(self, holder: object, asked: Ask) -> None:
        ledger = self._ledger
        deadline: float | None = None  # the wait's end, once it has to wait
        try:
            while True:
                decision = ledger.ask(holder, asked)
                match decision:
                    case Granted():
                        return
                    case Never():
                        raise AtCapacity(self._never(holder, asked.size))
                    case Release(task_ids):
                        self._release(task_ids)
                    case Wait():
                        if deadline is None:
                            deadline = trio.current_time() + self._wait
                        if self._refused_for_a_stall(holder):
                            raise AtCapacity(self._full(asked))
                        woken = self._woken[holder] = trio.Event()
                        with trio.move_on_at(deadline):
                            await woken.wait()
                        if self._woken.pop(holder, None) is None:
                            return  # granted by `_ask_again` while it waited
                        raise AtCapacity(self._full(asked))  # waited too long, or refused
                    case _:
                        assert_never(decision)
        except BaseException:
            ledger.leave(holder)
            self._woken.pop(holder, None)
            raise

    def _refused_for_a_stall(self, holder: object) -> bool:
        """Whether `holder`, now in line, is the one to refuse because nobody holding bytes
        could move on otherwise; another holder so chosen is woken refused."""
        stalled = self._ledger.stalled()
        if stalled is None or stalled is holder:
            return stalled is holder
        woken = self._woken.get(stalled)
        if woken is not None:
            woken.set()  # left in `_woken`: it wakes refused, not granted
        return False

    def _release(self, task_ids: tuple[str, ...]) -> None:
        for task_id in task_ids:
            freed = self._keeper.release_payloads(task_id) if self._keeper is not None else 0
            self._ledger.released(task_id, freed)

    def _give_back(self, holder: object, caller: CallerKey, size: int | None = None) -> None:
        self._ledger.give_back(holder, caller, size)
        self._ask_again()

    def _ask_again(self) -> None:
        """Room may have come: ask again for each in line, in the ledger's order, and wake
        those granted. Nobody waits behind one that does not fit."""
        for holder, asked in self._ledger.in_line():
            decision = self._ledger.ask(holder, asked)
            while isinstance(decision, Release):
                self._release(decision.task_ids)
                decision = self._ledger.ask(holder, asked)
            woken = self._woken.pop(holder, None) if isinstance(decision, Granted) else None
            if woken is not None:
                woken.set()

    def _full(self, asked: Ask) -> str:
        full = (
            f"no room for {asked.size:,} more payload bytes within ADAPTER_MEMORY_WAIT "
            f"({self._wait:g} s): the memory budget (ADAPTER_MEMORY_BUDGET, "
            f"{self.budget:,} bytes; a caller's share {self.share:,}) is held by requests, "
            "replies and answers in flight"
        )
        return full if asked.urgent else f"Server busy: {full}; nothing was done, retry later"

    def _never(self, holder: object, size: int) -> str:
        held = self._ledger.holds(holder)
        return (
            f"{held + size:,} payload bytes are more than a caller's share "
            f"(ADAPTER_MEMORY_SHARE, {self.share:,} bytes) of the memory budget "
            f"(ADAPTER_MEMORY_BUDGET, {self.budget:,} bytes)"
        )


class Reservation:
    """One holder's bytes under the budget, for one caller, until given back (once)."""

    def __init__(self, budget: MemoryBudget, caller: CallerKey, holder: object) -> None:
        self._budget = budget
        self.caller = caller
        self._holder = holder
        self._ahead = 0  # held but not used yet: a reply's step, or a request forwarded
        self._over = False

    @property
    def size(self) -> int:
        """The bytes held."""
        return self._budget.holds(self._holder)

    async def grow(self, size: int, *, read: bool = False) -> None:
        """Hold `size` more bytes, waiting for room; a `read`'s (an answer copying a task
        held or kept already) within its caller's share alone, releasing nothing."""
        if size > 0:
            await self._budget._take(self._holder, Ask(self.caller, size, read=read))

    def force(self, size: int) -> None:
        """Hold `size` more bytes at once: an answer or an event already made, until it
        is written."""
        if size > 0:
            self._budget._ledger.force(self._holder, self.caller, size)

    def forwarded(self) -> None:
        """The request's bytes went out to the workflow: what they held is room for the
        reply from now on, taken before anything new is asked for."""
        self._ahead = self.size

    async def take(self, size: int) -> None:
        """A reply's next `size` bytes, read: held ahead of new requests, REPLY_STEP at a
        time; AtCapacity naming the budget when they cannot be."""
        if size <= self._ahead:
            self._ahead -= size
            return
        # A small budget (tests, a tiny pod) takes smaller steps: a step is room others wait for.
        step = max(size - self._ahead, min(REPLY_STEP, self._budget.budget // 16))
        await self._budget._take(self._holder, Ask(self.caller, step, urgent=True))
        self._ahead += step - size

    def pass_on(self) -> Reservation:
        """The same bytes, now the new reservation's to give back; this one holds none."""
        self._over = True
        return Reservation(self._budget, self.caller, self._holder)

    def give_back(self, size: int | None = None) -> None:
        """Free `size` of the bytes (all of them when None) for those in line; nothing
        once all were given back, nor once passed on."""
        if not self._over:
            if size is None:
                self._over = True
            self._budget._give_back(self._holder, self.caller, size)
