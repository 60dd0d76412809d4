"""The connection timer as a table of phases and deadlines, without sockets."""

from __future__ import annotations

import math

import pytest

from n8n_a2a.http.timer import ConnectionTimer, Phase


def opened(at: float = 100.0) -> ConnectionTimer:
    return ConnectionTimer(keep_alive_timeout=5.0, read_timeout=30.0, since=at)


def test_a_new_connection_is_idle_for_the_keep_alive_timeout() -> None:
    timer = opened()
    assert timer.phase is Phase.IDLE
    assert timer.deadline == 105.0


@pytest.mark.parametrize(
    ("keep_alive", "read", "first_byte_by", "idle_after_a_response"),
    [
        (75.0, 30.0, 130.0, 975.0),  # the defaults: a silent client gets the read timeout
        (5.0, 30.0, 105.0, 905.0),  # a keep-alive shorter than a read: it, as before
        (30.0, 30.0, 130.0, 930.0),
    ],
)
def test_a_connection_waits_for_its_first_byte_no_longer_than_a_read_nor_an_idle_spell(
    keep_alive: float, read: float, first_byte_by: float, idle_after_a_response: float
) -> None:
    # (Opened at 100; its one request read from 101, answered at 900.)
    timer = ConnectionTimer(keep_alive_timeout=keep_alive, read_timeout=read, since=100.0)
    assert (timer.phase, timer.deadline) == (Phase.IDLE, first_byte_by)
    timer.receiving(101.0)
    timer.request_read()
    timer.response_sent(900.0)
    # Served once: between requests, the keep-alive timeout, whatever the read timeout.
    assert (timer.phase, timer.deadline) == (Phase.IDLE, idle_after_a_response)


def test_the_read_timeout_runs_from_a_requests_first_byte() -> None:
    timer = opened()
    timer.receiving(103.0)
    assert (timer.phase, timer.deadline) == (Phase.READING, 133.0)
    timer.receiving(120.0)  # more bytes of the same request move nothing
    assert timer.deadline == 133.0


def test_a_response_under_way_has_no_deadline() -> None:
    timer = opened()
    timer.receiving(101.0)
    timer.request_read()
    assert (timer.phase, timer.deadline) == (Phase.RESPONDING, math.inf)
    timer.receiving(500.0)  # a pipelined request arriving meanwhile waits its turn
    assert timer.deadline == math.inf


def test_after_the_response_the_connection_is_idle_again() -> None:
    timer = opened()
    timer.receiving(101.0)
    timer.request_read()
    timer.response_sent(900.0)
    assert (timer.phase, timer.deadline) == (Phase.IDLE, 905.0)
    timer.receiving(902.0)
    assert (timer.phase, timer.deadline) == (Phase.READING, 932.0)


def test_an_answer_before_the_body_keeps_the_read_deadline() -> None:
    timer = opened()
    timer.receiving(101.0)
    timer.response_sent(102.0)  # a 413 while the body still comes
    assert (timer.phase, timer.deadline) == (Phase.READING, 131.0)
