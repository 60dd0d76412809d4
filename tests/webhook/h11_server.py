"""A bare HTTP/1.1 server for the pool's and the network backend's tests, over real
sockets on 127.0.0.1, that counts the connections it was opened and closed."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial

import h11
import trio

#: A body far bigger than the socket buffers, so it cannot arrive before it is read.
BIG = 8 * 1024 * 1024


@dataclass
class Server:
    """A bare HTTP/1.1 server on 127.0.0.1 that counts its connections; the request's
    path picks the reply: `/ok`, `/wait` (after 0.1 s), `/big` (BIG bytes), `/bye`
    (then closes the connection, as after a keep-alive timeout), `/cut` (closes midway
    through the body), `/hang-up` (closes without a reply), `/silent` (never replies)."""

    ssl_context: ssl.SSLContext | None = None
    port: int = 0
    opened: int = 0
    closed: int = 0
    _changed: trio.Event = field(default_factory=trio.Event)

    def url(self, path: str) -> str:
        scheme = "https" if self.ssl_context else "http"
        return f"{scheme}://127.0.0.1:{self.port}{path}"

    async def wait_closed(self, count: int) -> None:
        with trio.fail_after(5):
            while self.closed < count:
                await self._changed.wait()

    def _note(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    async def serve_connection(self, tcp: trio.SocketStream) -> None:
        self.opened += 1
        stream: trio.abc.Stream = tcp
        if self.ssl_context is not None:
            stream = trio.SSLStream(tcp, self.ssl_context, server_side=True)
        connection = h11.Connection(h11.SERVER)
        try:
            while isinstance(request := await _next_event(connection, stream), h11.Request):
                while not isinstance(await _next_event(connection, stream), h11.EndOfMessage):
                    pass
                if not await self._answer(request.target.decode(), connection, stream):
                    return
                connection.start_next_cycle()
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # the client closed it, or failed the TLS handshake
        finally:
            await stream.aclose()
            self.closed += 1
            self._note()

    async def _answer(self, path: str, connection: h11.Connection, stream: trio.abc.Stream) -> bool:
        """Reply; whether the connection stays open for another request."""
        if path == "/hang-up":
            return False
        if path == "/silent":
            while await stream.receive_some():
                pass
            return False
        if path == "/wait":
            await trio.sleep(0.1)
        body = b"x" * BIG if path == "/big" else path.encode()
        length = 1000 if path == "/cut" else len(body)
        head = h11.Response(status_code=200, headers=[("Content-Length", str(length))])
        if path == "/cut":
            await _send(connection, stream, head, h11.Data(data=b"x" * 10))
            return False
        await _send(connection, stream, head, h11.Data(data=body), h11.EndOfMessage())
        return path != "/bye"


async def _next_event(connection: h11.Connection, stream: trio.abc.Stream) -> object:
    while (event := connection.next_event()) is h11.NEED_DATA:
        connection.receive_data(bytes(await stream.receive_some(65536)))
    return event


async def _send(connection: h11.Connection, stream: trio.abc.Stream, *events: h11.Event) -> None:
    await stream.send_all(b"".join(connection.send(event) or b"" for event in events))


async def start_server(nursery: trio.Nursery, ssl_context: ssl.SSLContext | None = None) -> Server:
    server = Server(ssl_context)
    listeners = await nursery.start(
        partial(trio.serve_tcp, host="127.0.0.1"), server.serve_connection, 0
    )
    server.port = listeners[0].socket.getsockname()[1]
    return server


def causes(error: BaseException | None) -> Iterator[BaseException]:
    """The error and what caused it, as the webhook client walks them to tell TLS apart."""
    while error is not None:
        yield error
        error = error.__cause__ or error.__context__
