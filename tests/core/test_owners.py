"""Owners: opaque digests of a token, or of an issuer and a subject; None for the anonymous."""

from __future__ import annotations

import re

from n8n_a2a.core.owners import subject_owner, token_owner


def test_the_default_owner_is_the_tokens_digest() -> None:
    owner = token_owner("eyJhbGciOi.secret-part.sig")
    assert owner == token_owner("eyJhbGciOi.secret-part.sig")
    assert owner is not None and "secret-part" not in owner
    assert re.fullmatch(r"token:[0-9a-f]{64}", owner)
    assert token_owner("eyJhbGciOi.secret-part.sig2") != owner
    assert token_owner(None) is None  # the anonymous caller


def test_a_verified_owner_is_the_issuer_and_subject_whatever_the_token() -> None:
    owner = subject_owner("https://login.example", "alice")
    assert owner == subject_owner("https://login.example", "alice")
    assert "alice" not in owner
    assert owner != subject_owner("https://other.example", "alice")
    assert owner != subject_owner("https://login.example", "bob")
    # No two (issuer, subject) pairs run together into one.
    assert subject_owner("a", "b:c") != subject_owner("a:b", "c")
    assert owner != token_owner("alice")
