"""Keys to sign the Agent Card with in the tests, one of each kind the adapter takes, and
what a caller verifies with: the public key, and a2a-sdk's verifier pinned to it."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from n8n_a2a.protocol.card_signature import CardSigner, SigningKey

ALGORITHMS = ("ES256", "RS256", "EdDSA")
KID = "supply-agent-2026-12"

PrivateKey = ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey | ed25519.Ed25519PrivateKey


@cache
def private_key(algorithm: str) -> PrivateKey:
    """One key per algorithm for the session (an RSA key takes a moment to make)."""
    if algorithm == "ES256":
        return ec.generate_private_key(ec.SECP256R1())
    if algorithm == "RS256":
        return rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return ed25519.Ed25519PrivateKey.generate()


def signer(algorithm: str, jku: str | None = None) -> CardSigner:
    return CardSigner(SigningKey(algorithm, private_key(algorithm)), KID, jku)


def private_pem(algorithm: str) -> bytes:
    return private_key(algorithm).private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def public_pem(algorithm: str) -> bytes:
    return (
        private_key(algorithm)
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )


def sdk_verifier(algorithm: str) -> Callable[[Any], None]:
    """a2a-sdk's verifier, as a caller that pinned the key makes it: one key for our kid."""
    from a2a.utils.signing import create_signature_verifier

    public = private_key(algorithm).public_key()

    def key_provider(kid: str | None, jku: str | None) -> Any:
        if kid != KID:
            raise KeyError(kid)
        return public

    return create_signature_verifier(key_provider, [algorithm])
