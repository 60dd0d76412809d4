"""What the reading of a reply is given: the budget's reservation is a ReplyRoom, and a
function of the text is a Relay (mypy holds the assignments below to the types)."""

from __future__ import annotations

import pytest

from n8n_a2a.budget import MemoryBudget, caller_key
from n8n_a2a.core.errors import AtCapacity
from n8n_a2a.webhook.reading import Relay, ReplyRoom


async def test_a_reservation_is_the_room_a_reply_is_read_into() -> None:
    budget = MemoryBudget(100, wait=0.0)
    room: ReplyRoom = budget.reservation(caller_key("token:alice"))
    room.forwarded()
    await room.take(60)
    assert budget.held == 60
    with pytest.raises(AtCapacity):
        await room.take(60)


def test_a_relay_is_handed_each_piece_of_text() -> None:
    relayed: list[str] = []
    relay: Relay = relayed.append
    relay("Twelve ")
    relay("pallets")
    assert relayed == ["Twelve ", "pallets"]
