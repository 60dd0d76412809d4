"""Who is calling, without I/O: the caller, owners and the refusals of a token."""

from __future__ import annotations

import re

import pytest

from n8n_a2a.identity import AuthFailure, AuthReason, Caller, subject_owner, token_owner
from n8n_a2a.protocol.errors import ErrorCode


def test_the_default_owner_is_the_tokens_digest() -> None:
    owner = token_owner("eyJhbGciOi.secret-part.sig")
    assert owner == token_owner("eyJhbGciOi.secret-part.sig")
    assert owner is not None and "secret-part" not in owner
    assert re.fullmatch(r"token:[0-9a-f]{64}", owner)
    assert token_owner("eyJhbGciOi.secret-part.sig2") != owner
    assert token_owner(None) is None  # the anonymous caller


def test_a_caller_is_anonymous_by_default_and_its_owner_stays_out_of_its_repr() -> None:
    assert Caller() == Caller(None, (), None)
    owner = token_owner("tok.en")
    assert owner is not None and owner not in repr(Caller("tok.en", (), owner))


def test_a_verified_owner_is_the_issuer_and_subject_whatever_the_token() -> None:
    owner = subject_owner("https://login.example", "alice")
    assert owner == subject_owner("https://login.example", "alice")
    assert "alice" not in owner
    assert owner != subject_owner("https://other.example", "alice")
    assert owner != subject_owner("https://login.example", "bob")
    # No two (issuer, subject) pairs run together into one.
    assert subject_owner("a", "b:c") != subject_owner("a:b", "c")
    assert owner != token_owner("alice")


@pytest.mark.parametrize("reason", list(AuthReason))
def test_every_refusal_is_32600_with_a_challenge_a_header_can_carry(reason: AuthReason) -> None:
    failure = AuthFailure(reason)
    assert failure.code is ErrorCode.INVALID_REQUEST
    assert failure.message
    challenge = failure.challenge
    assert challenge.startswith('Bearer realm="a2a"')
    assert challenge.isascii() and "\n" not in challenge
    if reason is AuthReason.NO_TOKEN:
        assert challenge == 'Bearer realm="a2a"'  # RFC 6750 §3: no error without a token
    else:
        [description] = re.findall(r'error_description="([^"\\]*)"$', challenge)
        assert 'error="invalid_token"' in challenge
        assert description == failure.message.replace('"', "'")
