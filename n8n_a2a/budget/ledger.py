"""ADAPTER_MEMORY_BUDGET's ledger: the payload bytes this process holds, whose they are,
who waits for room, and which kept payloads to release to make it. Sans-I/O, as h11 is:
the driver (budget/room.py) tells it what happened and does what it answers.

Bytes are counted as the wire has them and as they come, never ahead on a promise:

- held: what requests, webhook calls and answers hold, each under a holder's name and
  a caller's (a request body as its bytes arrive, a reply as it is read, an answer until
  it is written);
- kept: what finished tasks in this process's store still hold, each under the caller
  whose call made it.

Every caller (a verified identity, or an address when anonymous) has a share of the
budget: what it holds and keeps together. Past its share a caller's own oldest results
are released first, then it waits for what it holds to shrink. A holder is granted when
its bytes fit the budget; when only kept bytes are in the way, the ledger answers
Release with the caller's own oldest results first, then those of callers past their
share, never another caller's within it. A read (an answer copying what is held or
kept already) never releases anything: it is held within its caller's share, and
within the budget beside what is in flight (what is kept does not count against it).

The line is not first come, first served: whoever fits is granted, so a small request
never waits behind a large one that does not fit. Replies being read (urgent: they finish
work begun) go before new requests while any of them waits. When room comes, the driver
asks again for each in line, the callers holding least first (`in_line`).

An answer or an event already made (`force`) is held at once, past the budget if need
be: refusing it would free nothing, and while it is held new requests wait.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from ..core.release import RELEASE_AT

#: Who a byte is for: a verified owner, or a client address when anonymous.
CallerKey = str


def caller_key(owner: str | None, peer: str | None = None) -> CallerKey:
    """Whose bytes a request's are: its verified owner, else its client's address (an
    anonymous caller behind one proxy shares the proxy's)."""
    if owner is not None:
        return owner
    return "peer:" + peer if peer else "anonymous"


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
    """No room yet: the holder is in line; ask again when room comes."""


@dataclass(frozen=True, slots=True)
class Never:
    """More than the budget or the caller's share, with what the holder holds already:
    it can never fit."""


Decision = Granted | Release | Wait | Never
GRANTED, WAIT, NEVER = Granted(), Wait(), Never()


@dataclass(frozen=True, slots=True)
class Ask:
    """One holder's ask, as it waits in line."""

    caller: CallerKey
    size: int
    urgent: bool = False  # a reply being read
    #: An answer that copies what is held or kept already (GetTask, ListTasks): held
    #: within its caller's share and beside what is in flight, whatever is kept, never
    #: releasing anything.
    read: bool = False


@dataclass(slots=True)
class _Kept:
    caller: CallerKey
    size: int


class Ledger:
    """The budget's books. Every method runs in one step; none does I/O."""

    def __init__(self, budget: int, share: int | None = None) -> None:
        self.budget = budget
        self.share = budget if share is None else min(share, budget)
        self._held: dict[Hashable, int] = {}
        self._caller_held: dict[CallerKey, int] = {}
        self._line: dict[Hashable, Ask] = {}  # in the order they asked
        self._kept: dict[str, _Kept] = {}  # finished tasks' payload bytes, in finish order
        self._caller_kept: dict[CallerKey, int] = {}
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

    def caller_holds(self, caller: CallerKey) -> int:
        """The bytes the caller holds and keeps now (what its share bounds)."""
        return self._caller_held.get(caller, 0) + self._caller_kept.get(caller, 0)

    def ask(self, holder: Hashable, asked: Ask) -> Decision:
        """`holder` asks to hold `asked.size` more bytes for `asked.caller`."""
        holds = self._held.get(holder, 0)
        if holds + asked.size > self.share:
            self.leave(holder)
            return NEVER
        caller = asked.caller
        if asked.read:
            # Beside what is in flight, not what is kept: it copies what is kept.
            in_flight = self.held + asked.size > self.budget
            if in_flight or self._caller_held.get(caller, 0) + asked.size > self.share:
                return self._queue(holder, asked)
            self._grant(holder, caller, asked.size)
            return GRANTED
        if self._line and not asked.urgent and self._urgent_waits(holder):
            return self._queue(holder, asked)
        past_share = self.caller_holds(caller) + asked.size - self.share
        if past_share > 0:
            own = self._to_release(past_share, caller, set())
            if own:
                return Release(own)
            if self._caller_held.get(caller, 0) + asked.size > self.share:
                return self._queue(holder, asked)  # until what it holds shrinks
        room = self.budget - self.held - self.kept
        if asked.size <= room:
            self._grant(holder, caller, asked.size)
            return GRANTED
        releases = self._to_release(asked.size - room, caller, self._past_share())
        if releases:
            return Release(releases)
        return self._queue(holder, asked)

    def force(self, holder: Hashable, caller: CallerKey, size: int) -> None:
        """Hold `size` bytes at once, whatever the room: a copy already made."""
        if size > 0:
            self._grant(holder, caller, size)

    def give_back(self, holder: Hashable, caller: CallerKey, size: int | None = None) -> None:
        """`holder` holds `size` fewer bytes (all of them when None)."""
        holds = self._held.get(holder, 0)
        freed = holds if size is None else min(size, holds)
        if freed == holds:
            self._held.pop(holder, None)
        else:
            self._held[holder] = holds - freed
        self.held -= freed
        left = self._caller_held.get(caller, 0) - freed
        if left > 0:
            self._caller_held[caller] = left
        else:
            self._caller_held.pop(caller, None)

    def leave(self, holder: Hashable) -> None:
        """`holder` leaves the line (it was granted, canceled, or waited too long)."""
        self._line.pop(holder, None)

    def in_line(self) -> list[tuple[Hashable, Ask]]:
        """Who to ask again now that room may have come: urgent ones first, then the
        callers holding least, each caller's in the order they asked."""
        if not self._line:
            return []
        order = {holder: place for place, holder in enumerate(self._line)}
        return sorted(
            self._line.items(),
            key=lambda item: (
                not item[1].urgent,
                self.caller_holds(item[1].caller),
                order[item[0]],
            ),
        )

    def stalled(self) -> Hashable | None:
        """When every holder that holds bytes waits in line (bodies half read, each waiting
        for room the others hold), none would ever move: the one in line holding least,
        to refuse now so that the others can; None while anything holding moves on."""
        line, held = self._line, self._held
        if not line or not held or any(holder not in line for holder in held):
            return None
        return min(held, key=held.__getitem__)  # (refusing one that holds nothing frees nothing)

    def keep(self, task_id: str, caller: CallerKey, size: int) -> None:
        """A finished task in the store holds `size` payload bytes (replacing what it held)."""
        self.forget(task_id)
        self._kept[task_id] = _Kept(caller, size)
        self._caller_kept[caller] = self._caller_kept.get(caller, 0) + size
        self.kept += size
        if size >= RELEASE_AT:
            self._releasable[task_id] = None

    def released(self, task_id: str, freed: int) -> None:
        """The task's large parts were released, freeing `freed` bytes; it is released once."""
        self._releasable.pop(task_id, None)
        kept = self._kept.get(task_id)
        if kept is not None:
            freed = min(freed, kept.size)
            kept.size -= freed
            self._less_kept(kept.caller, freed)

    def forget(self, task_id: str) -> None:
        """The task left the store (its time to live, or room for a new one)."""
        self._releasable.pop(task_id, None)
        kept = self._kept.pop(task_id, None)
        if kept is not None:
            self._less_kept(kept.caller, kept.size)

    def _less_kept(self, caller: CallerKey, size: int) -> None:
        self.kept -= size
        left = self._caller_kept.get(caller, 0) - size
        if left > 0:
            self._caller_kept[caller] = left
        else:
            self._caller_kept.pop(caller, None)

    def _grant(self, holder: Hashable, caller: CallerKey, size: int) -> None:
        if self._line:
            self._line.pop(holder, None)
        self._held[holder] = self._held.get(holder, 0) + size
        self._caller_held[caller] = self._caller_held.get(caller, 0) + size
        self.held += size

    def _urgent_waits(self, holder: Hashable) -> bool:
        return any(waits.urgent for other, waits in self._line.items() if other != holder)

    def _queue(self, holder: Hashable, asked: Ask) -> Wait:
        # A holder keeps its place in line when it asks again.
        if holder not in self._line:
            self._line[holder] = asked
        return WAIT

    def _past_share(self) -> set[CallerKey]:
        """The callers whose results anyone may have released: those past their share."""
        return {other for other in self._caller_kept if self.caller_holds(other) > self.share}

    def _to_release(self, needed: int, own: CallerKey, others: set[CallerKey]) -> tuple[str, ...]:
        """The releasable results that make `needed` bytes of room: `own`'s oldest first,
        then the oldest of `others`; none when all of them would not make it (a result
        released for nothing is a result lost)."""
        chosen: list[str] = []
        for callers in ({own}, others - {own}):
            for task_id in self._releasable:
                if needed <= 0:
                    return tuple(chosen)
                kept = self._kept[task_id]
                if kept.caller in callers:
                    chosen.append(task_id)
                    needed -= kept.size
        return tuple(chosen) if needed <= 0 else ()
