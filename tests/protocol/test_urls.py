"""A resource's URL in one spelling, and the spellings a token's audience may hold."""

from __future__ import annotations

import pytest

from n8n_a2a.protocol.urls import canonical_resource, resource_spellings


@pytest.mark.parametrize(
    ("url", "canonical"),
    [
        ("http://host:8080", "http://host:8080/"),
        ("https://agent.example", "https://agent.example/"),
        ("https://agent.example/", "https://agent.example/"),
        ("https://agent.example/a2a", "https://agent.example/a2a"),
        ("https://agent.example?x=1", "https://agent.example/?x=1"),
        ("my-client-id", "my-client-id"),  # an audience that is no URL is as it is
        ("urn:agent:one", "urn:agent:one"),
    ],
)
def test_an_http_urls_empty_path_is_a_slash(url: str, canonical: str) -> None:
    assert canonical_resource(url) == canonical


def test_a_resource_at_a_hosts_root_is_spelled_with_and_without_its_slash() -> None:
    assert resource_spellings("https://agent.example") == (
        "https://agent.example/",
        "https://agent.example",
    )
    assert resource_spellings("https://agent.example/") == (
        "https://agent.example/",
        "https://agent.example",
    )


def test_a_resource_with_a_path_or_no_url_has_one_spelling() -> None:
    assert resource_spellings("https://agent.example/a2a") == ("https://agent.example/a2a",)
    assert resource_spellings("https://agent.example/a2a/") == ("https://agent.example/a2a/",)
    assert resource_spellings("my-client-id") == ("my-client-id",)
