"""ADAPTER_MEMORY_BUDGET's ledger: the payload bytes this process holds, who waits for
room, and which kept payloads to release to make it. Sans-I/O, as h11 is: the driver
(executor/budget.py) tells it what happened and does what it answers.

Three kinds of bytes count, in the units the wire has them (a body's length, a reply's
bytes as read, `core.release.payload_bytes` of what a kept task holds):

- held: what requests and webhook calls in flight hold, each under a holder's name
  (a request body from before it is read until its send ends; a reply as it is read);
- kept: what finished tasks in this process's store still hold;
- waiting: holders in line for room, in the order they asked (a reply being read ahead
  of new requests: it finishes work already begun, and frees its request when done).

A holder is granted when the line ahead of it is empty and held + kept + its bytes fit
the budget. When only the kept bytes are in the way, the ledger answers Release: the
oldest finished tasks' large parts go first (`core.release.released_task`), then the
holder asks again. Otherwise it waits in line; the driver wakes the first in line
whenever room may have come (a give-back, a holder leaving, a task forgotten).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from .release import RELEASE_AT


@dataclass(frozen=True, slots=True)
class Granted:
    """The bytes are held now, under the holder's name, until it gives them back."""


@dataclass(frozen=True, slots=True)
class Release:
    """Release these finished tasks' large parts (oldest first), tell the ledger what each
    freed (`released`), then ask again."""

    task_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Wait:
    """No room yet: the holder is in line; ask again when woken."""


@dataclass(frozen=True, slots=True)
class Never:
    """More than the whole budget, with what the holder holds already: it can never fit."""


Decision = Granted | Release | Wait | Never
GRANTED, WAIT, NEVER = Granted(), Wait(), Never()


@dataclass(frozen=True, slots=True)
class _InLine:
    size: int
    urgent: bool


class Ledger:
    """The budget's books. Every method runs in one step; none does I/O."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._held: dict[Hashable, int] = {}
        self._line: dict[Hashable, _InLine] = {}  # in the order they asked
        self._kept: dict[str, int] = {}  # finished tasks' payload bytes, in finish order
        self._releasable: dict[str, None] = {}  # kept tasks whose large parts are still there
        self.held = 0
        self.kept = 0

    @property
    def waiting(self) -> int:
        """Holders in line."""
        return len(self._line)

    def holds(self, holder: Hashable) -> int:
        """The bytes `holder` holds now."""
        return self._held.get(holder, 0)

    def ask(self, holder: Hashable, size: int, *, urgent: bool = False) -> Decision:
        """`holder` asks to hold `size` more bytes (a reply being read is `urgent`)."""
        holds = self._held.get(holder, 0)
        if holds + size > self.budget:
            self.leave(holder)
            return NEVER
        if self._line:  # (nobody waits, nearly always: no line to look through)
            first = self._first(urgent)
            if first is not None and first != holder:
                self._queue(holder, size, urgent)
                return WAIT
        room = self.budget - self.held - self.kept
        if size <= room:
            if self._line:
                self._line.pop(holder, None)
            self._held[holder] = holds + size
            self.held += size
            return GRANTED
        releases = self._to_release(size - room)
        if releases and size <= self.budget - self.held:
            return Release(releases)
        self._queue(holder, size, urgent)
        return WAIT

    def give_back(self, holder: Hashable) -> None:
        """`holder` holds nothing from now on (nothing happens the second time)."""
        self.held -= self._held.pop(holder, 0)

    def leave(self, holder: Hashable) -> None:
        """`holder` leaves the line (it was canceled, or waited too long)."""
        self._line.pop(holder, None)

    def next_in_line(self) -> Hashable | None:
        """The first in line, when what it waits for might now be had (held alone leaves
        room for it: kept bytes can be released); None otherwise."""
        if not self._line:
            return None
        first = self._first(urgent=False)
        if first is None or self._line[first].size > self.budget - self.held:
            return None
        return first

    def keep(self, task_id: str, size: int) -> None:
        """A finished task in the store holds `size` payload bytes (replacing what it held)."""
        self.forget(task_id)
        self._kept[task_id] = size
        self.kept += size
        if size >= RELEASE_AT:
            self._releasable[task_id] = None

    def released(self, task_id: str, freed: int) -> None:
        """The task's large parts were released, freeing `freed` bytes; it is released once."""
        self._releasable.pop(task_id, None)
        if task_id in self._kept:
            freed = min(freed, self._kept[task_id])
            self._kept[task_id] -= freed
            self.kept -= freed

    def forget(self, task_id: str) -> None:
        """The task left the store (its time to live, or room for a new one)."""
        self._releasable.pop(task_id, None)
        self.kept -= self._kept.pop(task_id, 0)

    def _first(self, urgent: bool) -> Hashable | None:
        """Who goes first: the first urgent holder in line, else (unless only urgent ones
        count) the first of all."""
        first = next((h for h, waits in self._line.items() if waits.urgent), None)
        if first is None and not urgent:
            first = next(iter(self._line), None)
        return first

    def _queue(self, holder: Hashable, size: int, urgent: bool) -> None:
        # A holder keeps its place in line when it asks again.
        if holder not in self._line:
            self._line[holder] = _InLine(size, urgent)

    def _to_release(self, needed: int) -> tuple[str, ...]:
        """The oldest releasable tasks whose payloads make `needed` bytes of room (all of
        them if they cannot)."""
        chosen: list[str] = []
        for task_id in self._releasable:
            if needed <= 0:
                break
            chosen.append(task_id)
            needed -= self._kept[task_id]
        return tuple(chosen)
