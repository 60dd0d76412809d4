from __future__ import annotations

from n8n_a2a.protocol.card import agent_card
from tests.conftest import make_settings


def test_the_v1_card_has_no_legacy_fields_and_lists_v1_first() -> None:
    card = agent_card(make_settings(public_url="https://agent.example/a2a"), legacy_fields=False)
    assert not {"url", "protocolVersion", "preferredTransport", "additionalInterfaces"} & set(card)
    assert card["supportedInterfaces"] == [
        {
            "url": "https://agent.example/a2a",
            "protocolBinding": "JSONRPC",
            "protocolVersion": "1.0",
        },
        {
            "url": "https://agent.example/a2a",
            "protocolBinding": "JSONRPC",
            "protocolVersion": "0.3",
        },
    ]
    assert card["capabilities"] == {"streaming": True, "pushNotifications": True}
    [skill] = card["skills"]
    assert skill["id"] == "check_availability"
    assert skill["examples"] == ["Are there 4 pallets of flour?"]
    assert skill["tags"]


def test_the_legacy_card_adds_what_v03_clients_need() -> None:
    card = agent_card(make_settings(public_url="https://agent.example/a2a"), legacy_fields=True)
    # a2a-inspector's required fields, all present and non-empty
    for field in (
        "name",
        "description",
        "url",
        "version",
        "capabilities",
        "defaultInputModes",
        "defaultOutputModes",
        "skills",
    ):
        assert card[field] not in (None, "", []), field
    assert card["url"] == "https://agent.example/a2a"
    assert card["protocolVersion"] == "0.3.0"
    assert card["preferredTransport"] == "JSONRPC"
