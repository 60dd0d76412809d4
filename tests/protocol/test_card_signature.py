"""The card's signature, checked by a2a-sdk 1.3.0's own code: its parse of the card as a
client fetches it (parse_agent_card), its canonical form of what it parsed, its verifier.
"""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from typing import Any

import pytest
from a2a.client.card_resolver import parse_agent_card
from a2a.compat.v0_3 import types as v03_types
from a2a.utils.signing import InvalidSignaturesError, _canonicalize_agent_card

from n8n_a2a.protocol.card import CardFacts, OAuthFlow, agent_card
from n8n_a2a.protocol.card_signature import JOSE, as_v1, signing_payload
from n8n_a2a.protocol.media import Modes
from tests.support.card_keys import ALGORITHMS, KID, sdk_verifier, signer

FACTS = CardFacts(
    agent_name="Agent é 日本 🎉 n°42",
    agent_description="Vérifie les stocks: 3.5 € le kilo, 日本語, 🎉",
    version="1.2.3",
    public_url="https://agents.example/supply",
    skill_id="check_availability",
    skill_name="Disponibilité",
    skill_description="Says whether an item is in stock.",
    skill_examples=("Y a-t-il 4 palettes de farine?", "在庫は? 🎉", "1e21"),
)
FLOW = OAuthFlow(
    metadata_url="https://login.example/.well-known/openid-configuration",
    authorization_url="https://login.example/auth",
    token_url="https://login.example/token",
    refresh_url="https://login.example/token",
    pkce_required=True,
)
ISSUED = replace(FACTS, oidc_discovery_url=FLOW.metadata_url, oidc_audience="supply")
CARDS = {
    "bearer": FACTS,
    "required bearer": replace(FACTS, require_token=True),
    "no examples": replace(FACTS, skill_examples=()),
    "files": replace(FACTS, modes=Modes(("text/plain", "*/*"), ("text/plain", "image/png"))),
    "oidc": replace(ISSUED, scopes=("a2a.call", "é")),
    "oidc and code flow with PKCE": replace(ISSUED, scopes=("a2a.call",), oauth_flow=FLOW),
    "code flow, no scopes, no refresh": replace(
        ISSUED, oauth_flow=replace(FLOW, refresh_url=None, pkce_required=False)
    ),
}
SHAPES = {"v1.0": False, "legacy": True}


def fetched(card: dict[str, Any]) -> dict[str, Any]:
    """The card as a client parses the bytes the adapter serves."""
    body = json.dumps(card, ensure_ascii=False, separators=(",", ":")).encode()
    parsed: dict[str, Any] = json.loads(body)
    return parsed


@pytest.mark.parametrize("facts", CARDS.values(), ids=CARDS.keys())
@pytest.mark.parametrize("legacy", SHAPES.values(), ids=SHAPES.keys())
def test_the_payload_is_what_a2a_sdk_canonicalizes_from_the_card_it_fetched(
    facts: CardFacts, legacy: bool
) -> None:
    card = fetched(agent_card(facts, legacy_fields=legacy))
    theirs = _canonicalize_agent_card(parse_agent_card(fetched(card))).encode()
    assert signing_payload(card) == theirs


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("facts", CARDS.values(), ids=CARDS.keys())
@pytest.mark.parametrize("legacy", SHAPES.values(), ids=SHAPES.keys())
def test_a2a_sdk_verifies_the_signed_card(algorithm: str, facts: CardFacts, legacy: bool) -> None:
    signed = fetched(signer(algorithm).signed(agent_card(facts, legacy_fields=legacy)))
    sdk_verifier(algorithm)(parse_agent_card(signed))


