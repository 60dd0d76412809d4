"""Where a push may go: the URL's host resolved, every address judged by the policy.

The POST then goes to an address judged here, never to the name (which would be
resolved again, and could resolve elsewhere: DNS rebinding). The policy itself is
pure, in protocol/push.py; this module adds the lookup, and says a refusal: to the
caller in general words, to the log with the address.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..protocol.push import ALLOW_VARIABLE, AllowList, Refusal, literal_address, refusal
from ..webhook.errors import PushRefused
from .url import PushURL, read_url

if TYPE_CHECKING:  # the registry of addresses: imported by the first address judged
    from ..protocol.addresses import IPAddress

logger = logging.getLogger(__name__)

#: Looks a host name up: its addresses, in the order to try them. OSError if it cannot.
#: The system's runs in threads of push's own (lookups.Lookups).
Resolve = Callable[[str, int], Awaitable[Sequence["IPAddress"]]]


@dataclass(frozen=True, slots=True)
class Destination:
    """A URL with the addresses it may be reached at, each judged by the policy."""

    url: PushURL
    addresses: tuple[IPAddress, ...]


async def destination(url: str, allow: AllowList, resolve: Resolve) -> Destination:
    """Where a POST to `url` may go. PushRefused when the policy refuses it; OSError when
    the name does not resolve (to any address)."""
    try:
        parsed = read_url(url)  # the reading the POST is then made of
    except ValueError as error:
        raise PushRefused(f"the URL cannot be read: {error}") from None
    host = parsed.host  # an international name in its IDNA form
    literal = literal_address(host)
    if literal is not None:
        addresses: Sequence[IPAddress] = (literal,)
    else:
        addresses = await resolve(host, parsed.port)
        if not addresses:
            raise OSError(f"{host} resolves to no address")
    refused = refusal(host, addresses, allow)
    if refused is not None:
        _log(host, refused)
        raise PushRefused(_reason(refused))
    return Destination(parsed, tuple(addresses))


def _reason(refused: Refusal) -> str:
    # What a name resolves to maps the operator's network for whoever asks: the caller
    # hears only the kind of address, and an address only if they wrote it.
    subject = f"{refused.address} is" if refused.literal else "its host resolves to"
    return (
        f"{subject} {refused.kind.value}; push notifications go there only if "
        f"{ALLOW_VARIABLE} allows it"
    )


def _log(host: str, refused: Refusal) -> None:
    fields = {
        "event": "push_refused",
        "host": host,
        "address": str(refused.address),
        "kind": refused.kind.name.lower(),
    }
    logger.warning(
        "push to %s refused: %s is %s",
        host,
        refused.address,
        refused.kind.value,
        extra={"fields": fields},
    )
