"""Who gets a connection slot, and which heads are a probe's, as tables, without sockets."""

from __future__ import annotations

import pytest

from n8n_a2a.http.slots import (
    ALL_CONNECTIONS,
    PAST_PER_PEER,
    PEEK_BYTES,
    PER_IP,
    PROBE_SLOTS,
    PROBES_PER_PEER,
    Admission,
    Head,
    Slots,
    Ticket,
    peeked_head,
)

PATHS = ("/healthz", "/readyz", "/metrics")
A, B = "10.0.0.1", "10.0.0.2"


def admissions(slots: Slots, *peers: str) -> list[tuple[Admission, str | None]]:
    tickets = [slots.admit(peer) for peer in peers]
    return [(ticket.admission, ticket.past) for ticket in tickets]


def test_within_the_limits_a_connection_is_served() -> None:
    slots = Slots(connections=4, per_peer=4, refusals=8)
    assert admissions(slots, A, B, A, B) == [(Admission.SERVE, None)] * 4
    assert slots.served.total == 4


def test_past_the_connection_limit_every_peer_is_peeked() -> None:
    slots = Slots(connections=2, per_peer=2, refusals=8)
    assert admissions(slots, A, B, A, B) == [
        (Admission.SERVE, None),
        (Admission.SERVE, None),
        (Admission.PEEK, ALL_CONNECTIONS),
        (Admission.PEEK, ALL_CONNECTIONS),
    ]


def test_a_peer_at_its_share_is_peeked_while_another_is_served() -> None:
    slots = Slots(connections=8, per_peer=2, refusals=8)
    assert admissions(slots, A, A, A, B) == [
        (Admission.SERVE, None),
        (Admission.SERVE, None),
        (Admission.PEEK, PER_IP),
        (Admission.SERVE, None),
    ]


def test_a_share_above_the_limit_is_the_limit() -> None:
    slots = Slots(connections=2, per_peer=100, refusals=8)
    assert slots.served.per_peer == 2


def test_a_connection_that_closes_frees_its_slot_and_its_peers_share() -> None:
    slots = Slots(connections=8, per_peer=1, refusals=8)
    first = slots.admit(A)
    assert slots.admit(A).admission is Admission.PEEK
    slots.leave(first)
    assert (slots.served.total, slots.served.of(A)) == (0, 0)
    assert slots.admit(A).admission is Admission.SERVE


def test_past_the_refusals_in_all_or_for_one_peer_a_connection_is_dropped() -> None:
    slots = Slots(connections=1, per_peer=1, refusals=PAST_PER_PEER + 1)
    slots.admit(A)
    peeked = [slots.admit(A) for _ in range(PAST_PER_PEER)]
    assert {t.admission for t in peeked} == {Admission.PEEK}
    assert slots.admit(A) == Ticket(Admission.DROP, A, ALL_CONNECTIONS)  # A's share
    assert slots.admit(B).admission is Admission.PEEK  # the last of all
    assert slots.admit(B).admission is Admission.DROP
    slots.leave(peeked[0])
    assert slots.admit(A).admission is Admission.PEEK


def test_probe_slots_are_few_and_one_peer_takes_half_at_most() -> None:
    slots = Slots(connections=1, per_peer=1, refusals=64)
    slots.admit(A)
    probes_of_a = [slots.probe(slots.admit(A)) for _ in range(PROBES_PER_PEER + 1)]
    assert [p is not None for p in probes_of_a] == [True] * PROBES_PER_PEER + [False]
    others = [slots.probe(slots.admit(f"10.0.1.{n}")) for n in range(PROBE_SLOTS)]
    free = PROBE_SLOTS - PROBES_PER_PEER
    assert [p is not None for p in others] == [True] * free + [False] * PROBES_PER_PEER
    probe = probes_of_a[0]
    assert probe is not None and probe.admission is Admission.PROBE
    slots.leave(probe)
    assert slots.probe(Ticket(Admission.PEEK, "10.0.2.1", ALL_CONNECTIONS)) is not None


def head(*lines: str) -> bytes:
    return "\r\n".join(lines).encode()


@pytest.mark.parametrize(
    ("peeked", "verdict"),
    [
        (head("GET /healthz HTTP/1.1", "Host: pod", "", ""), Head.PROBE),
        (head("GET /readyz?verbose HTTP/1.0", "", ""), Head.PROBE),
        (head("GET /metrics HTTP/1.1", "Content-Length: 0", "", ""), Head.PROBE),
        # not yet known
        (b"", Head.MORE),
        (b"GET /heal", Head.MORE),
        (head("GET /healthz HTTP/1.1", "Host: pod", ""), Head.MORE),
        # known as soon as the request line is
        (head("POST /healthz HTTP/1.1", ""), Head.OTHER),
        (head("GET / HTTP/1.1", ""), Head.OTHER),
        (head("GET /healthz/x HTTP/1.1", ""), Head.OTHER),
        (head("GET http://pod/healthz HTTP/1.1", ""), Head.OTHER),
        (head("GET /healthz HTTP/2.0", ""), Head.OTHER),
        (b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", Head.OTHER),
        # a body would hold the probe slot for the read timeout
        (head("GET /healthz HTTP/1.1", "Content-Length: 5", "", "hello"), Head.OTHER),
        (head("GET /healthz HTTP/1.1", "Transfer-Encoding: chunked", "", ""), Head.OTHER),
        # too long to be a probe's
        (b"GET /healthz HTTP/1.1\r\nX-Pad: " + b"x" * PEEK_BYTES, Head.OTHER),
        (b"G" * PEEK_BYTES, Head.OTHER),
    ],
)
def test_a_probe_is_a_whole_get_of_a_probe_path_without_a_body(
    peeked: bytes, verdict: Head
) -> None:
    assert peeked_head(peeked, PATHS) is verdict
