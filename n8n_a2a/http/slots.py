"""Who may hold a connection, and whether a connection past the limits is a probe's.
Sans-I/O: counts, and the bytes of a request's head.

The adapter serves ADAPTER_MAX_CONNECTIONS connections at once, at most
ADAPTER_MAX_CONNECTIONS_PER_IP of them from one client address. A connection past
either limit is not refused at once: its request's head is read first (PEEK_BYTES at
most, within PEEK_SECONDS). A GET of a health path (/healthz, /readyz, /metrics) with no
body is served all the same, in one of PROBE_SLOTS slots beyond the limits, for that one
request; anything else gets the 503. Else a client that opens connections and sends
nothing (or sends slowly) has the liveness probe answered 503 until they time out, and
Kubernetes restarts the pod: every task held in memory is lost.

What a client past the limits may hold is bounded too, in all and per address: the
connections being read or refused (`refusals`, PAST_PER_PEER) and the probes being
served (PROBE_SLOTS, PROBES_PER_PEER), so that one address cannot take every probe slot
(a prober, the kubelet, dials from its node's address). Past those, a connection is
closed unanswered: a flood must not cost a file per refusal.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Collection
from dataclasses import dataclass

#: The paths a probe GETs (liveness, readiness, the metrics), answered by the app's
#: operator routes (app/edge.py names them from here).
PROBE_PATHS = ("/healthz", "/readyz", "/metrics")
#: Connections served beyond the limits at once, for probes only.
PROBE_SLOTS = 8
#: Of them, those one client address may hold: another address always finds room.
PROBES_PER_PEER = PROBE_SLOTS // 2
#: Connections past the limits that one client address may have read or refused at once.
PAST_PER_PEER = 16
#: Bytes of a request's head read to tell a probe: the kubelet's is about 120 bytes.
PEEK_BYTES = 4096
#: Seconds a connection past the limits has to send its request's head: a prober sends
#: it as it connects (the kubelet gives a probe 1 s by default, connection included).
PEEK_SECONDS = 1.0

#: The variables whose limit a connection can be past.
ALL_CONNECTIONS = "ADAPTER_MAX_CONNECTIONS"
PER_IP = "ADAPTER_MAX_CONNECTIONS_PER_IP"

#: A probe's request line: a GET of a path, maybe with a query, in HTTP/1.x.
_PROBE_LINE = re.compile(rb"GET (/[^ ?#]*)(?:\?[^ #]*)? HTTP/1\.[01]\r\n")
#: The headers that say a body follows (a head's lines, lower case, after their LF).
_FRAMING = re.compile(rb"\n(content-length|transfer-encoding):([^\r\n]*)")


class Admission(enum.Enum):
    SERVE = "serve"  # within the limits
    PEEK = "peek"  # past them: its head decides between a probe and a 503
    PROBE = "probe"  # past them, a probe's GET: served, in a probe slot
    DROP = "drop"  # past them, and past what may be refused: closed unanswered


@dataclass(frozen=True, slots=True)
class Ticket:
    admission: Admission
    peer: str
    #: The variable whose limit the connection is past; None within the limits.
    past: str | None = None


class _Tally:
    """Connections held, in all and by peer (a peer holding none is forgotten)."""

    def __init__(self, limit: int, per_peer: int) -> None:
        self.limit = limit
        self.per_peer = per_peer
        self.total = 0
        self._by_peer: dict[str, int] = {}

    def of(self, peer: str) -> int:
        return self._by_peer.get(peer, 0)

    def take(self, peer: str) -> bool:
        """One more for `peer`, if both limits leave room."""
        if self.total >= self.limit or self.of(peer) >= self.per_peer:
            return False
        self.total += 1
        self._by_peer[peer] = self.of(peer) + 1
        return True

    def give_back(self, peer: str) -> None:
        self.total -= 1
        left = self._by_peer.pop(peer) - 1
        if left:
            self._by_peer[peer] = left


class Slots:
    """The connection slots: served within the limits, read or refused past them, and
    probes served past them."""

    def __init__(self, connections: int, per_peer: int, refusals: int) -> None:
        self.served = _Tally(connections, min(per_peer, connections))
        self.past = _Tally(refusals, PAST_PER_PEER)
        self.probing = _Tally(PROBE_SLOTS, PROBES_PER_PEER)

    def admit(self, peer: str) -> Ticket:
        """The new connection of `peer`: served, read to tell a probe, or dropped."""
        if self.served.take(peer):
            return Ticket(Admission.SERVE, peer)
        past = ALL_CONNECTIONS if self.served.total >= self.served.limit else PER_IP
        if self.past.take(peer):
            return Ticket(Admission.PEEK, peer, past)
        return Ticket(Admission.DROP, peer, past)

    def probe(self, peeked: Ticket) -> Ticket | None:
        """A probe slot for a connection peeked (it keeps its own), or None if none is free."""
        if not self.probing.take(peeked.peer):
            return None
        return Ticket(Admission.PROBE, peeked.peer, peeked.past)

    def leave(self, ticket: Ticket) -> None:
        """The connection of `ticket` has closed (a probe's: its probe slot is free)."""
        if ticket.admission is Admission.SERVE:
            self.served.give_back(ticket.peer)
        elif ticket.admission is Admission.PEEK:
            self.past.give_back(ticket.peer)
        elif ticket.admission is Admission.PROBE:
            self.probing.give_back(ticket.peer)


class Head(enum.Enum):
    MORE = "more"  # not enough of the head yet to tell
    PROBE = "probe"  # a GET of a probe path, whole, without a body
    OTHER = "other"  # anything else, or a head longer than PEEK_BYTES


def peeked_head(head: bytes, probe_paths: Collection[str]) -> Head:
    """What the first bytes of a connection, `head`, are: a probe's request, something
    else, or not enough yet. A probe's head must be whole: what is served in a probe slot
    then holds it no longer than its answer takes."""
    line_end = head.find(b"\r\n")
    if line_end < 0:
        return Head.MORE if len(head) < PEEK_BYTES else Head.OTHER
    line = _PROBE_LINE.fullmatch(head, 0, line_end + 2)
    if line is None or line[1].decode("latin-1") not in probe_paths:
        return Head.OTHER
    end = head.find(b"\r\n\r\n")
    if end < 0:
        return Head.MORE if len(head) < PEEK_BYTES else Head.OTHER
    # A body (a probe sends none) would hold the slot for the read timeout.
    for name, value in _FRAMING.findall(head[: end + 2].lower()):
        if name == b"transfer-encoding" or value.strip() != b"0":
            return Head.OTHER
    return Head.PROBE
