"""A stand-in OpenID Connect issuer, served for real on 127.0.0.1: its own keys, made here.

It serves the discovery document and the JWKS, and mints tokens with PyJWT. It counts
the fetches of its keys, can rotate them, and can answer 503 as an issuer that is down.
Its discovery document names a code flow that nobody can play: a user signing in is
tests/support/certified_issuer.py's, a real provider's.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import jwt
import trio
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

from tests.support.asgi import handled_lifespan, serve_on_loopback

Scope = dict[str, Any]
PrivateKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey
AUDIENCE = "supply-agent"


@dataclass
class SigningKey:
    kid: str
    algorithm: str
    private: PrivateKey

    @classmethod
    def new(cls, algorithm: str = "RS256") -> SigningKey:
        private: PrivateKey
        if algorithm == "ES256":
            private = ec.generate_private_key(ec.SECP256R1())
        else:
            private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        return cls(f"key-{uuid.uuid4().hex[:8]}", algorithm, private)

    @property
    def public_jwk(self) -> dict[str, Any]:
        public = self.private.public_key()
        if isinstance(public, rsa.RSAPublicKey):
            document = RSAAlgorithm.to_jwk(public, as_dict=True)
        else:
            document = ECAlgorithm.to_jwk(public, as_dict=True)
        return {**document, "kid": self.kid, "use": "sig", "alg": self.algorithm}


@dataclass
class LocalIssuer:
    issuer: str = ""
    keys: list[SigningKey] = field(default_factory=list)
    #: Keys published beside the signing ones, as the JWKS shows them (a test's own).
    extra_jwks: list[dict[str, Any]] = field(default_factory=list)
    down: bool = False
    key_fetches: int = 0
    #: Where the discovery document says the keys are (None: this issuer's /jwks).
    jwks_uri: str | None = None
    #: Fields of the discovery document changed by a test (None: left out).
    extra_discovery: dict[str, Any] = field(default_factory=dict)

    @property
    def current(self) -> SigningKey:
        return self.keys[-1]

    def rotate(self, *, keep_old: bool = True, algorithm: str = "RS256") -> SigningKey:
        """A new signing key, published from now on; the old ones stay or go."""
        fresh = SigningKey.new(algorithm)
        self.keys = [*self.keys, fresh] if keep_old else [fresh]
        return fresh

    def mint(
        self,
        subject: str = "alice",
        *,
        key: SigningKey | None = None,
        lifetime: float = 300,
        headers: dict[str, Any] | None = None,
        **claims: Any,
    ) -> str:
        """A token signed with `key` (the current key), for the adapter's audience."""
        key = key or self.current
        now = int(time.time())
        payload = {
            "iss": self.issuer,
            "sub": subject,
            "aud": AUDIENCE,
            "iat": now,
            "exp": now + int(lifetime),
            **claims,
        }
        payload = {name: value for name, value in payload.items() if value is not None}
        return jwt.encode(
            payload,
            key.private,
            algorithm=key.algorithm,
            headers={"kid": key.kid, **(headers or {})},
        )

    def adapter_settings(self, scopes: tuple[str, ...] = ()) -> dict[str, Any]:
        """The adapter's settings that take this issuer's tokens, with `scopes` required. It
        is plain http on loopback: the setting meant for local tests allows that."""
        return {
            "oidc_issuer": self.issuer,
            "oidc_audience": AUDIENCE,
            "oidc_scopes": scopes,
            "oidc_allow_http": True,
        }

    def discovery(self) -> dict[str, Any]:
        document = {
            "issuer": self.issuer,
            "jwks_uri": self.jwks_uri or f"{self.issuer}/jwks",
            "authorization_endpoint": f"{self.issuer}/auth",
            "token_endpoint": f"{self.issuer}/token",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "id_token_signing_alg_values_supported": ["RS256", "ES256"],
        } | self.extra_discovery
        return {name: value for name, value in document.items() if value is not None}

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if await handled_lifespan(scope, receive, send):
            return
        status = 404
        document: dict[str, Any] = {"error": "not found"}
        if self.down:
            status, document = 503, {"error": "down"}
        elif scope["path"] == "/.well-known/openid-configuration":
            status, document = 200, self.discovery()
        elif scope["path"] == "/jwks":
            self.key_fetches += 1
            status, document = 200, {"keys": [k.public_jwk for k in self.keys] + self.extra_jwks}
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": json.dumps(document).encode()})


async def start_issuer(
    nursery: trio.Nursery,
    *,
    port: int = 0,
    certfile: str | None = None,
    keyfile: str | None = None,
) -> LocalIssuer:
    """Serve a new issuer with one RS256 key on 127.0.0.1 (over TLS when given a certificate)."""
    issuer = LocalIssuer(keys=[SigningKey.new()])
    issuer.issuer = await serve_on_loopback(
        nursery, issuer, port=port, certfile=certfile, keyfile=keyfile
    )
    return issuer


async def verifying_adapter(
    issuer: LocalIssuer,
    start_adapter: Callable[..., Awaitable[str]],
    webhook_url: str,
    **settings: Any,
) -> str:
    """An adapter in front of `webhook_url` that verifies this issuer's tokens, once it has
    loaded the issuer's keys (its /readyz says so)."""
    adapter = await start_adapter(webhook_url, **issuer.adapter_settings(), **settings)
    async with httpx.AsyncClient() as http:
        with trio.fail_after(10):
            while (await http.get(adapter + "readyz")).status_code != 200:  # noqa: ASYNC110 - polled
                await trio.sleep(0.02)
    return adapter
