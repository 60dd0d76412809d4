"""The Agent Card's signature (A2A 1.0 §8.4): a JWS whose payload, detached, is the RFC
8785 canonical form of the card as a verifier rebuilds it from what it fetched.

The official 1.x clients (a2a-sdk, @a2a-js/sdk) do not canonicalize the bytes they
received: they parse the card into their v1.0 AgentCard, write it back as ProtoJSON
(unknown fields gone, defaults left out), drop `signatures`, then every empty string,
list and object, recursively. So the payload signed here is that same rebuild: for the
v1.0 card, the card itself less its empties; for the legacy card v0.3 clients read, the
v1.0 card a 1.x client makes of it (its compatibility mapping: `security` read as
`securityRequirements`, each scheme's `type` as the oneof's key, the v0.3 connection
fields dropped beside `supportedInterfaces`).

Signing is PyJWT's (the oidc extra): imported here only when a card is signed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .jcs import canonical
from .model import JSONObject

#: The JWS header's `typ` for a JWS that is no JWT (RFC 7515 §4.1.9), as §8.4.2 asks.
JOSE = "JOSE"

#: v0.3's top-level connection fields, which a 1.x client reads only where
#: `supportedInterfaces` is absent, and never keeps.
_V03_CONNECTION = ("url", "preferredTransport", "protocolVersion", "additionalInterfaces")
#: v0.3's scheme `type` -> the key of v1.0's SecurityScheme oneof.
_SCHEME_KEYS = {
    "apiKey": "apiKeySecurityScheme",
    "http": "httpAuthSecurityScheme",
    "oauth2": "oauth2SecurityScheme",
    "openIdConnect": "openIdConnectSecurityScheme",
    "mutualTLS": "mtlsSecurityScheme",
}


@dataclass(frozen=True, slots=True)
class SigningKey:
    """A private key (a `cryptography` key object) and the JWS algorithm it signs with:
    ES256 (EC P-256), RS256 (RSA) or EdDSA (Ed25519). The key is never shown."""

    algorithm: str
    key: object = field(repr=False, compare=False)


@dataclass(frozen=True, slots=True)
class CardSigner:
    """Signs cards with one key, named in the protected header by `kid` (and `jku`)."""

    key: SigningKey
    kid: str
    jku: str | None = None

    @property
    def protected_header(self) -> JSONObject:
        header: JSONObject = {"alg": self.key.algorithm, "typ": JOSE, "kid": self.kid}
        if self.jku is not None:
            header["jku"] = self.jku
        return header

    def signed(self, card: JSONObject) -> JSONObject:
        """`card` with its one signature (any it had replaced)."""
        unsigned = {name: value for name, value in card.items() if name != "signatures"}
        return unsigned | {"signatures": [self.signature(signing_payload(unsigned))]}

    def signature(self, payload: bytes) -> JSONObject:
        """An AgentCardSignature over `payload`: the compact JWS less its payload."""
        from jwt import api_jws  # the oidc extra; config/ checked it is there

        compact = api_jws.encode(
            payload,
            self.key.key,  # type: ignore[arg-type]  # config/ made it one PyJWT takes
            algorithm=self.key.algorithm,
            headers=self.protected_header,
        )
        protected, _, signature = compact.split(".")
        return {"protected": protected, "signature": signature}


def signing_payload(card: JSONObject) -> bytes:
    """The bytes a verifier checks the signature against: the canonical form of the v1.0
    card it rebuilds from `card`, either shape, without `signatures` and empties."""
    rebuilt = as_v1(card)
    rebuilt.pop("signatures", None)
    return canonical(_without_empties(rebuilt) or {})


def as_v1(card: JSONObject) -> JSONObject:
    """The v1.0 card a 1.x client reads from `card`: the legacy shape mapped as its
    compatibility code maps it, the v1.0 shape as it is."""
    rebuilt = dict(card)
    if "supportedInterfaces" in rebuilt:
        for name in _V03_CONNECTION:
            rebuilt.pop(name, None)
    legacy_security = rebuilt.pop("security", None)
    if isinstance(legacy_security, list) and "securityRequirements" not in rebuilt:
        rebuilt["securityRequirements"] = [
            {"schemes": {name: {"list": scopes} for name, scopes in requirement.items()}}
            for requirement in legacy_security
        ]
    schemes = rebuilt.get("securitySchemes")
    if isinstance(schemes, Mapping):
        rebuilt["securitySchemes"] = {name: _v1_scheme(s) for name, s in schemes.items()}
    return rebuilt


def _v1_scheme(scheme: JSONObject) -> JSONObject:
    if scheme.get("type") not in _SCHEME_KEYS:
        return scheme
    fields = {name: value for name, value in scheme.items() if name != "type"}
    return {_SCHEME_KEYS[scheme["type"]]: fields}


def _without_empties(value: object) -> object:
    """`value` less its empty strings, lists and objects, recursively (None: all empty)."""
    if isinstance(value, Mapping):
        kept = {k: v for k, item in value.items() if (v := _without_empties(item)) is not None}
        return kept or None
    if isinstance(value, list):
        items = [v for item in value if (v := _without_empties(item)) is not None]
        return items or None
    return None if value == "" else value