@pytest.mark.parametrize(
    "change",
    [
        lambda card: card | {"name": card["name"].replace("é", "e")},
        lambda card: card | {"supportedInterfaces": card["supportedInterfaces"][1:]},
        lambda card: card | {"securitySchemes": {}},
        lambda card: card | {"skills": [card["skills"][0] | {"examples": ["rm -rf"]}]},
    ],
    ids=["name", "interfaces", "schemes", "examples"],
)
@pytest.mark.parametrize("legacy", SHAPES.values(), ids=SHAPES.keys())
def test_a2a_sdk_refuses_a_changed_card(change: Any, legacy: bool) -> None:
    signed = fetched(signer("ES256").signed(agent_card(CARDS["oidc"], legacy_fields=legacy)))
    with pytest.raises(InvalidSignaturesError):
        sdk_verifier("ES256")(parse_agent_card(change(signed)))


def test_the_protected_header_names_the_algorithm_the_key_and_jose() -> None:
    for algorithm in ALGORITHMS:
        [signature] = signer(algorithm).signed(agent_card(FACTS, legacy_fields=False))["signatures"]
        assert set(signature) == {"protected", "signature"}  # the payload is detached
        header = json.loads(base64.urlsafe_b64decode(signature["protected"] + "=="))
        assert header == {"alg": algorithm, "typ": JOSE, "kid": KID}
    jku = "https://agents.example/jwks.json"
    [signature] = signer("EdDSA", jku).signed({"name": "x"})["signatures"]
    assert json.loads(base64.urlsafe_b64decode(signature["protected"] + "=="))["jku"] == jku


def test_signing_again_replaces_the_signature() -> None:
    card = agent_card(FACTS, legacy_fields=False)
    once = signer("ES256").signed(card)
    twice = signer("EdDSA").signed(once)
    assert len(twice["signatures"]) == 1
    sdk_verifier("EdDSA")(parse_agent_card(fetched(twice)))
    assert {k: v for k, v in twice.items() if k != "signatures"} == card


def test_the_legacy_card_is_read_as_the_v1_card_less_what_v03_cannot_say() -> None:
    facts = CARDS["oidc and code flow with PKCE"]
    v1 = agent_card(facts, legacy_fields=False)
    assert as_v1(agent_card(facts, legacy_fields=True)) == v1 | {
        # v0.3's oauth2 flow has no pkceRequired: a client reading that shape never sees it.
        "securitySchemes": v1["securitySchemes"]
        | {
            "oauth2": {
                "oauth2SecurityScheme": v1["securitySchemes"]["oauth2"]["oauth2SecurityScheme"]
                | {"flows": {"authorizationCode": _without_pkce(v1)}}
            }
        }
    }


def _without_pkce(v1: dict[str, Any]) -> dict[str, Any]:
    code = v1["securitySchemes"]["oauth2"]["oauth2SecurityScheme"]["flows"]["authorizationCode"]
    return {name: value for name, value in code.items() if name != "pkceRequired"}


def test_a_v03_client_reads_the_signed_legacy_card_and_its_signature() -> None:
    signed = fetched(signer("ES256").signed(agent_card(CARDS["oidc"], legacy_fields=True)))
    parsed = v03_types.AgentCard.model_validate(signed)
    assert parsed.signatures is not None
    [signature] = parsed.signatures
    assert (signature.protected, signature.signature) == tuple(
        signed["signatures"][0][name] for name in ("protected", "signature")
    )


def test_a_requirement_without_scopes_is_not_in_what_is_signed_one_with_scopes_is() -> None:
    # As docs/identity.md says: the SDKs drop empty lists before they canonicalize.
    unscoped = agent_card(CARDS["required bearer"], legacy_fields=False)
    assert unscoped["securityRequirements"] == [{"schemes": {"bearer": {"list": []}}}]
    assert b"securityRequirements" not in signing_payload(unscoped)
    scoped = signing_payload(agent_card(CARDS["oidc"], legacy_fields=False))
    assert (
        b'"securityRequirements":[{"schemes":{"oidc":{"list":["a2a.call","\xc3\xa9"]}}}]' in scoped
    )
