"""A trio.CapacityLimiter for each key (a caller, an address), made when first asked for."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Generic, TypeVar

import trio

K = TypeVar("K", bound=Hashable)


class KeyedLimiters(Generic[K]):
    """Limiters of `tokens` tokens each, one per key; an idle one is forgotten, so that
    keys that come and go (callers, receivers) leave nothing behind."""

    def __init__(self, tokens: int) -> None:
        self.tokens = tokens
        self._limiters: dict[K, trio.CapacityLimiter] = {}

    def __len__(self) -> int:
        return len(self._limiters)

    def of(self, key: K) -> trio.CapacityLimiter:
        limiter = self._limiters.get(key)
        if limiter is None:
            limiter = self._limiters[key] = trio.CapacityLimiter(self.tokens)
        return limiter

    def forget_idle(self, key: K) -> None:
        """Call after giving a token back, or giving up waiting for one."""
        limiter = self._limiters.get(key)
        if limiter is not None:
            held = limiter.statistics()
            if not held.borrowed_tokens and not held.tasks_waiting:
                del self._limiters[key]
