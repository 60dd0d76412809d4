"""The one call to the workflow's production webhook.

One POST per message. The caller's token travels in X-Subject-Token and nowhere
else; redirects are not followed, so it cannot travel to another address; TLS is
always verified (with ADAPTER_CA_BUNDLE when set); one deadline bounds the whole
exchange, and the reply is read up to a limit.
"""

from __future__ import annotations

import collections
import json
import ssl
import typing
from dataclasses import dataclass, field
from types import TracebackType

import httpcore
import httpx
import trio

from . import __version__
from .config import Settings
from .outcome import HttpReply, Outcome, TransportFailure, WebhookReply

#: The most of a reply that is read; a longer one is off contract anyway.
MAX_REPLY_BYTES = 1024 * 1024
_REDACTED = b"[redacted]"


@dataclass(frozen=True, slots=True)
class WebhookRequest:
    """What the workflow receives: the message text and the A2A ids to key a conversation on."""

    text: str
    task_id: str
    context_id: str
    message_id: str
    skill_id: str

    def body(self) -> bytes:
        return json.dumps(
            {
                "text": self.text,
                "taskId": self.task_id,
                "contextId": self.context_id,
                "messageId": self.message_id,
                "skillId": self.skill_id,
            },
            ensure_ascii=False,
        ).encode()


@dataclass(frozen=True, slots=True)
class Caller:
    """Who asks, and what of the A2A request travels to the workflow besides the message, as
    headers: the caller's token (as X-Subject-Token) and its W3C trace context.

    `owner` (identity.Owner) says whose tasks the caller may touch; it stays in the adapter.
    """

    subject_token: str | None = None
    trace_headers: tuple[tuple[str, str], ...] = ()
    owner: str | None = field(default=None, repr=False)


class _StackPool(httpcore.AsyncConnectionPool):
    """httpcore's connection pool, with bookkeeping that costs the same at any concurrency.

    httpcore's own pool walks every connection it holds on each request and on each
    reply, and polls the socket of every idle one (has_expired): its cost per call grows
    with the calls under way. Here idle connections wait on a stack; a request takes the
    newest that is still good, or opens one, and its reply's close gives it back. No limit
    on connections: the executor's ADAPTER_MAX_CONCURRENT_CALLS bounds them.
    """

    def __init__(self, ssl_context: ssl.SSLContext) -> None:
        # httpx's own default keep-alive expiry, which the transport would have passed.
        super().__init__(ssl_context=ssl_context, max_connections=None, keepalive_expiry=5.0)
        self._idle: collections.deque[httpcore.AsyncConnectionInterface] = collections.deque()

    async def handle_async_request(self, request: httpcore.Request) -> httpcore.Response:
        origin = request.url.origin
        while True:
            connection = await self._take(origin)
            try:
                response = await connection.handle_async_request(request)
            except httpcore.ConnectionNotAvailable:
                continue  # the server closed it just now: take another
            except BaseException:
                await self._give(connection)
                raise
            assert isinstance(response.stream, typing.AsyncIterable)
            return httpcore.Response(
                status=response.status,
                headers=response.headers,
                content=_GiveBackOnClose(response.stream, connection, self),
                extensions=response.extensions,
            )

    async def _take(self, origin: httpcore.Origin) -> httpcore.AsyncConnectionInterface:
        while self._idle:
            connection = self._idle.pop()
            if (
                connection.can_handle_request(origin)
                and connection.is_available()
                and not connection.has_expired()
            ):
                return connection
            await _close(connection)
        return self.create_connection(origin)

    async def _give(self, connection: httpcore.AsyncConnectionInterface) -> None:
        if connection.is_idle():
            self._idle.append(connection)
        elif not connection.is_closed():
            await _close(connection)
        # The oldest idle connection is the one to go stale first: one look per call
        # keeps the stack from holding connections the server has long closed.
        if len(self._idle) > 1 and self._idle[0].has_expired():
            await _close(self._idle.popleft())

    async def aclose(self) -> None:
        while self._idle:
            await _close(self._idle.pop())
        await super().aclose()


