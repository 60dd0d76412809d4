"""The webhook's connection pool, and a call's exchange on it.

httpcore's own pool walks every connection it holds on each request and on each reply,
and polls the socket of every idle one: its cost per call grows with the calls under
way. Here idle connections wait on a stack; a request takes the newest that is still
good, or opens one, and the end of its exchange gives it back, so a call costs the same
at any concurrency. No limit on connections: the executor's ADAPTER_MAX_CONCURRENT_CALLS
bounds them.

The webhook client sends httpcore.Request straight to the pool: httpx's client layers
(its request and response models, auth and redirect steps) cost a sixth of a send and
do nothing the client needs, since it follows no redirect and sets every header itself.
Only public API, so that an upgrade cannot change it unseen: the connections are
httpcore.AsyncHTTP11Connection on streams the pool opens with webhook/network.py's
backend. (httpcore.AsyncHTTPConnection around each would take a lock on every request,
one more pass of trio's scheduler, to choose between HTTP/1.1 and HTTP/2 once.)
"""

from __future__ import annotations

import collections
import ssl
import typing
from collections.abc import AsyncIterable, Callable
from types import TracebackType
from urllib.parse import quote, urlsplit

import httpcore
import trio

from .network import TrioNetwork

#: Seconds an idle connection is kept: httpx's own default.
KEEPALIVE_EXPIRY = 5.0


class StackPool:
    """HTTP/1.1 connections, the idle ones on a stack; TLS with the context `tls` makes,
    made by the first https connection (reading a trust store costs a start about a
    tenth of its instructions, which an http:// webhook never needs)."""

    def __init__(self, tls: Callable[[], ssl.SSLContext]) -> None:
        self._tls = tls
        self._ssl_context: ssl.SSLContext | None = None
        self._network = TrioNetwork()
        self._idle: collections.deque[httpcore.AsyncHTTP11Connection] = collections.deque()
        self._closed = False

    async def send(
        self, request: httpcore.Request
    ) -> tuple[httpcore.AsyncHTTP11Connection, httpcore.Response]:
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

    async def _take(self, origin: httpcore.Origin) -> httpcore.AsyncHTTP11Connection:
        while self._idle:
            connection = self._idle.pop()
            if (
                connection.can_handle_request(origin)
                and connection.is_available()
                and not connection.has_expired()
            ):
                return connection
            await _close(connection)
        return await self._connect(origin)

    async def _connect(self, origin: httpcore.Origin) -> httpcore.AsyncHTTP11Connection:
        """A new connection to the origin; for https, TLS checked against its host name."""
        host = origin.host.decode("ascii")
        stream = await self._network.connect_tcp(host, origin.port)
        if origin.scheme == b"https":
            # A failed or cancelled handshake closes its socket (webhook/network.py).
            stream = await stream.start_tls(self._tls_context(), server_hostname=host)
        return httpcore.AsyncHTTP11Connection(origin, stream, keepalive_expiry=KEEPALIVE_EXPIRY)

    def _tls_context(self) -> ssl.SSLContext:
        if self._ssl_context is None:
            self._ssl_context = self._tls()
            # As httpcore offers it, without HTTP/2.
            self._ssl_context.set_alpn_protocols(["http/1.1"])
        return self._ssl_context

    async def give_back(self, connection: httpcore.AsyncHTTP11Connection) -> None:
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

    def exchange(self, request: httpcore.Request) -> Exchange:
        """The request's exchange: `async with` it for the reply."""
        return Exchange(self, request)


class Exchange:
    """One request and its reply on a connection of the pool. Entered, it is the reply
    (httpcore.Response; its body `reply.stream`, httpcore's errors as they come); left,
    the reply is closed and its connection given back, kept only if read to its end."""

    __slots__ = ("_connection", "_pool", "_reply", "_request")

    def __init__(self, pool: StackPool, request: httpcore.Request) -> None:
        self._pool = pool
        self._request = request

    async def __aenter__(self) -> httpcore.Response:
        self._connection, self._reply = await self._pool.send(self._request)
        return self._reply

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        # Shielded: a call cancelled at its deadline must still close its connection or
        # put it back (httpcore keeps only a connection whose reply was read to the end).
        with trio.CancelScope(shield=True):
            try:
                await self._reply.aclose()
            finally:
                await self._pool.give_back(self._connection)


def reply_body(reply: httpcore.Response) -> AsyncIterable[bytes]:
    """The reply's body as it comes off the connection (an exchange's reply streams it)."""
    return typing.cast(AsyncIterable[bytes], reply.stream)


def reply_header(reply: httpcore.Response, name: bytes) -> str:
    """The reply's header `name` (lower-case), its values joined as httpx joined them;
    "" when it has none. UTF-8, or Latin-1 where that fails, as httpx decoded them."""
    values = [value for key, value in reply.headers if key.lower() == name]
    if not values:
        return ""
    joined = b", ".join(values)
    try:
        return joined.decode()
    except UnicodeDecodeError:
        return joined.decode("latin-1")


async def _close(connection: httpcore.AsyncHTTP11Connection) -> None:
    with trio.CancelScope(shield=True):
        await connection.aclose()


# What a path and a query keep as written (the WHATWG URL standard's percent-encode
# sets, as httpx applies them): anything else, every non-ASCII character among them,
# goes as the %XX of its UTF-8.
_PATH_KEEPS = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) not in '"#<>?`{}')
_QUERY_KEEPS = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) not in '"#<>')
_DEFAULT_PORTS = {"http": 80, "https": 443}


def request_url(url: str) -> tuple[httpcore.URL, bytes]:
    """An http(s) URL as the settings take it, as httpcore sends to it, and its Host
    header, both as httpx made them: the host lower-cased and IDNA-encoded, the port
    named only when not the scheme's default, the path and query percent-encoded."""
    parts = urlsplit(url)
    host = parts.hostname or ""  # lower-cased, without an IPv6 address's brackets
    raw_host = host.encode("ascii") if host.isascii() else host.encode("idna")
    port = None if parts.port == _DEFAULT_PORTS[parts.scheme] else parts.port
    target = quote(parts.path or "/", safe=_PATH_KEEPS)
    if parts.query:
        target += "?" + quote(parts.query, safe=_QUERY_KEEPS)
    named = b"[%b]" % raw_host if b":" in raw_host else raw_host
    host_header = named if port is None else b"%b:%d" % (named, port)
    return (
        httpcore.URL(scheme=parts.scheme, host=raw_host, port=port, target=target),
        host_header,
    )
