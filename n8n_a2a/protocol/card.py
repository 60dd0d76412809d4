"""The Agent Card, built once from plain facts, in the shape each protocol version reads."""

from __future__ import annotations

from dataclasses import dataclass

from .media import TEXT_ONLY, Modes
from .model import JSONObject
from .versions import REST_VERSION, SUPPORTED


@dataclass(frozen=True, slots=True)
class OAuthFlow:
    """The issuer's authorization code flow, for a client that signs its users in: where
    the issuer describes itself, where a user signs in, where tokens are had and
    refreshed (None: no refresh), and whether PKCE (RFC 7636) is to be used."""

    metadata_url: str
    authorization_url: str
    token_url: str
    refresh_url: str | None = None
    pkce_required: bool = False


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
    #: The scopes a token must carry (ADAPTER_OIDC_SCOPES), and the issuer's code flow.
    scopes: tuple[str, ...] = ()
    oauth_flow: OAuthFlow | None = None
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
    if legacy_fields:
        card |= {
            "protocolVersion": "0.3.0",
            "url": facts.public_url,
            "preferredTransport": "JSONRPC",
            "additionalInterfaces": [{"url": facts.public_url, "transport": "JSONRPC"}],
        }
    return card | _security(facts, legacy_fields=legacy_fields)


def _security(facts: CardFacts, *, legacy_fields: bool) -> JSONObject:
    """The schemes and requirements: any one scheme named will do, with the scopes.

    The caller's token is what the workflow exchanges: declared always. With an issuer
    (ADAPTER_OIDC_ISSUER) it is a token of that issuer, verified here, always required:
    had as a service (openIdConnect) or for a user who signs in (oauth2, once the
    issuer's discovery describes its code flow); without, any Bearer token, required
    only with ADAPTER_REQUIRE_TOKEN (else the workflow judges its absence).
    """
    # Each scheme in both shapes: v1.0's (a oneof by key) and v0.3's (OpenAPI's `type`).
    schemes: dict[str, tuple[JSONObject, JSONObject]] = {}
    if facts.oidc_discovery_url is not None:
        required = True
        oidc = {
            "openIdConnectUrl": facts.oidc_discovery_url,
            "description": f"A token of this issuer for the audience {facts.oidc_audience}; "
            "the workflow receives it as X-Subject-Token.",
        }
        schemes["oidc"] = ({"openIdConnectSecurityScheme": oidc}, {"type": "openIdConnect"} | oidc)
        if facts.oauth_flow is not None:
            schemes["oauth2"] = _oauth2(facts, facts.oauth_flow)
    else:
        required = facts.require_token
        schemes["bearer"] = ({"httpAuthSecurityScheme": _BEARER}, {"type": "http", **_BEARER})
    scopes = list(facts.scopes)
    if legacy_fields:
        security: JSONObject = {"securitySchemes": {n: v03 for n, (_, v03) in schemes.items()}}
        if required:
            security["security"] = [{name: scopes} for name in schemes]
    else:
        security = {"securitySchemes": {n: v1 for n, (v1, _) in schemes.items()}}
        if required:
            security["securityRequirements"] = [
                {"schemes": {name: {"list": scopes}}} for name in schemes
            ]
    return security


def _oauth2(facts: CardFacts, flow: OAuthFlow) -> tuple[JSONObject, JSONObject]:
    """The oauth2 scheme with the issuer's authorization code flow, v1.0's and v0.3's."""
    code: JSONObject = {"authorizationUrl": flow.authorization_url, "tokenUrl": flow.token_url}
    if flow.refresh_url is not None:
        code["refreshUrl"] = flow.refresh_url
    code["scopes"] = {scope: "Required to call this agent" for scope in facts.scopes}
    scheme: JSONObject = {
        "description": "Sign a user in at this agent's issuer (authorization code flow) for "
        f"a token for the audience {facts.oidc_audience}; the workflow receives it as "
        "X-Subject-Token.",
        "oauth2MetadataUrl": flow.metadata_url,
    }
    # pkceRequired is v1.0's alone; false is its default, left out as proto3 JSON does.
    v1_code = code | {"pkceRequired": True} if flow.pkce_required else code
    v1 = {"oauth2SecurityScheme": scheme | {"flows": {"authorizationCode": v1_code}}}
    v03 = {"type": "oauth2"} | scheme | {"flows": {"authorizationCode": code}}
    return v1, v03


def _interface(facts: CardFacts, binding: str, version: str) -> JSONObject:
    return {"url": facts.public_url, "protocolBinding": binding, "protocolVersion": version}


_BEARER = {
    "scheme": "Bearer",
    "description": "The caller's token; the workflow receives it as X-Subject-Token.",
}
