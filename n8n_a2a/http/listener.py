"""The listening socket's accept(2), patient where the process is short of resources."""

from __future__ import annotations

import errno
import logging
import math
import os

import trio

logger = logging.getLogger(__name__)

#: Seconds between two log lines about accept(2) failing for want of resources.
ACCEPT_FAILURE_LOG_INTERVAL = 10.0
# Seconds to wait after such a failure before accepting again (trio's own pause).
_ACCEPT_RETRY = 0.1
# accept(2)'s errors that say the process or the system is short of something.
_SHORTAGES = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})


class PatientListener(trio.abc.Listener[trio.SocketStream]):
    """A listener whose accept() waits out a shortage (EMFILE, ENFILE, ENOBUFS, ENOMEM)
    and tries again, logging it once per interval with a count, without a traceback.

    trio.serve_listeners does the same, but logs every failed try, ten a second, each
    with its traceback: a log flood on top of the shortage.
    """

    def __init__(
        self,
        listener: trio.abc.Listener[trio.SocketStream],
        interval: float = ACCEPT_FAILURE_LOG_INTERVAL,
    ) -> None:
        self._listener = listener
        self._interval = interval
        self._unreported = 0
        self._quiet_until = -math.inf

    async def accept(self) -> trio.SocketStream:
        while True:
            try:
                return await self._listener.accept()
            except OSError as error:
                if error.errno not in _SHORTAGES:
                    raise
                self._failed(error.errno)
            await trio.sleep(_ACCEPT_RETRY)

    async def aclose(self) -> None:
        await self._listener.aclose()

    def _failed(self, number: int) -> None:
        self._unreported += 1
        now = trio.current_time()
        if now < self._quiet_until:
            return
        name = errno.errorcode[number]
        fields = {"event": "accept_failed", "errno": name, "failures": self._unreported}
        logger.error(
            "accepting a connection failed with %s (%s), %d time(s) since the last such "
            "line; new clients wait in the listen backlog meanwhile",
            name,
            os.strerror(number),
            self._unreported,
            extra={"fields": fields},
        )
        self._unreported = 0
        self._quiet_until = now + self._interval
