"""What Settings works out from its fields: the endpoint's path, the modes, the issuer's
discovery document."""

from __future__ import annotations

from dataclasses import replace

from n8n_a2a.protocol.media import Modes
from tests.support.adapter import make_settings


def test_the_endpoint_is_the_public_urls_own_path() -> None:
    settings = make_settings()
    assert replace(settings, public_url="https://agents.example/flour/a2a").rpc_path == (
        "/flour/a2a"
    )
    assert replace(settings, public_url="https://agents.example").rpc_path == "/"
    assert replace(settings, public_url="https://agents.example/").rpc_path == "/"


def test_the_modes_are_the_input_and_output_media_types() -> None:
    settings = replace(
        make_settings(), input_modes=("text/plain", "image/png"), output_modes=("*/*",)
    )
    assert settings.modes == Modes(("text/plain", "image/png"), ("*/*",))


def test_the_discovery_document_is_under_the_issuer_with_or_without_its_slash() -> None:
    settings = make_settings()
    assert settings.oidc_discovery_url is None
    for issuer in ("https://login.example/realms/a", "https://login.example/realms/a/"):
        assert replace(settings, oidc_issuer=issuer).oidc_discovery_url == (
            "https://login.example/realms/a/.well-known/openid-configuration"
        )


def test_the_store_url_never_shows_in_the_settings_repr() -> None:
    settings = replace(make_settings(), store_url="postgresql://app:secret@db/a2a")
    assert "secret" not in repr(settings)
