from __future__ import annotations

from a2a.compat.v0_3 import types as v03_types
from a2a.types import a2a_pb2
from google.protobuf import json_format  # type: ignore[import-untyped]

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


ISSUER = "https://login.example/realms/agents"
DISCOVERY = ISSUER + "/.well-known/openid-configuration"


def test_without_an_issuer_the_bearer_token_is_optional() -> None:
    for legacy in (False, True):
        card = agent_card(make_settings(), legacy_fields=legacy)
        assert list(card["securitySchemes"]) == ["bearer"]
        assert "security" not in card and "securityRequirements" not in card


def test_with_an_issuer_the_v1_card_requires_its_tokens_as_the_sdk_reads_them() -> None:
    settings = make_settings(oidc_issuer=ISSUER + "/", oidc_audience="supply-agent")
    card = agent_card(settings, legacy_fields=False)
    parsed = json_format.ParseDict(card, a2a_pb2.AgentCard())
    scheme = parsed.security_schemes["oidc"]
    assert scheme.WhichOneof("scheme") == "open_id_connect_security_scheme"
    assert scheme.open_id_connect_security_scheme.open_id_connect_url == DISCOVERY
    assert "supply-agent" in scheme.open_id_connect_security_scheme.description
    [requirement] = parsed.security_requirements
    assert list(requirement.schemes) == ["oidc"]


def test_with_an_issuer_the_v03_card_requires_its_tokens_as_the_sdk_reads_them() -> None:
    settings = make_settings(oidc_issuer=ISSUER, oidc_audience="supply-agent")
    card = agent_card(settings, legacy_fields=True)
    parsed = v03_types.AgentCard.model_validate(card)
    assert parsed.security_schemes is not None
    scheme = parsed.security_schemes["oidc"].root
    assert isinstance(scheme, v03_types.OpenIdConnectSecurityScheme)
    assert scheme.open_id_connect_url == DISCOVERY
    assert parsed.security == [{"oidc": []}]
