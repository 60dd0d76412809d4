"""Where a push may go: the URL's host resolved, every address judged by the policy.

The POST then goes to an address judged here, never to the name (which would be
resolved again, and could resolve elsewhere: DNS rebinding). The policy itself is
pure, in protocol/push.py; this module adds the lookup.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import httpx
import trio

from ..protocol.push import AllowList, IPAddress, literal_address, refusal

#: Looks a host name up: its addresses, in the order to try them. OSError if it cannot.
Resolve = Callable[[str, int], Awaitable[Sequence[IPAddress]]]


async def system_resolve(host: str, port: int) -> list[IPAddress]:
    """The system resolver's addresses for the host (trio runs it in a worker thread)."""
    infos = await trio.socket.getaddrinfo(host, port, type=trio.socket.SOCK_STREAM)
    found: list[IPAddress] = []
    for *_, sockaddr in infos:
        address = literal_address(str(sockaddr[0]))
        if address is not None and address not in found:
            found.append(address)
    return found


class Refused(Exception):
    """The policy refuses the URL; the message says why and names ADAPTER_PUSH_ALLOW_HOSTS."""


@dataclass(frozen=True, slots=True)
class Destination:
    """A URL with the addresses it may be reached at, each judged by the policy."""

    url: httpx.URL
    addresses: tuple[IPAddress, ...]


async def destination(url: str, allow: AllowList, resolve: Resolve) -> Destination:
    """Where a POST to `url` may go. Refused by the policy; OSError when the name does not
    resolve (to any address)."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as error:
        raise Refused(f"the URL cannot be read: {error}") from None
    host = parsed.raw_host.decode("ascii")  # an international name in its IDNA form
    literal = literal_address(host)
    if literal is not None:
        addresses: Sequence[IPAddress] = (literal,)
    else:
        addresses = await resolve(host, _port(parsed))
        if not addresses:
            raise OSError(f"{host} resolves to no address")
    reason = refusal(host, addresses, allow)
    if reason is not None:
        raise Refused(reason)
    return Destination(parsed, tuple(addresses))


def _port(url: httpx.URL) -> int:
    return url.port or (443 if url.scheme == "https" else 80)
