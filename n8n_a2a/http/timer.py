"""How long an HTTP/1.1 connection may take for what it is doing. Sans-I/O: plain numbers.

A connection is idle (between requests), reading a request (from its first byte to the
last byte of its body) or responding (the request is read; the answer is being made).
Idle time is bounded by the keep-alive timeout and reading by the read timeout, each
from the moment the phase began. Responding is never bounded here: a blocking send
waits as long as its webhook call, and a stream of events may last many minutes.

A new connection is idle too, but keep-alive is for a client that has been served and
may come back: one that has sent no byte yet is waiting to send its first request, and
gets no longer for it than a request's read (nor than an idle connection): else a
client that connects and says nothing holds a slot for the whole keep-alive timeout
(75 s by default, against a read timeout of 30 s).
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass


class Phase(enum.Enum):
    IDLE = "idle"
    READING = "reading"
    RESPONDING = "responding"


@dataclass(slots=True)
class ConnectionTimer:
    """One connection's phase and since when; `deadline` is when it must be closed."""

    keep_alive_timeout: float
    read_timeout: float
    phase: Phase = Phase.IDLE
    since: float = 0.0
    #: No byte of a request has arrived yet.
    fresh: bool = True

    @property
    def deadline(self) -> float:
        if self.phase is Phase.IDLE:
            if self.fresh:
                return self.since + min(self.keep_alive_timeout, self.read_timeout)
            return self.since + self.keep_alive_timeout
        if self.phase is Phase.READING:
            return self.since + self.read_timeout
        return math.inf

    def receiving(self, now: float) -> None:
        """Bytes of a request arrived, or a request whose bytes came earlier begins."""
        if self.phase is Phase.IDLE:
            self.phase, self.since, self.fresh = Phase.READING, now, False

    def request_read(self) -> None:
        """The request's body has arrived whole."""
        self.phase = Phase.RESPONDING

    def response_sent(self, now: float) -> None:
        """The response's last byte went out.

        After an answer given before the request was read whole (a 413, a 405), the
        connection is closing and the read timeout still bounds what is left of it.
        """
        if self.phase is Phase.RESPONDING:
            self.phase, self.since = Phase.IDLE, now
