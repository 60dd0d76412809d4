"""Who is calling, without I/O: the caller and the refusals of a token (owners:
tests/core/test_owners.py)."""

from __future__ import annotations

from n8n_a2a.auth.caller import Caller, granted_scopes, is_access_token
from n8n_a2a.core.owners import token_owner


def test_a_caller_is_anonymous_by_default_and_its_owner_stays_out_of_its_repr() -> None:
    assert Caller() == Caller(None, (), None)
    owner = token_owner("tok.en")
    assert owner is not None and owner not in repr(Caller("tok.en", (), owner))


def test_an_id_tokens_marks_make_it_no_access_token() -> None:
    claims = {"iss": "https://login.example", "sub": "alice", "aud": "agent"}
    for typ in (None, "JWT", "jwt", "application/jwt", "at+jwt", "application/at+jwt"):
        header = {"alg": "RS256"} if typ is None else {"alg": "RS256", "typ": typ}
        assert is_access_token(header, claims), typ
    for other in ("id_token+jwt", "logout+jwt", "dpop+jwt", "application/id_token+jwt", 7):
        assert not is_access_token({"alg": "RS256", "typ": other}, claims), other
    for mark in ("nonce", "at_hash", "c_hash", "s_hash"):
        assert not is_access_token({"typ": "JWT"}, {**claims, mark: "x"}), mark
    assert not is_access_token({"typ": "JWT"}, {**claims, "typ": "ID"})  # Keycloak's
    assert is_access_token({"typ": "JWT"}, {**claims, "typ": "Bearer"})


def test_the_scopes_granted_are_the_scope_string_or_the_scp_list() -> None:
    assert granted_scopes({"scope": "a2a.call  openid"}) == {"a2a.call", "openid"}
    assert granted_scopes({"scp": ["a2a.call", 3]}) == {"a2a.call"}
    assert granted_scopes({"scp": "a2a.call"}) == {"a2a.call"}
    assert granted_scopes({"scope": "a", "scp": ["b"]}) == {"a"}
    assert granted_scopes({}) == granted_scopes({"scope": 5}) == frozenset()
