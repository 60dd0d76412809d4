"""One POST of one update to one receiver, and what its answer means for a retry.

Its own httpx client, never the webhook's: no redirects (a 3xx is the receiver's final
word), no proxies from the environment, the system's trust store, and no connection
kept: each POST connects to an address the guard has just judged, with the URL's host
name kept for the Host header and TLS (SNI and the certificate check). One deadline
bounds each attempt, lookup included.

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
from .attempts import Answer, Attempt
from .guard import Refused, Resolve, destination
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

if TYPE_CHECKING:  # imported by the first POST (push/client.py): a start never pushing needs none
    import httpx

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
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        """`resolve` defaults to lookups.Lookups of its own (server.py passes the ones
        configs share); `ssl_context` to the system's trust store; `transport` replaces
        the network (tests)."""
        self._allow = allow
        self._resolve = resolve or Lookups().resolve
        self._timeout = timeout
        self._posts = trio.CapacityLimiter(max_concurrent)
        self._per_address: KeyedLimiters[IPAddress] = KeyedLimiters(max_per_address)
        self._ssl_context = ssl_context
        self._transport = transport
        self._opened: httpx.AsyncClient | None = None

    @property
    def _client(self) -> httpx.AsyncClient:
        """The client, made by the first POST: httpx (about 70 ms of a start's imports) and
        the system's trust store it reads (milliseconds of CPU and 2 MiB) are costs a start
        that never pushes need not pay."""
        if self._opened is None:
            from .client import push_client

            context = self._ssl_context or ssl.create_default_context()
            self._opened = push_client(context, self._timeout, self._transport)
        return self._opened

    async def __aenter__(self) -> PushSender:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._opened is not None:
            await self._opened.aclose()

    async def post(self, url: str, body: bytes, headers: dict[str, str]) -> Attempt:
        """One attempt: look the host up, judge it, POST to the first address that connects."""
        import httpx  # the client's, imported with it (already there after the first POST)

        with trio.move_on_after(self._timeout) as attempt:
            try:
                where = await destination(url, self._allow, self._resolve)
            except Refused as refused:
                return Attempt(Answer.BLOCKED, str(refused))
            except OSError as error:
                return Attempt(Answer.RETRY, f"the host does not resolve: {_describe(error)}")
            host = where.url.raw_host.decode("ascii")
            headers = {**headers, "Host": where.url.netloc.decode("ascii")}
            # TLS checks the certificate against the name, not the address dialled.
            extensions = {"sni_hostname": host} if where.url.scheme == "https" else {}
            unreachable = ""
            for address in where.addresses:
                request = self._client.build_request(
                    "POST",
                    where.url.copy_with(host=str(address)),
                    content=body,
                    headers=headers,
                    extensions=extensions,
                )
                try:
                    async with self._slot(address, attempt):
                        # The body of the answer is never read: only its status counts.
                        response = await self._client.send(request, stream=True)
                        await response.aclose()
                except httpx.ConnectError as error:
                    unreachable = f"cannot connect to {address}: {_describe(error)}"
                    continue
                except httpx.HTTPError as error:
                    return Attempt(Answer.RETRY, _describe(error))
                return _judge(response)
            return Attempt(Answer.RETRY, unreachable)
        return Attempt(Answer.RETRY, f"no answer within {self._timeout:g} s")

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


def _judge(response: httpx.Response) -> Attempt:
    status = response.status_code
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
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, ssl.SSLError):  # httpx says only "ConnectError"
            return f"TLS: {cause}"
        cause = cause.__cause__ or cause.__context__
    return str(error) or type(error).__name__
