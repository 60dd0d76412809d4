"""The file descriptors the adapter's limits need, and the limits that fit the file limit.

Plain arithmetic on numbers; `fit_file_limit` is its one edge: it reads and raises the
process's RLIMIT_NOFILE, and says so when the limits had to shrink.
"""

from __future__ import annotations

import logging
import resource
from dataclasses import dataclass

from ..config import Settings
from .slots import PROBE_SLOTS

logger = logging.getLogger(__name__)

#: Connections past the limits read or answered 503 at once (slots.py); past that many,
#: one more is closed unanswered.
REFUSALS_AT_ONCE = 256
#: File descriptors the process needs beside connections, webhook calls and push POSTs
#: (the listening socket, logs, the CA bundle, DNS look-ups: trio's 40 threads and push's 8).
OTHER_DESCRIPTORS = 64
# What the limits never share: probes served past the limits (slots.py), and the rest.
_FIXED = PROBE_SLOTS + OTHER_DESCRIPTORS


def descriptors_needed(settings: Settings) -> int:
    """File descriptors the adapter may hold at once at its configured limits."""
    return _shared(settings) + _FIXED


def _shared(settings: Settings) -> int:
    """The descriptors that share the file limit in proportion when it is short."""
    return (
        settings.max_connections
        + settings.max_concurrent_calls
        + REFUSALS_AT_ONCE
        + settings.push_max_concurrent
    )


def raised_file_limit(soft: int, hard: int, needed: int) -> int:
    """The soft RLIMIT_NOFILE to set: `needed` where the hard limit allows it."""
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return soft
    if hard == resource.RLIM_INFINITY:
        return needed
    return min(hard, needed)


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    connections: int  # served at once
    refusals: int  # answered 503 at once; past that many, one more is closed unanswered
    push_posts: int  # push POSTs under way at once


def limits_within(settings: Settings, file_limit: int) -> ConnectionLimits:
    """ADAPTER_MAX_CONNECTIONS, REFUSALS_AT_ONCE and ADAPTER_PUSH_MAX_CONCURRENT, or fewer
    when the file limit has no room for them: past the limit a client gets a 503, past
    the file limit no answer.

    Short of room, connections, refusals, webhook calls and push POSTs share what the
    limit leaves in the proportion configured (a call past its share fails as
    UNREACHABLE; a push POST past its share waits for its turn).
    """
    if file_limit == resource.RLIM_INFINITY or file_limit >= descriptors_needed(settings):
        return ConnectionLimits(
            settings.max_connections, REFUSALS_AT_ONCE, settings.push_max_concurrent
        )
    spare = max(0, file_limit - _FIXED)
    wanted = _shared(settings)
    return ConnectionLimits(
        connections=max(1, spare * settings.max_connections // wanted),
        refusals=spare * REFUSALS_AT_ONCE // wanted,
        push_posts=max(1, spare * settings.push_max_concurrent // wanted),
    )


def fit_file_limit(settings: Settings) -> ConnectionLimits:
    """Raise the process's file limit for the configured limits; the limits that fit."""
    needed = descriptors_needed(settings)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    limit = raised_file_limit(soft, hard, needed)
    if limit != soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))
    limits = limits_within(settings, limit)
    if limits.connections < settings.max_connections:
        logger.warning(
            "the file limit (RLIMIT_NOFILE) is %d, below the %d that ADAPTER_MAX_CONNECTIONS, "
            "ADAPTER_MAX_CONCURRENT_CALLS and ADAPTER_PUSH_MAX_CONCURRENT need: at most %d "
            "connections are served at once, and %d push POSTs made",
            limit,
            needed,
            limits.connections,
            limits.push_posts,
        )
    return limits
