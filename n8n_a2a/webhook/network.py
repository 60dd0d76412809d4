"""The webhook pool's network backend: trio sockets, on httpcore's public interface.

httpcore's own TrioBackend wraps every read and write in a `trio.fail_after` and an
exception-mapping context manager, an infinite deadline when no timeout is given: two
context managers and a cancel scope per operation, several per call. The webhook call
passes no per-operation timeout, since one deadline (ADAPTER_WEBHOOK_TIMEOUT) bounds its
whole exchange and cancels whatever is under way at it; so here an operation without a
timeout is the bare await, its errors mapped by a try statement, and one given a timeout
is bounded as httpcore bounds it. trio's errors become httpcore's as in httpcore's
TrioBackend, the trio error as the cause (an ssl.SSLError further down, for the client
to tell a TLS failure by); TLS is trio.SSLStream as there too.
"""

from __future__ import annotations

import ssl
import typing

import httpcore
import trio

if typing.TYPE_CHECKING:
    from collections.abc import Iterable

#: httpcore's type for a socket option (httpcore.AsyncNetworkBackend.connect_tcp's).
SocketOption = (
    tuple[int, int, int] | tuple[int, int, bytes | bytearray] | tuple[int, int, None, int]
)


class TrioNetwork(httpcore.AsyncNetworkBackend):
    """TCP connections over trio, each a TrioNetworkStream."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
        local_address: str | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            # Once per connection, not per operation: the scope costs nothing to speak of.
            with trio.fail_after(_seconds(timeout)):
                stream = await trio.open_tcp_stream(host, port, local_address=local_address)
        except trio.TooSlowError as error:
            raise httpcore.ConnectTimeout(error) from error
        except (trio.BrokenResourceError, OSError) as error:
            raise httpcore.ConnectError(error) from error
        for option in socket_options or ():
            stream.setsockopt(*option)
        return TrioNetworkStream(stream, stream)

    async def sleep(self, seconds: float) -> None:
        await trio.sleep(seconds)


class TrioNetworkStream(httpcore.AsyncNetworkStream):
    """One connection: its socket stream, or the TLS stream over it."""

    def __init__(
        self,
        stream: trio.SocketStream | trio.SSLStream[trio.SocketStream],
        socket_stream: trio.SocketStream,
    ) -> None:
        self._stream = stream
        self._socket_stream = socket_stream

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:  # noqa: ASYNC109
        try:
            if timeout is None:
                data = await self._stream.receive_some(max_bytes)
            else:
                with trio.fail_after(timeout):
                    data = await self._stream.receive_some(max_bytes)
        except trio.TooSlowError as error:
            raise httpcore.ReadTimeout(error) from error
        except (trio.BrokenResourceError, trio.ClosedResourceError) as error:
            raise httpcore.ReadError(error) from error
        # A TLS stream's receive_some may hand back a bytearray, which h11 takes alike.
        return typing.cast(bytes, data)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:  # noqa: ASYNC109
        if not buffer:
            return
        try:
            if timeout is None:
                await self._stream.send_all(buffer)
            else:
                with trio.fail_after(timeout):
                    await self._stream.send_all(buffer)
        except trio.TooSlowError as error:
            raise httpcore.WriteTimeout(error) from error
        except (trio.BrokenResourceError, trio.ClosedResourceError) as error:
            raise httpcore.WriteError(error) from error

    async def aclose(self) -> None:
        # A TLS stream made https_compatible closes its socket without a close_notify,
        # so this cannot wait on a peer: callers close shielded.
        await self._stream.aclose()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
    ) -> httpcore.AsyncNetworkStream:
        tls = trio.SSLStream(
            self._socket_stream,
            ssl_context,
            server_hostname=server_hostname,
            https_compatible=True,
        )
        try:
            with trio.fail_after(_seconds(timeout)):
                await tls.do_handshake()
        except BaseException as error:
            # Cancelled too: httpcore keeps no connection whose handshake did not end, so
            # its socket is closed here or not at all.
            await trio.aclose_forcefully(self._socket_stream)
            if isinstance(error, trio.TooSlowError):
                raise httpcore.ConnectTimeout(error) from error
            if isinstance(error, trio.BrokenResourceError):
                raise httpcore.ConnectError(error) from error
            raise
        return TrioNetworkStream(tls, self._socket_stream)

    def get_extra_info(self, info: str) -> typing.Any:
        socket = self._socket_stream.socket
        if info == "is_readable":
            # What the pool asks of an idle connection: readable means the server closed it.
            return socket.is_readable()
        if info == "ssl_object":
            # trio.SSLStream answers what httpcore asks of an ssl.SSLObject (its
            # selected_alpn_protocol, getpeercert, version, ...): it forwards them.
            return self._stream if isinstance(self._stream, trio.SSLStream) else None
        if info == "socket":
            return socket
        if info == "client_addr":
            return socket.getsockname()
        if info == "server_addr":
            return socket.getpeername()
        return None


def _seconds(timeout: float | None) -> float:
    return float("inf") if timeout is None else timeout
