from __future__ import annotations

import subprocess
import sys
from dataclasses import replace

import pytest
from a2a.compat.v0_3 import types as v03_types
from a2a.types import a2a_pb2
from google.protobuf import json_format  # type: ignore[import-untyped]

from n8n_a2a.protocol.card import CardFacts, OAuthFlow, agent_card
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


def v03_scheme(facts: CardFacts, name: str) -> tuple[v03_types.AgentCard, object]:
    """The v0.3 card as the SDK reads it, and its scheme `name`."""
    parsed = v03_types.AgentCard.model_validate(agent_card(facts, legacy_fields=True))
    assert parsed.security_schemes is not None
    return parsed, parsed.security_schemes[name].root


def test_with_an_issuer_the_v03_card_requires_its_tokens_as_the_sdk_reads_them() -> None:
    parsed, scheme = v03_scheme(OIDC, "oidc")
    assert isinstance(scheme, v03_types.OpenIdConnectSecurityScheme)
    assert scheme.open_id_connect_url == DISCOVERY
    assert parsed.security == [{"oidc": []}]


FLOW = OAuthFlow(DISCOVERY, ISSUER + "/auth", ISSUER + "/token", ISSUER + "/token", True)
SIGN_IN = replace(OIDC, scopes=("a2a.call", "openid"), oauth_flow=FLOW)


def test_the_v1_card_offers_the_issuers_code_flow_as_the_sdk_reads_it() -> None:
    card = agent_card(SIGN_IN, legacy_fields=False)
    parsed = json_format.ParseDict(card, a2a_pb2.AgentCard())
    assert sorted(parsed.security_schemes) == ["oauth2", "oidc"]  # a proto map: no order
    assert list(card["securitySchemes"]) == ["oidc", "oauth2"]
    scheme = parsed.security_schemes["oauth2"]
    assert scheme.WhichOneof("scheme") == "oauth2_security_scheme"
    oauth2 = scheme.oauth2_security_scheme
    assert oauth2.oauth2_metadata_url == DISCOVERY
    assert oauth2.flows.WhichOneof("flow") == "authorization_code"
    code = oauth2.flows.authorization_code
    assert (code.authorization_url, code.token_url) == (ISSUER + "/auth", ISSUER + "/token")
    assert code.refresh_url == ISSUER + "/token" and code.pkce_required
    assert sorted(code.scopes) == ["a2a.call", "openid"]
    # Either scheme will do, with the scopes.
    assert [
        {name: list(scopes.list) for name, scopes in requirement.schemes.items()}
        for requirement in parsed.security_requirements
    ] == [{"oidc": ["a2a.call", "openid"]}, {"oauth2": ["a2a.call", "openid"]}]


def test_the_v03_card_offers_the_issuers_code_flow_as_the_sdk_reads_it() -> None:
    card = agent_card(SIGN_IN, legacy_fields=True)
    parsed, scheme = v03_scheme(SIGN_IN, "oauth2")
    assert isinstance(scheme, v03_types.OAuth2SecurityScheme)
    assert scheme.oauth2_metadata_url == DISCOVERY
    code = scheme.flows.authorization_code
    assert code is not None and code.refresh_url == ISSUER + "/token"
    assert (code.authorization_url, code.token_url) == (ISSUER + "/auth", ISSUER + "/token")
    assert sorted(code.scopes) == ["a2a.call", "openid"]
    assert "pkceRequired" not in card["securitySchemes"]["oauth2"]["flows"]["authorizationCode"]
    assert parsed.security == [{"oidc": ["a2a.call", "openid"]}, {"oauth2": ["a2a.call", "openid"]}]


def test_a_flow_without_refresh_or_pkce_leaves_them_out() -> None:
    plain = replace(
        SIGN_IN, scopes=(), oauth_flow=replace(FLOW, refresh_url=None, pkce_required=False)
    )
    scheme = agent_card(plain, legacy_fields=False)["securitySchemes"]["oauth2"]
    code = scheme["oauth2SecurityScheme"]["flows"]["authorizationCode"]
    assert code == {
        "authorizationUrl": ISSUER + "/auth",
        "tokenUrl": ISSUER + "/token",
        "scopes": {},
    }


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


@pytest.mark.slow  # a Python process of its own
def test_the_card_and_the_configuration_need_none_of_the_rest_bindings_tables() -> None:
    """The card names the binding's version; its routes and errors wait until asked."""
    code = (
        "import sys, n8n_a2a.config, n8n_a2a.protocol.card; "
        "print('n8n_a2a.protocol.rest' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "False\n"
