"""The webhook's streams: a TCP connection over trio, TLS over it for https.

No deadline of its own: the call's one deadline (ADAPTER_WEBHOOK_TIMEOUT) bounds the
connect, the handshake and every read and write after. trio's errors become
webhook/errors.py's, the trio error as the cause (an ssl.SSLError further down, for the
client to tell a TLS failure by).
"""

from __future__ import annotations

import socket as socket_module
import ssl
from dataclasses import dataclass

import trio

from .errors import ConnectError, ReadError, WriteError

#: The most read from the socket at once (httpcore's figure).
READ_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class Origin:
    """Where the webhook is: the scheme ("http" or "https"), the host to connect to and
    check TLS against (IDNA-encoded, an IPv6 address without brackets), the port."""

    scheme: str
    host: str
    port: int


class WebhookStream:
    """One connection to the webhook: its socket, or the TLS stream over it."""

    __slots__ = ("_socket", "_stream")

    def __init__(
        self,
        stream: trio.SocketStream | trio.SSLStream[trio.SocketStream],
        socket: trio.SocketStream,
    ) -> None:
        self._stream = stream
        self._socket = socket

    async def send(self, data: bytes | memoryview) -> None:
        try:
            await self._stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError) as error:
            raise WriteError(str(error) or type(error).__name__) from error

    async def receive(self) -> bytes:
        """The next bytes to come; b"" once the webhook closed its end."""
        try:
            data = await self._stream.receive_some(READ_BYTES)
        except (trio.BrokenResourceError, trio.ClosedResourceError) as error:
            raise ReadError(str(error) or type(error).__name__) from error
        # A TLS stream's receive_some may hand back a bytearray.
        return data if type(data) is bytes else bytes(data)

    def is_readable(self) -> bool:
        """Whether there is something to read: of an idle connection, that the webhook
        closed it (or sent what nobody asked for)."""
        return self._socket.socket.is_readable()

    async def aclose(self) -> None:
        # A TLS stream made https_compatible closes its socket without a close_notify,
        # so this cannot wait on a peer: callers close shielded.
        await self._stream.aclose()


async def open_stream(
    origin: Origin, tls: ssl.SSLContext | None, server_hostname: str | None = None
) -> WebhookStream:
    """A new connection to the origin; for https (`tls` its context), TLS checked
    against its host. `server_hostname`: the name the origin's host, an address, stands
    for (push/client.py dials the address its guard judged): TLS is checked against the
    name."""
    try:
        socket = await _connect(origin.host, origin.port)
    except (trio.BrokenResourceError, OSError) as error:
        raise ConnectError(str(error) or type(error).__name__) from error
    if tls is None:
        return WebhookStream(socket, socket)
    name = server_hostname or origin.host
    stream = trio.SSLStream(socket, tls, server_hostname=name, https_compatible=True)
    try:
        await stream.do_handshake()
    except BaseException as error:
        # Cancelled too: nothing keeps a connection whose handshake did not end, so its
        # socket is closed here or not at all.
        await trio.aclose_forcefully(socket)
        if isinstance(error, trio.BrokenResourceError):
            raise ConnectError(str(error.__cause__ or error)) from error
        raise
    return WebhookStream(stream, socket)


async def _connect(host: str, port: int) -> trio.SocketStream:
    """A TCP connection to the host's one address, or, where it has several, to the first
    that answers (trio.open_tcp_stream's happy eyeballs). With one address, the socket is
    connected here: open_tcp_stream's nursery, tasks and deadlines for a race of one cost
    0.66 M instructions a connection, against 0.27 M for this (callgrind), and a burst
    of calls opens a connection each."""
    addresses = await trio.socket.getaddrinfo(host, port, type=socket_module.SOCK_STREAM)
    if len(addresses) != 1:
        return await trio.open_tcp_stream(host, port)
    family, kind, protocol, _, address = addresses[0]
    socket = trio.socket.socket(family, kind, protocol)
    try:
        await socket.connect(address)
    except BaseException:
        socket.close()
        raise
    return trio.SocketStream(socket)
