"""One POST of one update to one receiver, and what its answer means for a retry.

Its own connections, never the webhook's (push/client.py): no redirects (a 3xx is the
receiver's final word), no proxies from the environment, the system's trust store, and no
connection kept: each POST connects to an address the guard has just judged, with the
URL's host name kept for the Host header and TLS (SNI and the certificate check). One
deadline bounds each attempt, lookup included.

Each POST holds a socket, so only so many are under way at once, over the process (they
are in the file descriptor budget, http/descriptors.py) and to one address (the adapter must
not be a way to flood a third party). A POST past either limit waits for its turn, and
its attempt's deadline waits with it: waiting is a queue, not the receiver's slowness.
"""

from __future__ import annotations

import math
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import TracebackType
from typing import TYPE_CHECKING

import trio

from ..protocol.push import AllowList
from ..webhook.errors import (
    ConnectError,
    PushRefused,
    RemoteProtocolError,
    WebhookTransportError,
)
from ..webhook.network import open_stream
from .attempts import Answer, Attempt
from .client import Connect, post, request_head
from .guard import Destination, Resolve, destination
from .limiters import KeyedLimiters
from .lookups import Lookups

#: Seconds one attempt may take in all: the spec recommends 10 to 30.
ATTEMPT_TIMEOUT = 10.0
#: POSTs under way at once over the process (ADAPTER_PUSH_MAX_CONCURRENT).
MAX_CONCURRENT = 64
#: POSTs under way at once to one address (ADAPTER_PUSH_MAX_PER_ADDRESS).
MAX_PER_ADDRESS = 4
# Statuses worth another attempt: the receiver is busy or broken for now.
_RETRIED = frozenset({408, 429})

if TYPE_CHECKING:  # the registry of addresses: imported by the first address judged
    from ..protocol.addresses import IPAddress


class PushSender:
    """POSTs updates to receivers; use as an async context manager."""

    def __init__(
        self,
        allow: AllowList,
        *,
        resolve: Resolve | None = None,
        timeout: float = ATTEMPT_TIMEOUT,
        max_concurrent: int = MAX_CONCURRENT,
        max_per_address: int = MAX_PER_ADDRESS,
        ssl_context: ssl.SSLContext | None = None,
        connect: Connect = open_stream,
    ) -> None:
        """`resolve` defaults to lookups.Lookups of its own (server.py passes the ones
        configs share); `ssl_context` to the system's trust store; `connect` replaces
        the network (tests)."""
        self._allow = allow
        self._resolve = resolve or Lookups().resolve
        self._timeout = timeout
        self._posts = trio.CapacityLimiter(max_concurrent)
        self._per_address: KeyedLimiters[IPAddress] = KeyedLimiters(max_per_address)
        self._given_tls = ssl_context
        self._tls_context: ssl.SSLContext | None = None
        self._connect = connect

    def _tls(self) -> ssl.SSLContext:
        """The TLS context, made by the first https POST: the system's trust store it
        reads (milliseconds of CPU and 2 MiB) is a cost a start that never pushes over
        TLS need not pay."""
        if self._tls_context is None:
            self._tls_context = self._given_tls or ssl.create_default_context()
            self._tls_context.set_alpn_protocols(["http/1.1"])
        return self._tls_context

    async def __aenter__(self) -> PushSender:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Nothing to close: each POST closes its connection with its answer."""

    async def post(self, url: str, body: bytes, headers: dict[str, str]) -> Attempt:
        """One attempt: look the host up, judge it, POST to the first address that connects."""
        with trio.move_on_after(self._timeout) as attempt:
            try:
                where = await destination(url, self._allow, self._resolve)
            except PushRefused as refused:
                return Attempt(Answer.BLOCKED, str(refused))
            except OSError as error:
                return Attempt(Answer.RETRY, f"the host does not resolve: {_describe(error)}")
            return await self._post_to(where, body, headers, attempt)
        return Attempt(Answer.RETRY, f"no answer within {self._timeout:g} s")

    async def _post_to(
        self, where: Destination, body: bytes, headers: dict[str, str], attempt: trio.CancelScope
    ) -> Attempt:
        """The POST to each judged address in turn, until one connects."""
        url = where.url
        tls = self._tls() if url.scheme == "https" else None
        unreachable = ""
        try:
            request = (request_head(url, headers, len(body)), body)
            for address in where.addresses:
                try:
                    async with self._slot(address, attempt):
                        return _judge(await post(self._connect, url, address, request, tls))
                except ConnectError as error:
                    unreachable = f"cannot connect to {address}: {_describe(error)}"
        except WebhookTransportError as error:
            return Attempt(Answer.RETRY, _describe(error))
        return Attempt(Answer.RETRY, unreachable)

    @asynccontextmanager
    async def _slot(self, address: IPAddress, attempt: trio.CancelScope) -> AsyncIterator[None]:
        """A turn to POST to `address`, waited for with the attempt's deadline stopped."""
        left = attempt.deadline - trio.current_time()
        attempt.deadline = math.inf
        try:
            async with self._per_address.of(address), self._posts:
                attempt.deadline = trio.current_time() + left
                yield
        finally:
            self._per_address.forget_idle(address)


def _judge(status: int) -> Attempt:
    detail = f"HTTP {status}"
    if 200 <= status < 300:
        return Attempt(Answer.DELIVERED, detail, status)
    if status in _RETRIED or status >= 500:
        return Attempt(Answer.RETRY, detail, status)
    if 300 <= status < 400:
        # Not followed: it would carry the credentials to wherever it points.
        return Attempt(Answer.REJECTED, f"{detail}, a redirect (not followed)", status)
    return Attempt(Answer.REJECTED, detail, status)


def _describe(error: BaseException) -> str:
    if isinstance(error, RemoteProtocolError):
        return error.reason  # not the reply's bytes: they may echo the token sent
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, ssl.SSLError):  # the handshake's failure, under its ConnectError
            return f"TLS: {cause}"
        cause = cause.__cause__ or cause.__context__
    return str(error) or type(error).__name__
