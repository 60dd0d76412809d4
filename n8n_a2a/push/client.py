"""The push sender's POST: one HTTP/1.1 exchange on a connection of its own, to an address
the guard judged, closed as soon as the answer's status is in (its body is never read).

On the webhook's HTTP/1.1 (webhook/network.py's streams, webhook/pool.py's writing and
head reading, webhook/http11.py's framing): the address dialled, TLS checked against the
URL's name (SNI and the certificate), the name in Host. No pool: a connection is never
handed to another name on the same address (TLS checked against one name must not carry
another's update), no receiver waits for a connection that another one holds, and a POST
costs the same however many are under way. No redirect is followed (a 3xx is the
answer), no proxy is taken from the environment. Nothing here logs: the headers carry
the token and the credentials.
"""

from __future__ import annotations

import ssl
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING

import trio

from .. import __version__
from ..webhook.http11 import ReplyReader, field_lines
from ..webhook.network import Origin, WebhookStream
from ..webhook.pool import exchange_head
from .url import PushURL

if TYPE_CHECKING:  # the registry of addresses: imported by the first address judged
    from ..protocol.addresses import IPAddress

#: Opens a connection: to the origin (its host an address), TLS (`tls`, None for http)
#: checked against the name (webhook/network.py's open_stream; a fake in tests).
# ssl's type as text: ssl is imported as the first https URL is dialled (http/unused.py).
Connect = Callable[[Origin, "ssl.SSLContext | None", str], Awaitable[WebhookStream]]

_USER_AGENT = f"n8n-a2a/{__version__}".encode()


def request_head(url: PushURL, headers: Mapping[str, str], length: int) -> bytes:
    """The POST's head: Host the URL's name, the caller's headers, the body's length,
    and the close that follows the answer. LocalProtocolError for a header HTTP/1.1
    cannot carry; UnicodeEncodeError for one that is not ASCII (as httpx refused it)."""
    fields = field_lines(
        [
            (b"Host", url.host_header),
            (b"User-Agent", _USER_AGENT),
            *((name.encode("ascii"), value.encode("ascii")) for name, value in headers.items()),
            (b"Content-Length", b"%d" % length),
            (b"Connection", b"close"),
        ]
    )
    return b"POST %b HTTP/1.1\r\n%b\r\n" % (url.target, fields)


async def post(
    connect: Connect,
    url: PushURL,
    address: IPAddress,
    request: tuple[bytes, bytes],
    tls: ssl.SSLContext | None,
) -> int:
    """POST `request` (its head and body) to `address`: the answer's status. The errors
    of webhook/errors.py as they come: ConnectError when no connection (TLS included)
    is made."""
    stream = await connect(Origin(url.scheme, str(address), url.port), tls, url.host)
    try:
        head, body = request
        reader = ReplyReader()
        await exchange_head(stream, head, body, reader)
        assert reader.head is not None
        return reader.head.status
    finally:
        with trio.CancelScope(shield=True):
            await stream.aclose()
