"""The Agent Card, built once from plain facts, in the shape each protocol version reads."""

from __future__ import annotations

from dataclasses import dataclass

from .media import TEXT_ONLY, Modes
from .model import JSONObject
from .rest import VERSION as REST_VERSION
from .versions import SUPPORTED


@dataclass(frozen=True, slots=True)
class CardFacts:
    """What the card says of the agent, its one skill and its callers' tokens."""

    agent_name: str
    agent_description: str
    version: str
    public_url: str
    skill_id: str
    skill_name: str
    skill_description: str
    skill_examples: tuple[str, ...]
    require_token: bool = False
    oidc_discovery_url: str | None = None
    oidc_audience: str | None = None
    modes: Modes = TEXT_ONLY


def agent_card(facts: CardFacts, *, legacy_fields: bool) -> JSONObject:
    """The card, for v1.0 clients or (with `legacy_fields`) for v0.3 clients too.

    `legacy_fields` adds the v0.3 top-level `url`, `protocolVersion`,
    `preferredTransport` and `additionalInterfaces` that v0.3 clients need and that
    the v1.0 card schema rejects.
    """
    skill: JSONObject = {
        "id": facts.skill_id,
        "name": facts.skill_name,
        "description": facts.skill_description,
        "tags": ["n8n", facts.skill_id],
        "examples": list(facts.skill_examples),
        "inputModes": list(facts.modes.inputs),
        "outputModes": list(facts.modes.outputs),
    }
    card: JSONObject = {
        "name": facts.agent_name,
        "description": facts.agent_description,
        "version": facts.version,
        # JSON-RPC v1.0 first: clients prefer the first interface they can speak. HTTP+JSON
        # is 1.0's only (v0.3's REST shape is not served: see rest.py), at the same URL.
        "supportedInterfaces": [
            *(_interface(facts, "JSONRPC", v) for v in sorted(SUPPORTED, reverse=True)),
            _interface(facts, "HTTP+JSON", REST_VERSION),
        ],
        "capabilities": {"streaming": True, "pushNotifications": True},
        "defaultInputModes": list(facts.modes.inputs),
        "defaultOutputModes": list(facts.modes.outputs),
        "skills": [skill],
    }
    # The caller's token is what the workflow exchanges: declared always. With an issuer
    # (ADAPTER_OIDC_ISSUER) it is an OpenID Connect token, verified here, always required;
    # without, any Bearer token, required only with ADAPTER_REQUIRE_TOKEN (else the
    # workflow judges its absence).
    if facts.oidc_discovery_url is not None:
        name, required = "oidc", True
        oidc = {
            "openIdConnectUrl": facts.oidc_discovery_url,
            "description": f"A token of this issuer for the audience {facts.oidc_audience}; "
            "the workflow receives it as X-Subject-Token.",
        }
        v1_scheme, v03_scheme = {"openIdConnectSecurityScheme": oidc}, {"type": "openIdConnect"}
        v03_scheme |= oidc
    else:
        name, required = "bearer", facts.require_token
        v1_scheme, v03_scheme = {"httpAuthSecurityScheme": _BEARER}, {"type": "http", **_BEARER}
    if legacy_fields:
        card |= {
            "protocolVersion": "0.3.0",
            "url": facts.public_url,
            "preferredTransport": "JSONRPC",
            "additionalInterfaces": [{"url": facts.public_url, "transport": "JSONRPC"}],
            "securitySchemes": {name: v03_scheme},
        }
        if required:
            card["security"] = [{name: []}]
    else:
        card["securitySchemes"] = {name: v1_scheme}
        if required:
            card["securityRequirements"] = [{"schemes": {name: {"list": []}}}]
    return card


def _interface(facts: CardFacts, binding: str, version: str) -> JSONObject:
    return {"url": facts.public_url, "protocolBinding": binding, "protocolVersion": version}


_BEARER = {
    "scheme": "Bearer",
    "description": "The caller's token; the workflow receives it as X-Subject-Token.",
}
