"""The file limit the connection limit needs, and the limits that fit a file limit."""

from __future__ import annotations

import logging
import resource

import pytest

from n8n_a2a.http.descriptors import (
    OTHER_DESCRIPTORS,
    REFUSALS_AT_ONCE,
    ConnectionLimits,
    descriptors_needed,
    fit_file_limit,
    limits_within,
    raised_file_limit,
)
from n8n_a2a.http.slots import PROBE_SLOTS
from tests.support.adapter import make_settings

INFINITY = resource.RLIM_INFINITY


def test_every_connection_webhook_call_and_push_post_has_a_descriptor() -> None:
    settings = make_settings(
        max_connections=4096, max_concurrent_calls=1024, push_max_concurrent=64
    )
    needed = 4096 + 1024 + REFUSALS_AT_ONCE + 64 + PROBE_SLOTS + OTHER_DESCRIPTORS
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
    shrunk = limits_within(settings, 1024 + PROBE_SLOTS + OTHER_DESCRIPTORS)
    assert shrunk == ConnectionLimits(768, REFUSALS_AT_ONCE // 4, 16)
    # Push deliveries go on, one at a time.
    assert limits_within(settings, 10) == ConnectionLimits(1, 0, 1)


def file_limits(monkeypatch: pytest.MonkeyPatch, soft: int, hard: int) -> list[tuple[int, int]]:
    """The process's file limit as given; each limit set on it, in the list returned."""
    set_to: list[tuple[int, int]] = []
    monkeypatch.setattr(resource, "getrlimit", lambda _: (soft, hard))
    monkeypatch.setattr(resource, "setrlimit", lambda _, limits: set_to.append(limits))
    return set_to


def test_a_file_limit_with_room_is_left_as_it_is(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    settings = make_settings(max_connections=100, max_concurrent_calls=100)
    set_to = file_limits(monkeypatch, 65536, 65536)
    with caplog.at_level(logging.WARNING):
        assert fit_file_limit(settings) == limits_within(settings, 65536)
    assert set_to == []
    assert caplog.records == []


def test_a_file_limit_raised_to_the_hard_limit_and_still_short_is_said(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    settings = make_settings(
        max_connections=4096, max_concurrent_calls=1024, push_max_concurrent=64
    )
    set_to = file_limits(monkeypatch, 1024, 2048)
    with caplog.at_level(logging.WARNING):
        limits = fit_file_limit(settings)
    assert set_to == [(2048, 2048)]
    assert limits == limits_within(settings, 2048)
    [line] = caplog.records
    assert f"is 2048, below the {descriptors_needed(settings)}" in line.getMessage()
    assert f"at most {limits.connections} connections" in line.getMessage()
