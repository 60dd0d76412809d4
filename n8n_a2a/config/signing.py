"""ADAPTER_CARD_SIGNING_KEY: the PEM private key the Agent Card is signed with, read once
at start. Every problem is worded with the file's path, never with what the file holds
nor with what the PEM parser said of it (its message may quote the file)."""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported once a key is read: a start without one never signs
    from ..protocol.card_signature import SigningKey

#: Far more than any PEM private key (an RSA 8192 key is under 7 KB): no reading a disk.
_MAX_KEY_FILE = 64 * 1024
MIN_RSA_BITS = 2048
_EXTRA = "signing the card needs the oidc extra: pip install 'n8n-a2a[oidc]'"


def signing_key(path: str) -> SigningKey:
    """The key in the PEM file at `path` and its algorithm, or ValueError saying why not."""
    if importlib.util.find_spec("jwt") is None or importlib.util.find_spec("cryptography") is None:
        raise ValueError(_EXTRA)
    data = _read(path)
    if b"-----BEGIN " not in data:
        raise ValueError(f"is not a PEM file: {path}")
    if b"PRIVATE KEY-----" not in data:
        raise ValueError(f"holds no private key (a public key or a certificate?): {path}")
    if b"ENCRYPTED" in data:
        raise ValueError(
            f"is an encrypted private key, which the adapter cannot read unattended: {path} "
            "(write it out decrypted, readable by the adapter alone: openssl pkey -in KEY -out "
            "PLAIN)"
        )
    # The oidc extra, there as checked above.
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    from ..protocol.card_signature import SigningKey

    try:
        key = load_pem_private_key(data, password=None)
    except TypeError:  # a password is needed: encrypted in a way the check above missed
        raise ValueError(f"is an encrypted private key: {path}") from None
    except (ValueError, UnsupportedAlgorithm):
        raise ValueError(f"is not a PEM private key the adapter can read: {path}") from None
    return SigningKey(_algorithm(key, path), key)


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as file:
            data = file.read(_MAX_KEY_FILE + 1)
    except FileNotFoundError:
        raise ValueError(f"no such file: {path}") from None
    except OSError as error:
        raise ValueError(f"cannot be read: {path} ({error.strerror})") from None
    if len(data) > _MAX_KEY_FILE:
        raise ValueError(f"is over {_MAX_KEY_FILE // 1024} KiB, too big for a key: {path}")
    return data


def _algorithm(key: object, path: str) -> str:
    """The JWS algorithm for `key`, or ValueError for a key the card is not signed with."""
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

    if isinstance(key, ec.EllipticCurvePrivateKey):
        if not isinstance(key.curve, ec.SECP256R1):
            raise ValueError(
                f"is an EC key on {key.curve.name}; the card is signed with P-256 (ES256), "
                f"RSA (RS256) or Ed25519 (EdDSA) keys: {path}"
            )
        return "ES256"
    if isinstance(key, rsa.RSAPrivateKey):
        if key.key_size < MIN_RSA_BITS:
            raise ValueError(
                f"is an RSA key of {key.key_size} bits, at least {MIN_RSA_BITS} needed: {path}"
            )
        return "RS256"
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return "EdDSA"
    raise ValueError(
        f"holds a key of a kind the card is not signed with ({type(key).__name__}); EC P-256 "
        f"(ES256), RSA (RS256) or Ed25519 (EdDSA) only: {path}"
    )
