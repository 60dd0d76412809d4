"""The webhook's connection pool, and the httpx transport that sends through it.

httpcore's own pool walks every connection it holds on each request and on each reply,
and polls the socket of every idle one: its cost per call grows with the calls under
way. Here idle connections wait on a stack; a request takes the newest that is still
good, or opens one, and closing its reply gives it back, so a call costs the same at any
concurrency. No limit on connections: the executor's ADAPTER_MAX_CONCURRENT_CALLS bounds
them.

Only public API on both sides, so that an upgrade cannot change it unseen: the transport
is an httpx.AsyncBaseTransport, a reply's body an httpx.AsyncByteStream, and the
connections are httpcore.AsyncHTTPConnection; httpcore's errors are raised as httpx's
(webhook/httpcore_errors.py).
"""

from __future__ import annotations

import collections
import ssl
import typing

import httpcore
import httpx
import trio

from .httpcore_errors import httpx_errors

#: Seconds an idle connection is kept: httpx's own default.
KEEPALIVE_EXPIRY = 5.0


class StackPool:
    """HTTP/1.1 connections, the idle ones on a stack; TLS with the given context."""

    def __init__(self, ssl_context: ssl.SSLContext) -> None:
        self._ssl_context = ssl_context
        self._network = httpcore.TrioBackend()
        self._idle: collections.deque[httpcore.AsyncHTTPConnection] = collections.deque()
        self._closed = False

    async def send(
        self, request: httpcore.Request
    ) -> tuple[httpcore.AsyncHTTPConnection, httpcore.Response]:
        """Send on a connection of the pool; give it back when done with the reply."""
        origin = request.url.origin
        while True:
            connection = await self._take(origin)
            try:
                return connection, await connection.handle_async_request(request)
            except httpcore.ConnectionNotAvailable:
                await self.give_back(connection)  # the server closed it just now: take another
            except BaseException:
                await self.give_back(connection)
                raise

    async def _take(self, origin: httpcore.Origin) -> httpcore.AsyncHTTPConnection:
        while self._idle:
            connection = self._idle.pop()
            if (
                connection.can_handle_request(origin)
                and connection.is_available()
                and not connection.has_expired()
            ):
                return connection
            await _close(connection)
        return httpcore.AsyncHTTPConnection(
            origin,
            ssl_context=self._ssl_context,
            keepalive_expiry=KEEPALIVE_EXPIRY,
            network_backend=self._network,
        )

    async def give_back(self, connection: httpcore.AsyncHTTPConnection) -> None:
        """Keep the connection for the next request if it can take one, else close it."""
        if connection.is_idle() and not self._closed:
            self._idle.append(connection)
        elif not connection.is_closed():
            await _close(connection)
        # The oldest idle connection is the one to go stale first: one look per call
        # keeps the stack from holding connections the server has long closed.
        if len(self._idle) > 1 and self._idle[0].has_expired():
            await _close(self._idle.popleft())

    async def aclose(self) -> None:
        """Close the idle connections; those in use close when their replies do."""
        self._closed = True
        while self._idle:
            await _close(self._idle.pop())


class StackPoolTransport(httpx.AsyncBaseTransport):
    """httpx's way into a StackPool."""

    def __init__(self, ssl_context: ssl.SSLContext) -> None:
        self._pool = StackPool(ssl_context)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if url.scheme not in ("http", "https"):
            raise httpx.UnsupportedProtocol(
                f"Request URL has an unsupported protocol '{url.scheme}://'."
                if url.scheme
                else "Request URL is missing an 'http://' or 'https://' protocol."
            )
        with httpx_errors():
            connection, reply = await self._pool.send(
                httpcore.Request(
                    method=request.method,
                    url=httpcore.URL(
                        scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path
                    ),
                    headers=request.headers.raw,
                    content=request.stream,
                    extensions=request.extensions,
                )
            )
        return httpx.Response(
            status_code=reply.status,
            headers=reply.headers,
            stream=_ReplyBody(reply, connection, self._pool),
            extensions=reply.extensions,
        )

    async def aclose(self) -> None:
        await self._pool.aclose()


class _ReplyBody(httpx.AsyncByteStream):
    """A reply's body, with httpx's errors, that gives its connection back when closed."""

    def __init__(
        self,
        reply: httpcore.Response,
        connection: httpcore.AsyncHTTPConnection,
        pool: StackPool,
    ) -> None:
        assert isinstance(reply.stream, typing.AsyncIterable)
        self._reply = reply
        self._stream = reply.stream
        self._connection = connection
        self._pool = pool
        self._closed = False

    async def __aiter__(self) -> typing.AsyncIterator[bytes]:
        try:
            with httpx_errors():
                async for part in self._stream:
                    yield part
        except BaseException:
            await self.aclose()
            raise

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        # Shielded: a call cancelled at its deadline must still close its connection or
        # put it back (httpcore keeps only a connection whose reply was read to the end).
        with trio.CancelScope(shield=True), httpx_errors():
            try:
                await self._reply.aclose()
            finally:
                await self._pool.give_back(self._connection)


async def _close(connection: httpcore.AsyncHTTPConnection) -> None:
    with trio.CancelScope(shield=True):
        await connection.aclose()
