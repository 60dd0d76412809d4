"""The file limit the connection limit needs, without sockets."""

from __future__ import annotations

import resource

from n8n_a2a.connections import (
    OTHER_DESCRIPTORS,
    REFUSALS_AT_ONCE,
    ConnectionLimits,
    descriptors_needed,
    limits_within,
    raised_file_limit,
)
from tests.conftest import make_settings

INFINITY = resource.RLIM_INFINITY


def test_every_connection_and_webhook_call_has_a_descriptor() -> None:
    settings = make_settings(max_connections=4096, max_concurrent_calls=1024)
    assert descriptors_needed(settings) == 4096 + 1024 + REFUSALS_AT_ONCE + OTHER_DESCRIPTORS


def test_the_soft_file_limit_is_raised_as_far_as_needed_and_allowed() -> None:
    assert raised_file_limit(1024, 524288, 5248) == 5248
    assert raised_file_limit(1024, 4096, 5248) == 4096
    assert raised_file_limit(1024, INFINITY, 5248) == 5248
    assert raised_file_limit(65536, 524288, 5248) == 65536  # never lowered
    assert raised_file_limit(INFINITY, INFINITY, 5248) == INFINITY


def test_the_limits_shrink_to_fit_a_file_limit_that_cannot_be_raised() -> None:
    settings = make_settings(max_connections=3072, max_concurrent_calls=1024 - REFUSALS_AT_ONCE)
    wanted = ConnectionLimits(3072, REFUSALS_AT_ONCE)
    assert limits_within(settings, descriptors_needed(settings)) == wanted
    assert limits_within(settings, INFINITY) == wanted
    # 1,024 descriptors beside the fixed ones: shared as configured, 3 : 1 here
    shrunk = limits_within(settings, 1024 + OTHER_DESCRIPTORS)
    assert shrunk == ConnectionLimits(768, REFUSALS_AT_ONCE // 4)
    assert limits_within(settings, 10) == ConnectionLimits(1, 0)
