"""The push sender's httpx client: a new connection for every POST, closed with its answer.

Imported by the first POST (push/sender.py), with httpx: a start that never pushes
imports neither.
"""

from __future__ import annotations

import logging
import ssl
import typing

import httpcore
import httpx
import trio

from .. import __version__
from .httpcore_errors import httpx_errors

# httpcore's DEBUG trace quotes every answer's headers, which a receiver may fill with
# what it was sent: its lines stop at INFO, whatever the level.
logging.getLogger("httpcore").setLevel(logging.INFO)


def push_client(
    ssl_context: ssl.SSLContext, timeout: float, transport: httpx.AsyncBaseTransport | None = None
) -> httpx.AsyncClient:
    """The sender's client: no redirects, no proxies from the environment, each POST on a
    connection of its own (`transport` replaces the network: tests)."""
    return httpx.AsyncClient(
        transport=transport or OneConnectionEach(ssl_context),
        follow_redirects=False,
        timeout=httpx.Timeout(timeout),
        trust_env=False,
        headers={"User-Agent": f"n8n-a2a/{__version__}"},
    )


class OneConnectionEach(httpx.AsyncBaseTransport):
    """A new connection for every POST, closed with its answer.

    No pool: a connection is never handed to another name on the same address (TLS
    checked against one name must not carry another's update), no receiver waits for a
    connection that another one holds, and a POST costs the same however many are under
    way (httpcore's pool walks every connection it holds on each request and each
    answer: with a few hundred receivers that never answer, that was most of the CPU).
    """

    def __init__(self, ssl_context: ssl.SSLContext) -> None:
        self._ssl_context = ssl_context

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        port = url.port or (443 if url.scheme == "https" else 80)
        connection = httpcore.AsyncHTTPConnection(
            httpcore.Origin(url.raw_scheme, url.raw_host, port), ssl_context=self._ssl_context
        )
        assert isinstance(request.stream, typing.AsyncIterable)
        try:
            with httpx_errors():
                answer = await connection.handle_async_request(
                    httpcore.Request(
                        request.method,
                        httpcore.URL(
                            scheme=url.raw_scheme, host=url.raw_host, port=port, target=url.raw_path
                        ),
                        headers=request.headers.raw,
                        content=request.stream,
                        extensions=request.extensions,
                    )
                )
        except BaseException:
            await _close(connection)
            raise
        return httpx.Response(
            answer.status,
            headers=answer.headers,
            stream=_ClosingWithConnection(answer, connection),
            extensions=answer.extensions,
        )


class _ClosingWithConnection(httpx.AsyncByteStream):
    """An answer's body (never read by the sender) that closes its connection with it."""

    def __init__(self, answer: httpcore.Response, connection: httpcore.AsyncHTTPConnection):
        self._answer = answer
        self._connection = connection

    async def __aiter__(self) -> typing.AsyncIterator[bytes]:
        with httpx_errors():
            async for part in self._answer.aiter_stream():
                yield part

    async def aclose(self) -> None:
        with trio.CancelScope(shield=True), httpx_errors():
            try:
                await self._answer.aclose()
            finally:
                await self._connection.aclose()


async def _close(connection: httpcore.AsyncHTTPConnection) -> None:
    with trio.CancelScope(shield=True):
        await connection.aclose()
