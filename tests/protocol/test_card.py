from __future__ import annotations

from dataclasses import replace

from a2a.compat.v0_3 import types as v03_types
from a2a.types import a2a_pb2
from google.protobuf import json_format  # type: ignore[import-untyped]

from n8n_a2a.protocol.card import CardFacts, agent_card
from n8n_a2a.protocol.media import Modes

FACTS = CardFacts(
    agent_name="Supply agent",
    agent_description="Checks availability of supplies.",
    version="1.2.3",
    public_url="http://127.0.0.1:1/",
    skill_id="check_availability",
    skill_name="Check availability",
    skill_description="Says whether an item is in stock.",
    skill_examples=("Are there 4 pallets of flour?",),
)


def test_the_v1_card_has_no_legacy_fields_and_lists_json_rpc_v1_first_then_rest() -> None:
    card = agent_card(replace(FACTS, public_url="https://agent.example/a2a"), legacy_fields=False)
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
        {
            "url": "https://agent.example/a2a",
            "protocolBinding": "HTTP+JSON",
            "protocolVersion": "1.0",
        },
    ]
    assert card["capabilities"] == {"streaming": True, "pushNotifications": True}
    [skill] = card["skills"]
    assert skill["id"] == "check_availability"
    assert skill["examples"] == ["Are there 4 pallets of flour?"]
    assert skill["tags"]


def test_the_legacy_card_adds_what_v03_clients_need() -> None:
    card = agent_card(replace(FACTS, public_url="https://agent.example/a2a"), legacy_fields=True)
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
    # The v0.3 REST shape is not served: a v0.3 client must not be sent to it.
    assert card["additionalInterfaces"] == [
        {"url": "https://agent.example/a2a", "transport": "JSONRPC"}
    ]


ISSUER = "https://login.example/realms/agents"
DISCOVERY = ISSUER + "/.well-known/openid-configuration"
OIDC = replace(FACTS, oidc_discovery_url=DISCOVERY, oidc_audience="supply-agent")


def test_without_an_issuer_the_bearer_token_is_optional() -> None:
    for legacy in (False, True):
        card = agent_card(FACTS, legacy_fields=legacy)
        assert list(card["securitySchemes"]) == ["bearer"]
        assert "security" not in card and "securityRequirements" not in card


def test_with_an_issuer_the_v1_card_requires_its_tokens_as_the_sdk_reads_them() -> None:
    card = agent_card(OIDC, legacy_fields=False)
    parsed = json_format.ParseDict(card, a2a_pb2.AgentCard())
    scheme = parsed.security_schemes["oidc"]
    assert scheme.WhichOneof("scheme") == "open_id_connect_security_scheme"
    assert scheme.open_id_connect_security_scheme.open_id_connect_url == DISCOVERY
    assert "supply-agent" in scheme.open_id_connect_security_scheme.description
    [requirement] = parsed.security_requirements
    assert list(requirement.schemes) == ["oidc"]


def test_with_an_issuer_the_v03_card_requires_its_tokens_as_the_sdk_reads_them() -> None:
    card = agent_card(OIDC, legacy_fields=True)
    parsed = v03_types.AgentCard.model_validate(card)
    assert parsed.security_schemes is not None
    scheme = parsed.security_schemes["oidc"].root
    assert isinstance(scheme, v03_types.OpenIdConnectSecurityScheme)
    assert scheme.open_id_connect_url == DISCOVERY
    assert parsed.security == [{"oidc": []}]


def test_a_required_bearer_token_is_a_requirement_in_both_shapes() -> None:
    required = replace(FACTS, require_token=True)
    assert agent_card(required, legacy_fields=False)["securityRequirements"] == [
        {"schemes": {"bearer": {"list": []}}}
    ]
    assert agent_card(required, legacy_fields=True)["security"] == [{"bearer": []}]


def test_the_card_names_the_version_it_is_given() -> None:
    assert agent_card(FACTS, legacy_fields=False)["version"] == "1.2.3"


def test_the_modes_are_the_cards_and_the_skills_in_both_shapes() -> None:
    modes = Modes(("text/plain", "application/json", "image/png"), ("text/plain", "text/csv"))
    for legacy in (False, True):
        card = agent_card(replace(FACTS, modes=modes), legacy_fields=legacy)
        assert card["defaultInputModes"] == ["text/plain", "application/json", "image/png"]
        assert card["defaultOutputModes"] == ["text/plain", "text/csv"]
        [skill] = card["skills"]
        assert (skill["inputModes"], skill["outputModes"]) == (
            card["defaultInputModes"],
            card["defaultOutputModes"],
        )
    parsed = json_format.ParseDict(
        agent_card(replace(FACTS, modes=modes), legacy_fields=False), a2a_pb2.AgentCard()
    )
    assert list(parsed.default_input_modes) == list(modes.inputs)
    v03_card = v03_types.AgentCard.model_validate(
        agent_card(replace(FACTS, modes=modes), legacy_fields=True)
    )
    assert v03_card.default_output_modes == list(modes.outputs)


def test_without_modes_the_card_says_text_in_text_out() -> None:
    card = agent_card(FACTS, legacy_fields=False)
    assert card["defaultInputModes"] == card["defaultOutputModes"] == ["text/plain"]
