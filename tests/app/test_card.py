from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from n8n_a2a import __version__
from n8n_a2a.app.card import CachedCard, card_facts, card_paths, card_url, not_modified
from n8n_a2a.protocol.media import Modes
from tests.support.adapter import make_settings

ISSUER = "https://login.example/realms/agents"
STARTED = datetime(2026, 11, 29, 18, 34, 32, tzinfo=UTC)
ETAG = '"0123456789abcdef0123456789abcdef"'


def test_the_facts_come_from_the_settings() -> None:
    settings = make_settings(oidc_issuer=ISSUER + "/", oidc_audience="supply-agent")
    facts = card_facts(settings)
    assert facts.oidc_discovery_url == ISSUER + "/.well-known/openid-configuration"
    assert facts.oidc_audience == "supply-agent"
    assert facts.version == __version__
    assert (facts.agent_name, facts.public_url) == (settings.agent_name, settings.public_url)
    assert facts.skill_examples == settings.skill_examples
    assert not facts.require_token
    assert card_facts(make_settings(require_token=True)).require_token
    modes = card_facts(make_settings(input_modes=("application/json",))).modes
    assert modes == Modes(("application/json",), ("text/plain",))


@pytest.mark.parametrize(
    ("public_url", "paths", "url"),
    [
        (
            "http://127.0.0.1:1/",
            ["/.well-known/agent-card.json"],
            "http://127.0.0.1:1/.well-known/agent-card.json",
        ),
        (
            "https://agent.example/a2a/",
            ["/.well-known/agent-card.json", "/a2a/.well-known/agent-card.json"],
            "https://agent.example/a2a/.well-known/agent-card.json",
        ),
    ],
)
def test_the_card_is_also_under_the_public_urls_path(
    public_url: str, paths: list[str], url: str
) -> None:
    settings = make_settings(public_url=public_url)
    assert card_paths(settings) == paths
    assert card_url(settings) == url


def test_a_cached_card_is_compact_json_with_a_strong_etag_of_its_body() -> None:
    cached = CachedCard.of({"name": "Agent é", "skills": []})
    assert cached.body == '{"name":"Agent é","skills":[]}'.encode()
    assert json.loads(cached.body) == {"name": "Agent é", "skills": []}
    assert len(cached.etag) == 34 and cached.etag.startswith('"') and cached.etag.endswith('"')
    assert CachedCard.of({"name": "Agent é", "skills": []}).etag == cached.etag
    assert CachedCard.of({"name": "Agent", "skills": []}).etag != cached.etag


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({}, False),
        ({"If-None-Match": ETAG}, True),
        ({"If-None-Match": f'"other", W/{ETAG}'}, True),
        ({"If-None-Match": "*"}, True),
        ({"If-None-Match": '"other"'}, False),
        ({"If-Modified-Since": format_datetime(STARTED, usegmt=True)}, True),
        ({"If-Modified-Since": format_datetime(STARTED + timedelta(days=1), usegmt=True)}, True),
        (
            {"If-Modified-Since": format_datetime(STARTED - timedelta(seconds=1), usegmt=True)},
            False,
        ),
        ({"If-Modified-Since": "yesterday"}, False),
        # If-None-Match decides when both are sent (RFC 9110 §13.1.3).
        (
            {
                "If-None-Match": '"other"',
                "If-Modified-Since": format_datetime(STARTED, usegmt=True),
            },
            False,
        ),
    ],
)
def test_a_conditional_get_is_answered_304_when_the_client_has_the_card(
    headers: dict[str, str], expected: bool
) -> None:
    assert not_modified(headers, ETAG, STARTED) is expected
