"""What one POST to a receiver came to, and how often one update is POSTed again: the
words sender.py answers in, route.py decides by and deliverer.py schedules with.

Apart from route.py, so that a start with no push config has no routes' tables to build
(deliverer.py imports them with the first config).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Protocol

# Backoff before attempt n+1: half of min(cap, base * 2**(n-1)), plus up to as much again.
BACKOFF_BASE = 0.5
BACKOFF_CAP = 30.0


class Answer(enum.Enum):
    """What one POST came to, for its update's delivery."""

    DELIVERED = "delivered"
    RETRY = "retry"  # no answer, or one that asks to come back: try again later
    REJECTED = "rejected"  # the receiver said no (4xx, or a redirect): never again
    BLOCKED = "blocked"  # the policy refuses where the URL leads: not attempted


@dataclass(frozen=True, slots=True)
class Attempt:
    answer: Answer
    #: What happened, for the log: a status line or an error. Never a header or the body.
    detail: str
    status: int | None = None


class Sender(Protocol):
    """One POST to a receiver (sender.PushSender; a script in tests)."""

    async def post(self, url: str, body: bytes, headers: dict[str, str]) -> Attempt: ...


@dataclass(frozen=True, slots=True)
class RetrySchedule:
    """How often, and how far apart, one update is POSTed to a receiver that lags."""

    max_attempts: int = 5
    backoff_base: float = BACKOFF_BASE
    backoff_cap: float = BACKOFF_CAP

    def delay(self, attempts: int, draw: float) -> float:
        """Seconds before the next attempt after `attempts`; `draw` in [0, 1) is the jitter."""
        ceiling = min(self.backoff_cap, self.backoff_base * 2.0 ** (attempts - 1))
        return ceiling / 2 + draw * (ceiling / 2)