class _GiveBackOnClose:
    """A reply's body stream that gives its connection back to the pool when closed."""

    def __init__(
        self,
        stream: typing.AsyncIterable[bytes],
        connection: httpcore.AsyncConnectionInterface,
        pool: _StackPool,
    ) -> None:
        self._stream = stream
        self._connection = connection
        self._pool = pool
        self._closed = False

    async def __aiter__(self) -> typing.AsyncIterator[bytes]:
        try:
            async for part in self._stream:
                yield part
        except BaseException:
            await self.aclose()
            raise

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            with trio.CancelScope(shield=True):
                closer = getattr(self._stream, "aclose", None)
                if closer is not None:
                    await closer()
                await self._pool._give(self._connection)


async def _close(connection: httpcore.AsyncConnectionInterface) -> None:
    with trio.CancelScope(shield=True):
        await connection.aclose()


class _Transport(httpx.AsyncHTTPTransport):
    """httpx's transport (its error mapping and all) over the stack pool."""

    def __init__(self, ssl_context: ssl.SSLContext) -> None:
        super().__init__(verify=ssl_context, trust_env=False)
        self._pool = _StackPool(ssl_context)  # httpx 0.28 sends every request through _pool


class WebhookClient:
    """Calls one webhook over a pooled httpx client; use as an async context manager."""

    def __init__(self, settings: Settings) -> None:
        self._url = settings.webhook_url
        self._timeout = settings.webhook_timeout
        self._client = httpx.AsyncClient(
            transport=_Transport(ssl.create_default_context(cafile=settings.ca_bundle)),
            follow_redirects=False,
            timeout=httpx.Timeout(settings.webhook_timeout),
            trust_env=False,
        )

    async def __aenter__(self) -> WebhookClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self._client.aclose()

    async def call(self, request: WebhookRequest, caller: Caller) -> WebhookReply:
        """POST the request; every way it can go wrong comes back as a WebhookReply."""
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": f"n8n-a2a/{__version__}",
            **dict(caller.trace_headers),
        }
        if caller.subject_token is not None:
            headers["X-Subject-Token"] = caller.subject_token
        with trio.move_on_after(self._timeout):
            try:
                return await self._post(request.body(), headers, caller.subject_token)
            except httpx.TimeoutException:
                pass
            except httpx.ConnectError as error:
                return _connect_failure(error)
            except httpx.HTTPError as error:
                return TransportFailure(Outcome.BROKEN_REPLY, _describe(error))
        return TransportFailure(
            Outcome.TIMEOUT, f"no reply within {self._timeout:g} s (ADAPTER_WEBHOOK_TIMEOUT)"
        )

    async def _post(
        self, body: bytes, headers: dict[str, str], subject_token: str | None
    ) -> HttpReply:
        async with self._client.stream("POST", self._url, content=body, headers=headers) as reply:
            received = bytearray()
            truncated = False
            async for chunk in reply.aiter_bytes():
                received += chunk
                if len(received) > MAX_REPLY_BYTES:
                    del received[MAX_REPLY_BYTES:]
                    truncated = True
                    break
            content = bytes(received)
            if subject_token:
                # A workflow that echoes the token must not put it into a task's history.
                content = content.replace(subject_token.encode(), _REDACTED)
            return HttpReply(
                status=reply.status_code,
                body=content,
                content_type=reply.headers.get("content-type", ""),
                location=reply.headers.get("location", ""),
                truncated=truncated,
            )


def _connect_failure(error: httpx.ConnectError) -> TransportFailure:
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, ssl.SSLError):
            return TransportFailure(Outcome.TLS_FAILURE, _describe(cause))
        cause = cause.__cause__ or cause.__context__
    return TransportFailure(Outcome.UNREACHABLE, _describe(error))


def _describe(error: BaseException) -> str:
    return str(error) or type(error).__name__
