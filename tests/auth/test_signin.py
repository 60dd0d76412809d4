"""How a client learns to sign in, without I/O: the issuer's code flow, RFC 9728's metadata
and the Bearer challenge."""

from __future__ import annotations

import re
from typing import Any

import pytest

from n8n_a2a.auth.signin import ProtectedResource, authorization_code_flow, bearer_challenge
from n8n_a2a.core.errors import AuthFailure, AuthReason
from n8n_a2a.protocol.card import OAuthFlow

ISSUER = "https://login.example/realms/a"
METADATA = ISSUER + "/.well-known/openid-configuration"
AGENT = ProtectedResource("https://agents.example/supply/", ISSUER, ("a2a.call",), "Supply")


def test_the_metadata_sits_between_the_host_and_the_resources_path() -> None:
    # RFC 9728 §3.1: the path as it is, its last slash too; only a slash right after the
    # host is dropped.
    assert AGENT.metadata_path == "/.well-known/oauth-protected-resource/supply/"
    assert AGENT.metadata_url == (
        "https://agents.example/.well-known/oauth-protected-resource/supply/"
    )
    no_slash = ProtectedResource("https://agents.example/supply", ISSUER, (), "Supply")
    assert no_slash.metadata_path == "/.well-known/oauth-protected-resource/supply"
    at_the_root = ProtectedResource("http://127.0.0.1:8080/", ISSUER, (), "Supply")
    assert at_the_root.metadata_url == "http://127.0.0.1:8080/.well-known/oauth-protected-resource"


def test_the_metadata_names_the_resource_its_issuer_and_scopes() -> None:
    assert AGENT.metadata() == {
        "resource": "https://agents.example/supply/",
        "authorization_servers": [ISSUER],
        "scopes_supported": ["a2a.call"],
        "bearer_methods_supported": ["header"],
        "resource_name": "Supply",
    }


@pytest.mark.parametrize("reason", list(AuthReason))
def test_every_challenge_says_where_to_learn_and_fits_in_a_header(reason: AuthReason) -> None:
    failure = AuthFailure(reason, 'a "quoted" \\ message' if reason is AuthReason.EXPIRED else None)
    challenge = bearer_challenge(failure, AGENT)
    assert challenge.isascii() and "\n" not in challenge
    params = dict(re.findall(r'(\w+)="([^"\\]*)"', challenge.removeprefix("Bearer ")))
    assert challenge.startswith('Bearer realm="a2a", ')
    assert params["resource_metadata"] == AGENT.metadata_url
    assert params["scope"] == "a2a.call"
    if reason is AuthReason.NO_TOKEN:  # RFC 6750 §3: no error without a token
        assert set(params) == {"realm", "scope", "resource_metadata"}
    else:
        code = "insufficient_scope" if reason is AuthReason.INSUFFICIENT_SCOPE else "invalid_token"
        assert params["error"] == code
        assert params["error_description"] == failure.message.replace('"', "'").replace("\\", "")


def test_without_an_issuer_the_challenge_is_rfc_6750s_alone() -> None:
    assert bearer_challenge(AuthFailure(AuthReason.NO_TOKEN), None) == 'Bearer realm="a2a"'
    unscoped = ProtectedResource("https://agents.example/", ISSUER, (), "Supply")
    challenge = bearer_challenge(AuthFailure(AuthReason.NO_TOKEN), unscoped)
    assert "scope=" not in challenge and "resource_metadata=" in challenge


DISCOVERY: dict[str, Any] = {
    "issuer": ISSUER,
    "authorization_endpoint": ISSUER + "/auth",
    "token_endpoint": ISSUER + "/token",
    "response_types_supported": ["code", "id_token"],
    "grant_types_supported": ["authorization_code", "refresh_token"],
    "code_challenge_methods_supported": ["plain", "S256"],
}


def test_the_code_flow_comes_from_the_discovery_document() -> None:
    assert authorization_code_flow(DISCOVERY, METADATA) == OAuthFlow(
        METADATA, ISSUER + "/auth", ISSUER + "/token", ISSUER + "/token", pkce_required=True
    )
    # The defaults of an absent list: code, and no refresh; no PKCE said.
    minimal = {k: DISCOVERY[k] for k in ("authorization_endpoint", "token_endpoint")}
    assert authorization_code_flow(minimal, METADATA) == OAuthFlow(
        METADATA, ISSUER + "/auth", ISSUER + "/token"
    )


@pytest.mark.parametrize(
    "change",
    [
        {"authorization_endpoint": None},
        {"token_endpoint": None},
        {"token_endpoint": "javascript:alert(1)"},
        {"authorization_endpoint": "https://login.example/" + "a" * 2048},
        {"authorization_endpoint": "http://[::1/auth"},
        {"token_endpoint": 42},
        {"token_endpoint": "http://login.example/token"},  # http: only where allowed
        {"token_endpoint": "https://x.example/token\r\nX-Injected: 1"},
        {"token_endpoint": "https://x.example/to ken"},
        {"authorization_endpoint": "https://x.example/auth#fragment"},
        {"authorization_endpoint": "https://x.example/\u202eauth"},
        {"authorization_endpoint": "https://\u00e4.example/auth"},
        {"response_types_supported": ["id_token"]},
        {"response_types_supported": "code"},
        {"grant_types_supported": ["client_credentials"]},
    ],
)
def test_an_issuer_without_a_usable_code_flow_has_none(change: dict[str, Any]) -> None:
    discovery = {k: v for k, v in (DISCOVERY | change).items() if v is not None}
    assert authorization_code_flow(discovery, METADATA) is None


def test_a_local_issuers_http_endpoints_are_taken_only_where_allowed() -> None:
    local = {
        "authorization_endpoint": "http://127.0.0.1:9/auth",
        "token_endpoint": "http://127.0.0.1:9/t",
    }
    assert authorization_code_flow(local, METADATA) is None
    flow = authorization_code_flow(local, METADATA, allow_http=True)
    assert flow is not None and flow.authorization_url == "http://127.0.0.1:9/auth"
