"""What the caller of the webhook gives the reading of its reply: the room the reply's
bytes are taken from (ReplyRoom), and where a streamed reply's text goes as it comes
(Relay).

Its own module, which client.py and streamed_reply.py both import, so that neither
imports the other for these names (client.py imports streamed_reply.py, and only at the
first streamed read).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

#: Where the text of a streamed reply goes as it comes (the executor's relay to streams).
Relay = Callable[[str], None]


class ReplyRoom(Protocol):
    """Room for a reply's bytes under ADAPTER_MEMORY_BUDGET (budget/room.py's
    Reservation, the request's own): `forwarded` once the request went out, its bytes room
    for the reply from then on; `take` each piece as it is read; AtCapacity when it
    cannot be had."""

    def forwarded(self) -> None: ...

    async def take(self, size: int) -> None: ...
