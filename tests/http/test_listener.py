"""accept(2) short of descriptors, without sockets."""

from __future__ import annotations

import errno
import logging
import os

import pytest
import trio

from n8n_a2a.http.listener import PatientListener


class Exhausted(trio.abc.Listener[trio.SocketStream]):
    """A listener whose accept() fails with EMFILE `failures` times, then with EBADF."""

    def __init__(self, failures: int) -> None:
        self.failures = failures

    async def accept(self) -> trio.SocketStream:
        await trio.lowlevel.checkpoint()
        self.failures -= 1
        code = errno.EMFILE if self.failures >= 0 else errno.EBADF
        raise OSError(code, os.strerror(code))

    async def aclose(self) -> None:
        pass


async def test_accept_short_of_descriptors_retries_and_says_so_once_per_interval(
    autojump_clock: trio.abc.Clock, caplog: pytest.LogCaptureFixture
) -> None:
    # 250 failures, one each 0.1 s (trio's pause): 25 s. The interval falls half-way
    # between two tries, so that no sum of 0.1 s steps lands on it.
    listener = PatientListener(Exhausted(250), interval=10.05)
    with caplog.at_level(logging.ERROR), pytest.raises(OSError) as other:
        await listener.accept()
    assert other.value.errno == errno.EBADF  # any other error is no shortage: raised
    lines = [r for r in caplog.records if getattr(r, "fields", {}).get("event") == "accept_failed"]
    # at 0 s, the first; at 10.1 s, 101 since; at 20.2 s, 101 more (the 47 after, unsaid)
    assert [getattr(r, "fields")["failures"] for r in lines] == [1, 101, 101]  # noqa: B009
    assert all(r.exc_info is None for r in lines)
    assert "failed with EMFILE (Too many open files), 1 time(s)" in lines[0].getMessage()
