"""The file limit the connection limit needs, and accept(2) short of descriptors, without
sockets."""

from __future__ import annotations

import errno
import logging
import os
import resource

import pytest
import trio

from n8n_a2a.connections import (
    OTHER_DESCRIPTORS,
    REFUSALS_AT_ONCE,
    ConnectionLimits,
    PatientListener,
    descriptors_needed,
    limits_within,
    raised_file_limit,
)
from tests.conftest import make_settings

INFINITY = resource.RLIM_INFINITY


def test_every_connection_webhook_call_and_push_post_has_a_descriptor() -> None:
    settings = make_settings(
        max_connections=4096, max_concurrent_calls=1024, push_max_concurrent=64
    )
    needed = 4096 + 1024 + REFUSALS_AT_ONCE + 64 + OTHER_DESCRIPTORS
    assert descriptors_needed(settings) == needed


def test_the_soft_file_limit_is_raised_as_far_as_needed_and_allowed() -> None:
    assert raised_file_limit(1024, 524288, 5248) == 5248
    assert raised_file_limit(1024, 4096, 5248) == 4096
    assert raised_file_limit(1024, INFINITY, 5248) == 5248
    assert raised_file_limit(65536, 524288, 5248) == 65536  # never lowered
    assert raised_file_limit(INFINITY, INFINITY, 5248) == INFINITY


def test_the_limits_shrink_to_fit_a_file_limit_that_cannot_be_raised() -> None:
    settings = make_settings(
        max_connections=3072,
        max_concurrent_calls=1024 - REFUSALS_AT_ONCE - 64,
        push_max_concurrent=64,
    )
    wanted = ConnectionLimits(3072, REFUSALS_AT_ONCE, 64)
    assert limits_within(settings, descriptors_needed(settings)) == wanted
    assert limits_within(settings, INFINITY) == wanted
    # 1,024 descriptors beside the fixed ones: shared as configured, 3 : 1 here
    shrunk = limits_within(settings, 1024 + OTHER_DESCRIPTORS)
    assert shrunk == ConnectionLimits(768, REFUSALS_AT_ONCE // 4, 16)
    # Push deliveries go on, one at a time.
    assert limits_within(settings, 10) == ConnectionLimits(1, 0, 1)


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
